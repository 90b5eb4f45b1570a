package toolstest

import (
	"context"
	"fmt"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/xrules"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestLikesAndFollowsGoToAPerson: on enterprise, where X's API takes
// likes and follows, an agent's like or follow, in every spelling, is
// queued for a person under x_rule:likes_follows_by_person whatever the
// policy says (approval mode off, an allow rule of the highest priority
// for the tool, the growth_aggressive template, agents allowed to
// approve); nothing reaches X until a person approves it, and then it
// executes once. An agent allowed to approve items is refused, and the
// item stays pending for the person.
func TestLikesAndFollowsGoToAPerson(t *testing.T) {
	raw := func(path, body string) map[string]any {
		return map[string]any{"path": path, "body": body,
			"headers": []map[string]any{{"key": "Content-Type", "value": "application/json"}}}
	}
	spellings := []struct {
		name, tool string
		args       func(me, post, user string) map[string]any
		counter    string
	}{
		{"typed like", "x_like_tweet", func(_, p, _ string) map[string]any { return map[string]any{"tweet_id": p} }, xsim.CountLikes},
		{"universal like", "x_post", func(me, p, _ string) map[string]any {
			return raw("/2/users/"+me+"/likes", fmt.Sprintf(`{"tweet_id":%q}`, p))
		}, xsim.CountLikes},
		{"typed follow", "x_follow_user", func(_, _, u string) map[string]any { return map[string]any{"target_user_id": u} }, xsim.CountFollows},
		{"universal follow", "x_post", func(me, _, u string) map[string]any {
			return raw("/2/users/"+me+"/following", fmt.Sprintf(`{"target_user_id":%q}`, u))
		}, xsim.CountFollows},
	}
	allow := func(c *config.Config) {
		c.MCPPolicy.Rules = append(c.MCPPolicy.Rules, config.PolicyRule{ID: "let_agents_engage", Priority: 1000,
			Conditions: config.PolicyConditions{Tools: []string{"x_like_tweet", "x_follow_user", "x_post"}},
			Action:     config.PolicyAction{Type: "allow"}})
	}
	policies := []struct {
		name      string
		configure func(*config.Config)
	}{
		{"approval mode off", func(*config.Config) {}},
		{"an allow rule for the tool", allow},
		{"the growth_aggressive template", func(c *config.Config) { c.MCPPolicy.Template = "growth_aggressive" }},
	}
	for _, p := range policies {
		t.Run(p.name, func(t *testing.T) {
			var x xTraffic
			e := newEnv(t, envOptions{permissive: true, agentApproval: true, access: config.AccessEnterprise, onX: x.hook, configure: p.configure})
			me := e.Sim.DemoUserID()
			for i, sp := range spellings {
				t.Run(sp.name, func(t *testing.T) {
					// Someone the account does not follow yet, so that the
					// follow is a new one X counts.
					user := e.otherUser().ID
					post, err := e.Sim.PostAs(user, fmt.Sprintf("Notes on a Go release, part %d", i), "")
					if err != nil {
						t.Fatal(err)
					}
					writes, _ := x.snapshot()
					counters := e.Sim.Counters()
					var q routed
					e.call(sp.tool, sp.args(me, post, user)).ok(t, &q)
					if !q.Routed || q.ApprovalID == 0 || q.MatchedRuleID != xrules.RouteRulePrefix+xrules.RuleLikesFollows {
						t.Fatalf("%s: %+v, want it queued by %s", sp.tool, q, xrules.RuleLikesFollows)
					}
					if w, _ := x.snapshot(); w != writes {
						t.Fatalf("%d writes reached X before a person decided, want none", w-writes)
					}
					if got := e.Sim.Counters()[sp.counter]; got != counters[sp.counter] {
						t.Fatalf("emulator %s went from %d to %d before a person decided", sp.counter, counters[sp.counter], got)
					}

					// The agent may approve other items, not this one.
					e.call("approve_item", map[string]any{"id": q.ApprovalID}).fails(t, apperr.PolicyHardRule).
						mentions(t, "an agent may not approve it")
					var all mcpserver.BatchApproval
					e.call("approve_all", map[string]any{}).ok(t, &all)
					if len(all.Approved) != 0 || len(all.Failed) != 1 || all.Failed[0]["code"] != string(apperr.PolicyHardRule) {
						t.Fatalf("approve_all: %+v, want the item refused", all)
					}
					if it, err := e.App.Gateway.Item(e.ctx, q.ApprovalID); err != nil || it.Status != gateway.ApprovalPending {
						t.Fatalf("item after the agent's tries: %+v %v, want pending", it, err)
					}
					if w, _ := x.snapshot(); w != writes {
						t.Fatalf("%d writes reached X on the agent's approval, want none", w-writes)
					}

					// The person's approval is the initiation: it runs once.
					it, resp, err := e.App.Gateway.Approve(e.ctx, q.ApprovalID, "alice", "")
					if err != nil || it.Status != gateway.ApprovalExecuted || resp.Kind != gateway.Executed {
						t.Fatalf("approval by a person: %+v %+v %v", it, resp, err)
					}
					if w, _ := x.snapshot(); w != writes+1 {
						t.Fatalf("%d writes reached X on the person's approval, want 1", w-writes)
					}
					if got := e.Sim.Counters()[sp.counter]; got != counters[sp.counter]+1 {
						t.Fatalf("emulator %s went from %d to %d, want one more", sp.counter, counters[sp.counter], got)
					}
				})
			}
		})
	}
}

// TestLegacyLikesAndFollowsGoToAPerson: the v1.1 spellings of a like and a
// follow are the same effects and meet the same rule, whatever the policy
// allows; an agent cannot approve them.
func TestLegacyLikesAndFollowsGoToAPerson(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{permissive: true, agentApproval: true, access: config.AccessEnterprise, onX: x.hook, configure: func(c *config.Config) {
		c.MCPPolicy.Template = "growth_aggressive"
	}})
	user := e.otherUser().ID
	post, err := e.Sim.PostAs(user, "A post on an old API", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, key, value string }{
		{"v1.1 like", "/1.1/favorites/create.json", "id", post},
		{"v1.1 follow", "/1.1/friendships/create.json", "user_id", user},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writes, _ := x.snapshot()
			var q routed
			e.call("x_post", map[string]any{"path": tc.path, "query": []map[string]string{{"key": tc.key, "value": tc.value}}}).ok(t, &q)
			if !q.Routed || q.MatchedRuleID != xrules.RouteRulePrefix+xrules.RuleLikesFollows {
				t.Fatalf("%s: %+v, want it queued by %s", tc.path, q, xrules.RuleLikesFollows)
			}
			e.call("approve_item", map[string]any{"id": q.ApprovalID}).fails(t, apperr.PolicyHardRule)
			if w, _ := x.snapshot(); w != writes {
				t.Fatalf("%d writes reached X, want none", w-writes)
			}
		})
	}
}

// TestLikesAndFollowsByAPersonRunAtOnce: a like or follow a person typed
// (the CLI's caller) or pressed (the web UI's rollback of an unlike) is
// theirs already and runs at once on enterprise when the policy allows it;
// an agent's undo of a like or follow is not routed by the rule (it makes
// no engagement) and runs too.
func TestLikesAndFollowsByAPersonRunAtOnce(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{permissive: true, access: config.AccessEnterprise, onX: x.hook})
	user := e.otherUser().ID
	post, err := e.Sim.PostAs(user, "A post a person likes by hand", "")
	if err != nil {
		t.Fatal(err)
	}
	pressed, err := e.Sim.PostAs(user, "A post a person likes again from the web UI", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		caller, tool string
		params       any
		counter      string
	}{
		{"cli", "x_like_tweet", actions.TweetIDParams{TweetID: post}, xsim.CountLikes},
		{"cli", "x_follow_user", map[string]any{"target_user_id": user}, xsim.CountFollows},
		{"web", "x_like_tweet", actions.TweetIDParams{TweetID: pressed}, xsim.CountLikes},
		{"mcp", "x_unlike_tweet", actions.TweetIDParams{TweetID: post}, xsim.CountUnlikes},
		{"mcp", "x_unfollow_user", map[string]any{"target_user_id": user}, xsim.CountUnfollows},
	} {
		t.Run(tc.caller+" "+tc.tool, func(t *testing.T) {
			writes, _ := x.snapshot()
			before := e.Sim.Counters()[tc.counter]
			resp, err := e.App.Gateway.Do(context.Background(), gateway.Call{Tool: tc.tool, Params: tc.params, Caller: tc.caller})
			if err != nil || resp.Kind != gateway.Executed {
				t.Fatalf("%s by %s: %+v %v, want it executed", tc.tool, tc.caller, resp, err)
			}
			if w, _ := x.snapshot(); w != writes+1 {
				t.Fatalf("%d writes reached X, want 1", w-writes)
			}
			if got := e.Sim.Counters()[tc.counter]; got != before+1 {
				t.Fatalf("emulator %s went from %d to %d, want one more", tc.counter, before, got)
			}
		})
	}
}
