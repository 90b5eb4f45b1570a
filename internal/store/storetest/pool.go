package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// Creating and dropping a PostgreSQL database costs a few hundred
// milliseconds, far more than most tests that use one; a suite that runs
// every test on both backends would spend most of its time there. So a
// test's database goes back to a pool when the test ends, emptied
// (TRUNCATE ... RESTART IDENTITY), and the next test gets it instead of a
// new one. Before reuse it is renamed, which PostgreSQL refuses while any
// session is still connected: a process the test left running cannot
// write into the next test's database (it is dropped instead). A database
// that store.Open no longer accepts, or whose tables, columns or indexes
// differ from a freshly migrated one's, is dropped as well.
var pool struct {
	mu   sync.Mutex
	free []string // names of emptied databases, migrated or never opened
	made []string // every database the pool holds, dropped at Stop
	// schema is the fingerprint of a freshly migrated database.
	schemaOnce sync.Once
	schema     string
	schemaErr  error
}

var poolSeq atomic.Int64

// pooledDatabase returns the URL of an empty PostgreSQL database, migrated
// or not, that is t's until t ends.
func pooledDatabase(t testing.TB) string {
	t.Helper()
	admin := pgtest.ServerURL(t)
	ctx := context.Background()
	pool.schemaOnce.Do(func() { pool.schema, pool.schemaErr = referenceSchema(ctx, admin) })
	if pool.schemaErr != nil {
		t.Fatalf("migrate the reference PostgreSQL database: %v", pool.schemaErr)
	}
	pool.mu.Lock()
	var name string
	if n := len(pool.free); n > 0 {
		name, pool.free = pool.free[n-1], pool.free[:n-1]
	}
	pool.mu.Unlock()
	if name == "" {
		var err error
		if name, err = newPoolDatabase(ctx, admin); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { recycle(ctx, admin, name) })
	return pgtest.WithDatabase(admin, name)
}

func poolName() string { return fmt.Sprintf("tuitbot_test_pool_%d_%d", os.Getpid(), poolSeq.Add(1)) }

func newPoolDatabase(ctx context.Context, admin string) (string, error) {
	name := poolName()
	if err := pgtest.CreateDatabase(ctx, admin, name, ""); err != nil {
		return "", err
	}
	remember(name, "")
	return name, nil
}

// remember records that the pool holds name (instead of old, when set).
func remember(name, old string) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if len(pool.made) == 0 {
		pgtest.OnStop(dropPool)
	}
	pool.made = slices.DeleteFunc(pool.made, func(n string) bool { return n == old })
	if name != "" {
		pool.made = append(pool.made, name)
	}
}

func dropPool(admin string) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	for _, n := range pool.made {
		_ = pgtest.DropDatabase(context.Background(), admin, n)
	}
	pool.made, pool.free = nil, nil
}

// referenceSchema migrates a new database, notes its schema and leaves it
// in the pool.
func referenceSchema(ctx context.Context, admin string) (string, error) {
	name, err := newPoolDatabase(ctx, admin)
	if err != nil {
		return "", err
	}
	db, err := store.Open(ctx, pgtest.WithDatabase(admin, name), store.Options{ReserveBytes: -1})
	if err != nil {
		return "", err
	}
	db.Close()
	schema, err := emptyDatabase(ctx, pgtest.WithDatabase(admin, name))
	if err != nil {
		return "", err
	}
	pool.mu.Lock()
	pool.free = append(pool.free, name)
	pool.mu.Unlock()
	return schema, nil
}

// recycle renames a test's database, checks and empties it, and leaves it
// for the next test; it drops it instead when any of that fails.
func recycle(ctx context.Context, admin, name string) {
	fresh := poolName()
	if err := renameDatabase(ctx, admin, name, fresh); err != nil {
		_ = pgtest.DropDatabase(ctx, admin, name)
		remember("", name)
		return
	}
	remember(fresh, name)
	url := pgtest.WithDatabase(admin, fresh)
	schema, err := emptyDatabase(ctx, url)
	if err == nil && schema != "" {
		// What a test did to the migration history shows here.
		var db *store.DB
		if db, err = store.Open(ctx, url, store.Options{ReserveBytes: -1}); err == nil {
			db.Close()
			schema, err = emptyDatabase(ctx, url)
		}
	}
	if err != nil || (schema != "" && schema != pool.schema) {
		_ = pgtest.DropDatabase(ctx, admin, fresh)
		remember("", fresh)
		return
	}
	pool.mu.Lock()
	pool.free = append(pool.free, fresh)
	pool.mu.Unlock()
}

// renameDatabase renames old to name; PostgreSQL waits a few seconds for
// the sessions of old to end and then refuses.
func renameDatabase(ctx context.Context, admin, old, name string) error {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `ALTER DATABASE "`+old+`" RENAME TO "`+name+`"`)
	return err
}

// emptyDatabase truncates every table but the migration history and
// returns the schema's fingerprint: tables, columns and indexes ("" for a
// database without tables).
func emptyDatabase(ctx context.Context, url string) (string, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return "", err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var schema, tables sql.NullString
	err = db.QueryRowContext(ctx, `SELECT
  (SELECT string_agg(table_name || '.' || column_name || ' ' || data_type, ',' ORDER BY table_name, column_name)
     FROM information_schema.columns WHERE table_schema = 'public')
  || ';' || COALESCE((SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'public'), ''),
  (SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'goose_db_version')`).
		Scan(&schema, &tables)
	if err != nil {
		return "", err
	}
	if tables.Valid {
		if _, err := db.ExecContext(ctx, `TRUNCATE `+tables.String+` RESTART IDENTITY CASCADE`); err != nil {
			return "", err
		}
	}
	return schema.String, nil
}
