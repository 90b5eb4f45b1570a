package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestApproveShownHoldsOnlyForWhatShowPrinted: `approve show` prints the
// item's content hash and the command that approves exactly it; after
// another reviewer's edit, approving or rejecting with that hash decides
// nothing and says the item changed; a malformed hash is a usage error
// naming --shown; the hash of the item as it is now approves the edit.
func TestApproveShownHoldsOnlyForWhatShowPrinted(t *testing.T) {
	h := newHome(t)
	p := startStdio(t, h, "--sandbox")
	p.initialize(t)
	if env := p.post(t, 2, "T0 as show printed it"); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_post_tweet was not routed to approval: %+v %s", env.Error, env.Data)
	}
	p.stop(t)
	hashOf := func() string {
		t.Helper()
		out := h.ok(t, "approve", "show", "1", "--sandbox").stdout
		m := regexp.MustCompile(`approve exactly this: tuitbot approve approve 1 --shown ([0-9a-f]{64})\n`).FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, "content: "+m[1]) {
			t.Fatalf("approve show prints no content hash to approve by:\n%s", out)
		}
		return m[1]
	}
	before := hashOf()
	h.ok(t, "approve", "edit", "1", "--text", "T1 from another reviewer", "--sandbox")
	for _, verb := range []string{"approve", "reject"} {
		r := h.fails(t, "approve", verb, "1", "--shown", before, "--sandbox")
		if r.code != 1 || !strings.Contains(r.stderr, "changed since you saw it") {
			t.Errorf("%s of the content show printed before the edit: %s", verb, r)
		}
	}
	if r := h.fails(t, "approve", "approve", "1", "--shown", "abc", "--sandbox"); r.code != 2 || !strings.Contains(r.stderr, "--shown") {
		t.Errorf("a malformed --shown: %s", r)
	}
	if out := h.ok(t, "approve", "show", "1", "--sandbox").stdout; !strings.Contains(out, "[pending]") {
		t.Fatalf("a refused decision changed the item:\n%s", out)
	}
	done := h.ok(t, "approve", "approve", "1", "--shown", hashOf(), "--sandbox")
	mustContain(t, "approve with the current hash", done.stdout, "[executed]", "T1 from another reviewer")

	// The audit names who asked (the agent over MCP) and who approved
	// (the CLI), in audit recent, its JSON and the export.
	mustContain(t, "audit recent", h.ok(t, "audit", "recent", "--sandbox").stdout, "asked by mcp; approved by cli")
	var recent struct {
		Mutations []struct {
			Caller    string `json:"caller"`
			DecidedBy string `json:"decided_by"`
		} `json:"mutations"`
	}
	if out := h.ok(t, "audit", "recent", "--json", "--sandbox").stdout; json.Unmarshal([]byte(out), &recent) != nil ||
		len(recent.Mutations) != 1 || recent.Mutations[0].Caller != "mcp" || recent.Mutations[0].DecidedBy != "cli" {
		t.Errorf("audit recent --json: %s", out)
	}
	var row map[string]any
	if out := h.ok(t, "export", "--what", "audit", "--format", "jsonl", "--sandbox").stdout; json.Unmarshal([]byte(out), &row) != nil ||
		row["caller"] != "mcp" || row["decided_by"] != "cli" {
		t.Errorf("export of the audit: %s", out)
	}
}
