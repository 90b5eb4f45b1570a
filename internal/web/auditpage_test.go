package web

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestAuditPageShowsUnresolvedOutcomesFirstWhateverTheFilter: the outcomes
// nobody resolved head the audit page with their two resolve forms even
// when the filter hides them from the table; resolved ones do not.
func TestAuditPageShowsUnresolvedOutcomesFirstWhateverTheFilter(t *testing.T) {
	s := newSite(t, nil)
	now := store.FormatTime(time.Now())
	for _, r := range []struct{ corr, tool, status, resolution string }{
		{"c-liked", "x_like_tweet", "success", ""},
		{"c-lost", "x_follow_user", "unknown", ""},
		{"c-cut", "x_follow_user", "interrupted", "happened"},
	} {
		var res any
		if r.resolution != "" {
			res = r.resolution
		}
		if _, err := s.a.DB.ExecContext(context.Background(), `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash,
			params_summary, status, account_id, caller, created_at, resolution) VALUES (?, ?, ?, '{}', ?, 'default', 'mcp', ?, ?)`,
			r.corr, r.tool, "h"+r.corr, r.status, now, res); err != nil {
			t.Fatalf("insert %s: %v", r.corr, err)
		}
	}
	c, _ := s.client()
	tests := []struct {
		name, path string
	}{
		{"filtered to another tool", "/audit?tool=x_like_tweet"},
		{"unfiltered", "/audit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := s.get(c, tt.path)
			if code != 200 {
				t.Fatalf("%s: %d", tt.path, code)
			}
			head, rest, ok := strings.Cut(body, `<form class="filters"`)
			if !ok {
				t.Fatalf("%s has no filters form", tt.path)
			}
			mustHave(t, "the unresolved section", head, `<h2 id="unk">Outcome unknown`, `href="/audit/c-lost">x_follow_user</a>`,
				`<span class="status-unknown">unknown</span>`, `action="/audit/c-lost/resolve"`, `value="did_not_happen"`)
			if strings.Contains(head, "c-cut") {
				t.Error("a resolved outcome is listed as unresolved")
			}
			if !strings.Contains(rest, "/audit/c-liked") {
				t.Errorf("%s: the table lacks the liked row", tt.path)
			}
		})
	}
}

// TestAuditFiltersMarkTheChoice: the audit page's filters show every
// status and caller, the ones asked for marked (none for a name that is
// not one), as the "options" template prints them.
func TestAuditFiltersMarkTheChoice(t *testing.T) {
	s := newSite(t, nil)
	c, _ := s.client()
	for _, tc := range []struct {
		path, status, caller string
	}{
		{"/audit", "", ""},
		{"/audit?status=failure&caller=cli", "failure", "cli"},
		{"/audit?status=duplicate&caller=someone", "duplicate", "someone"},
	} {
		code, body := s.get(c, tc.path)
		if code != 200 {
			t.Fatalf("%s: %d", tc.path, code)
		}
		for _, f := range []struct {
			field, chosen string
			names         []string
		}{{`<select name="status">`, tc.status, statuses}, {`<select name="caller" id="filter-caller">`, tc.caller, callers}} {
			var b strings.Builder
			if err := s.srv.tmpl.ExecuteTemplate(&b, "options", choices(f.names, f.chosen)); err != nil {
				t.Fatal(err)
			}
			want := f.field + `<option value="">all</option>` + b.String() + `</select>`
			if !strings.Contains(body, want) {
				t.Errorf("%s: the page lacks %s", tc.path, want)
			}
			if n := strings.Count(b.String(), "<option"); n != len(f.names) {
				t.Errorf("%d options of %d names", n, len(f.names))
			}
			if sel := strings.Contains(b.String(), "<option selected>"+f.chosen+"</option>"); sel != slices.Contains(f.names, f.chosen) {
				t.Errorf("%s: %q marked %v", tc.path, f.chosen, sel)
			}
		}
	}
}
