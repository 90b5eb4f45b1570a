package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONOutputs: every command that prints data takes --json, prints
// one JSON document, and uses the field names of the MCP tool that
// returns the same data.
func TestJSONOutputs(t *testing.T) {
	h := newHome(t)
	seedPending(t, h, 3)
	tok := `{"access_token":"secret-access-0123456789","refresh_token":"secret-refresh-0123456789","token_type":"bearer","expires_at":"2099-01-01T00:00:00Z","scopes":["tweet.read","offline.access"]}`
	if err := os.WriteFile(h.path("tokens.json"), []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		fields []string // top-level keys that must be there
	}{
		{[]string{"approve", "list", "--limit", "2"}, []string{"items", "count", "total_pending", "offset", "limit"}},
		{[]string{"approve", "show", "1"}, []string{"id", "tool_name", "params", "status", "matched_rule_id", "expires_at"}},
		{[]string{"audit", "recent"}, []string{"mutations", "count"}},
		{[]string{"auth", "status"}, []string{"token_file", "scopes", "expired", "has_refresh_token"}},
		{[]string{"config", "show"}, []string{"mode", "approval_mode", "llm", "mcp_policy"}},
		{[]string{"doctor"}, []string{"status", "services", "checks"}},
		{[]string{"mcp", "manifest"}, []string{"tools"}},
		{[]string{"status"}, []string{"loops", "pending_approvals", "approval_latency"}},
		{[]string{"notify", "status"}, []string{"channels", "links_enabled"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := h.run(t, append(tc.args, "--json")...)
			if r.code != 0 && tc.args[0] != "doctor" { // doctor: X is unreachable here, so it exits 1 with its report
				t.Fatalf("exit %d\n%s", r.code, r)
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, r.stdout)
			}
			for _, f := range tc.fields {
				if _, ok := doc[f]; !ok {
					t.Errorf("no %q field; has %v", f, keys(doc))
				}
			}
			if strings.Contains(r.stdout, "secret-") {
				t.Errorf("a token value is in the output:\n%s", r.stdout)
			}
		})
	}
	var page struct {
		Items []struct {
			ID   int64  `json:"id"`
			Tool string `json:"tool_name"`
		} `json:"items"`
		Count int `json:"count"`
		Total int `json:"total_pending"`
	}
	if err := json.Unmarshal([]byte(h.ok(t, "approve", "list", "--json", "--limit", "2").stdout), &page); err != nil {
		t.Fatal(err)
	}
	if page.Count != 2 || page.Total != 3 || page.Items[0].ID != 1 || page.Items[0].Tool != "x_post_tweet" {
		t.Errorf("approve list --json = %+v", page)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "README", string(readme), "## Machine-readable output and exit codes", "| 3 |")
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
