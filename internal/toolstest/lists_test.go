package toolstest

import (
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// addMemberKey is the emulator's billing key of adding a List member.
const addMemberKey = "POST /2/lists/{id}/members"

// TestListLifecycle: a List is created, gains a member, shows the member
// and the member's posts, loses the member and is deleted, each through
// the MCP server, the gateway and the emulator, each write with its undo;
// the delete waits for approval even with approval mode off.
func TestListLifecycle(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, agentApproval: true})
	member := e.otherUser().ID
	before := e.counters()

	var made actions.CreatedList
	r := executed(t, e.call("x_list_create", map[string]any{"name": "Go builders", "description": "people who ship Go", "private": true}), &made)
	if made.ID == "" || made.Name != "Go builders" || !made.Private {
		t.Fatalf("create answered %+v", made)
	}
	requireUndo(t, r.Meta.Rollback, "x_list_delete", map[string]any{"list_id": made.ID})

	var in actions.ListMembership
	r = executed(t, e.call("x_list_add_member", map[string]any{"list_id": made.ID, "user_id": member}), &in)
	if !in.IsMember || !slices.Equal(e.Sim.ListMembers(made.ID), []string{member}) {
		t.Fatalf("add answered %+v; the emulator has members %v", in, e.Sim.ListMembers(made.ID))
	}
	requireUndo(t, r.Meta.Rollback, "x_list_remove_member", map[string]any{"list_id": made.ID, "user_id": member})

	var owned mcpserver.ListsList
	e.call("x_get_owned_lists", map[string]any{}).ok(t, &owned)
	if len(owned.Lists) != 1 || owned.Lists[0].ID != made.ID || !owned.Lists[0].Private || owned.Lists[0].MemberCount != 1 {
		t.Fatalf("owned lists %+v, want the new private list with one member", owned.Lists)
	}
	var members mcpserver.UserList
	e.call("x_get_list_members", map[string]any{"list_id": made.ID}).ok(t, &members)
	if len(members.Users) != 1 || members.Users[0].ID != member {
		t.Fatalf("members %+v, want %s", members.Users, member)
	}
	var posts struct {
		Tweets []post `json:"tweets"`
	}
	e.call("x_get_list_tweets", map[string]any{"list_id": made.ID, "max_results": 5}).ok(t, &posts)
	if len(posts.Tweets) == 0 {
		t.Fatal("the list's timeline is empty though its member posts")
	}
	for _, p := range posts.Tweets {
		if p.AuthorID != member {
			t.Fatalf("list timeline holds %s by %s, who is no member", p.ID, p.AuthorID)
		}
	}

	r = executed(t, e.call("x_list_remove_member", map[string]any{"list_id": made.ID, "user_id": member}), &in)
	if in.IsMember || len(e.Sim.ListMembers(made.ID)) != 0 {
		t.Fatalf("remove answered %+v; the emulator has members %v", in, e.Sim.ListMembers(made.ID))
	}
	requireUndo(t, r.Meta.Rollback, "x_list_add_member", map[string]any{"list_id": made.ID, "user_id": member})

	var q routed
	e.call("x_list_delete", map[string]any{"list_id": made.ID}).ok(t, &q)
	if !q.Routed || q.MatchedRuleID != policy.RuleHardDeleteApproval || e.Sim.ListMembers(made.ID) == nil {
		t.Fatalf("x_list_delete answered %+v, want it waiting for approval by %s with the list kept", q, policy.RuleHardDeleteApproval)
	}
	e.call("approve_item", map[string]any{"id": q.ApprovalID}).ok(t, nil)
	for _, l := range e.Sim.World().Lists {
		if l.ID == made.ID {
			t.Fatalf("the list is still on X after its delete was approved: %+v", l)
		}
	}
	e.requireDelta(before, map[string]int64{xsim.CountListsCreated: 1, xsim.CountListMembersAdded: 1,
		xsim.CountListMembersRemoved: 1, xsim.CountListsDeleted: 1})
}

// TestListMembershipBillsOneWrite: adding the same member twice, typed or
// as the universal request, sends one billed write to X: the repeats are
// answered from the duplicate window with the first call's result.
func TestListMembershipBillsOneWrite(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	member := e.otherUser().ID
	var made actions.CreatedList
	executed(t, e.call("x_list_create", map[string]any{"name": "once"}), &made)
	args := map[string]any{"list_id": made.ID, "user_id": member}
	first := executed(t, e.call("x_list_add_member", args), nil)

	var dup struct {
		Duplicate bool   `json:"duplicate"`
		Original  string `json:"original_correlation_id"`
	}
	e.call("x_list_add_member", args).ok(t, &dup)
	if !dup.Duplicate || dup.Original != first.Meta.CorrelationID {
		t.Fatalf("the second add answered %+v, want a duplicate of %s", dup, first.Meta.CorrelationID)
	}
	dup.Duplicate, dup.Original = false, ""
	e.call("x_post", map[string]any{"path": "/2/lists/" + made.ID + "/members", "body": `{"user_id":"` + member + `"}`}).ok(t, &dup)
	if !dup.Duplicate || dup.Original != first.Meta.CorrelationID {
		t.Fatalf("the same add as a universal request answered %+v, want a duplicate of %s", dup, first.Meta.CorrelationID)
	}
	if n := e.Sim.Billing().Requests[addMemberKey]; n != 1 {
		t.Fatalf("X billed %d requests to %s for one membership, want 1", n, addMemberKey)
	}
	if got := e.Sim.ListMembers(made.ID); !slices.Equal(got, []string{member}) {
		t.Fatalf("members %v", got)
	}
}

// TestListToolsRefuseBadInput: every List tool names the argument at
// fault before anything reaches X, and a List X will not show is
// x_not_found.
func TestListToolsRefuseBadInput(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	before := e.counters()
	billed := e.Sim.Billing().Requests
	member := e.otherUser().ID
	for _, tool := range []string{"x_list_add_member", "x_list_remove_member"} {
		requireRejectsIDs(t, e, tool, "list_id", func(id string) map[string]any { return map[string]any{"list_id": id, "user_id": member} })
		requireRejectsIDs(t, e, tool, "user_id", func(id string) map[string]any { return map[string]any{"list_id": "5", "user_id": id} })
	}
	for _, tool := range []string{"x_list_delete", "x_get_list_tweets", "x_get_list_members"} {
		requireRejectsIDs(t, e, tool, "list_id", func(id string) map[string]any { return map[string]any{"list_id": id} })
	}
	for _, bad := range malformedIDs {
		e.call("x_get_owned_lists", map[string]any{"user_id": bad}).fails(t, apperr.InvalidInput).mentions(t, "user_id")
	}
	for _, args := range []map[string]any{
		{"name": ""},
		{"name": "   "},
		{"name": "a name far longer than twenty-five"},
		{"name": "fine", "description": string(make([]rune, 101))},
	} {
		field := "name"
		if _, ok := args["description"]; ok {
			field = "description"
		}
		e.call("x_list_create", args).fails(t, apperr.InvalidInput).mentions(t, field)
	}
	e.requireDelta(before, nil)
	for key, n := range e.Sim.Billing().Requests {
		if n != billed[key] {
			t.Errorf("a refused call reached X: %s billed %d times, was %d", key, n, billed[key])
		}
	}

	var private xsim.List
	for _, l := range e.Sim.World().Lists {
		if l.Private {
			private = l
		}
	}
	e.call("x_get_list_members", map[string]any{"list_id": private.ID}).fails(t, apperr.XNotFound)
	e.call("x_get_list_tweets", map[string]any{"list_id": "1"}).fails(t, apperr.XNotFound)
	var owned mcpserver.ListsList
	e.call("x_get_owned_lists", map[string]any{"user_id": private.OwnerID}).ok(t, &owned)
	for _, l := range owned.Lists {
		if l.ID == private.ID {
			t.Fatalf("another user's private list is listed: %+v", owned.Lists)
		}
	}
}

// TestUniversalListRequestsTakeTheTypedPolicy: a universal request to a
// List endpoint is held to the typed List tool's rules: a rule denying
// x_list_add_member denies the raw add, a raw List delete waits for
// approval like x_list_delete, and under the default policy the typed
// tools wait for approval like every mutation.
func TestUniversalListRequestsTakeTheTypedPolicy(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
		c.MCPPolicy.Rules = append(c.MCPPolicy.Rules, config.PolicyRule{ID: "no_list_adds", Priority: 500,
			Conditions: config.PolicyConditions{Tools: []string{"x_list_add_member"}},
			Action:     config.PolicyAction{Type: "deny", Reason: "nobody is added to lists"}})
	}})
	var made actions.CreatedList
	executed(t, e.call("x_list_create", map[string]any{"name": "guarded"}), &made)
	member := e.otherUser().ID
	e.call("x_list_add_member", map[string]any{"list_id": made.ID, "user_id": member}).fails(t, apperr.PolicyUserRule)
	e.call("x_post", map[string]any{"path": "/2/lists/" + made.ID + "/members", "body": `{"user_id":"` + member + `"}`}).
		fails(t, apperr.PolicyUserRule)
	if got := e.Sim.ListMembers(made.ID); len(got) != 0 || e.Sim.Billing().Requests[addMemberKey] != 0 {
		t.Fatalf("a denied add reached X: members %v", got)
	}

	var q routed
	e.call("x_delete", map[string]any{"path": "/2/lists/" + made.ID}).ok(t, &q)
	if !q.Routed || q.MatchedRuleID != policy.RuleHardDeleteApproval || e.Sim.ListMembers(made.ID) == nil {
		t.Fatalf("raw list delete answered %+v, want it waiting for approval by %s", q, policy.RuleHardDeleteApproval)
	}

	gated := newEnv(t, envOptions{})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"x_list_create", map[string]any{"name": "waits"}},
		{"x_list_add_member", map[string]any{"list_id": made.ID, "user_id": member}},
		{"x_list_remove_member", map[string]any{"list_id": made.ID, "user_id": member}},
		{"x_list_delete", map[string]any{"list_id": made.ID}},
	} {
		var q routed
		gated.call(c.tool, c.args).ok(t, &q)
		if !q.Routed || q.ApprovalID == 0 {
			t.Fatalf("with the default policy %s answered %+v, want it routed to approval", c.tool, q)
		}
	}
	if n := gated.Sim.Billing().Requests; n["POST /2/lists"]+n[addMemberKey] != 0 {
		t.Fatalf("a call waiting for approval reached X: %v", n)
	}
}

// TestListWritesRetryByTheirClass: a List write is retried as its endpoint
// row says. Adding a member is idempotent on X, so a 503 is retried and
// the member is added once; creating a List is not, so a 503 after X took
// the request leaves the outcome unknown, is never sent again, and the
// same call is refused until someone says what happened.
func TestListWritesRetryByTheirClass(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	member := e.otherUser().ID
	var made actions.CreatedList
	executed(t, e.call("x_list_create", map[string]any{"name": "retried"}), &made)

	e.Sim.SetFault(addMemberKey, xsim.Fault{ErrorNext: 1, ErrorStatus: 503})
	r := executed(t, e.call("x_list_add_member", map[string]any{"list_id": made.ID, "user_id": member}), nil)
	e.Sim.ClearFaults()
	if r.Meta.RetryCount == nil || *r.Meta.RetryCount != 1 || !slices.Equal(e.Sim.ListMembers(made.ID), []string{member}) {
		t.Fatalf("after one 503 the add reports retry_count %v and the list has %v", r.Meta.RetryCount, e.Sim.ListMembers(made.ID))
	}

	before := e.counters()
	e.Sim.SetFault("POST /2/lists", xsim.Fault{ApplyThenFailNext: 1, ErrorStatus: 503})
	first := e.call("x_list_create", map[string]any{"name": "maybe made"}).fails(t, apperr.XOutcomeUnknown)
	e.Sim.ClearFaults()
	e.requireDelta(before, map[string]int64{xsim.CountListsCreated: 1})
	e.call("x_list_create", map[string]any{"name": "maybe made"}).fails(t, apperr.OutcomeUnverified).
		mentions(t, first.Meta.CorrelationID)
	e.requireDelta(before, map[string]int64{xsim.CountListsCreated: 1})
}
