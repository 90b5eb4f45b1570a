package content

import (
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// TestStandInDraftsPassEveryCheck: what the sandbox stand-in writes goes
// through the generator's cleaning and checks (length, thread size, banned
// phrases, topic parsing) with its label intact, so the sandbox shows each
// content tool working.
func TestStandInDraftsPassEveryCheck(t *testing.T) {
	g := NewGenerator(llm.NewStandIn(), testProfile())
	labelled := func(what, s string) {
		t.Helper()
		if !strings.HasPrefix(s, llm.StandInLabel+" ") {
			t.Errorf("%s %q is not labelled", what, s)
		}
		if n := tweettext.WeightedLength(s); n > tweettext.MaxWeightedLength {
			t.Errorf("%s is %d weighted characters", what, n)
		}
		if b := g.findBanned(s); b != "" {
			t.Errorf("%s %q uses the banned phrase %q", what, s, b)
		}
	}
	for _, f := range append(Formats(), "") {
		tw, err := g.GenerateTweet(ctx, "release cadence", f)
		if err != nil {
			t.Fatalf("tweet (%s): %v", f, err)
		}
		labelled("tweet ("+f+")", tw)
	}
	var recent []string
	for _, post := range []string{"How do you handle retries in golang clients?", "Release trains or continuous deploys?", "Our CI takes forty minutes, help"} {
		r, err := g.GenerateReply(ctx, ReplyInput{TweetText: post, TweetAuthor: "rae", RecentReplies: recent})
		if err != nil {
			t.Fatalf("reply to %q: %v", post, err)
		}
		labelled("reply", r)
		recent = append([]string{r}, recent...)
	}
	for _, st := range append(Structures(), "") {
		parts, err := g.GenerateThread(ctx, "incident reviews", st)
		if err != nil {
			t.Fatalf("thread (%s): %v", st, err)
		}
		for _, p := range parts {
			labelled("thread post", p)
		}
	}
	plan, err := g.GenerateThreadPlan(ctx, PlanInput{Topic: "incident reviews", Objective: "teach"})
	if err != nil {
		t.Fatal(err)
	}
	labelled("plan's first post", plan.Tweets[0])
	sug, err := g.SuggestTopics(ctx, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sug.Source != SourceLLM || len(sug.Topics) != 4 {
		t.Fatalf("suggestions %+v", sug)
	}
	for _, tp := range sug.Topics {
		labelled("topic", tp.Topic)
	}
	// A suggested topic used as the next post's topic is not labelled twice.
	tw, err := g.GenerateTweet(ctx, sug.Topics[0].Topic, "tip")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(tw, llm.StandInLabel) != 1 {
		t.Errorf("tweet from a suggested topic: %q", tw)
	}
}
