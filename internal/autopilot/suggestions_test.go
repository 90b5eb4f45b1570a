package autopilot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// strangers post about the product's keyword: discovery finds them, and
// none of them summoned the account.
var strangers = []string{"cli_carla", "gopher_gabe", "kube_kai", "typed_tina", "sqlite_sid", "perf_pete"}

func (e *env) postStrangers(day int) []string {
	e.t.Helper()
	var ids []string
	for i, u := range strangers {
		ids = append(ids, e.postAs(u, fmt.Sprintf("golang question %d/%d: how do you structure retries in a golang CLI? any tips?", day, i)))
	}
	return ids
}

// repliesOnX counts the account's replies on the emulator (its seed has a
// few).
func (e *env) repliesOnX() int {
	n := 0
	for _, tw := range e.sim.World().Tweets {
		if tw.AuthorID == e.sim.DemoUserID() && tw.InReplyToTweetID != "" {
			n++
		}
	}
	return n
}

func (e *env) handOffs() []gateway.HandOff {
	e.t.Helper()
	hs, err := e.app.Gateway.HandOffs(context.Background(), "", 100)
	if err != nil {
		e.t.Fatalf("HandOffs: %v", err)
	}
	return hs
}

// writeSpend is what the account's writes to X cost.
func (e *env) writeSpend() float64 {
	e.t.Helper()
	var usd float64
	if err := e.db().QueryRow(`SELECT COALESCE(SUM(cost_usd), 0) FROM x_api_usage WHERE method <> 'GET'`).Scan(&usd); err != nil {
		e.t.Fatal(err)
	}
	return usd
}

// breakersClosed fails the test when a loop counted an error or its breaker
// is not closed.
func (e *env) breakersClosed(r *autopilot.Runner) {
	e.t.Helper()
	st, err := r.Status(context.Background())
	if err != nil {
		e.t.Fatalf("Status: %v", err)
	}
	for _, l := range st.Loops {
		if l.Errors != 0 || l.Breaker != "closed" {
			e.t.Errorf("loop %s: %d errors, breaker %s (%s)", l.Name, l.Errors, l.Breaker, l.LastError)
		}
	}
}

// TestDiscoveryOnPayPerUseSuggestsReplies: on pay_per_use the discovery
// loop may not reply to strangers by API, so its best drafts become reply
// suggestions for a person: at most limits.max_reply_suggestions_per_day a
// day, across ticks, never the same post twice; no reply and no write
// spend reach X, and the loop counts no error.
func TestDiscoveryOnPayPerUseSuggestsReplies(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		const limit = 2
		e := newEnv(t, func(c *config.Config) {
			c.XAPI.Access = config.AccessPayPerUse
			c.Limits.MaxReplySuggestionsPerDay = limit
		})
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		e.postStrangers(1)
		seeded := e.repliesOnX()
		r := e.runner(e.app, autopilot.LoopDiscovery)
		for run := 1; run <= 3; run++ {
			res := tick(t, r)[autopilot.LoopDiscovery]
			if res.Error != "" {
				t.Fatalf("run %d: loop error %s: %s", run, res.ErrorCode, res.Error)
			}
			if run == 1 && !strings.Contains(res.Summary, fmt.Sprintf("%d reply suggestions handed to a person", limit)) {
				t.Errorf("run 1 summary %q does not say what was handed to a person", res.Summary)
			}
			if n := len(e.handOffs()); n != limit {
				t.Fatalf("run %d: %d hand-offs, want the day's cap %d", run, n, limit)
			}
			e.clock.AdvanceTo(e.clock.Now().Add(time.Hour))
		}
		for _, h := range e.handOffs() {
			if h.Effect != "x_reply_to_tweet" || h.Text == "" || !strings.Contains(h.IntentURL, h.TweetID) {
				t.Errorf("hand-off %+v is not a prefilled reply suggestion", h)
			}
		}
		if n := e.count(`SELECT count(*) FROM mutation_audit WHERE caller = 'autopilot' AND loop_name = 'discovery' AND status = 'handed_off'`); n != limit {
			t.Errorf("%d hand-offs from the discovery loop in the audit, want %d", n, limit)
		}
		if n := e.repliesOnX() - seeded; n != 0 {
			t.Errorf("%d replies reached the emulator", n)
		}
		if usd := e.writeSpend(); usd != 0 {
			t.Errorf("write spend $%f, want $0", usd)
		}
		e.breakersClosed(r)

		// The next day brings a fresh cap, but the posts already suggested
		// are never suggested again.
		e.clock.AdvanceTo(day0.Add(33 * time.Hour))
		e.postStrangers(2)
		for run := 1; run <= 2; run++ {
			if res := tick(t, r)[autopilot.LoopDiscovery]; res.Error != "" {
				t.Fatalf("day 2 run %d: loop error %s", run, res.Error)
			}
			e.clock.AdvanceTo(e.clock.Now().Add(time.Hour))
		}
		hs := e.handOffs()
		if len(hs) != 2*limit {
			t.Errorf("%d hand-offs after two days, want %d", len(hs), 2*limit)
		}
		seen := map[string]bool{}
		for _, h := range hs {
			if seen[h.TweetID] {
				t.Errorf("post %s suggested twice", h.TweetID)
			}
			seen[h.TweetID] = true
		}
		e.breakersClosed(r)
	})
}

// TestDiscoveryOnEnterpriseRepliesThroughApproval: on enterprise the
// discovery loop replies to strangers by API as before, and with the
// defaults (approval_mode on, X's approval of AI replies not declared) each
// reply waits for a person in the approval queue; only a policy rule that
// explicitly allows replies, with AI replies declared approved, lets them
// reach X. No hand-off is made: nothing is refused there.
func TestDiscoveryOnEnterpriseRepliesThroughApproval(t *testing.T) {
	allow := config.PolicyRule{ID: "replies_ok", Priority: 200, Conditions: config.PolicyConditions{Tools: []string{"x_reply_to_tweet"}},
		Action: config.PolicyAction{Type: "allow"}}
	cases := []struct {
		name           string
		aiApproved     bool
		rules          []config.PolicyRule
		queued, posted bool
	}{
		{"defaults", false, nil, true, false},
		{"ai_replies_approved", true, nil, true, false},
		{"rule_allows_replies", true, []config.PolicyRule{allow}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			def := config.Default()
			e := newEnv(t, func(c *config.Config) {
				c.XAPI.Access = config.AccessEnterprise
				c.ApprovalMode = def.ApprovalMode
				c.MCPPolicy.RequireApprovalFor = def.MCPPolicy.RequireApprovalFor
				c.XAPI.AIRepliesApproved = tc.aiApproved
				c.MCPPolicy.Rules = tc.rules
			})
			e.clock.AdvanceTo(day0.Add(9 * time.Hour))
			e.postStrangers(1)
			seeded := e.repliesOnX()
			r := e.runner(e.app, autopilot.LoopDiscovery)
			res := tick(t, r)[autopilot.LoopDiscovery]
			if res.Error != "" {
				t.Fatalf("loop error %s: %s", res.ErrorCode, res.Error)
			}
			if got := res.Queued > 0; got != tc.queued {
				t.Errorf("%d replies queued for approval; want some: %v (%+v)", res.Queued, tc.queued, res)
			}
			onX := e.repliesOnX() - seeded
			if got := onX > 0 && res.Posted == onX; got != tc.posted {
				t.Errorf("%d replies on X (%d posted); want some: %v", onX, res.Posted, tc.posted)
			}
			if !tc.posted && onX != 0 {
				t.Errorf("%d replies reached X without a person", onX)
			}
			if n := len(e.handOffs()); n != 0 {
				t.Errorf("%d hand-offs on enterprise, want none", n)
			}
			e.breakersClosed(r)
		})
	}
}

// TestTargetsOnPayPerUseSuggestReplies: on pay_per_use a target account's
// new post, which did not summon the account, becomes a reply suggestion
// for a person (from the targets loop), within the day's suggestion cap;
// nothing reaches X and the loop counts no error.
func TestTargetsOnPayPerUseSuggestReplies(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) {
			c.XAPI.Access = config.AccessPayPerUse
			c.Targets.Accounts = []string{"@kube_kai", "oss_olivia"}
			c.Limits.MaxRepliesPerAuthorPerDay = 5
			c.Limits.MaxReplySuggestionsPerDay = 3
		})
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		seeded := e.repliesOnX()
		r := e.runner(e.app, autopilot.LoopTargets)
		for i := range 3 {
			e.clock.AdvanceTo(e.clock.Now().Add(time.Hour))
			e.postAs("kube_kai", fmt.Sprintf("Paved roads, take %d: adoption beats mandates.", i))
			e.postAs("oss_olivia", fmt.Sprintf("Maintainer life, part %d.", i))
			if res := tick(t, r)[autopilot.LoopTargets]; res.Error != "" {
				t.Fatalf("run %d: loop error %s: %s", i+1, res.ErrorCode, res.Error)
			}
		}
		if n := e.count(`SELECT count(*) FROM mutation_audit WHERE caller = 'autopilot' AND loop_name = 'targets' AND status = 'handed_off'`); n != 3 {
			t.Errorf("%d reply suggestions from the targets loop, want the cap of 3", n)
		}
		if n := e.repliesOnX() - seeded; n != 0 {
			t.Errorf("%d replies reached the emulator", n)
		}
		e.breakersClosed(r)
	})
}
