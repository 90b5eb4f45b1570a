package storetest

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestPooledDatabases proves what a PostgreSQL test gets from Target after
// the pool reused a database: no rows of an earlier test, a schema
// store.Open accepts even when an earlier test damaged its own, and never
// a database an earlier test's session is still connected to.
func TestPooledDatabases(t *testing.T) {
	pgtest.ServerURL(t)
	ctx := context.Background()
	open := func(t *testing.T) *store.DB {
		t.Helper()
		db := Open(t, store.Options{ReserveBytes: -1})
		var name string
		if err := db.QueryRowContext(ctx, `SELECT current_database()`).Scan(&name); err != nil {
			t.Fatal(err)
		}
		t.Logf("database %s", name)
		return db
	}
	drafts := func(t *testing.T, db *store.DB) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM drafts`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insertDraft := func(t *testing.T, db *store.DB) int64 {
		t.Helper()
		var id int64
		if err := db.QueryRowContext(ctx, `INSERT INTO drafts (content_type, content, status, created_at, updated_at)
				VALUES ('tweet', 'a draft', 'draft', '2026-03-02T00:00:00.000Z', '2026-03-02T00:00:00.000Z') RETURNING id`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	var leaked *sql.Conn
	t.Run(Postgres, func(t *testing.T) {
		t.Run("writes", func(t *testing.T) {
			db := open(t)
			if _, err := db.ExecContext(ctx, `INSERT INTO drafts (content_type, content, status, created_at, updated_at)
				VALUES ('tweet', 'left behind', 'draft', '2026-03-02T00:00:00.000Z', '2026-03-02T00:00:00.000Z')`); err != nil {
				t.Fatal(err)
			}
		})
		// The next test's ids start at one again, whether the earlier
		// test left its rows (above) or deleted them (here), so that
		// only the sequence moved.
		t.Run("starts its ids afresh after rows left behind", func(t *testing.T) {
			db := open(t)
			if id := insertDraft(t, db); id != 1 {
				t.Fatalf("first draft has id %d, want 1", id)
			}
			if _, err := db.ExecContext(ctx, `DELETE FROM drafts`); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("finds it empty", func(t *testing.T) {
			db := open(t)
			if n := drafts(t, db); n != 0 {
				t.Fatalf("%d drafts of an earlier test", n)
			}
			if id := insertDraft(t, db); id != 1 {
				t.Fatalf("after an earlier test deleted its rows the first draft has id %d, want 1", id)
			}
			if _, err := db.ExecContext(ctx, `DROP TABLE drafts`); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("rewrites the migration history", func(t *testing.T) {
			db := open(t)
			if _, err := db.ExecContext(ctx, `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("finds the schema whole", func(t *testing.T) {
			db := open(t)
			if n := drafts(t, db); n != 0 {
				t.Fatalf("%d drafts", n)
			}
			// A session that outlives the test.
			raw, err := sql.Open("pgx", db.Path)
			if err != nil {
				t.Fatal(err)
			}
			raw.SetMaxOpenConns(1)
			if leaked, err = raw.Conn(ctx); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("never shares a database with a leftover session", func(t *testing.T) {
			db := open(t)
			if n := drafts(t, db); n != 0 {
				t.Fatalf("%d drafts", n)
			}
			// The leftover session's database was dropped, not reused.
			var name string
			if err := leaked.QueryRowContext(ctx, `SELECT current_database()`).Scan(&name); err == nil {
				t.Errorf("the leftover session still reaches database %s", name)
			}
		})
	})
	if leaked != nil {
		leaked.Close()
	}
}
