package autopilot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestSandboxStandInDraftsWithoutAnLLM: in the sandbox with no LLM
// configured, the drafting loops run on the stand-in: a mention is
// answered, a tweet and a thread are posted, every post on the emulator
// carries the stand-in label, and no LLM usage (spend) is recorded.
func TestSandboxStandInDraftsWithoutAnLLM(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) { c.LLM = config.LLM{} })
		if !e.app.UsingStandIn() {
			t.Fatal("the sandbox app without an LLM does not use the stand-in")
		}
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		e.postAs("rustacean_rae", "@tuitbot_demo how do you handle golang retries?")
		start := e.clock.Now()
		r := e.runner(e.app, autopilot.LoopMentions, autopilot.LoopContent, autopilot.LoopThreads)
		res := tick(t, r)
		for _, n := range r.Loops() {
			if x := res[n]; x.Error != "" || x.Posted == 0 {
				t.Errorf("%s on the stand-in: %+v", n, x)
			}
		}
		posts := e.ourPosts(start, e.clock.Now().Add(time.Second))
		if len(posts) < 1+1+5 {
			t.Fatalf("%d posts on the emulator, want a reply, a tweet and a thread", len(posts))
		}
		for _, p := range posts {
			if !strings.HasPrefix(p.Text, llm.StandInLabel+" ") {
				t.Errorf("post %s is not labelled as the stand-in's: %q", p.ID, p.Text)
			}
		}
		if n := e.count(`SELECT count(*) FROM llm_usage`); n != 0 {
			t.Errorf("%d LLM usage rows recorded for the stand-in", n)
		}
		for _, kind := range []string{"tweet", "reply", "thread", "other"} {
			if n := e.llm.count(kind); n != 0 {
				t.Errorf("%d %s calls reached an LLM server", n, kind)
			}
		}
		st, err := r.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range st.Loops {
			if l.State == autopilot.StateBlocked {
				t.Errorf("%s is blocked on the stand-in: %+v", l.Name, l)
			}
		}
	})
}

// TestSandboxStandInQueuesForApproval: with approval on, the content loop's
// stand-in tweet waits in the approval queue with its label, so the human
// reviewing it sees where it came from.
func TestSandboxStandInQueuesForApproval(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) {
			c.LLM = config.LLM{}
			c.ApprovalMode = true
			c.MCPPolicy.RequireApprovalFor = []string{"x_post_tweet"}
		})
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		r := e.runner(e.app, autopilot.LoopContent)
		if x := tick(t, r)[autopilot.LoopContent]; x.Error != "" || x.Queued != 1 {
			t.Fatalf("content on the stand-in with approval: %+v", x)
		}
		var params string
		if err := e.db().QueryRow(`SELECT params_json FROM approval_queue WHERE tool_name = 'x_post_tweet'`).Scan(&params); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(params, llm.StandInLabel) {
			t.Errorf("the queued tweet is not labelled: %s", params)
		}
	})
}

// TestSandboxStandInKeepsPostingAllWeek: the stand-in answers the same
// request with the same text, so a content loop that cycles through a few
// topics once ran dry on its first day, every later draft blocked as a
// repeat. The account's latest posts are part of the prompt, so a week in
// the sandbox posts on every day, and no two posts are repeats.
func TestSandboxStandInKeepsPostingAllWeek(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) { c.LLM = config.LLM{} })
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		r := e.runner(e.app, autopilot.LoopContent)
		end := day0.Add(7 * 24 * time.Hour)
		for e.clock.Now().Before(end) {
			if x := tick(t, r)[autopilot.LoopContent]; x.Error != "" {
				t.Fatalf("content loop at %s: %s", e.clock.Now(), x.Error)
			}
			e.clock.Advance(5 * time.Hour)
		}
		rows, err := e.app.DB.QueryContext(context.Background(), `SELECT content, created_at FROM autopilot_actions
			WHERE account_id = 'default' AND kind = 'tweet' AND status = 'posted' ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var posts []string
		days := map[string]bool{}
		for rows.Next() {
			var text, at string
			if err := rows.Scan(&text, &at); err != nil {
				t.Fatal(err)
			}
			for _, p := range posts {
				if s := content.Jaccard(p, text); s >= content.SimilarityThreshold {
					t.Errorf("posted a repeat (overlap %.2f):\n%s\n%s", s, p, text)
				}
			}
			posts = append(posts, text)
			days[at[:10]] = true
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(days) != 7 {
			t.Fatalf("posted on %d of 7 days (%d posts): %v", len(days), len(posts), days)
		}
	})
}
