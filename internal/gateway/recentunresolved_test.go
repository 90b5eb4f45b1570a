package gateway

import (
	"reflect"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestRecentUnresolvedSaysWhetherAnOutcomeMayBeUnresolved: the rows are
// Recent's, and the flag is false only when no outcome is unresolved;
// without rows it cannot prove that and says true.
func TestRecentUnresolvedSaysWhetherAnOutcomeMayBeUnresolved(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		now := store.FormatTime(e.clock.Now())
		insert := func(corr, status, caller string, resolution any) {
			t.Helper()
			if _, err := e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status,
				account_id, caller, created_at, resolution) VALUES (?, 'x_like_tweet', ?, '{}', ?, 'default', ?, ?, ?)`,
				corr, "h"+corr, status, caller, now, resolution); err != nil {
				t.Fatalf("insert %s: %v", corr, err)
			}
		}
		check := func(what string, f AuditFilter, wantFlag bool) {
			t.Helper()
			want, err := e.g.Recent(e.ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			rows, flag, err := e.g.RecentUnresolved(e.ctx, f)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if !reflect.DeepEqual(rows, want) {
				t.Errorf("%s: rows\n got %+v\nwant %+v", what, rows, want)
			}
			if flag != wantFlag {
				t.Errorf("%s: may be unresolved %t, want %t", what, flag, wantFlag)
			}
		}
		brief := AuditFilter{Caller: "mcp", Limit: 100, Brief: true}
		check("no rows at all", brief, true)
		insert("c1", "success", "mcp", nil)
		insert("c2", "interrupted", "cli", "happened")
		check("only resolved outcomes", brief, false)
		check("only resolved outcomes, full rows", AuditFilter{Limit: 100}, false)
		insert("c3", "unknown", "cli", nil)
		check("an unknown outcome outside the filter", brief, true)
		check("an unknown outcome, full rows", AuditFilter{Limit: 100}, true)
		check("a filter without rows", AuditFilter{Caller: "web", Brief: true}, true)
	})
}

// TestRecentUnresolvedIntoWritesOverTheLastView: rows read into the
// storage of an earlier brief read are those a fresh read returns, with
// nothing of the rows they replace: not a resolution, who decided, or
// what a row shows.
func TestRecentUnresolvedIntoWritesOverTheLastView(t *testing.T) {
	e := newEnv(t)
	now := store.FormatTime(e.clock.Now())
	for _, r := range []struct {
		corr, caller, name  string
		resolution, decided any
	}{
		{"old", "mcp", "", nil, nil},
		{"plain", "mcp", "Like", nil, nil},
		{"resolved", "cli", "Like", "happened", "web"},
		{"decided", "cli", "Post", nil, "telegram:1"},
	} {
		if _, err := e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status,
			account_id, caller, created_at, resolution, decided_by, action_name, description, target_kind)
			VALUES (?, 'x_like_tweet', ?, '{"tweet_id":"7"}', 'unknown', 'default', ?, ?, ?, ?, NULLIF(?, ''), 'said', '')`,
			r.corr, "h"+r.corr, r.caller, now, r.resolution, r.decided, r.name); err != nil {
			t.Fatal(err)
		}
	}
	var into []AuditEntry
	for _, f := range []AuditFilter{{Caller: "cli"}, {Caller: "mcp"}, {}, {Caller: "cli"}} {
		f.Limit, f.Brief = 100, true
		want, wantFlag, err := e.g.RecentUnresolved(e.ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got, flag, err := e.g.RecentUnresolvedInto(e.ctx, f, into)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || flag != wantFlag {
			t.Errorf("caller %q: rows\n got %+v (%t)\nwant %+v (%t)", f.Caller, got, flag, want, wantFlag)
		}
		into = got
	}
}
