package web

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// The page benchmarks measure server time (handler, queries, templates)
// against one indexed SQLite query that returns the same rows, the floor
// any page showing them has to pay. Run with
//
//	go test ./internal/web -run '^$' -bench . -benchtime 50x
//
// TUITBOT_BENCH_AUDIT_ROWS sets the audit trail's size (default 100,000;
// the figures quoted in the code are at 1,000,000).

// pageRequest is a logged-in GET of path, served without the network; it
// returns the page's length.
func (s *site) pageRequest(b *testing.B, path string) int {
	b.Helper()
	return s.loggedInGet(b, path, "bench").Body.Len()
}

// loggedInGet is a GET of path in a signed-in session whose CSRF token is
// csrf, served without the network; anything but 200 fails tb.
func (s *site) loggedInGet(tb testing.TB, path, csrf string) *httptest.ResponseRecorder {
	tb.Helper()
	s.srv.mu.Lock()
	s.srv.sessions["signed-in"] = &session{csrf: csrf}
	s.srv.mu.Unlock()
	req := httptest.NewRequest(http.MethodGet, "http://"+s.srv.addr+path, nil)
	req.Host = s.srv.addr
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: "signed-in"})
	rec := httptest.NewRecorder()
	s.srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec
}

func queueSite(b *testing.B) *site {
	s := newSite(b, func(c *config.Config) { c.MCPPolicy.MaxPendingApprovals = 20000 })
	s.fillQueue(10000)
	return s
}

func BenchmarkApprovalsPage10k(b *testing.B) { benchPage(b, queueSite(b), "/approvals") }

// benchPage times rendering the page at path and reports its size.
func benchPage(b *testing.B, s *site, path string) {
	b.Helper()
	b.ResetTimer()
	var n int
	for b.Loop() {
		n = s.pageRequest(b, path)
	}
	b.ReportMetric(float64(n), "bytes/page")
}

// BenchmarkApprovalsQuery10k is the floor: the first page's rows in one
// indexed query.
func BenchmarkApprovalsQuery10k(b *testing.B) {
	s := queueSite(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		approvalsQuery(b, ctx, s)
	}
}

func approvalsQuery(b *testing.B, ctx context.Context, s *site) {
	now := store.FormatTime(time.Now())
	rows, err := s.a.DB.QueryContext(ctx, `SELECT id, tool_name, params_json, original_params, matched_rule_id, reason, caller,
		loop_name, status, created_at, expires_at FROM approval_queue WHERE account_id = 'default' AND status = 'pending'
		AND expires_at > ? ORDER BY id LIMIT 50`, now)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id int64
		var t, p, o, r, re, c, l, st, ca, ex string
		if err := rows.Scan(&id, &t, &p, &o, &r, &re, &c, &l, &st, &ca, &ex); err != nil {
			b.Fatal(err)
		}
		n++
	}
	rows.Close()
	if n != 50 {
		b.Fatalf("%d rows", n)
	}
}

// auditSite fills the audit trail with rows spread over four tools, each
// with what it shows, as the gateway writes a row.
func auditSite(b *testing.B) *site { return auditSiteOn(b, nil) }

// auditSiteOn is auditSite with the home configured by configure.
func auditSiteOn(b *testing.B, configure func(*config.Config)) *site {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("TUITBOT_BENCH_AUDIT_ROWS")); err == nil && v > 0 {
		n = v
	}
	s := newSite(b, configure)
	start := time.Now()
	now := time.Now()
	_, err := s.a.DB.ExecContext(context.Background(), `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM seq WHERE i < ?)
		INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, result_summary, account_id, caller,
			created_at, completed_at, rollback_action, action_name, description, target_kind)
		SELECT 'c' || i, CASE i % 4 WHEN 0 THEN 'x_post_tweet' WHEN 1 THEN 'x_like_tweet' WHEN 2 THEN 'x_follow_user' ELSE 'x_reply_to_tweet' END,
			'h' || i, '{"text":"row ' || i || '"}', 'success', '{}', 'default', 'mcp', ?, ?,
			'{"reversible":true,"undo_tool":"x_delete_tweet","undo_params":{"tweet_id":"' || i || '"}}',
			CASE i % 4 WHEN 0 THEN 'Post' WHEN 1 THEN 'Like' WHEN 2 THEN 'Follow' ELSE 'Reply' END, 'row ' || i, '' FROM seq`,
		n, store.FormatTime(now), store.FormatTime(now))
	if err != nil {
		b.Fatalf("fill the audit trail: %v", err)
	}
	b.Logf("%d audit rows written in %s", n, time.Since(start).Round(time.Millisecond))
	return s
}

func BenchmarkAuditPageByTool(b *testing.B) { benchPage(b, auditSite(b), "/audit?tool=x_like_tweet") }

// BenchmarkAuditQueryByTool is the floor: the page's 100 rows of one tool,
// newest first, in one indexed query.
func BenchmarkAuditQueryByTool(b *testing.B) {
	s := auditSite(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		auditQuery(b, ctx, s)
	}
}

func auditQuery(b *testing.B, ctx context.Context, s *site) {
	rows, err := s.a.DB.QueryContext(ctx, `SELECT correlation_id, tool_name, params_summary, status, caller, created_at, rollback_action
		FROM mutation_audit WHERE account_id = 'default' AND tool_name = 'x_like_tweet' ORDER BY id DESC LIMIT 100`)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var c, t, p, st, ca, cr string
		var rb *string
		if err := rows.Scan(&c, &t, &p, &st, &ca, &cr, &rb); err != nil {
			b.Fatal(err)
		}
		n++
	}
	rows.Close()
	if n != 100 {
		b.Fatalf("%d rows", n)
	}
}

// ratioOf times page and floor alternately on one site, so both see the
// same machine, and reports their medians and the page's ratio to the
// floor: the goal is a page that costs a small multiple of its query.
func ratioOf(b *testing.B, page, floor func()) {
	b.Helper()
	var p, f []float64
	page()
	floor()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		page()
		p = append(p, float64(time.Since(start).Microseconds()))
		start = time.Now()
		floor()
		f = append(f, float64(time.Since(start).Microseconds()))
	}
	mp, mf := medianOf(p), medianOf(f)
	b.ReportMetric(mp, "page-us")
	b.ReportMetric(mf, "query-us")
	b.ReportMetric(mp/mf, "ratio")
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkAuditPageVsQuery: the audit page of one tool over 1,000,000
// rows against its one indexed query, interleaved (goal: at most 1.9x).
func BenchmarkAuditPageVsQuery(b *testing.B) {
	s := auditSite(b)
	ctx := context.Background()
	ratioOf(b, func() { s.pageRequest(b, "/audit?tool=x_like_tweet") }, func() { auditQuery(b, ctx, s) })
}

// BenchmarkAuditPageOpenVsQuery: the audit page as a person opens it (no
// filter) and with each filter, on each backend, against the same 100
// rows read by their best plan, interleaved (goal: at most 2x). The floor
// reads the rows in id order, newest first, which no statistics can
// change: on SQLite the filtered columns are wrapped in a unary plus so
// that no index on them is used; on PostgreSQL it runs with sorts off, so
// that the planner may only read an index in order.
func BenchmarkAuditPageOpenVsQuery(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			pg := backend == storetest.Postgres
			var configure func(*config.Config)
			if pg {
				url := storetest.Target(b)
				configure = func(c *config.Config) { c.Storage.DatabaseURL = url }
			}
			s := auditSiteOn(b, configure)
			ctx := context.Background()
			col := func(c string) string {
				if pg {
					return c
				}
				return "+" + c
			}
			day := time.Now().Add(-24 * time.Hour).Format("2006-01-02")
			for _, c := range []struct{ name, path, where string }{
				{"none", "/audit", ""},
				{"tool", "/audit?tool=x_like_tweet", " AND " + col("tool_name") + " = 'x_like_tweet'"},
				{"status", "/audit?status=success", " AND " + col("status") + " = 'success'"},
				{"caller", "/audit?caller=mcp", " AND " + col("caller") + " = 'mcp'"},
				{"since", "/audit?since=" + day, " AND " + col("created_at") + " >= '" + day + "'"},
				{"search", "/audit?q=row", " AND LOWER(params_summary) LIKE '%row%'"},
			} {
				b.Run(c.name, func(b *testing.B) {
					q := `SELECT correlation_id, tool_name, action_name, description, target_kind, status, caller, created_at, rollback_action
						FROM mutation_audit WHERE ` + col("account_id") + ` = 'default'` + c.where + ` ORDER BY id DESC LIMIT 100`
					ratioOf(b, func() { s.pageRequest(b, c.path) }, func() { rowsOf(b, ctx, s, q, 9) })
				})
			}
		})
	}
}

// rowsOf reads query's rows of cols columns, prepared and (on
// PostgreSQL) with sorts off, and checks there are 100.
func rowsOf(b *testing.B, ctx context.Context, s *site, query string, cols int) {
	n := 0
	err := s.a.DB.ReadInOrder(ctx, func(q store.OrderedQuerier) error {
		rows, err := q.Query(ctx, query)
		if err != nil {
			return err
		}
		defer rows.Close()
		vals := make([]any, cols)
		ptrs := make([]any, cols)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			n++
		}
		return rows.Err()
	})
	if err != nil {
		b.Fatal(err)
	}
	if n != 100 {
		b.Fatalf("%d rows", n)
	}
}

// BenchmarkAuditPageFirstViewVsQuery is what the first view of the page
// costs. The page keeps nothing of a view for the next (rows printed
// once were kept, and a first view cost 6.8x), so this is now
// BenchmarkAuditPageVsQuery; it keeps its name to compare versions.
func BenchmarkAuditPageFirstViewVsQuery(b *testing.B) {
	s := auditSite(b)
	ctx := context.Background()
	ratioOf(b, func() { s.pageRequest(b, "/audit?tool=x_like_tweet") }, func() { auditQuery(b, ctx, s) })
}

// BenchmarkApprovalsPageVsQuery: the approvals page with 10,000 pending
// against its one indexed query, interleaved (goal: at most 2.3x).
func BenchmarkApprovalsPageVsQuery(b *testing.B) {
	s := queueSite(b)
	ctx := context.Background()
	ratioOf(b, func() { s.pageRequest(b, "/approvals") }, func() { approvalsQuery(b, ctx, s) })
}

// BenchmarkAuditRows is the audit table's body alone: 100 rows of liked
// posts, each at its own time, as the page prints them.
func BenchmarkAuditRows(b *testing.B) {
	tmpl, err := parseTemplates("", time.Now)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	es := make([]gateway.AuditEntry, 100)
	for i := range es {
		es[i] = gateway.AuditEntry{CorrelationID: "0f8e6a1c-9b2d-4e5f-a6b7-c8d9e0f1a2" + strconv.Itoa(100+i), Tool: "x_like_tweet", Status: "success",
			Caller: "mcp", CreatedAt: store.FormatTime(now.Add(-time.Duration(i) * 7 * time.Minute)),
			Shown: describe.Recorded{Name: "Like", Target: describe.Target{Kind: describe.KindPost, ID: strconv.Itoa(1_800_000_000_000_000_000 + i)}}}
	}
	at := rowsAt{now: now, postURL: func(id string) string { return "https://x.com/i/web/status/" + id }}
	var page bytes.Buffer
	b.ResetTimer()
	for b.Loop() {
		page.Reset()
		if err := auditRows(&page, tmpl, es, at); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuditPageRender is the audit page's printing alone (the
// layout, 100 rows, the response), without its query: the part of
// BenchmarkAuditPageOpenVsQuery this package decides, timed on its own.
func BenchmarkAuditPageRender(b *testing.B) {
	s := auditSite(b)
	es, err := s.a.Gateway.Recent(b.Context(), gateway.AuditFilter{Limit: 100, Brief: true})
	if err != nil || len(es) != 100 {
		b.Fatalf("%d rows: %v", len(es), err)
	}
	req := httptest.NewRequest(http.MethodGet, "http://"+s.srv.addr+"/audit", nil)
	sess := &session{csrf: "bench"}
	at := rowsAt{base: s.srv.o.Prefix, now: time.Now(), postURL: func(id string) string { return "/posts/" + id }}
	d := auditData{Rows: true, StatusOptions: s.srv.statusOptions.of(""), CallerOptions: s.srv.callerOptions.of("")}
	b.ReportAllocs()
	for b.Loop() {
		p := s.srv.pageOf(req, sess, "audit", "Audit", d)
		s.srv.executeThen(httptest.NewRecorder(), http.StatusOK, "audit", p, s.srv.auditRest(p, es, at))
	}
}
