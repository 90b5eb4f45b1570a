package toolstest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestAgentApprovalHoldsOnlyForTheContentItRead: list_pending_approvals
// gives each item's content_hash; after a human edits the item, approving
// or rejecting with the hash the agent read decides nothing
// (approval_changed) and posts nothing; a malformed hash is refused naming
// content_hash; the hash of the item as it is now approves the edit.
func TestAgentApprovalHoldsOnlyForTheContentItRead(t *testing.T) {
	e := newEnv(t, envOptions{configure: func(c *config.Config) { c.MCPPolicy.AllowAgentApproval = true }})
	const t0, t1 = "T0 as the agent read it", "T1 as a human edited it"
	if r := e.call("x_post_tweet", map[string]any{"text": t0}); !r.Success || !strings.Contains(string(r.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_post_tweet was not routed to approval: %+v %s", r.Error, r.Data)
	}
	var list struct {
		Items []gateway.ApprovalItem `json:"items"`
	}
	r := e.call("list_pending_approvals", map[string]any{})
	if err := json.Unmarshal(r.Data, &list); err != nil || len(list.Items) != 1 {
		t.Fatalf("list_pending_approvals: %v %s", err, r.Data)
	}
	read := list.Items[0]
	if read.ContentHash != gateway.ContentHash(read.Tool, read.Params) {
		t.Fatalf("content_hash %q is not the hash of the listed call", read.ContentHash)
	}
	g, err := e.App.RequireGateway()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Edit(e.ctx, read.ID, t1); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool, hash string
		code       apperr.Code
		says       string
	}{
		{"approve_item", read.ContentHash, apperr.ApprovalChanged, "changed since you saw it"},
		{"reject_item", read.ContentHash, apperr.ApprovalChanged, "changed since you saw it"},
		{"approve_item", "not-a-hash", apperr.InvalidInput, "content_hash"},
	} {
		r := e.call(tt.tool, map[string]any{"id": read.ID, "content_hash": tt.hash})
		if r.Success || r.Error.Code != tt.code || !strings.Contains(r.Error.Message, tt.says) {
			t.Errorf("%s with content_hash %q: %+v; want %s saying %q", tt.tool, tt.hash, r.Error, tt.code, tt.says)
		}
	}
	it, err := g.Item(e.ctx, read.ID)
	if err != nil || it.Status != gateway.ApprovalPending {
		t.Fatalf("a refused decision changed the item: %+v %v", it, err)
	}
	for _, tw := range e.Sim.World().Tweets {
		if tw.Text == t0 || tw.Text == t1 {
			t.Fatalf("a refused decision posted %q", tw.Text)
		}
	}
	if r := e.call("approve_item", map[string]any{"id": read.ID, "content_hash": it.ContentHash}); !r.Success {
		t.Fatalf("approve_item with the current hash: %+v", r.Error)
	}
	e.postedText(t1)
	// The trail names who asked and who decided, not "approval".
	var recent struct {
		Mutations []gateway.AuditEntry `json:"mutations"`
	}
	if r := e.call("get_recent_mutations", map[string]any{}); json.Unmarshal(r.Data, &recent) != nil || len(recent.Mutations) != 1 ||
		recent.Mutations[0].Caller != "mcp" || recent.Mutations[0].DecidedBy != "mcp_agent" {
		t.Errorf("get_recent_mutations: %s", r.Data)
	}
}
