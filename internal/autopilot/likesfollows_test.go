package autopilot_test

import (
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestAutopilotNeverLikesOrFollows: X's developer guidelines prohibit
// auto-liking and automated following, and the autopilot has neither. A
// day of every loop, on enterprise (where X's API would take likes and
// follows) with a policy that lets everything run, answers mentions,
// replies, posts and publishes, yet no like, follow or undo of one reaches
// X, is recorded in the audit trail or waits in the approval queue.
func TestAutopilotNeverLikesOrFollows(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		c.Targets.Accounts = []string{"kube_kai", "oss_olivia"}
		c.Targets.MaxTargetRepliesPerDay = 2
	})
	dayTraffic(e)
	engage := []string{xsim.CountLikes, xsim.CountUnlikes, xsim.CountFollows, xsim.CountUnfollows}
	before := e.sim.Counters()
	end := day0.Add(23*time.Hour + 59*time.Minute)
	e.runUntil(e.runner(e.app), end)

	// The day did what an autopilot does, so the silence below is the
	// loops', not an idle runner's.
	day := e.classify(day0, end, nil)
	if len(day.replies) == 0 || len(day.tweets) == 0 {
		t.Fatalf("the autopilot did nothing: %d replies, %d posts", len(day.replies), len(day.tweets))
	}
	after := e.sim.Counters()
	for _, k := range engage {
		if after[k] != before[k] {
			t.Errorf("emulator %s went from %d to %d", k, before[k], after[k])
		}
	}
	const tools = `('x_like_tweet', 'x_unlike_tweet', 'x_follow_user', 'x_unfollow_user')`
	if n := e.count(`SELECT count(*) FROM mutation_audit WHERE tool_name IN ` + tools + ` OR equivalent_tool IN ` + tools); n != 0 {
		t.Errorf("%d audit rows of likes or follows", n)
	}
	if n := e.count(`SELECT count(*) FROM approval_queue WHERE tool_name IN ` + tools + ` OR equivalent_tool IN ` + tools); n != 0 {
		t.Errorf("%d likes or follows wait for approval", n)
	}
	if n := e.count(`SELECT count(*) FROM x_api_usage WHERE method <> 'GET' AND (endpoint LIKE '%/likes%' OR endpoint LIKE '%/following%')`); n != 0 {
		t.Errorf("%d like or follow requests in the usage ledger", n)
	}
}
