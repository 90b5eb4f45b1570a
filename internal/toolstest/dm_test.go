package toolstest

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/xrules"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// allowRule is a user rule that allows what its conditions match.
func allowRule(id string, cond config.PolicyConditions) config.PolicyRule {
	return config.PolicyRule{ID: id, Priority: 200, Conditions: cond, Action: config.PolicyAction{Type: "allow"}}
}

// dmEnv is a permissive environment (approval mode off, nothing in
// require_approval_for) with the given user rules and DM cap.
func dmEnv(t *testing.T, maxPerDay int, rules ...config.PolicyRule) *env {
	t.Helper()
	return newEnv(t, envOptions{permissive: true, agentApproval: true, configure: func(c *config.Config) {
		c.MCPPolicy.Rules = rules
		c.Limits.MaxDMsPerDay = maxPerDay
	}})
}

// dmRecipient is a user who takes messages from the demo account.
func dmRecipient(t *testing.T, e *env) xsim.User {
	t.Helper()
	for _, u := range e.Sim.World().Users {
		if u.ID != e.Sim.DemoUserID() && !u.DMsFromFollowedOnly && !u.Protected {
			return u
		}
	}
	t.Fatal("the demo world has nobody who takes messages")
	return xsim.User{}
}

// writesFirst has each user send the account a DM, and reads them with
// x_get_dm_events: X's guidelines let an automated DM go only to a user
// who wrote to the account first.
func writesFirst(t *testing.T, e *env, users ...string) {
	t.Helper()
	for _, u := range users {
		if _, err := e.Sim.DMAs(u, "Hi, a question about your tool"); err != nil {
			t.Fatal(err)
		}
	}
	e.call("x_get_dm_events", map[string]any{}).ok(t, nil)
}

// sendApproved sends a DM to a user who did not write first: it goes to
// a person, who approves it.
func sendApproved(t *testing.T, e *env, to, text string) {
	t.Helper()
	var q routed
	e.call("x_send_dm", map[string]any{"participant_id": to, "text": text}).ok(t, &q)
	if !q.Routed || q.MatchedRuleID != xrules.RouteRulePrefix+xrules.RuleDMFirst {
		t.Fatalf("a DM to %s answered %+v, want it sent to a person by %s", to, q, xrules.RuleDMFirst)
	}
	if _, _, err := e.App.Gateway.Approve(e.ctx, q.ApprovalID, "alice", ""); err != nil {
		t.Fatalf("approving the DM to %s: %v", to, err)
	}
}

// sentDMs are the messages the demo account sent.
func sentDMs(e *env) []xsim.DMEvent {
	var out []xsim.DMEvent
	for _, d := range e.Sim.DMs() {
		if d.SenderID == e.Sim.DemoUserID() {
			out = append(out, d)
		}
	}
	return out
}

// TestDirectMessagesNeedApprovalUnlessNamed: x_send_dm goes to approval
// under the default policy, and also where every other mutation runs at
// once (approval mode off) or a rule allows everything or the dm category;
// only a rule naming x_send_dm sends it. Nothing reaches the emulator
// until then.
func TestDirectMessagesNeedApprovalUnlessNamed(t *testing.T) {
	cases := []struct {
		name string
		env  func(t *testing.T) *env
	}{
		{"default policy", func(t *testing.T) *env { return newEnv(t, envOptions{}) }},
		{"approval mode off", func(t *testing.T) *env { return dmEnv(t, 10) }},
		{"a wildcard allow", func(t *testing.T) *env { return dmEnv(t, 10, allowRule("all", config.PolicyConditions{})) }},
		{"a dm category allow", func(t *testing.T) *env {
			return dmEnv(t, 10, allowRule("dms", config.PolicyConditions{Categories: []string{"dm"}}))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			to := dmRecipient(t, e)
			var q routed
			e.call("x_send_dm", map[string]any{"participant_id": to.ID, "text": "Hi, about your post on agents."}).ok(t, &q)
			if !q.Routed || q.ApprovalID == 0 || len(e.Sim.DMs()) != 0 {
				t.Fatalf("x_send_dm answered %+v with %d messages sent, want it routed to approval and nothing sent", q, len(e.Sim.DMs()))
			}
		})
	}

	t.Run("a universal request allowed by name", func(t *testing.T) {
		// A rule naming x_post does not name x_send_dm: x_post doing a
		// message's work still waits for a human.
		e := dmEnv(t, 10, allowRule("raw_ok", config.PolicyConditions{Tools: []string{"x_post"}}))
		to := dmRecipient(t, e)
		var q routed
		e.call("x_post", map[string]any{"path": "/2/dm_conversations/with/" + to.ID + "/messages", "body": `{"text":"raw hello"}`}).ok(t, &q)
		if !q.Routed || len(e.Sim.DMs()) != 0 {
			t.Fatalf("x_post of a message answered %+v with %d sent, want it routed to approval", q, len(e.Sim.DMs()))
		}
	})

	t.Run("a rule naming x_send_dm", func(t *testing.T) {
		e := dmEnv(t, 10, allowRule("dms_ok", config.PolicyConditions{Tools: []string{"x_send_dm"}}))
		to := dmRecipient(t, e)
		writesFirst(t, e, to.ID)
		before := e.counters()
		var sent actions.SentDM
		r := executed(t, e.call("x_send_dm", map[string]any{"participant_id": to.ID, "text": "Thanks for the pointer!"}), &sent)
		e.requireDelta(before, map[string]int64{xsim.CountDMsSent: 1})
		dms := sentDMs(e)
		if len(dms) != 1 || dms[0].ID != sent.DMEventID || dms[0].Text != "Thanks for the pointer!" || !slices.Contains(dms[0].ParticipantIDs, to.ID) {
			t.Fatalf("sent %+v; the emulator holds %+v", sent, dms)
		}
		requireUndo(t, r.Meta.Rollback, "x_delete_dm", map[string]any{"dm_event_id": sent.DMEventID})

		// Its undo is a delete, which goes to a human like every delete.
		var q routed
		e.call("x_delete_dm", map[string]any{"dm_event_id": sent.DMEventID}).ok(t, &q)
		if !q.Routed || !strings.HasPrefix(q.MatchedRuleID, "hard:") {
			t.Fatalf("x_delete_dm answered %+v, want routed by the delete hard rule", q)
		}
		var it gateway.ApprovalItem
		ar := e.call("approve_item", map[string]any{"id": q.ApprovalID}).ok(t, &it)
		if it.Status != gateway.ApprovalExecuted || it.Tool != "x_delete_dm" {
			t.Fatalf("approved item %+v", it)
		}
		if rb := ar.Meta.Rollback; rb == nil || rb.Reversible {
			t.Fatalf("delete rollback %+v, want irreversible guidance", rb)
		}
		if dms := sentDMs(e); !dms[0].Deleted {
			t.Fatalf("the message is still there after the approved delete: %+v", dms[0])
		}
		e.requireDelta(before, map[string]int64{xsim.CountDMsSent: 1, xsim.CountDMsDeleted: 1})

		// X's refusal: someone who takes messages only from those they follow.
		var closed string
		for _, u := range e.Sim.World().Users {
			if u.DMsFromFollowedOnly {
				closed = u.ID
			}
		}
		writesFirst(t, e, closed)
		e.call("x_send_dm", map[string]any{"participant_id": closed, "text": "Hello there"}).fails(t, apperr.XForbidden).mentions(t, "cannot send messages")

		requireRejectsIDs(t, e, "x_send_dm", "participant_id", func(id string) map[string]any {
			return map[string]any{"participant_id": id, "text": "hi"}
		})
		e.call("x_send_dm", map[string]any{"participant_id": to.ID, "text": "  "}).fails(t, apperr.InvalidInput).mentions(t, "text")
		e.call("x_send_dm", map[string]any{"participant_id": to.ID, "text": strings.Repeat("a", 10001)}).fails(t, apperr.InvalidInput).mentions(t, "text")
		requireRejectsIDs(t, e, "x_delete_dm", "dm_event_id", func(id string) map[string]any { return map[string]any{"dm_event_id": id} })
	})
}

// TestDailyDMCap: past limits.max_dms_per_day a message is refused with
// the limit error naming the key, before anything reaches X.
func TestDailyDMCap(t *testing.T) {
	e := dmEnv(t, 2, allowRule("dms_ok", config.PolicyConditions{Tools: []string{"x_send_dm"}}))
	to := dmRecipient(t, e)
	writesFirst(t, e, to.ID)
	for i, text := range []string{"First message", "Second message"} {
		executed(t, e.call("x_send_dm", map[string]any{"participant_id": to.ID, "text": text}), nil)
		if n := len(sentDMs(e)); n != i+1 {
			t.Fatalf("after %d messages the emulator holds %d", i+1, n)
		}
	}
	before := e.counters()
	e.call("x_send_dm", map[string]any{"participant_id": to.ID, "text": "Third message"}).
		fails(t, apperr.PolicyRateLimited).mentions(t, "limits.max_dms_per_day")
	e.requireDelta(before, nil)
}

// TestDMEventsRead: x_get_dm_events returns the messages sent, all of
// them or one conversation's, bills them as DM event reads, refuses bad
// input, and is offered in the workflow profile only.
func TestDMEventsRead(t *testing.T) {
	e := dmEnv(t, 10, allowRule("dms_ok", config.PolicyConditions{Tools: []string{"x_send_dm"}}))
	to := dmRecipient(t, e)
	other := dmRecipient(t, e)
	for _, u := range e.Sim.World().Users {
		if u.ID != to.ID && u.ID != e.Sim.DemoUserID() && !u.DMsFromFollowedOnly {
			other = u
			break
		}
	}
	// Neither wrote first: a person approves each message.
	sendApproved(t, e, to.ID, "One for you")
	sendApproved(t, e, other.ID, "One for the other")
	billed := e.Sim.Billing().Units[xsim.BillDMRead]

	var all mcpserver.DMEventList
	e.call("x_get_dm_events", map[string]any{}).ok(t, &all)
	if len(all.Events) != 2 || all.Events[0].Text != "One for the other" || all.Events[1].Text != "One for you" {
		t.Fatalf("all events %+v, want both messages, newest first", all.Events)
	}
	var one mcpserver.DMEventList
	e.call("x_get_dm_events", map[string]any{"participant_id": to.ID, "event_types": []string{"MessageCreate"}}).ok(t, &one)
	if len(one.Events) != 1 || one.Events[0].Text != "One for you" || one.Events[0].SenderID != e.Sim.DemoUserID() {
		t.Fatalf("conversation events %+v, want the one message to %s", one.Events, to.ID)
	}
	if got := e.Sim.Billing().Units[xsim.BillDMRead] - billed; got != 2 {
		t.Fatalf("billed %d DM event reads, want 2 (each event once a day)", got)
	}
	e.call("x_get_dm_events", map[string]any{"event_types": []string{"Typing"}}).fails(t, apperr.InvalidInput).mentions(t, "event_types")
	requireRejectsIDs(t, e, "x_get_dm_events", "participant_id", func(id string) map[string]any { return map[string]any{"participant_id": id} })

	for _, tool := range mcpserver.Registry() {
		if tool.Name == "x_get_dm_events" && (!tool.In(mcpserver.Workflow) || tool.In(mcpserver.Readonly) || tool.In(mcpserver.APIReadonly)) {
			t.Fatalf("x_get_dm_events is in profiles %v, want the workflow profile only", tool.Profiles)
		}
	}
}

// TestCommunities: x_search_communities finds the demo world's
// communities; a post in one the account belongs to goes out, and one in a
// community it does not belong to gets X's 403.
func TestCommunities(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	var found mcpserver.CommunityList
	e.call("x_search_communities", map[string]any{"query": "go developers"}).ok(t, &found)
	if len(found.Communities) != 1 || found.Communities[0].Name != "Go developers" || found.Communities[0].MemberCount == 0 {
		t.Fatalf("search found %+v, want the Go developers community", found.Communities)
	}
	e.call("x_search_communities", map[string]any{"query": "  "}).fails(t, apperr.InvalidInput).mentions(t, "query")

	me := e.Sim.DemoUserID()
	var member, notMember string
	for _, cm := range e.Sim.Communities() {
		if slices.Contains(cm.MemberIDs, me) {
			member = cm.ID
		} else {
			notMember = cm.ID
		}
	}
	var p actions.PostedTweet
	executed(t, e.call("x_post_tweet", map[string]any{"text": "Hello, Go developers!", "options": map[string]any{"community_id": member}}), &p)
	if tw, ok := e.tweetByID(p.ID); !ok || tw.CommunityID != member {
		t.Fatalf("community post %+v, want it in community %s", tw, member)
	}
	before := e.counters()
	e.call("x_post_tweet", map[string]any{"text": "Hello, agent builders!", "options": map[string]any{"community_id": notMember}}).
		fails(t, apperr.XForbidden).mentions(t, "not a member")
	e.requireDelta(before, nil)
}

// TestQuoteThatNeedsAHigherTier: on a world where quotes need a higher API
// access level, x_quote_tweet fails with x_feature_unavailable, not
// retryable, after exactly one request, and the audit row records it.
func TestQuoteThatNeedsAHigherTier(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	quoted := e.demoTweet(func(tw xsim.Tweet) bool { return tw.AuthorID != e.Sim.DemoUserID() && tw.RetweetOf == "" })
	e.Sim.SetQuotesNeedHigherTier(true)
	var arrived atomic.Int64
	e.Sim.SetFault("POST /2/tweets", xsim.Fault{OnArrive: func(context.Context) { arrived.Add(1) }})
	before := e.counters()
	r := e.call("x_quote_tweet", map[string]any{"text": "Quoting this needs a higher tier.", "quoted_tweet_id": quoted.ID}).
		fails(t, apperr.XFeatureUnavailable)
	if r.Error.Retryable {
		t.Error("x_feature_unavailable is marked retryable")
	}
	if n := arrived.Load(); n != 1 {
		t.Errorf("%d requests reached X, want exactly 1 (no retry)", n)
	}
	e.requireDelta(before, nil)
	a := e.audit(r.Meta.CorrelationID)
	if a.Status != "failure" || a.ErrorCode != string(apperr.XFeatureUnavailable) {
		t.Fatalf("audit row status %q code %q, want failure with %s", a.Status, a.ErrorCode, apperr.XFeatureUnavailable)
	}
	e.Sim.SetQuotesNeedHigherTier(false)
	e.Sim.ClearFaults()
	executed(t, e.call("x_quote_tweet", map[string]any{"text": "Now quoting works again.", "quoted_tweet_id": quoted.ID}), nil)
}
