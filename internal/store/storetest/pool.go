package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
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
// whose tables, columns, indexes or migration history differ from a
// freshly migrated one's is opened with store.Open, which migrates what it
// can, and dropped when store.Open refuses it or it still differs.
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
	if err == nil && schema != "" && schema != pool.schema {
		// The test changed the schema or the migration history: opening
		// the database migrates it again where it can.
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

// emptyDatabase empties every table but the migration history, restarts
// every sequence a test used, and returns the schema's fingerprint:
// tables, columns, indexes and the migration history ("" for a database
// without tables).
//
// TRUNCATE gives every table it names new files, which costs PostgreSQL
// about as much for an empty table as for a full one: truncating all of
// them was most of the server's work in a suite of short tests. So only
// the tables that hold rows are truncated (with CASCADE, as before, and
// without firing row triggers, as DELETE would), and only the sequences
// that moved are restarted; the database ends exactly as empty.
func emptyDatabase(ctx context.Context, url string) (string, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return "", err
	}
	defer db.Close()
	// One session for every statement: a new one would cost a server
	// process of its own.
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var schema, tables sql.NullString
	// The fingerprint reads the catalogs themselves: the
	// information_schema views cost the server several times as much.
	err = db.QueryRowContext(ctx, `SELECT
  (SELECT string_agg(c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY c.relname, a.attname)
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND a.attnum > 0 AND NOT a.attisdropped)
  || ';' || COALESCE((SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class
     WHERE relnamespace = 'public'::regnamespace AND relkind IN ('i', 'I')), ''),
  (SELECT string_agg(quote_ident(relname), ',') FROM pg_class
     WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') AND relname <> 'goose_db_version')`).
		Scan(&schema, &tables)
	if err != nil {
		return "", err
	}
	// The migration history is part of the fingerprint: a database whose
	// tables are whole but whose history a test rewrote would fail the
	// next store.Open.
	if strings.Contains(schema.String, "goose_db_version.") {
		history, err := store.MigrationHistory(ctx, db)
		if err != nil {
			return "", err
		}
		schema.String += ";" + history
	}
	if tables.Valid {
		full, err := tablesWithRows(ctx, db, strings.Split(tables.String, ","))
		if err != nil {
			return "", err
		}
		if len(full) > 0 {
			if _, err := db.ExecContext(ctx, `TRUNCATE `+strings.Join(full, ", ")+` RESTART IDENTITY CASCADE`); err != nil {
				return "", err
			}
		}
	}
	// A sequence moves without leaving a row behind (a rolled-back or
	// deleted insert); pg_sequences shows last_value only once it has.
	rows, err := db.QueryContext(ctx, `SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename)
  FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL`)
	if err != nil {
		return "", err
	}
	var moved []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return "", err
		}
		moved = append(moved, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	for _, seq := range moved {
		if _, err := db.ExecContext(ctx, `ALTER SEQUENCE `+seq+` RESTART`); err != nil {
			return "", err
		}
	}
	return schema.String, nil
}

// tablesWithRows returns those of tables (quoted names) that hold at
// least one row, asking about all of them in one statement.
func tablesWithRows(ctx context.Context, db *sql.DB, tables []string) ([]string, error) {
	parts := make([]string, len(tables))
	for i, tbl := range tables {
		parts[i] = fmt.Sprintf(`SELECT %d WHERE EXISTS (SELECT 1 FROM %s)`, i, tbl)
	}
	rows, err := db.QueryContext(ctx, strings.Join(parts, " UNION ALL "))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var full []string
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			return nil, err
		}
		full = append(full, tables[i])
	}
	return full, rows.Err()
}
