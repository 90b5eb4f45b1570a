package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestPreparedOncePerQueryAndClosedWithTheDB: every caller asking for the
// same query gets the one statement, a query that cannot be prepared is
// an error that is not kept, and the statements close with the database.
func TestPreparedOncePerQueryAndClosedWithTheDB(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "tuitbot.db"), store.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	const q = "SELECT count(*) FROM action_log WHERE account_id = ?"
	a, err := db.Prepared(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Prepared(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the same query was prepared twice")
	}
	other, err := db.Prepared(ctx, "SELECT count(*) FROM action_log")
	if err != nil {
		t.Fatal(err)
	}
	if other == a {
		t.Error("two queries share a statement")
	}
	for range 2 {
		if _, err := db.Prepared(ctx, "SELECT nope FROM nowhere"); err == nil || !strings.Contains(err.Error(), "nowhere") {
			t.Errorf("preparing a bad query: %v, want an error naming the table", err)
		}
	}
	if n := db.Statements(); n != 2 {
		t.Errorf("%d statements kept, want 2", n)
	}
	var n int
	if err := a.QueryRowContext(ctx, "default").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.QueryRowContext(ctx, "default").Scan(&n); err == nil {
		t.Error("a statement kept by the database still runs after it closed")
	}
	if n := db.Statements(); n != 0 {
		t.Errorf("%d statements kept after Close, want 0", n)
	}
}
