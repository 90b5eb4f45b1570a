package store_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestStatisticsKeptCurrent: a SQLite database gains the planner's
// statistics of its tables when it is opened without them (PRAGMA
// optimize at open) and when the process closes it (PRAGMA optimize at
// close), as SQLite advises for long-lived and short-lived connections.
func TestStatisticsKeptCurrent(t *testing.T) {
	for _, c := range []struct {
		name string
		// forget drops the statistics after the rows are written and the
		// database closed, so only the next open can gather them.
		forget bool
	}{
		{"gathered at close", false},
		{"gathered at open", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "tuitbot.db")
			fillLikes(t, path)
			if c.forget {
				raw, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := raw.ExecContext(ctx, `DROP TABLE IF EXISTS sqlite_stat1`); err != nil {
					t.Fatal(err)
				}
				if got := statRows(t, raw); got != 0 {
					t.Fatalf("%d statistics rows left after dropping them", got)
				}
				raw.Close()
				db := open(t, path, store.Options{Now: clock})
				if got := statRows(t, db.DB); got == 0 {
					t.Fatal("open gathered no statistics of mutation_audit")
				}
				return
			}
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if got := statRows(t, raw); got == 0 {
				t.Fatal("close gathered no statistics of mutation_audit")
			}
		})
	}
}

// statRows counts the statistics rows of mutation_audit's indexes (0 when
// there are none, or no statistics table).
func statRows(t *testing.T, db *sql.DB) int {
	t.Helper()
	var exists int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'`).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists == 0 {
		return 0
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'mutation_audit'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNewDatabaseOpensWithoutGatheringStatistics: a database just created
// from the baseline has nothing to gather statistics of, and its open
// spends no time on it (its close gathers them, as for any database).
func TestNewDatabaseOpensWithoutGatheringStatistics(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "tuitbot.db"), store.Options{Now: clock})
	if !db.FromBaseline {
		t.Fatal("a new database was not created from the baseline")
	}
	var analyzed int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'`).Scan(&analyzed); err != nil {
		t.Fatal(err)
	}
	if analyzed != 0 {
		t.Error("opening a new database gathered statistics of its empty tables")
	}
}

// TestDeferredStatisticsWaitForTheCaller: a database opened with
// DeferStatistics gathers no statistics at open, even when it has none,
// and says so; Analyze then gathers them. A server opens it so to answer
// its first call before spending milliseconds on the planner's sample.
func TestDeferredStatisticsWaitForTheCaller(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tuitbot.db")
	fillLikes(t, path)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `DROP TABLE IF EXISTS sqlite_stat1`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db := open(t, path, store.Options{Now: clock, DeferStatistics: true})
	if got := statRows(t, db.DB); got != 0 {
		t.Fatalf("open gathered %d statistics rows although they were deferred", got)
	}
	if !db.StatisticsDeferred {
		t.Fatal("open did not report the statistics it deferred")
	}
	if err := db.Analyze(ctx); err != nil {
		t.Fatal(err)
	}
	if got := statRows(t, db.DB); got == 0 {
		t.Fatal("Analyze after a deferred open gathered no statistics of mutation_audit")
	}
}

// TestNewDatabaseBuiltAside: a new SQLite database is built beside its
// path and moved into place whole, so a start that died while building
// one leaves only its building file, which the next start removes before
// it builds a good database.
func TestNewDatabaseBuiltAside(t *testing.T) {
	for _, c := range []struct {
		name     string
		leftover []string // suffixes of the building file left behind
	}{
		{"first start", nil},
		{"after a start that died building it", []string{"", "-journal", "-wal"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tuitbot.db")
			for _, s := range c.leftover {
				if err := os.WriteFile(store.BuildingPath(path)+s, []byte("half a database"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			db := open(t, path, store.Options{Now: clock})
			if !db.FromBaseline || db.ID == "" {
				t.Fatalf("new database: from baseline %t, identity %q", db.FromBaseline, db.ID)
			}
			if db.IdentityNote != "" {
				t.Errorf("a new database in a fresh home has an identity note: %s", db.IdentityNote)
			}
			for _, s := range []string{"", "-journal", "-wal", "-shm"} {
				if _, err := os.Stat(store.BuildingPath(path) + s); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s left beside the database (%v)", filepath.Base(store.BuildingPath(path)+s), err)
				}
			}
			var stale int
			if err := db.QueryRow(`SELECT count(*) FROM goose_db_version WHERE tstamp < '2001'`).Scan(&stale); err != nil || stale != 0 {
				t.Errorf("%d versions (%v) keep the template's stamp instead of the time they were applied", stale, err)
			}
			var mode string
			if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
				t.Fatalf("journal mode %q (%v), want wal", mode, err)
			}
		})
	}
}

// fillLikes makes a database at path holding 500 audit rows of likes and
// closes it.
func fillLikes(t *testing.T, path string) {
	t.Helper()
	db := open(t, path, store.Options{Now: clock})
	if _, err := db.ExecContext(context.Background(), `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM seq WHERE i < 500)
		INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, created_at)
		SELECT 'c' || i, 'x_like_tweet', 'h' || i, '{}', 'success', '2026-03-01T00:00:00.000Z' FROM seq`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
