package gateway

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestEveryQueryReadsInIndexOrder plans every query the gateway's calls,
// the audit pages and the exports have run (the statements the database
// keeps prepared, so a query added to those paths is checked without being
// listed here), on a database without statistics and again after they
// are gathered, and fails on a full scan of a table or a sort: each
// must read its rows through an index, in the order it returns them.
func TestEveryQueryReadsInIndexOrder(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		fillAuditTrail(t, e, 3000)
		first := e.mustDo(map[string]any{"text": "allowed"}, "k-allowed")
		e.pol.set(approvalThenAllow)
		if _, err := e.do(e.g, map[string]any{"text": "queued"}, "k-queued"); err != nil {
			t.Fatal(err)
		}
		e.pol.set(nil)
		pg := storetest.BackendOf(t) == storetest.Postgres
		for _, stats := range []string{"none", "analyzed"} {
			if stats == "analyzed" {
				if _, err := e.db.ExecContext(e.ctx, "ANALYZE"); err != nil {
					t.Fatal(err)
				}
			} else if !pg {
				// Whatever Open gathered is forgotten; ANALYZE of the
				// schema reloads what the planner knows.
				for _, q := range []string{"DROP TABLE IF EXISTS sqlite_stat1", "DROP TABLE IF EXISTS sqlite_stat4", "ANALYZE sqlite_schema"} {
					if _, err := e.db.ExecContext(e.ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
			}
			runReadPaths(t, e, first.CorrelationID)
			queries := e.db.PreparedQueries()
			if len(queries) < 10 {
				t.Fatalf("only %d queries kept prepared", len(queries))
			}
			for _, q := range queries {
				begin := e.db.LockedTx
				if q.InOrder || isHot(e.db.Dialect, q.Text) {
					// As they run: in order with sorts off, or first in
					// a call's transaction.
					begin = e.db.KeyedTx
				}
				plan := planOf(t, e, begin, true, q.Text, make([]any, paramCount(q.Text))...)
				if bad := badStep(plan); bad != "" {
					t.Errorf("statistics %s: %q in the plan of\n%s\n%s", stats, bad, q.Text, plan)
				}
			}
		}
	})
}

// runReadPaths runs every read the audit pages and the exports make.
func runReadPaths(t *testing.T, e *env, corr string) {
	t.Helper()
	runPageReads(t, e, corr)
	since := e.clock.Now().Add(-time.Hour)
	for _, export := range []func(time.Time) error{
		func(s time.Time) error { return e.g.ExportAudit(e.ctx, s, func([]string, []any) error { return nil }) },
		func(s time.Time) error {
			return e.g.ExportApprovals(e.ctx, s, func([]string, []any) error { return nil })
		},
	} {
		for _, s := range []time.Time{{}, since} {
			if err := export(s); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// runPageReads runs every read of the audit trail a page makes: each
// filter, brief and whole, the unresolved outcomes and one row's detail.
func runPageReads(t *testing.T, e *env, corr string) {
	t.Helper()
	since := e.clock.Now().Add(-time.Hour)
	for _, f := range []AuditFilter{{}, {Tool: fakeTool}, {Status: "success"}, {Caller: "mcp"}, {Since: since}, {Search: "row"},
		{Tool: fakeTool, Status: "success", Caller: "mcp", Since: since, Search: "row"}} {
		for _, brief := range []bool{true, false} {
			f.Brief, f.Limit = brief, 100
			if _, _, err := e.g.RecentUnresolved(e.ctx, f); err != nil {
				t.Fatal(err)
			}
			if _, err := e.g.Recent(e.ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := e.g.Unresolved(e.ctx, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := e.g.Detail(e.ctx, corr); err != nil {
		t.Fatal(err)
	}
}

// fillAuditTrail writes n completed audit rows of the account, as the
// gateway would have.
func fillAuditTrail(t *testing.T, e *env, n int) {
	t.Helper()
	const batch = 100
	for written := 0; written < n; written += batch {
		var b strings.Builder
		b.WriteString(`INSERT INTO mutation_audit (correlation_id, idempotency_key, tool_name, params_hash, intent_key, params_summary, status, owner, created_at, completed_at) VALUES `)
		for j := range batch {
			if j > 0 {
				b.WriteString(", ")
			}
			i := written + j
			fmt.Fprintf(&b, "('fill%d', 'fk%d', '%s', '%064x', '%064x', '{\"text\":\"row %d\"}', 'success', 'x', '2026-03-01T12:00:00.000Z', '2026-03-01T12:00:00.000Z')", i, i, fakeTool, i, i, i)
		}
		if _, err := e.db.ExecContext(e.ctx, b.String()); err != nil {
			t.Fatal(err)
		}
	}
}

func isHot(d store.Dialect, q string) bool {
	for _, h := range hotQueries(d) {
		if h == q {
			return true
		}
	}
	return false
}

var (
	numberedParam = regexp.MustCompile(`\?(\d+)`)
	stringLiteral = regexp.MustCompile(`'[^']*'`)
)

// paramCount is how many arguments query takes.
func paramCount(query string) int {
	q := stringLiteral.ReplaceAllString(query, "''")
	n := 0
	for _, m := range numberedParam.FindAllStringSubmatch(q, -1) {
		if i, _ := strconv.Atoi(m[1]); i > n {
			n = i
		}
	}
	return max(n, strings.Count(numberedParam.ReplaceAllString(q, ""), "?"))
}

// badSteps are the plan steps that read a whole table or sort: SQLite's
// SCAN of a table (with or without an index) and temporary B-tree, and
// PostgreSQL's sequential scan and sort.
var badSteps = regexp.MustCompile(`(?m)^\s*SCAN (mutation_audit|approval_queue|action_log|notify_outbox)\b|USE TEMP B-TREE|Seq Scan|(?m)^\s*(->\s*)?(Incremental )?Sort\b`)

func badStep(plan string) string {
	return badSteps.FindString(plan)
}

// TestAuditReadsAreNotPlannedPerCall: SQLite plans a statement again at
// every run when a bound value may change its plan (a LIMIT, a value
// compared with an indexed column once statistics sample it), which costs
// as much as parsing it. Every read of the audit trail a page makes, on a
// database with statistics, is planned once however often it runs; the
// reads write their limit and stop at the one asked for, and still return
// exactly that many rows.
func TestAuditReadsAreNotPlannedPerCall(t *testing.T) {
	e := newEnv(t)
	fillAuditTrail(t, e, 3000)
	if _, err := e.db.ExecContext(e.ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	for _, q := range e.db.PreparedQueries() {
		before[q.Text] = true
	}
	runPageReads(t, e, "fill1")
	read := 0
	for _, q := range e.db.PreparedQueries() {
		if before[q.Text] {
			continue
		}
		read++
		if n := storetest.Replans(t, e.dbPath, q.Text); n != 0 {
			t.Errorf("planned again at each of %d runs:\n%s", n, q.Text)
		}
	}
	if read < 10 {
		t.Fatalf("only %d reads prepared", read)
	}
	for _, limit := range []int{1, 20, 100} {
		for _, brief := range []bool{true, false} {
			got, _, err := e.g.RecentUnresolved(e.ctx, AuditFilter{Limit: limit, Brief: brief})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != limit {
				t.Errorf("limit %d (brief %v): %d rows", limit, brief, len(got))
			}
		}
	}
}

// TestAuditTrailAsItOpensIsTheAccountsNewest: the unfiltered trail is
// read from the table between the account's newest row and the oldest the
// page shows; whatever other accounts wrote in between, each account gets
// exactly its own newest rows, newest first, for any limit.
func TestAuditTrailAsItOpensIsTheAccountsNewest(t *testing.T) {
	e := newEnv(t)
	opts := e.opts
	opts.AccountID = "other"
	other, err := New(e.ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	// Oldest first: other's rows before, between and after default's.
	want := map[string][]string{}
	for i := range 200 {
		acct := "other"
		if i >= 20 && i < 140 && i%4 == 0 {
			acct = "default"
		}
		corr := fmt.Sprintf("%s-%d", acct, i)
		want[acct] = append([]string{corr}, want[acct]...)
		if _, err := e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, account_id, created_at)
			VALUES (?, ?, ?, '{}', 'success', ?, '2026-03-01T12:00:00.000Z')`, corr, fakeTool, corr, acct); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		g    *Gateway
		acct string
	}{{e.g, "default"}, {other, "other"}} {
		for _, limit := range []int{1, 7, 30, 100} {
			for _, brief := range []bool{true, false} {
				got, _, err := c.g.RecentUnresolved(e.ctx, AuditFilter{Limit: limit, Brief: brief})
				if err != nil {
					t.Fatal(err)
				}
				ids := make([]string, len(got))
				for i, r := range got {
					ids[i] = r.CorrelationID
				}
				exp := want[c.acct][:min(limit, len(want[c.acct]))]
				if strings.Join(ids, " ") != strings.Join(exp, " ") {
					t.Errorf("%s, limit %d, brief %v:\n got %v\nwant %v", c.acct, limit, brief, ids, exp)
				}
			}
		}
	}
}

// TestAuditPageReadsPastTheNewestRows: on SQLite a read of the trail looks
// through the table's newest rows first and, when those hold fewer than
// the page, reads on through the indexes. With another account's rows
// filling the newest thousand, each filter still gets exactly the
// account's newest rows it keeps, newest first, for a page the newest
// rows fill and one they do not.
func TestAuditPageReadsPastTheNewestRows(t *testing.T) {
	e := newEnv(t)
	// Oldest first: 300 of the account's rows, 1,500 of another's, and
	// 30 of the account's again. Every third of the account's rows
	// failed; every other one was asked for by the CLI.
	acct := func(i int) string {
		if i < 300 || i >= 1800 {
			return "default"
		}
		return "other"
	}
	status := func(i int) string {
		if i%3 == 0 {
			return "failure"
		}
		return "success"
	}
	caller := func(i int) string {
		if i%2 == 0 {
			return "cli"
		}
		return "mcp"
	}
	if _, err := e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, account_id, caller, created_at)
		WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM seq WHERE i < 1829)
		SELECT 'r' || i, ?, 'h' || i, '{}', CASE WHEN i % 3 = 0 THEN 'failure' ELSE 'success' END,
			CASE WHEN i < 300 OR i >= 1800 THEN 'default' ELSE 'other' END, CASE WHEN i % 2 = 0 THEN 'cli' ELSE 'mcp' END,
			'2026-03-01T12:00:00.000Z' FROM seq ORDER BY i`, fakeTool); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    AuditFilter
		keep func(i int) bool
	}{
		{"none", AuditFilter{}, func(int) bool { return true }},
		{"status", AuditFilter{Status: "failure"}, func(i int) bool { return status(i) == "failure" }},
		{"caller", AuditFilter{Caller: "cli"}, func(i int) bool { return caller(i) == "cli" }},
		{"both", AuditFilter{Status: "failure", Caller: "cli"}, func(i int) bool { return status(i) == "failure" && caller(i) == "cli" }},
	} {
		for _, limit := range []int{5, 100} {
			var want []string
			for i := 1829; i >= 0 && len(want) < limit; i-- {
				if acct(i) == "default" && c.keep(i) {
					want = append(want, fmt.Sprintf("r%d", i))
				}
			}
			for _, brief := range []bool{true, false} {
				f := c.f
				f.Limit, f.Brief = limit, brief
				got, _, err := e.g.RecentUnresolved(e.ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				ids := make([]string, len(got))
				for i, r := range got {
					ids[i] = r.CorrelationID
				}
				if strings.Join(ids, " ") != strings.Join(want, " ") {
					t.Errorf("%s, limit %d, brief %v:\n got %v\nwant %v", c.name, limit, brief, ids, want)
				}
			}
		}
	}
}

// TestApprovalsPageIsNotPlannedPerCall: the approvals page's list, which a
// page polls, is planned once on a database with statistics, whatever it
// binds (the account, the time, a filter, the page's limit and offset).
func TestApprovalsPageIsNotPlannedPerCall(t *testing.T) {
	e := newEnv(t)
	e.pol.set(approvalThenAllow)
	for i := range 60 {
		e.queue(fmt.Sprintf(`{"text":"%d"}`, i))
	}
	if _, err := e.db.ExecContext(e.ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	for _, q := range e.db.PreparedQueries() {
		before[q.Text] = true
	}
	for _, f := range []PendingFilter{{Limit: 50}, {Limit: 50, Offset: 50, Tool: fakeTool, Caller: "mcp", AfterID: 3}} {
		if _, _, err := e.g.PendingFiltered(e.ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	read := 0
	for _, q := range e.db.PreparedQueries() {
		if before[q.Text] || !strings.Contains(q.Text, "FROM approval_queue") {
			continue
		}
		read++
		if n := storetest.Replans(t, e.dbPath, q.Text); n != 0 {
			t.Errorf("planned again at each of %d runs:\n%s", n, q.Text)
		}
	}
	if read != 2 {
		t.Fatalf("%d reads of the queue prepared, want 2", read)
	}
}

// TestGatedCallIsNotPlannedPerCall: every statement a gated call keeps
// prepared (the idempotency and duplicate lookups, the audit row's insert
// and completion, the decision log, the approval queue's, the window of
// the other accounts' posts) is planned once on a database whose
// statistics sample the audit trail, however often calls run it. The
// calls are of every kind: executed, a repeat of a key, routed to
// approval, refused by the hourly limit.
func TestGatedCallIsNotPlannedPerCall(t *testing.T) {
	e := newEnv(t)
	e.withEngine(policy.Config{EnforceForMutations: true, MaxMutationsPerHour: 2}, policy.ModeAutopilot, false)
	// 3,000 completed calls of three accounts and three tools, each with
	// its own key and intent, so that sqlite_stat4 samples the indexes.
	if _, err := e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, idempotency_key, tool_name, params_hash, intent_key,
		params_summary, status, account_id, caller, owner, created_at, completed_at)
		WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM seq WHERE i < 2999)
		SELECT 'fill' || i, 'fk' || i, CASE i % 3 WHEN 0 THEN ? WHEN 1 THEN ? ELSE 'x_post_tweet' END, 'h' || i, 'i' || i,
			'{"text":"row ' || i || '"}', CASE WHEN i % 5 = 0 THEN 'failure' ELSE 'success' END,
			CASE i % 3 WHEN 0 THEN 'default' WHEN 1 THEN 'other' ELSE 'third' END, 'mcp', 'x',
			'2026-03-01T12:00:00.000Z', '2026-03-01T12:00:00.000Z' FROM seq ORDER BY i`, fakeTool, fakeDelete); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ExecContext(e.ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	var stat4 int
	if err := e.db.QueryRowContext(e.ctx, `SELECT count(*) FROM sqlite_stat4 WHERE tbl = 'mutation_audit'`).Scan(&stat4); err != nil || stat4 == 0 {
		t.Fatalf("sqlite_stat4 holds %d samples of the audit trail (%v)", stat4, err)
	}
	calls := []struct {
		tool, text, key string
		want            Kind
		code            apperr.Code
	}{
		{fakeTool, "one", "k1", Executed, ""},
		{fakeTool, "one", "k1", Duplicate, ""},
		{fakeDelete, "gone", "k2", Routed, ""},
		{fakeDelete, "gone", "k2", Routed, ""},
		{fakeTool, "two", "", Executed, ""},
		{fakeTool, "three", "k3", "", apperr.PolicyRateLimited},
	}
	for _, c := range calls {
		r, err := e.g.Do(e.ctx, Call{Tool: c.tool, Params: map[string]any{"text": c.text}, IdempotencyKey: c.key})
		if c.code != "" {
			wantCode(t, err, c.code)
			continue
		}
		if err != nil || r.Kind != c.want {
			t.Fatalf("%s %q key %q: kind %q, want %q (%v)", c.tool, c.text, c.key, r.Kind, c.want, err)
		}
	}
	if _, err := e.g.PostedElsewhere(e.ctx, e.clock.Now().Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, q := range e.db.PreparedQueries() {
		checked[q.Text] = true
		if n := storetest.Replans(t, e.dbPath, q.Text); n != 0 {
			t.Errorf("planned again at each of %d runs:\n%s", n, q.Text)
		}
	}
	// At least the call's own statements and the window's read.
	for _, q := range append(hotQueries(e.db.Dialect), e.g.qPosted.first) {
		if !checked[q] {
			t.Errorf("not prepared, so not checked:\n%s", q)
		}
	}
}
