package gateway

import (
	"slices"
	"testing"
)

// TestHotQueriesArePreparedByTheFirstCall: opening the gateway prepares
// none of its hot queries (a server's first answers need none of them);
// the first call prepares them all, before its transaction, and later
// calls reuse them.
func TestHotQueriesArePreparedByTheFirstCall(t *testing.T) {
	e := newEnv(t)
	hot := hotQueries(e.db.Dialect)
	prepared := func() (n int) {
		t.Helper()
		for _, q := range e.db.PreparedQueries() {
			if slices.Contains(hot, q.Text) {
				n++
			}
		}
		return n
	}
	if n := prepared(); n != 0 {
		t.Fatalf("%d hot queries prepared when the gateway opened, want none before its first call", n)
	}
	e.mustDo(map[string]any{"text": "first"}, "")
	if n := prepared(); n != len(hot) {
		t.Fatalf("%d hot queries prepared after the first call, want all %d", n, len(hot))
	}
	total := e.db.Statements()
	e.mustDo(map[string]any{"text": "second"}, "")
	if n := e.db.Statements(); n != total {
		t.Errorf("%d statements prepared after the second call, want the first call's %d", n, total)
	}
}
