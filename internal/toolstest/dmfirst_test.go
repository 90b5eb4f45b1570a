package toolstest

import (
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/xrules"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestDMOnlyAfterUserDMs is the rule table of X's "DMs only after the
// user DMs you first". With a policy that sends DMs at once (a rule names
// x_send_dm and x_post), an agent's DM to a user who never wrote to the
// account, in each spelling (typed; universal by participant and by
// conversation, whose recipient the request does not name), goes to a
// person instead: no request at all reaches the emulator and nothing is
// billed. Once the user wrote and the account read it
// (x_get_dm_events, or x_get of /2/dm_events asking for the sender),
// the typed and universal DMs go out; a DM a person approves goes out too.
func TestDMOnlyAfterUserDMs(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{permissive: true, access: config.AccessPayPerUse, onX: x.hook, configure: func(c *config.Config) {
		c.MCPPolicy.Rules = []config.PolicyRule{allowRule("dms_ok", config.PolicyConditions{Tools: []string{"x_send_dm", "x_post"}})}
	}})
	me := e.Sim.DemoUserID()
	to := dmRecipient(t, e)
	conv := me + "-" + to.ID
	if len(to.ID) < len(me) || len(to.ID) == len(me) && to.ID < me {
		conv = to.ID + "-" + me
	}
	raw := func(path, text string) map[string]any {
		return map[string]any{"path": path, "body": `{"text":"` + text + `"}`,
			"headers": []map[string]any{{"key": "Content-Type", "value": "application/json"}}}
	}
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"typed", "x_send_dm", map[string]any{"participant_id": to.ID, "text": "Hi, saw your post on agents"}},
		{"universal by participant", "x_post", raw("/2/dm_conversations/with/"+to.ID+"/messages", "Hi from the raw route")},
		{"universal by conversation", "x_post", raw("/2/dm_conversations/"+conv+"/messages", "Hi by conversation")},
	}
	queued := map[string]int64{}
	for _, tc := range cases {
		t.Run("to a user who did not write: "+tc.name, func(t *testing.T) {
			writes, reads := x.snapshot()
			counters, billed := e.Sim.Counters(), e.Sim.Billing()
			var q routed
			e.call(tc.tool, tc.args).ok(t, &q)
			if !q.Routed || q.MatchedRuleID != xrules.RouteRulePrefix+xrules.RuleDMFirst {
				t.Fatalf("%s answered %+v, want it sent to a person by %s", tc.tool, q, xrules.RuleDMFirst)
			}
			queued[tc.name] = q.ApprovalID
			if w, rs := x.snapshot(); w != writes || len(rs) != len(reads) {
				t.Errorf("%d writes and reads %v reached X, want none", w-writes, rs[len(reads):])
			}
			if after := e.Sim.Billing(); after.Micros != billed.Micros {
				t.Errorf("billed %d micro-dollars, want 0", after.Micros-billed.Micros)
			}
			for k, v := range e.Sim.Counters() {
				if v != counters[k] {
					t.Errorf("emulator counter %s went from %d to %d", k, counters[k], v)
				}
			}
		})
	}

	t.Run("approved by a person", func(t *testing.T) {
		before := e.counters()
		it, _, err := e.App.Gateway.Approve(e.ctx, queued["typed"], "alice", "")
		if err != nil || it.Status != gateway.ApprovalExecuted {
			t.Fatalf("approving the DM: %+v %v", it, err)
		}
		e.requireDelta(before, map[string]int64{xsim.CountDMsSent: 1})
	})

	t.Run("to a user who wrote first", func(t *testing.T) {
		other := dmRecipientOtherThan(t, e, to.ID)
		writesFirst(t, e, other)
		before := e.counters()
		executed(t, e.call("x_send_dm", map[string]any{"participant_id": other, "text": "Thanks for writing, here is the link"}), nil)
		executed(t, e.call("x_post", raw("/2/dm_conversations/with/"+other+"/messages", "And one more thing")), nil)
		e.requireDelta(before, map[string]int64{xsim.CountDMsSent: 2})
		var last string
		for _, d := range sentDMs(e) {
			last = d.Text
		}
		if !strings.Contains(last, "one more thing") {
			t.Fatalf("the last DM sent is %q", last)
		}
	})

	t.Run("to a user who wrote first, read with x_get", func(t *testing.T) {
		other := dmRecipientOtherThan(t, e, to.ID)
		var third string
		for _, u := range e.Sim.World().Users {
			if u.ID != me && u.ID != to.ID && u.ID != other && !u.DMsFromFollowedOnly && !u.Protected {
				third = u.ID
				break
			}
		}
		if _, err := e.Sim.DMAs(third, "Hi, does it run on my laptop?"); err != nil {
			t.Fatal(err)
		}
		// Without expansions=sender_id X does not say who wrote: that
		// read teaches nothing.
		for _, q := range [][]map[string]any{nil, {{"key": "expansions", "value": "sender_id"}}} {
			var got struct {
				Status int `json:"status"`
			}
			args := map[string]any{"path": "/2/dm_events"}
			if q != nil {
				args["query"] = q
			}
			e.call("x_get", args).ok(t, &got)
			if got.Status != 200 {
				t.Fatalf("x_get /2/dm_events answered %d", got.Status)
			}
			if q != nil {
				break
			}
			var r routed
			e.call("x_send_dm", map[string]any{"participant_id": third, "text": "Before the sender is known"}).ok(t, &r)
			if !r.Routed || r.MatchedRuleID != xrules.RouteRulePrefix+xrules.RuleDMFirst {
				t.Fatalf("a DM after a read that names no sender answered %+v, want it sent to a person", r)
			}
		}
		before := e.counters()
		executed(t, e.call("x_send_dm", map[string]any{"participant_id": third, "text": "Yes, and here is how"}), nil)
		e.requireDelta(before, map[string]int64{xsim.CountDMsSent: 1})
	})
}

// dmRecipientOtherThan is a user who takes messages from the demo account
// and is not user.
func dmRecipientOtherThan(t *testing.T, e *env, user string) string {
	t.Helper()
	for _, u := range e.Sim.World().Users {
		if u.ID != e.Sim.DemoUserID() && u.ID != user && !u.DMsFromFollowedOnly && !u.Protected {
			return u.ID
		}
	}
	t.Fatal("the demo world has nobody else who takes messages")
	return ""
}
