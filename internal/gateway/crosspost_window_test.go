package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestPostedElsewhereSeesPastItsFirstRead: a window holding more of the
// other accounts' posts than one read returns is read to its end, so the
// oldest post in it still counts as posted elsewhere, each post once;
// also when more rows than a read returns share one time (the reads
// end), and when a read ends inside such a run. Every query of the
// window reads in index order on each backend and, on SQLite, is
// planned once.
func TestPostedElsewhereSeesPastItsFirstRead(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit int // 0: the gateway's own
		n     int
		at    func(i int) time.Duration // post i's time in the window
	}{
		{"more posts than a read", 0, maxPostedElsewhere + 50, func(i int) time.Duration { return time.Duration(i) * time.Second }},
		{"a read ends among posts of one time", 7, 60, func(i int) time.Duration {
			if i < 10 {
				return time.Duration(i) * time.Second
			}
			return time.Hour
		}},
		{"every post of one time", 7, 50, func(int) time.Duration { return time.Hour }},
		{"exactly a read", 7, 14, func(i int) time.Duration { return time.Duration(i) * time.Second }},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.ForEachBackend(t, func(t *testing.T) {
				e := newEnv(t)
				if c.limit > 0 {
					e.g.qPosted = postedElsewhereQueries(e.db.Dialect, c.limit)
				}
				since := e.clock.Now()
				// One statement: the other account's posts; the oldest
				// (i = 0) carries the text looked for.
				var b strings.Builder
				b.WriteString(`INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, account_id, created_at) VALUES `)
				for i := range c.n {
					if i > 0 {
						b.WriteString(", ")
					}
					text := fmt.Sprintf("post %d", i)
					if i == 0 {
						text = "the oldest post"
					}
					fmt.Fprintf(&b, `('w%d', 'x_post_tweet', 'h%d', '{"text":"%s"}', 'success', 'brand_b', '%s')`, i, i, text, ts(since.Add(c.at(i))))
				}
				if _, err := e.db.ExecContext(e.ctx, b.String()); err != nil {
					t.Fatal(err)
				}
				// Twice: the second read finds the rows the first kept.
				for read := range 2 {
					got, err := e.g.PostedElsewhere(e.ctx, since)
					if err != nil {
						t.Fatal(err)
					}
					seen := map[string]int{}
					var oldest string
					for _, p := range got {
						seen[p.CorrelationID]++
						if p.CorrelationID == "w0" {
							oldest = p.Text
						}
					}
					if seen["w0"] != 1 || oldest != "the oldest post" {
						t.Errorf("read %d: the oldest post in the window is read %d times, text %q (%d posts read of %d)", read, seen["w0"], oldest, len(got), c.n)
					}
					if len(got) != c.n || len(seen) != c.n {
						t.Errorf("read %d: %d posts (%d distinct), want the window's %d, each once", read, len(got), len(seen), c.n)
					}
				}

				if _, err := e.db.ExecContext(e.ctx, "ANALYZE"); err != nil {
					t.Fatal(err)
				}
				q := e.g.qPosted
				for _, r := range []struct {
					query string
					index string
					args  []any
				}{
					{q.first, "idx_mutation_audit_created", []any{ts(since), "default", int64(0)}},
					{q.at, "idx_mutation_audit_created", []any{ts(since), "default", int64(0)}},
					{q.older, "idx_mutation_audit_created", []any{ts(since), "default", int64(0), ts(since.Add(time.Hour))}},
					{q.timeOf, "", []any{int64(1)}},
				} {
					plan := explain(t, e, r.query, r.args...)
					if !strings.Contains(plan, r.index) {
						t.Errorf("the plan does not read %s:\n%s\n%s", r.index, r.query, plan)
					}
					if bad := badStep(plan); bad != "" {
						t.Errorf("%q in the plan of\n%s\n%s", bad, r.query, plan)
					}
					if storetest.BackendOf(t) == storetest.SQLite {
						if n := storetest.Replans(t, e.dbPath, r.query); n != 0 {
							t.Errorf("planned again at each of %d runs:\n%s", n, r.query)
						}
					}
				}
			})
		})
	}
}
