package autopilot_test

import (
	"context"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestMentionsLoopHonoursStop: a mention saying "stop" puts its author on
// the suppression list, and the mentions loop never replies to them again
// (their later summoning mention included, on every run), while another
// user's summoning mention still gets its reply.
func TestMentionsLoopHonoursStop(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) {
			c.XAPI.Access = config.AccessPayPerUse
			c.XAPI.AIRepliesApproved = true
		})
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		repliesTo := func(author string) int {
			n := 0
			w := e.sim.World()
			for _, tw := range w.Tweets {
				if tw.AuthorID != e.sim.DemoUserID() || tw.InReplyToTweetID == "" {
					continue
				}
				for _, p := range w.Tweets {
					if p.ID == tw.InReplyToTweetID && p.AuthorID == author {
						n++
					}
				}
			}
			return n
		}
		stop := e.postAs("rustacean_rae", "@tuitbot_demo STOP replying to me please")
		other := e.postAs("gopher_gabe", "@tuitbot_demo how do you handle golang retries?")
		rae, gabe := authorOf(t, e, stop), authorOf(t, e, other)
		// The seeded world may hold earlier replies to either of them.
		raeBefore, gabeBefore := repliesTo(rae), repliesTo(gabe)
		for run := 1; run <= 3; run++ {
			if run == 2 {
				e.postAs("rustacean_rae", "@tuitbot_demo what do you think about golang retries?")
			}
			tick(t, e.runner(e.app, autopilot.LoopMentions))
			if n := repliesTo(rae) - raeBefore; n != 0 {
				t.Fatalf("run %d: %d replies to the user who said stop, want 0", run, n)
			}
			if n := repliesTo(gabe) - gabeBefore; n != 1 {
				t.Fatalf("run %d: %d replies to the other user's mention, want 1", run, n)
			}
			e.clock.AdvanceTo(e.clock.Now().Add(time.Hour))
		}
		if out, err := optedOut(t, e, rae); err != nil || !out {
			t.Fatalf("OptedOut(rae) = %v, %v; want on the suppression list", out, err)
		}
	})
}

func authorOf(t *testing.T, e *env, id string) string {
	t.Helper()
	for _, tw := range e.sim.World().Tweets {
		if tw.ID == id {
			return tw.AuthorID
		}
	}
	t.Fatalf("post %s not in the emulator", id)
	return ""
}

func optedOut(t *testing.T, e *env, user string) (bool, error) {
	t.Helper()
	s, err := e.app.OptOuts()
	if err != nil {
		return false, err
	}
	return s.OptedOut(context.Background(), user)
}
