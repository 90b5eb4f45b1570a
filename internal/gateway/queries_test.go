package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// targetAction is a fake tool whose Target is the id in field.
func targetAction(tool, field string, run func(context.Context, json.RawMessage) (Result, error)) *Action {
	return &Action{
		Tool: tool, Category: policy.CatWrite,
		Target: func(params json.RawMessage) string {
			var p map[string]any
			if json.Unmarshal(params, &p) != nil {
				return ""
			}
			s, _ := p[field].(string)
			return s
		},
		Execute: run,
	}
}

func TestTargetIsStoredAndRepliedToUsesIt(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		fail := false
		run := func(_ context.Context, params json.RawMessage) (Result, error) {
			if fail {
				return Result{}, apperr.New(apperr.XAPIError, "refused")
			}
			return Result{Data: map[string]any{"id": "9"}}, nil
		}
		e.g.Register(targetAction("x_reply_to_tweet", "in_reply_to_id", run))
		e.g.Register(targetAction("x_like_tweet", "tweet_id", run))
		do := func(tool string, params map[string]any) Response {
			t.Helper()
			r, err := e.g.Do(e.ctx, Call{Tool: tool, Params: params})
			if err != nil && !fail {
				t.Fatalf("%s %v: %v", tool, params, err)
			}
			return r
		}
		replied := func(id string) bool {
			t.Helper()
			yes, err := e.g.RepliedTo(e.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return yes
		}

		// Executed: the audit row carries the target.
		do("x_reply_to_tweet", map[string]any{"in_reply_to_id": "111", "text": "hi 444 and 44"})
		var target string
		if err := e.db.QueryRowContext(e.ctx, `SELECT target_tweet_id FROM mutation_audit WHERE tool_name = 'x_reply_to_tweet'`).Scan(&target); err != nil || target != "111" {
			t.Fatalf("audit target = %q, %v; want 111", target, err)
		}
		// Routed: the approval item carries it.
		e.pol.set(approvalThenAllow)
		r := do("x_reply_to_tweet", map[string]any{"in_reply_to_id": "222", "text": "queued"})
		if err := e.db.QueryRowContext(e.ctx, `SELECT target_tweet_id FROM approval_queue WHERE id = ?`, r.ApprovalID).Scan(&target); err != nil || target != "222" {
			t.Fatalf("approval target = %q, %v; want 222", target, err)
		}
		e.pol.set(nil)
		// A reply X refused did not answer its post.
		fail = true
		do("x_reply_to_tweet", map[string]any{"in_reply_to_id": "333", "text": "refused"})
		fail = false
		// A like names a post without answering it.
		do("x_like_tweet", map[string]any{"tweet_id": "555"})

		for id, want := range map[string]bool{
			"111": true, "222": true,
			// The ids appear in the text of the reply to 111 (and 44 inside
			// 444), in its JSON, and 11 inside 111: none is a reply to them.
			"444": false, "44": false, "11": false,
			"333": false, "555": false, "": false,
		} {
			if got := replied(id); got != want {
				t.Errorf("RepliedTo(%q) = %v, want %v", id, got, want)
			}
		}
	})
}

// SQLite only: it reads SQLite's query plan of the statement with its
// index hint. PostgreSQL runs qRepliedToPostgres, which takes no hint.
func TestRepliedToUsesTheTargetIndexes(t *testing.T) {
	e := newEnv(t)
	rows, err := e.db.QueryContext(e.ctx, "EXPLAIN QUERY PLAN "+qRepliedTo, "default", "1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	all := strings.Join(plan, "\n")
	for _, idx := range []string{"idx_approval_target", "idx_mutation_audit_target"} {
		if !strings.Contains(all, "USING INDEX "+idx) {
			t.Errorf("plan does not use %s:\n%s", idx, all)
		}
	}
	if strings.Contains(all, "SCAN approval_queue") || strings.Contains(all, "SCAN mutation_audit") {
		t.Errorf("plan scans a table:\n%s", all)
	}
}

func TestPendingApprovalsIsTheOneCount(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.opts.MaxPendingApprovals = 2
		e.opts.ApprovalTTL = time.Hour
		g := e.open()
		e.pol.set(approvalThenAllow)
		if _, err := e.do(g, map[string]any{"text": "first"}, ""); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(40 * time.Minute)
		if _, err := e.do(g, map[string]any{"text": "second"}, ""); err != nil {
			t.Fatal(err)
		}
		count := func() int {
			t.Helper()
			n, err := PendingApprovals(e.ctx, e.db, "default", e.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count(); n != 2 {
			t.Fatalf("PendingApprovals = %d, want 2", n)
		}
		// The bound counts the same number: full.
		_, err := e.do(g, map[string]any{"text": "third"}, "")
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.ApprovalQueueFull || ae.Extra["pending"] != 2 {
			t.Fatalf("third call: %v", err)
		}
		// Once the first item expired every reader sees 1, before anything has
		// marked it expired, and the bound lets a new item in.
		e.clock.Advance(30 * time.Minute)
		if n := count(); n != 1 {
			t.Errorf("PendingApprovals after expiry = %d, want 1", n)
		}
		if n, err := g.PendingCount(e.ctx); err != nil || n != 1 {
			t.Errorf("PendingCount = %d, %v; want 1", n, err)
		}
		if r, err := e.do(g, map[string]any{"text": "third"}, ""); err != nil || r.Kind != Routed {
			t.Errorf("after expiry: %q %v", r.Kind, err)
		}
	})
}

// TestDuplicateChecksReadOneIndexEntry: the check every mutation runs for
// an earlier identical call finds the newest one from the index on account
// and intent key (once per key it looks up), in order, instead of reading every row of the tool
// (which once made each like cost a scan of all earlier likes). The
// history is one tool's calls that the database has no statistics about
// yet, as on a new PostgreSQL database in its first minutes; there
// PostgreSQL's prepared statements use a generic plan, made in the call's
// transaction as the gateway begins it, which is the plan checked. It is
// checked at several sizes of that history: while it is small every index
// that starts with the account looks as cheap as the right one, and the
// plan made then is kept however much the history grows.
func TestDuplicateChecksReadOneIndexEntry(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		const batch = 50
		written := 0
		for _, rows := range []int{150, 400, 3000} {
			for ; written < rows; written += batch {
				var b strings.Builder
				b.WriteString(`INSERT INTO mutation_audit (correlation_id, idempotency_key, tool_name, params_hash, intent_key, params_summary, status, owner, created_at) VALUES `)
				for j := range batch {
					if j > 0 {
						b.WriteString(", ")
					}
					i := written + j
					fmt.Fprintf(&b, "('c%d', 'k%d', '%s', '%064x', '%064x', '{}', 'pending', 'x', '2026-03-04T12:00:00.000Z')", i, i, fakeTool, i, i)
				}
				if _, err := e.db.ExecContext(e.ctx, b.String()); err != nil {
					t.Fatal(err)
				}
			}
			// Each call's row is completed after it is written, as the gateway
			// does.
			if _, err := e.db.ExecContext(e.ctx, `UPDATE mutation_audit SET status = 'success', completed_at = created_at WHERE status = 'pending'`); err != nil {
				t.Fatal(err)
			}
			since := "2026-01-01T00:00:00.000Z"
			all, byIntent := priorOrQueued(e.db.Dialect)
			for _, c := range []struct {
				name    string
				query   string
				args    []any
				indexes []string
			}{
				{"by intent and hash", all, []any{"default", "inew", since, "default", "hnew", since, "default", "inew", since, "default", "hnew", since},
					[]string{"idx_mutation_audit_intent", "idx_approval_pending_intent"}},
				{"by intent", byIntent, []any{"default", "inew", since, "default", "inew", since},
					[]string{"idx_mutation_audit_intent", "idx_approval_pending_intent"}},
				{"by caller key", inDialect(e.db.Dialect, qPriorByKey), []any{"default", "knew", since}, []string{"idx_mutation_audit_key"}},
			} {
				plan := explain(t, e, c.query, c.args...)
				for _, index := range c.indexes {
					if !strings.Contains(plan, index) {
						t.Errorf("%d rows, %s: plan does not use %s:\n%s", rows, c.name, index, plan)
					}
				}
				for _, bad := range []string{"TEMP B-TREE", "Sort", "SCAN mutation_audit", "SCAN approval_queue", "Seq Scan",
					"idx_mutation_audit_tool", "idx_mutation_audit_target"} {
					if strings.Contains(plan, bad) {
						t.Errorf("%d rows, %s: plan has %q:\n%s", rows, c.name, bad, plan)
					}
				}
			}
		}
	})
}

// explain returns the database's plan for query with args. On PostgreSQL it
// is the generic plan a prepared statement settles on, made as the first
// statement of a call's transaction, and sequential scans are ruled out:
// on small tables they would be cheapest and say nothing about which index
// the query can use.
func explain(t *testing.T, e *env, query string, args ...any) string {
	t.Helper()
	return planOf(t, e, e.db.KeyedTx, false, query, args...)
}

// planOf is explain in a transaction begun by begin: KeyedTx plans as a
// call's first statements are planned (sorts off on PostgreSQL), LockedTx
// as the pool's reads are. seqScans leaves PostgreSQL's sequential scans
// in its choice; a nil argument is NULL.
func planOf(t *testing.T, e *env, begin func(context.Context, []string, func(*sql.Tx) error) error, seqScans bool, query string, args ...any) string {
	t.Helper()
	var plan []string
	err := begin(e.ctx, nil, func(tx *sql.Tx) error {
		q := "EXPLAIN QUERY PLAN " + query
		if storetest.BackendOf(t) == storetest.Postgres {
			sets := []string{"SET LOCAL plan_cache_mode = force_generic_plan", "PREPARE plan_probe AS " + store.Rebind(query)}
			if !seqScans {
				sets = append([]string{"SET LOCAL enable_seqscan = off"}, sets...)
			}
			for _, set := range sets {
				if _, err := tx.ExecContext(e.ctx, set); err != nil {
					return fmt.Errorf("%s: %w", set, err)
				}
			}
			defer tx.ExecContext(e.ctx, "DEALLOCATE plan_probe")
			lits := make([]string, len(args))
			for i, a := range args {
				lits[i] = "NULL"
				if a != nil {
					lits[i] = "'" + strings.ReplaceAll(fmt.Sprint(a), "'", "''") + "'"
				}
			}
			q, args = "EXPLAIN EXECUTE plan_probe("+strings.Join(lits, ", ")+")", nil
		}
		rows, err := tx.QueryContext(e.ctx, q, args...)
		if err != nil {
			return fmt.Errorf("explain: %w", err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			plan = append(plan, fmt.Sprint(vals[len(vals)-1]))
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// TestEveryDecisionIsLogged: each policy outcome leaves one action log row
// naming the tool and the outcome, written with the call's own records
// (on PostgreSQL an allowed call's row is written by the same statement as
// its pending audit row); a call answered as a duplicate is not a new
// decision.
func TestEveryDecisionIsLogged(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		outcomes := []struct {
			outcome policy.Outcome
			status  string
		}{
			{policy.Allow, "allowed"},
			{policy.Deny, "denied"},
			{policy.DryRun, "dry_run"},
			{policy.RequireApproval, "routed_to_approval"},
		}
		for i, o := range outcomes {
			e.pol.set(func(policy.Request) policy.Decision {
				return policy.Decision{Outcome: o.outcome, RuleID: "rule:" + o.status}
			})
			_, _ = e.do(e.g, map[string]any{"text": fmt.Sprintf("call %d", i)}, "")
		}
		e.pol.set(func(policy.Request) policy.Decision { return policy.Decision{Outcome: policy.Allow} })
		// Another process's gateway: this one would answer from memory.
		if _, err := e.do(e.open(), map[string]any{"text": "call 0"}, ""); err != nil {
			t.Fatalf("repeat of the allowed call: %v", err)
		}
		rows, err := e.db.QueryContext(e.ctx, `SELECT status, message, metadata FROM action_log WHERE action_type = 'mcp_policy' ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var status, tool, meta string
			if err := rows.Scan(&status, &tool, &meta); err != nil {
				t.Fatal(err)
			}
			var m struct {
				RuleID string `json:"matched_rule_id"`
			}
			if err := json.Unmarshal([]byte(meta), &m); err != nil {
				t.Fatalf("metadata %q: %v", meta, err)
			}
			got = append(got, status+" "+tool+" "+m.RuleID)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, o := range outcomes {
			want = append(want, o.status+" "+fakeTool+" rule:"+o.status)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("decision log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if st := e.statuses(); len(st) != 2 || st[0] != statusSuccess || st[1] != statusDuplicate {
			t.Fatalf("audit statuses %v, want the allowed call and its duplicate", st)
		}
	})
}

// TestRecentSearchesTextAndTarget: the audit search finds rows by the
// text they posted (any case, quotes and ampersands included, % and _ as
// themselves) and by their target, on every backend.
func TestRecentSearchesTextAndTarget(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		run := func(context.Context, json.RawMessage) (Result, error) {
			return Result{Data: map[string]any{"id": "9"}}, nil
		}
		e.g.Register(targetAction("x_post_tweet", "in_reply_to_id", run))
		e.g.Register(targetAction("x_like_tweet", "tweet_id", run))
		for _, c := range []Call{
			{Tool: "x_post_tweet", Params: map[string]any{"text": "Shipping the Review page & more \"soon\""}},
			{Tool: "x_post_tweet", Params: map[string]any{"text": "100% done_ish"}},
			{Tool: "x_post_tweet", Params: map[string]any{"text": "100 percent, done ish"}},
			{Tool: "x_like_tweet", Params: map[string]any{"tweet_id": "777"}},
		} {
			if _, err := e.g.Do(e.ctx, c); err != nil {
				t.Fatalf("%s: %v", c.Tool, err)
			}
		}
		for _, tc := range []struct {
			search string
			want   int
		}{
			{"review PAGE", 1}, {"& more", 1}, {`"soon"`, 1}, {"100%", 1}, {"done_", 1}, {"777", 1}, {"nothing like it", 0}, {"  ", 4},
		} {
			rows, err := e.g.Recent(e.ctx, AuditFilter{Search: tc.search, Limit: 100})
			if err != nil {
				t.Fatalf("search %q: %v", tc.search, err)
			}
			if len(rows) != tc.want {
				t.Errorf("search %q found %d rows, want %d", tc.search, len(rows), tc.want)
			}
		}
	})
}

// A brief listing (the audit page's) holds what a list shows, the same as
// the full rows, and nothing it does not show; each shape of the query
// (its statements) is prepared once and reused, on both backends.
func TestRecentBriefListsWhatAPageShows(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		run := func(context.Context, json.RawMessage) (Result, error) {
			return Result{Data: map[string]any{"id": "9"}}, nil
		}
		e.g.Register(targetAction("x_like_tweet", "tweet_id", run))
		for _, id := range []string{"1", "2", "3"} {
			if _, err := e.g.Do(e.ctx, Call{Tool: "x_like_tweet", Params: map[string]any{"tweet_id": id}}); err != nil {
				t.Fatal(err)
			}
		}
		before := e.db.Statements()
		full, err := e.g.Recent(e.ctx, AuditFilter{Tool: "x_like_tweet", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			brief, err := e.g.Recent(e.ctx, AuditFilter{Tool: "x_like_tweet", Limit: 100, Brief: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(brief) != len(full) || len(full) != 3 {
				t.Fatalf("brief rows %d, full rows %d, want 3", len(brief), len(full))
			}
			for i, b := range brief {
				f := full[i]
				shown := AuditEntry{CorrelationID: f.CorrelationID, Tool: f.Tool, Status: f.Status, Caller: f.Caller, CreatedAt: f.CreatedAt,
					Resolution: f.Resolution, Shown: f.Shown}
				if !reflect.DeepEqual(b, shown) {
					t.Errorf("brief row %d:\n%+v\nwant\n%+v", i, b, shown)
				}
			}
		}
		// The full and the brief shape; on SQLite each is two statements,
		// as a trail shorter than a page is read again past the table's
		// newest rows (see Gateway.recent).
		want := 2
		if storetest.BackendOf(t) == storetest.SQLite {
			want = 4
		}
		if prepared := e.db.Statements() - before; prepared != want {
			t.Errorf("%d read statements prepared for two shapes asked three times, want %d", prepared, want)
		}
	})
}

// TestCheapEncodingsReadAsBefore: the decision log's metadata, written as a
// struct, and a call's audit summary, its canonical parameters taken as
// they are, are byte for byte what encoding a map and re-encoding the
// parameters gave, including the characters JSON escapes for HTML.
func TestCheapEncodingsReadAsBefore(t *testing.T) {
	g := &Gateway{opts: Options{AccountID: "default", Now: time.Now}}
	for _, c := range []struct {
		call Call
		dec  policy.Decision
	}{
		{Call{Tool: "x_like_tweet"}, policy.Decision{Outcome: policy.Allow}},
		{Call{Tool: "x_post_tweet", Caller: "autopilot", Loop: "content"},
			policy.Decision{Outcome: policy.RequireApproval, RuleID: "r<1>", Reason: `a "quoted" & <b>bold</b> reason é`, Source: "config"}},
		{Call{Tool: "x_delete", approvalID: 3}, policy.Decision{Outcome: policy.Deny, Reason: "\u2028line"}},
	} {
		row := g.decisionRow(c.call, policy.CatEngage, "x_like_tweet", c.dec)
		want, err := json.Marshal(map[string]any{
			"tool_name": c.call.Tool, "category": policy.CatEngage, "equivalent_tool": "x_like_tweet", "decision": c.dec.Outcome,
			"reason": c.dec.Reason, "matched_rule_id": c.dec.RuleID, "source": c.dec.Source, "caller": callerOf(c.call), "loop": c.call.Loop,
		})
		if err != nil {
			t.Fatal(err)
		}
		if row[3] != string(want) {
			t.Errorf("metadata %s, want %s", row[3], want)
		}
		wantStatus := map[policy.Outcome]string{policy.Allow: "allowed", policy.Deny: "denied",
			policy.RequireApproval: "routed_to_approval", policy.DryRun: "dry_run"}[c.dec.Outcome]
		if row[1] != wantStatus {
			t.Errorf("status %v, want %s", row[1], wantStatus)
		}
	}
	act := &Action{Tool: "x_post_tweet"}
	for _, raw := range []string{`{"text":"plain"}`, `{"text":"a <b> & c"}`, "{\"text\":\"line\u2028sep\"}", `{"a":[1,2.50,{"b":null}]}`,
		`{"text":"` + strings.Repeat("é", 900) + `"}`} {
		params, err := Canonical([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(json.RawMessage(params))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := auditSummary(act, params), tweettext.TruncateBytes(string(b), maxSummaryBytes); got != want {
			t.Errorf("summary of %.40s: %.60s, want %.60s", raw, got, want)
		}
	}
}
