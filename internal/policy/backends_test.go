package policy_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// The engine's counter suites (package policy) also run on the store's
// counters, on SQLite and on PostgreSQL; they are registered from here
// because the store's counters import policy. The subtest names are
// storetest's, so storetest.Open picks the backend from them.
func init() {
	for _, name := range storetest.Backends {
		policy.RegisterCounterBackend(policy.CounterBackend{Name: name, Open: openSQLCounters})
	}
}

// TestMain closes the shared databases and stops the throwaway PostgreSQL
// cluster the suites may have started.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range shared {
		// A run filtered to tests that never opened it has nothing to close.
		if s.close != nil {
			s.close()
		}
	}
	pgtest.Stop()
	os.Exit(code)
}

// sqlCounterDB is a real, fully migrated tuitbot database of the test's
// backend.
type sqlCounterDB struct{ db *sql.DB }

func openSQLCounters(t *testing.T, own bool) policy.CounterDB {
	t.Helper()
	if storetest.BackendOf(t) == storetest.Postgres {
		pgtest.ServerURL(t) // skips, saying how to run it, without a server
	}
	if own {
		return sqlCounterDB{db: storetest.Open(t, store.Options{ReserveBytes: -1}).DB}
	}
	return sqlCounterDB{db: shared[storetest.BackendOf(t)].open(t)}
}

// sharedDB is a backend's database that outlives the test that opens it
// first, closed (and on PostgreSQL dropped) by TestMain.
type sharedDB struct {
	once  sync.Once
	db    *store.DB
	err   error
	close func()
}

var shared = map[string]*sharedDB{storetest.SQLite: {}, storetest.Postgres: {}}

func (s *sharedDB) open(t *testing.T) *sql.DB {
	t.Helper()
	s.once.Do(func() {
		ctx := context.Background()
		s.close = func() {}
		var target string
		if storetest.BackendOf(t) == storetest.Postgres {
			admin := pgtest.ServerURL(t)
			name := fmt.Sprintf("tuitbot_policy_%d", os.Getpid())
			if s.err = pgtest.CreateDatabase(ctx, admin, name, ""); s.err != nil {
				return
			}
			s.close = func() { _ = pgtest.DropDatabase(ctx, admin, name) }
			target = pgtest.WithDatabase(admin, name)
		} else {
			dir, err := os.MkdirTemp("", "tuitbot-policy-")
			if s.err = err; err != nil {
				return
			}
			s.close = func() { _ = os.RemoveAll(dir) }
			target = filepath.Join(dir, "tuitbot.db")
		}
		s.db, s.err = store.Open(ctx, target, store.Options{ReserveBytes: -1})
		if s.err == nil {
			drop := s.close
			s.close = func() { s.db.Close(); drop() }
		}
	})
	if s.err != nil {
		t.Fatalf("open the shared %s database: %v", storetest.BackendOf(t), s.err)
	}
	return s.db.DB
}

func (d sqlCounterDB) Counters(account string, now func() time.Time) policy.CounterStore {
	return sqlCounters{Store: counters.New(d.db, account, now), db: d.db}
}

type sqlCounters struct {
	*counters.Store
	db *sql.DB
}

// Update runs fn in a transaction of the database, as the gateway runs
// ReserveTx in its own.
func (c sqlCounters) Update(ctx context.Context, fn func(policy.CounterTx) error) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(c.Tx(tx)); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Break drops the counters' table: a transaction still begins, and every
// counter statement fails.
func (c sqlCounters) Break(t *testing.T) {
	t.Helper()
	if _, err := c.db.Exec(`DROP TABLE policy_counters`); err != nil {
		t.Fatalf("break the counters: %v", err)
	}
}
