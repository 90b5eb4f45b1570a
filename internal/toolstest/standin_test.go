package toolstest

import (
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// standInTexts are the drafted texts in a content tool's result.
func standInTexts(t *testing.T, r result) []string {
	t.Helper()
	switch r.tool {
	case "generate_tweet":
		var d struct{ Tweet string }
		r.ok(t, &d)
		return []string{d.Tweet}
	case "generate_reply":
		var d struct{ Reply string }
		r.ok(t, &d)
		return []string{d.Reply}
	case "generate_thread":
		var d struct{ Thread []string }
		r.ok(t, &d)
		return d.Thread
	case "generate_thread_plan":
		var d struct {
			Tweets  []string `json:"thread_tweets"`
			Preview string   `json:"first_tweet_preview"`
		}
		r.ok(t, &d)
		return append(d.Tweets, d.Preview)
	case "suggest_topics":
		var d struct{ Topics []struct{ Topic string } }
		r.ok(t, &d)
		var out []string
		for _, tp := range d.Topics {
			out = append(out, tp.Topic)
		}
		return out
	case "compose_tweet":
		var d workflow.ComposeResult
		r.ok(t, &d)
		return append([]string{d.Text}, d.Tweets...)
	case "draft_replies_for_candidates":
		var d struct{ Drafts []workflow.DraftOutcome }
		r.ok(t, &d)
		if d.Drafts[0].Status != "success" {
			t.Fatalf("draft %+v", d.Drafts[0])
		}
		return []string{d.Drafts[0].DraftText}
	case "propose_and_queue_replies":
		var d struct{ Results []workflow.ProposeOutcome }
		r.ok(t, &d)
		if d.Results[0].Status != "queued" {
			t.Fatalf("proposal %+v", d.Results[0])
		}
		return []string{d.Results[0].Text}
	}
	t.Fatalf("no texts known for %s", r.tool)
	return nil
}

// TestSandboxStandIn: in the sandbox with no LLM configured, every
// generating tool answers with the stand-in's drafts, each labelled and
// within one post; capabilities say so, and no LLM spend is recorded.
func TestSandboxStandIn(t *testing.T) {
	e := newEnv(t, envOptions{})
	cand := firstCandidate(t, e)
	for _, c := range llmCalls(cand) {
		t.Run(c.tool, func(t *testing.T) {
			texts := standInTexts(t, e.call(c.tool, c.args))
			if len(texts) == 0 {
				t.Fatal("no text")
			}
			for _, s := range texts {
				if !strings.HasPrefix(s, llm.StandInLabel+" ") {
					t.Errorf("%q is not labelled as the stand-in's", s)
				}
				if n := tweettext.WeightedLength(s); n > tweettext.MaxWeightedLength {
					t.Errorf("%q is %d weighted characters", s, n)
				}
			}
		})
	}
	t.Run("capabilities and spend", func(t *testing.T) {
		var caps struct {
			Services map[string]struct {
				Status  string `json:"status"`
				Message string `json:"message"`
			} `json:"services"`
		}
		e.call("get_capabilities", map[string]any{}).ok(t, &caps)
		if s := caps.Services["llm"]; s.Status != "ok" || !strings.Contains(s.Message, "stand-in") || !strings.Contains(s.Message, "llm_stand_in") {
			t.Errorf("capabilities' llm service %+v does not describe the stand-in and its switch", s)
		}
		var n int
		if err := e.App.DB.QueryRow(`SELECT count(*) FROM llm_usage`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d LLM usage rows recorded for the stand-in", n)
		}
	})
}
