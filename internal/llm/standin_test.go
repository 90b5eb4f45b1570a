package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

func standInAsk(t *testing.T, op, system, user string) *llm.Response {
	t.Helper()
	resp, err := llm.NewStandIn().Complete(context.Background(), llm.Request{
		System: system, Operation: op, Messages: []llm.Message{{Role: llm.RoleUser, Content: user}},
	})
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return resp
}

// posts splits a stand-in answer into what would be posted separately.
func posts(op, text string) []string {
	switch op {
	case "generate_thread", "generate_thread_plan":
		return strings.Split(text, "\n---\n")
	case "suggest_topics":
		return strings.Split(text, "\n")
	}
	return []string{text}
}

var standInCases = []struct {
	op, user string
	// min and max bound how many parts the answer has.
	min, max int
}{
	{"generate_tweet", "Write one post about: Go tooling", 1, 1},
	{"generate_tweet", "Write one post about: Go tooling\nFormat (list): Write it as a short list", 1, 1},
	{"generate_tweet", "Write one post about: " + strings.Repeat("ünïcødé topic 🚀 ", 40), 1, 1},
	{"generate_reply", "Post by @rae:\n<post>\nHow do you handle retries in golang clients?\n</post>\n\nWrite the reply.", 1, 1},
	{"generate_reply", "Post:\n<post>\n" + strings.Repeat("長い投稿 ", 200) + "\n</post>\n\nWrite the reply.", 1, 1},
	{"generate_thread", "Write a thread about: shipping CLIs\nStructure (framework): A step-by-step method", 5, 8},
	{"generate_thread_plan", "Write a thread about: " + strings.Repeat("x", 500) + "\nObjective: grow", 5, 8},
	{"suggest_topics", "Content pillars: Go tooling, shipping CLIs\nProduct keywords: golang\n\nSuggest 7 topics.", 7, 7},
	{"health_check", "Reply with OK.", 1, 1},
}

// TestStandInLabelsEveryTextAndFitsAPost: every post, thread part and topic
// the stand-in writes starts with the label and, label included, fits in
// one post as X counts it.
func TestStandInLabelsEveryTextAndFitsAPost(t *testing.T) {
	for _, c := range standInCases {
		resp := standInAsk(t, c.op, "system prompt", c.user)
		parts := posts(c.op, resp.Text)
		if len(parts) < c.min || len(parts) > c.max {
			t.Errorf("%s: %d parts, want %d to %d:\n%s", c.op, len(parts), c.min, c.max, resp.Text)
		}
		for i, p := range parts {
			if !strings.HasPrefix(p, llm.StandInLabel+" ") {
				t.Errorf("%s part %d is not labelled: %q", c.op, i, p)
			}
			if n := tweettext.WeightedLength(p); n > tweettext.MaxWeightedLength {
				t.Errorf("%s part %d is %d weighted characters: %q", c.op, i, n, p)
			}
			if strings.TrimSpace(strings.TrimPrefix(p, llm.StandInLabel)) == "" {
				t.Errorf("%s part %d has nothing but the label", c.op, i)
			}
		}
		if resp.CostUSD != 0 || !resp.CostKnown || resp.InputTokens != 0 || resp.OutputTokens != 0 {
			t.Errorf("%s: the stand-in reports spend: %+v", c.op, resp)
		}
		if resp.Model != llm.StandInModel {
			t.Errorf("%s: model %q, want %q", c.op, resp.Model, llm.StandInModel)
		}
	}
}

func TestStandInIsDeterministicAndVaried(t *testing.T) {
	for _, c := range standInCases {
		a := standInAsk(t, c.op, "system prompt", c.user).Text
		b := standInAsk(t, c.op, "system prompt", c.user).Text
		if a != b {
			t.Errorf("%s: the same request got two answers:\n%s\n---\n%s", c.op, a, b)
		}
	}
	// Different topics, posts and corrections get different answers.
	seen := map[string]string{}
	for _, topic := range []string{"Go tooling", "shipping CLIs", "safe automation", "rate limits", "observability", "testing"} {
		for _, op := range []string{"generate_tweet", "generate_reply", "generate_thread"} {
			user := "Write one post about: " + topic
			switch op {
			case "generate_reply":
				user = "Post:\n<post>\nWhat is hard about " + topic + " these days?\n</post>"
			case "generate_thread":
				user = "Write a thread about: " + topic
			}
			text := standInAsk(t, op, "system prompt", user).Text
			if prev, dup := seen[text]; dup {
				t.Errorf("%s and %s/%s got the same answer %q", prev, op, topic, text)
			}
			seen[text] = op + "/" + topic
		}
	}
	first := standInAsk(t, "generate_reply", "sys", "Post:\n<post>\nretries in golang\n</post>").Text
	retry, err := llm.NewStandIn().Complete(context.Background(), llm.Request{System: "sys", Operation: "generate_reply",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "Post:\n<post>\nretries in golang\n</post>"},
			{Role: llm.RoleAssistant, Content: first},
			{Role: llm.RoleUser, Content: "It repeats a reply you already posted. Rewrite it."},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if retry.Text == first {
		t.Errorf("a correction got the same answer again: %q", first)
	}
}

func TestStandInReplyAnswersThePost(t *testing.T) {
	text := standInAsk(t, "generate_reply", "", "Post by @rae:\n<post>\nHow do you handle retries in golang clients?\n</post>").Text
	for _, w := range []string{"handle", "retries", "golang"} {
		if !strings.Contains(text, w) {
			t.Errorf("reply %q does not pick up %q from the post", text, w)
		}
	}
	if strings.Contains(text, "@rae") {
		t.Errorf("reply %q mentions the author", text)
	}
}

func TestStandInRefusesWhatAProviderRefuses(t *testing.T) {
	p := llm.NewStandIn()
	if p.Name() != llm.ProviderStandIn || !llm.IsStandIn(p) {
		t.Fatalf("name %q", p.Name())
	}
	if _, err := p.Complete(context.Background(), llm.Request{}); err == nil {
		t.Error("an empty conversation was answered")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err == nil {
		t.Error("a cancelled request was answered")
	}
}
