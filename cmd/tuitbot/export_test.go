package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestExportCommand: export writes the account's records as CSV (quoting
// formula-like cells) or JSON Lines, to stdout or to an owner-only --out
// file, reports on stderr, and refuses bad values with exit 2.
func TestExportCommand(t *testing.T) {
	h := newHome(t)
	h.ok(t, "config", "show") // creates the home and its database
	ctx := context.Background()
	db, err := store.Open(ctx, h.path("tuitbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"=HYPERLINK(\"http://evil\")", "plain, with a comma"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO approval_queue (account_id, tool_name, params_json, original_params, params_hash, status, created_at, expires_at)
			VALUES ('default', 'x_post_tweet', ?, '{}', ?, 'pending', ?, '2030-01-01T00:00:00.000Z')`,
			text, "h"+string(rune('a'+i)), "2026-03-0"+string(rune('1'+i))+"T09:00:00.000Z"); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	r := h.ok(t, "export", "--what", "approvals", "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv on stdout: %q, %v", r.stdout, err)
	}
	if recs[1][3] != "'=HYPERLINK(\"http://evil\")" || recs[2][3] != "plain, with a comma" {
		t.Errorf("params cells = %q, %q", recs[1][3], recs[2][3])
	}
	mustContain(t, "stderr", r.stderr, "exported 2 approvals rows as csv")

	out := h.path("approvals.jsonl")
	r = h.ok(t, "export", "--what", "approvals", "--format", "jsonl", "--since", "2026-03-02", "--out", out)
	mustContain(t, "stderr", r.stderr, "exported 1 approvals rows as jsonl to "+out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var row map[string]any
	if err := json.Unmarshal(b, &row); err != nil || row["params_json"] != "plain, with a comma" {
		t.Errorf("jsonl = %s (%v)", b, err)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o600 {
		t.Errorf("--out file mode %v, want 0600", st.Mode().Perm())
	}
	for _, args := range [][]string{
		{"export", "--what", "everything"},
		{"export", "--what", "audit", "--format", "xlsx"},
		{"export", "--what", "audit", "--since", "last week"},
		{"export"},
	} {
		if r := h.fails(t, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", args, r.code, r)
		}
	}
}
