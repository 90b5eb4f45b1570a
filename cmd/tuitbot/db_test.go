package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// auditRows counts the audit rows of the database at target.
func auditRows(t *testing.T, target string) int {
	t.Helper()
	db, err := store.Open(context.Background(), target, store.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", target, err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM mutation_audit`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDBMigrateExportImport moves a home's history from its SQLite file to
// PostgreSQL, exports it back to a SQLite file and imports that into a
// second PostgreSQL database; a filled target is refused.
func TestDBMigrateExportImport(t *testing.T) {
	pgA := pgtest.NewDatabase(t, "")
	pgB := pgtest.NewDatabase(t, "")
	h := newHome(t)
	dbFile := filepath.Join(h.dir, "tuitbot.db")
	db, err := store.Open(context.Background(), dbFile, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, corr := range []string{"c1", "c2"} {
		if _, err := db.ExecContext(context.Background(), `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, owner, created_at)
			VALUES (?, 'x_like_tweet', ?, '{}', 'success', 'o', '2026-03-04T05:06:07.800Z')`, corr, corr); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	r := h.ok(t, "db", "migrate", "--to", pgA)
	if !strings.Contains(r.stdout, "mutation_audit") || !strings.Contains(r.stdout, "every table's count checked") {
		t.Fatalf("migrate printed %q", r.stdout)
	}
	if n := auditRows(t, pgA); n != 2 {
		t.Fatalf("postgres has %d audit rows after migrate, want 2", n)
	}
	h.fails(t, "db", "migrate", "--to", pgA)

	h.env = append(h.env, "TUITBOT_STORAGE__DATABASE_URL="+pgA)
	exported := filepath.Join(t.TempDir(), "export.db")
	h.ok(t, "db", "export", exported)
	if n := auditRows(t, exported); n != 2 {
		t.Fatalf("export has %d audit rows, want 2", n)
	}

	h.env = append(h.env, "TUITBOT_STORAGE__DATABASE_URL="+pgB)
	h.ok(t, "db", "import", exported)
	if n := auditRows(t, pgB); n != 2 {
		t.Fatalf("import left %d audit rows, want 2", n)
	}
}
