package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tuitbot/tuitbot/internal/store"
)

var fixedNow = time.Date(2026, 3, 4, 5, 6, 7, 800_000_000, time.UTC)

func clock() time.Time { return fixedNow }

func open(t *testing.T, path string, opts store.Options) *store.DB {
	t.Helper()
	if opts.Now == nil {
		opts.Now = clock
	}
	db, err := store.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// migrationTables maps each migration version to the tables its Up section
// creates, read from the embedded SQL files so new migrations are covered
// without editing this test.
func migrationTables(t *testing.T) map[int64][]string {
	t.Helper()
	entries, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	create := regexp.MustCompile(`(?i)CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?["\x60]?(\w+)`)
	out := map[int64][]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err != nil {
			t.Fatalf("migration %s has no numeric version: %v", e.Name(), err)
		}
		b, err := os.ReadFile(filepath.Join("migrations", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		up, _, _ := strings.Cut(string(b), "-- +goose Down")
		out[v] = []string{} // a migration that only alters tables still counts
		for _, m := range create.FindAllStringSubmatch(up, -1) {
			out[v] = append(out[v], m[1])
		}
	}
	if len(out) == 0 {
		t.Fatal("no migrations found")
	}
	return out
}

func latestVersion(tables map[int64][]string) int64 {
	var max int64
	for v := range tables {
		if v > max {
			max = v
		}
	}
	return max
}

func tableNames(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_stat%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[n] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func dbVersion(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRow("SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenCreatesDatabaseWithPragmas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "tuitbot.db")
	db := open(t, path, store.Options{})
	if db.Path != path {
		t.Errorf("Path = %q, want %q", db.Path, path)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("database file not created: %v", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("database file mode %o; want no group/other access", st.Mode().Perm())
	}

	// Hold several pooled connections at once: the pragmas must be set on
	// every one of them, not only the first.
	ctx := context.Background()
	var conns []*sql.Conn
	for range 3 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var mode string
		var fk, busy int
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" {
			t.Errorf("conn %d: journal_mode = %q, want wal", i, mode)
		}
		if fk != 1 {
			t.Errorf("conn %d: foreign_keys = %d, want 1", i, fk)
		}
		if busy < 1000 {
			t.Errorf("conn %d: busy_timeout = %d ms, want at least 1000", i, busy)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	if res, err := db.IntegrityCheck(ctx); err != nil || res != "ok" {
		t.Errorf("IntegrityCheck = %q, %v", res, err)
	}
}

func TestMigrationsApplied(t *testing.T) {
	want := migrationTables(t)
	db := open(t, filepath.Join(t.TempDir(), "t.db"), store.Options{})
	have := tableNames(t, db.DB)
	for v, tables := range want {
		for _, name := range tables {
			if !have[name] {
				t.Errorf("table %s from migration %d missing", name, v)
			}
		}
	}
	if got, want := dbVersion(t, db.DB), latestVersion(want); got != want {
		t.Errorf("goose version = %d, want %d", got, want)
	}
}

func TestForeignKeysEnforced(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "t.db"), store.Options{})
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE parent_t (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE child_t (id INTEGER PRIMARY KEY, p INTEGER NOT NULL REFERENCES parent_t(id))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO child_t (p) VALUES (42)"); err == nil {
		t.Error("insert with a dangling foreign key succeeded; foreign_keys is not on")
	}
}

func TestReopenIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.db")
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if db.BackupPath != "" {
		t.Errorf("fresh database was backed up to %s", db.BackupPath)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO action_log (action_type, created_at) VALUES ('probe', ?)", store.FormatTime(fixedNow)); err != nil {
		t.Fatal(err)
	}
	v1 := dbVersion(t, db.DB)
	db.Close()

	for i := range 2 {
		db := open(t, path, store.Options{})
		if db.BackupPath != "" {
			t.Errorf("reopen %d: backup made although nothing was pending: %s", i, db.BackupPath)
		}
		if v := dbVersion(t, db.DB); v != v1 {
			t.Errorf("reopen %d: version %d, want %d", i, v, v1)
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM action_log WHERE action_type = 'probe'").Scan(&n); err != nil || n != 1 {
			t.Errorf("reopen %d: probe rows = %d, %v; want 1", i, n, err)
		}
		var applied int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM goose_db_version WHERE version_id > 0").Scan(&applied); err != nil {
			t.Fatal(err)
		}
		if want := len(migrationTables(t)); applied != want {
			t.Errorf("reopen %d: %d migration rows, want %d (a migration ran twice?)", i, applied, want)
		}
		db.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "backups")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("backups folder exists after opening only fresh/current databases (stat: %v)", err)
	}
}

// rollBackLatest puts the database at path one migration back, as an older
// release would have left it: an older release kept no identity file.
func rollBackLatest(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(store.IdentityPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, os.DirFS("migrations"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Down(context.Background()); err != nil {
		t.Fatalf("roll back latest migration: %v", err)
	}
}

func TestBackupBeforeMigratingNonEmptyDatabase(t *testing.T) {
	tables := migrationTables(t)
	latest := latestVersion(tables)
	if len(tables) < 2 {
		t.Skip("needs at least two migrations to simulate an older database")
	}
	for _, tc := range []struct {
		name      string
		backupDir func(dbDir string) (opt, want string)
	}{
		{"default folder", func(d string) (string, string) { return "", filepath.Join(d, "backups") }},
		{"explicit folder", func(d string) (string, string) { x := filepath.Join(d, "elsewhere"); return x, x }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "t.db")
			ctx := context.Background()
			db, err := store.Open(ctx, path, store.Options{Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO action_log (action_type, created_at) VALUES ('before-upgrade', ?)", store.FormatTime(fixedNow)); err != nil {
				t.Fatal(err)
			}
			db.Close()
			rollBackLatest(t, path)

			opt, wantDir := tc.backupDir(dir)
			db = open(t, path, store.Options{BackupDir: opt})
			if db.BackupPath == "" {
				t.Fatal("no backup made before migrating a non-empty database")
			}
			if filepath.Dir(db.BackupPath) != wantDir {
				t.Errorf("backup in %s, want %s", filepath.Dir(db.BackupPath), wantDir)
			}
			if !strings.Contains(filepath.Base(db.BackupPath), fixedNow.Format("20060102-150405")) {
				t.Errorf("backup name %s does not carry the injected clock's time", filepath.Base(db.BackupPath))
			}
			st, err := os.Stat(db.BackupPath)
			if err != nil {
				t.Fatalf("backup file: %v", err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("backup mode %o, want 600", st.Mode().Perm())
			}
			// The live database is migrated.
			if v := dbVersion(t, db.DB); v != latest {
				t.Errorf("live version %d, want %d", v, latest)
			}

			// The backup is a valid SQLite database holding the pre-migration
			// state: the older version, the user's row, and none of the rolled
			// back tables.
			bk, err := sql.Open("sqlite", "file:"+db.BackupPath+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			defer bk.Close()
			var res string
			if err := bk.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
				t.Fatalf("backup integrity_check = %q, %v", res, err)
			}
			if v := dbVersion(t, bk); v >= latest {
				t.Errorf("backup version %d, want below %d: backup taken after migrating", v, latest)
			}
			var n int
			if err := bk.QueryRow("SELECT count(*) FROM action_log WHERE action_type = 'before-upgrade'").Scan(&n); err != nil || n != 1 {
				t.Errorf("backup lacks the user's row: n=%d err=%v", n, err)
			}
			have := tableNames(t, bk)
			for _, name := range tables[latest] {
				if have[name] {
					t.Errorf("backup already has table %s of the pending migration", name)
				}
			}
		})
	}
}

func TestNoBackupForFreshDatabase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, path string)
	}{
		{"no file", func(*testing.T, string) {}},
		{"empty file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "t.db")
			tc.prepare(t, path)
			db := open(t, path, store.Options{})
			if db.BackupPath != "" {
				t.Errorf("backup made for a fresh database: %s", db.BackupPath)
			}
			if _, err := os.Stat(filepath.Join(dir, "backups")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("backups folder created for a fresh database (stat: %v)", err)
			}
		})
	}
}

func TestOpenBadPaths(t *testing.T) {
	ctx := context.Background()
	t.Run("empty", func(t *testing.T) {
		_, err := store.Open(ctx, "  ", store.Options{})
		assertErr(t, err, "empty")
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		_, err := store.Open(ctx, dir, store.Options{})
		assertErr(t, err, dir, "is a directory")
	})
	t.Run("parent is a regular file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "plain")
		if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(file, "t.db")
		_, err := store.Open(ctx, path, store.Options{})
		assertErr(t, err, file)
		if got, _ := os.ReadFile(file); string(got) != "x" {
			t.Error("the regular file was modified")
		}
	})
	t.Run("read-only directory", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root bypasses permission bits; the regular-file case covers an unwritable path")
		}
		dir := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		_, err := store.Open(ctx, filepath.Join(dir, "t.db"), store.Options{})
		assertErr(t, err, "not writable")
	})
}

func TestOpenCorruptFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		data func() []byte
	}{
		{"random bytes", func() []byte {
			r := rand.New(rand.NewPCG(1, 2))
			b := make([]byte, 16384)
			for i := range b {
				b[i] = byte(r.UintN(256))
			}
			return b
		}},
		{"text file", func() []byte { return bytes.Repeat([]byte("not a database\n"), 500) }},
		{"sqlite header then garbage", func() []byte {
			b := append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xA5}, 8192)...)
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			data := tc.data()
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			var db *store.DB
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Open panicked on a corrupt file: %v", r)
					}
				}()
				db, err = store.Open(context.Background(), path, store.Options{Now: clock})
			}()
			if err == nil {
				db.Close()
				t.Fatal("Open accepted a corrupt file")
			}
			assertErr(t, err, path, "corrupt")
			// The user's file must be left exactly as it was, so a backup
			// can still be restored over it or it can be inspected.
			got, rerr := os.ReadFile(path)
			if rerr != nil || !bytes.Equal(got, data) {
				t.Error("Open modified the corrupt file")
			}
		})
	}
}

func assertErr(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error mentioning %q, got nil", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestConcurrentWritesDoNotFailBusy(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "t.db"), store.Options{})
	ctx := context.Background()
	const workers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := db.Tx(ctx, func(tx *sql.Tx) error {
					var n int
					if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM action_log").Scan(&n); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, "INSERT INTO action_log (action_type, message, created_at) VALUES ('w', ?, ?)",
						fmt.Sprintf("%d-%d", w, i), store.FormatTime(fixedNow))
					return err
				})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent write failed: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM action_log WHERE action_type = 'w'").Scan(&n); err != nil || n != workers*each {
		t.Errorf("rows = %d, %v; want %d", n, err, workers*each)
	}
}

func TestTxRollsBackOnError(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "t.db"), store.Options{})
	ctx := context.Background()
	boom := errors.New("boom")
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO action_log (action_type, created_at) VALUES ('rolled', 'x')"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx error = %v, want the callback's error", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM action_log WHERE action_type = 'rolled'").Scan(&n); err != nil || n != 0 {
		t.Errorf("rolled-back row visible: n=%d err=%v", n, err)
	}
}

func TestBackupMethod(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "t.db"), store.Options{})
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "bk")
	p1, err := db.Backup(ctx, dir, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := db.Backup(ctx, dir, fixedNow.Add(time.Nanosecond))
	if err != nil {
		t.Fatal(err)
	}
	if p1 == p2 {
		t.Error("two backups a nanosecond apart share a name")
	}
	if _, err := db.Backup(ctx, dir, fixedNow); err == nil {
		t.Error("Backup over an existing backup file succeeded; it must not silently replace it")
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.db"))
	sort.Strings(names)
	if len(names) != 2 {
		t.Errorf("backup files = %v, want 2", names)
	}
	quoted := filepath.Join(t.TempDir(), "it's")
	if _, err := db.Backup(ctx, quoted, fixedNow); err == nil {
		t.Error("Backup into a path with a quote succeeded; the path is spliced into SQL")
	}
}

func TestTimeFormatRoundTrip(t *testing.T) {
	in := time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.FixedZone("X", 3600))
	s := store.FormatTime(in)
	if s != "2026-01-02T02:04:05.678Z" {
		t.Errorf("FormatTime = %q", s)
	}
	back, err := store.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(in.Truncate(time.Millisecond)) {
		t.Errorf("ParseTime = %v, want %v", back, in.Truncate(time.Millisecond))
	}
	// Fixed width keeps string order equal to time order.
	a, b := store.FormatTime(fixedNow), store.FormatTime(fixedNow.Add(time.Millisecond))
	if len(a) != len(b) || a >= b {
		t.Errorf("%q and %q do not sort in time order", a, b)
	}
	if _, err := store.ParseTime("yesterday"); err == nil {
		t.Error("ParseTime accepted garbage")
	}
}

// TestOpenPathsWithURICharacters: a home whose path has a character a
// SQLite URI gives meaning to ('#', '?', '%') opens the database at that
// path, not at a path cut short, and finds its rows again when reopened.
func TestOpenPathsWithURICharacters(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"a#b", "a?b", "a%20b", "a%b"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "t.db")
			db := open(t, path, store.Options{Now: clock})
			if _, err := db.ExecContext(ctx, "INSERT INTO action_log (action_type, created_at) VALUES ('probe', ?)", store.FormatTime(fixedNow)); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("the database is not at %s: %v", path, err)
			}
			db = open(t, path, store.Options{})
			var n int
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM action_log WHERE action_type = 'probe'").Scan(&n); err != nil || n != 1 {
				t.Fatalf("reopened: %d rows (%v), want 1", n, err)
			}
		})
	}
}
