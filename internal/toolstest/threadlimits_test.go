package toolstest

import (
	"fmt"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestThreadPostsCountAgainstToolLimits: a limit on a tool counts what it
// posts, however it is posted. A thread's first post counts against
// x_post_tweet limits and its later posts against x_reply_to_tweet limits,
// so a thread cannot post past either cap.
func TestThreadPostsCountAgainstToolLimits(t *testing.T) {
	limited := func(t *testing.T, tool string) *env {
		return newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
			c.MCPPolicy.RateLimits = []config.PolicyRate{{Key: "cap", Dimension: "tool", MatchValue: tool, MaxCount: 2, PeriodSeconds: 3600}}
		}})
	}
	thread := func(k int) map[string]any {
		var out []string
		for i := range k {
			out = append(out, fmt.Sprintf("Post %d of %d of a thread that must respect the caps.", i+1, k))
		}
		return map[string]any{"tweets": out}
	}

	t.Run("x_post_tweet: 2 of 2 used refuses a thread", func(t *testing.T) {
		e := limited(t, "x_post_tweet")
		e.call("x_post_tweet", map[string]any{"text": "The first post of the hour."}).ok(t, nil)
		e.call("x_post_tweet", map[string]any{"text": "The second post of the hour."}).ok(t, nil)
		before := e.counters()
		var dry struct {
			WouldAllow bool   `json:"policy_would_allow"`
			RuleID     string `json:"policy_rule_id"`
		}
		e.call("x_post_thread_dry_run", thread(3)).ok(t, &dry)
		if dry.WouldAllow || dry.RuleID != "cap" {
			t.Errorf("the dry run of the thread says %+v, want refused by the cap", dry)
		}
		e.call("x_post_thread", thread(3)).fails(t, apperr.PolicyRateLimited).mentions(t, "cap")
		e.requireDelta(before, map[string]int64{})
	})

	t.Run("x_reply_to_tweet: a thread's later posts use the cap", func(t *testing.T) {
		e := limited(t, "x_reply_to_tweet")
		before := e.counters()
		e.call("x_post_thread", thread(3)).ok(t, nil)
		e.call("x_reply_to_tweet", map[string]any{"text": "One reply too many.", "in_reply_to_id": e.demoTweet(nil).ID}).
			fails(t, apperr.PolicyRateLimited).mentions(t, "cap")
		e.call("x_post_thread", thread(2)).fails(t, apperr.PolicyRateLimited).mentions(t, "cap")
		e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 3})
	})
}
