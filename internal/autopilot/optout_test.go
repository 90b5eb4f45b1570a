package autopilot_test

import (
	"context"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/optouts"
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

// TestSuggestionsSkipOptedOutUsers: on pay_per_use the discovery loop
// hands its best drafts to a person, but never a reply to a user on the
// suppression list: their posts are skipped before any draft, with a
// blocked action saying user_opted_out, and only the other user's post
// becomes a suggestion. On enterprise, where the loop replies through the
// gateway, no reply to them reaches the gateway (whose refusal used to
// end the loop's run) and the other user's post is answered.
func TestSuggestionsSkipOptedOutUsers(t *testing.T) {
	for _, access := range []config.Access{config.AccessPayPerUse, config.AccessEnterprise} {
		t.Run(string(access), func(t *testing.T) {
			e := newEnv(t, func(c *config.Config) {
				c.XAPI.Access = access
				c.Limits.MaxReplySuggestionsPerDay = 20
				c.Limits.MaxRepliesPerDay = 20
			})
			e.clock.AdvanceTo(day0.Add(9 * time.Hour))
			e.postStrangers(1)
			s, err := e.app.OptOuts()
			if err != nil {
				t.Fatal(err)
			}
			keep := e.sim.UserIDByUsername(strangers[0])
			for _, u := range strangers[1:] {
				id := e.sim.UserIDByUsername(u)
				if ok, err := s.Record(context.Background(), optouts.Message{ID: "1" + id[1:], AuthorID: id, AuthorUsername: u, Text: "please stop"}); err != nil || !ok {
					t.Fatalf("Record(%s): %v %v", u, ok, err)
				}
			}
			res := tick(t, e.runner(e.app, autopilot.LoopDiscovery))[autopilot.LoopDiscovery]
			if res.Error != "" {
				t.Fatalf("loop error %s: %s", res.ErrorCode, res.Error)
			}
			authors := map[string]int{}
			for _, h := range e.handOffs() {
				authors[e.authorOfPost(h.TweetID)]++
			}
			for _, u := range strangers[1:] {
				if n := authors[e.sim.UserIDByUsername(u)]; n != 0 {
					t.Errorf("%d suggestions for @%s, who said stop", n, u)
				}
			}
			skipped := e.count(`SELECT count(*) FROM autopilot_actions WHERE status = 'blocked' AND error_code = 'user_opted_out'`)
			if skipped < len(strangers)-1 {
				t.Errorf("%d posts skipped as user_opted_out, want at least %d", skipped, len(strangers)-1)
			}
			refused := e.count(`SELECT count(*) FROM mutation_audit WHERE error_code = 'user_opted_out'`)
			if refused != 0 {
				t.Errorf("%d replies reached the gateway for users who said stop, want none", refused)
			}
			switch access {
			case config.AccessPayPerUse:
				if authors[keep] == 0 {
					t.Errorf("no suggestion for @%s, who did not say stop", strangers[0])
				}
			case config.AccessEnterprise:
				if n := e.count(`SELECT count(*) FROM autopilot_actions WHERE author_id = ?1 AND status IN ('posted','queued')`, keep); n == 0 {
					t.Errorf("no reply sent or queued for @%s, who did not say stop", strangers[0])
				}
			}
		})
	}
}

func (e *env) authorOfPost(id string) string {
	for _, tw := range e.sim.World().Tweets {
		if tw.ID == id {
			return tw.AuthorID
		}
	}
	return ""
}
