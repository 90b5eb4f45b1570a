package pgtest_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// TestProxyCutsOnEveryStatementSet: each CutOn adds a statement; the proxy
// cuts the next connection carrying each, once, and forwards the rest.
func TestProxyCutsOnEveryStatementSet(t *testing.T) {
	ctx := context.Background()
	proxy := pgtest.NewProxy(t, pgtest.NewDatabase(t, ""))
	proxy.CutOn("SELECT 'first cut'", 1)
	proxy.CutOn("SELECT 'second cut'", 1)
	db, err := sql.Open("pgx", proxy.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"SELECT 'first cut'", "SELECT 'second cut'"} {
		var s string
		if err := db.QueryRowContext(ctx, q).Scan(&s); err == nil {
			t.Fatalf("%s went through; the proxy should have cut it", q)
		}
		if err := db.QueryRowContext(ctx, q).Scan(&s); err != nil {
			t.Fatalf("%s again, on a new connection: %v", q, err)
		}
	}
	if proxy.Cut() != 2 {
		t.Fatalf("the proxy cut %d connections, want 2", proxy.Cut())
	}
}
