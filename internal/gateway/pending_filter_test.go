package gateway

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// facetsByCount is what PendingFacets must answer: the pending, unexpired
// items counted by tool and caller straight from the queue.
func (e *env) facetsByCount() []PendingFacet {
	e.t.Helper()
	rows, err := e.db.QueryContext(e.ctx, `SELECT tool_name, caller, count(*) FROM approval_queue
		WHERE account_id = 'default' AND status = 'pending' AND expires_at > ? GROUP BY tool_name, caller ORDER BY tool_name, caller`,
		ts(e.clock.Now()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := []PendingFacet{}
	for rows.Next() {
		var f PendingFacet
		if err := rows.Scan(&f.Tool, &f.Caller, &f.Count); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// keptCounts are the pending counts the triggers keep, expired or not.
func (e *env) keptCounts() map[string]int {
	e.t.Helper()
	rows, err := e.db.QueryContext(e.ctx, `SELECT tool_name || '/' || caller, n FROM approval_pending_counts WHERE account_id = 'default' AND n <> 0`)
	if err != nil {
		e.t.Fatalf("read the kept counts: %v", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			e.t.Fatal(err)
		}
		out[k] = n
	}
	return out
}

func (e *env) exec(q string, args ...any) {
	e.t.Helper()
	if _, err := e.db.ExecContext(e.ctx, q, args...); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

// TestPendingFacetsFollowTheQueue: the filter counts are read from counts
// the database keeps, not by counting the queue; through queueing,
// approving, rejecting, editing, a changed caller, a deletion and expiry
// they stay what counting the queue says, and the kept counts match the
// items still marked pending.
func TestPendingFacetsFollowTheQueue(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		check := func(step string, kept map[string]int) {
			t.Helper()
			got, err := e.g.PendingFacets(e.ctx)
			if err != nil {
				t.Fatalf("%s: PendingFacets: %v", step, err)
			}
			if want := e.facetsByCount(); !slices.Equal(got, want) {
				t.Fatalf("%s: facets %+v, counting the queue gives %+v", step, got, want)
			}
			if got := e.keptCounts(); !maps.Equal(got, kept) {
				t.Fatalf("%s: kept counts %v, want %v", step, got, kept)
			}
		}
		check("empty", map[string]int{})
		ids := []int64{e.queue(`{"text":"one"}`), e.queue(`{"text":"two"}`), e.queue(`{"text":"three"}`), e.queue(`{"text":"four"}`)}
		check("queued", map[string]int{fakeTool + "/mcp": 4})
		if _, _, err := e.g.Approve(e.ctx, ids[0], "alice", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := e.g.Reject(e.ctx, ids[1], "alice", "no"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.g.Edit(e.ctx, ids[2], "three, edited"); err != nil {
			t.Fatal(err)
		}
		check("decided and edited", map[string]int{fakeTool + "/mcp": 2})
		e.exec(`UPDATE approval_queue SET caller = 'web' WHERE id = ?`, ids[2])
		check("caller changed", map[string]int{fakeTool + "/mcp": 1, fakeTool + "/web": 1})
		e.exec(`DELETE FROM approval_queue WHERE id = ?`, ids[3])
		check("deleted", map[string]int{fakeTool + "/web": 1})
		// Half a day later another item; a day after the first, that one
		// has expired while still marked pending, and is left out.
		e.clock.Advance(12 * time.Hour)
		e.queue(`{"text":"five"}`)
		e.clock.Advance(12*time.Hour + time.Second)
		check("one expired, unmarked", map[string]int{fakeTool + "/web": 1, fakeTool + "/mcp": 1})
		if _, err := e.g.ExpireStale(e.ctx); err != nil {
			t.Fatal(err)
		}
		check("expired, marked", map[string]int{fakeTool + "/mcp": 1})
	})
}

// TestPendingFilteredPages: a page of the queue is the matching pending,
// unexpired items, oldest first, from its offset or after an id, with the
// total when asked, on both backends.
func TestPendingFilteredPages(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		var ids []int64
		for _, text := range []string{"a", "b", "c", "d", "e"} {
			ids = append(ids, e.queue(`{"text":"`+text+`"}`))
		}
		e.exec(`UPDATE approval_queue SET caller = 'web' WHERE id IN (?, ?)`, ids[1], ids[3])
		if _, err := e.g.Reject(e.ctx, ids[4], "alice", ""); err != nil {
			t.Fatal(err)
		}
		idsOf := func(items []ApprovalItem) []int64 {
			out := []int64{}
			for _, it := range items {
				out = append(out, it.ID)
			}
			return out
		}
		for _, c := range []struct {
			name  string
			f     PendingFilter
			want  []int64
			total int
		}{
			{"all", PendingFilter{Limit: 10}, ids[:4], 4},
			{"first page", PendingFilter{Limit: 2}, ids[:2], 4},
			{"second page", PendingFilter{Limit: 2, Offset: 2}, ids[2:4], 4},
			{"past the end", PendingFilter{Limit: 2, Offset: 4}, []int64{}, 4},
			{"by caller", PendingFilter{Limit: 10, Caller: "web"}, []int64{ids[1], ids[3]}, 2},
			{"by tool and caller", PendingFilter{Limit: 1, Offset: 1, Tool: fakeTool, Caller: "mcp"}, []int64{ids[2]}, 2},
			{"after an id", PendingFilter{Limit: 10, AfterID: ids[1]}, ids[2:4], 2},
			{"not counted", PendingFilter{Limit: 10, NoCount: true}, ids[:4], -1},
		} {
			items, total, err := e.g.PendingFiltered(e.ctx, c.f)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got := idsOf(items); !slices.Equal(got, c.want) || total != c.total {
				t.Errorf("%s: items %v total %d, want %v total %d", c.name, got, total, c.want, c.total)
			}
		}
	})
}
