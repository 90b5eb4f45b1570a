package autopilot_test

import (
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// TestMentionsLoopRepliesOncePerSummons: on pay_per_use, a mention that
// summons the account gets one reply and a second run adds none. While X
// has not approved the app's AI replies (x_api.ai_replies_approved false,
// the default), the reply the loop's LLM writes goes to a person instead,
// under X's rule, once; nothing reaches X.
func TestMentionsLoopRepliesOncePerSummons(t *testing.T) {
	for _, aiOK := range []bool{true, false} {
		name := "ai_replies_approved"
		if !aiOK {
			name = "ai_replies_not_approved"
		}
		t.Run(name, func(t *testing.T) {
			storetest.ForEachBackend(t, func(t *testing.T) {
				e := newEnv(t, func(c *config.Config) {
					c.XAPI.Access = config.AccessPayPerUse
					c.XAPI.AIRepliesApproved = aiOK
				})
				e.clock.AdvanceTo(day0.Add(9 * time.Hour))
				mention := e.postAs("rustacean_rae", "@tuitbot_demo how do you handle golang retries?")
				replies := func() int {
					n := 0
					for _, tw := range e.sim.World().Tweets {
						if tw.InReplyToTweetID == mention && tw.AuthorID == e.sim.DemoUserID() {
							n++
						}
					}
					return n
				}
				queued := func() int {
					return e.count(`SELECT count(*) FROM approval_queue WHERE target_tweet_id = ? AND matched_rule_id = ?`,
						mention, xrules.RouteRulePrefix+xrules.RuleAIReplies)
				}
				for run := 1; run <= 2; run++ {
					tick(t, e.runner(e.app, autopilot.LoopMentions))
					wantReplies, wantQueued := 1, 0
					if !aiOK {
						wantReplies, wantQueued = 0, 1
					}
					if r, q := replies(), queued(); r != wantReplies || q != wantQueued {
						t.Fatalf("run %d: %d replies on X, %d items for a person; want %d and %d", run, r, q, wantReplies, wantQueued)
					}
					e.clock.AdvanceTo(e.clock.Now().Add(time.Hour))
				}
			})
		})
	}
}
