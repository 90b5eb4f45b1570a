package storetest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// The backends a suite runs against, by subtest name.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Backends lists the backends ForEachBackend runs.
var Backends = []string{SQLite, Postgres}

// ForEachBackend runs fn once per backend, each in a subtest named after
// it, so one suite proves the same behaviour on SQLite and on PostgreSQL.
// Inside fn, Open (and BackendOf) give that backend's database. The
// PostgreSQL subtest skips when there is no server (see pgtest).
func ForEachBackend(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	for _, b := range Backends {
		t.Run(b, func(t *testing.T) {
			if b == Postgres {
				pgtest.ServerURL(t)
			}
			fn(t)
		})
	}
}

// BackendOf is the backend of the ForEachBackend subtest t runs in;
// SQLite outside one.
func BackendOf(t testing.TB) string {
	parts := strings.Split(t.Name(), "/")
	if len(parts) > 1 && parts[1] == Postgres {
		return Postgres
	}
	return SQLite
}

// Target returns what store.Open should open for t's backend: a new
// SQLite file in a temporary directory, or a PostgreSQL database that is
// t's alone until it ends: empty, or migrated and emptied (see
// pooledDatabase).
func Target(t testing.TB) string {
	t.Helper()
	if BackendOf(t) == Postgres {
		return pooledDatabase(t)
	}
	return filepath.Join(t.TempDir(), "tuitbot.db")
}

// Open opens a new, fully migrated database of t's backend, closed when t
// ends.
func Open(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), Target(t), opts)
	if err != nil {
		t.Fatalf("open %s database: %v", BackendOf(t), err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
