package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// checkSchema fails closed when the database does not hold the schema this
// build expects: every migration applied and every table they create
// present.
func (d *DB) checkSchema(ctx context.Context) error {
	want, latest, err := schemaToCheck(d.Dialect)
	if err != nil {
		return err
	}
	var version int64
	if err := d.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&version); err != nil {
		return fmt.Errorf("database %s: read schema version: %w", d.Path, err)
	}
	if version != latest {
		return fmt.Errorf("database %s is at schema version %d, this tuitbot expects %d; it was changed by another release or by hand: restore a backup", d.Path, version, latest)
	}
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_stat%'`
	if d.Dialect == Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	rows, err := d.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("database %s: read schema: %w", d.Path, err)
	}
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("database %s: read schema: %w", d.Path, err)
		}
		have[strings.ToLower(n)] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("database %s: read schema: %w", d.Path, err)
	}
	var missing []string
	for _, t := range want {
		if !have[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("database %s is missing tables %s although its schema version is current; it was damaged or edited: restore a backup", d.Path, strings.Join(missing, ", "))
	}
	return nil
}

// The patterns match lowercased text: a pattern that starts with a plain
// word lets the matcher jump from one occurrence of it to the next, where
// a case-insensitive one tries every position of the migrations, which was
// a tenth of a start's work.
var (
	createTable = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`create\s+table\s+(?:if\s+not\s+exists\s+)?["\x60]?(\w+)`)
	})
	dropTable = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`drop\s+table\s+(?:if\s+exists\s+)?["\x60]?(\w+)`)
	})
)

// schemaToCheck is expectedSchema's tables (in no particular order) and
// latest version. On SQLite the baseline names the tables already, one
// "CREATE TABLE name" line each, as SQLite keeps the statements: reading
// those lines costs a fraction of matching every migration, which was
// most of checking the schema at each start. A baseline that does not
// cover every migration (not regenerated yet) is not used.
func schemaToCheck(dialect Dialect) (tables []string, latest int64, err error) {
	if dialect != SQLite {
		return expectedSchema(dialect)
	}
	bl, err := baselineOf(SQLite)
	if err != nil {
		return nil, 0, err
	}
	vs, err := migrationVersions(SQLite)
	if err != nil {
		return nil, 0, err
	}
	if !slices.Equal(bl.versions, vs) {
		return expectedSchema(dialect)
	}
	return baselineTables(bl.sql), vs[len(vs)-1], nil
}

// baselineTables names the tables a SQLite baseline creates, lowercased.
func baselineTables(sql string) []string {
	var out []string
	for line := range strings.SplitSeq(sql, "\n") {
		rest, ok := strings.CutPrefix(line, "CREATE TABLE ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
		name, _, _ = strings.Cut(name, "(")
		out = append(out, strings.ToLower(strings.Trim(name, "\"`[]")))
	}
	return out
}

// expectedSchema reads the tables the embedded migrations leave behind and
// the latest version, so the check follows new migrations by itself.
func expectedSchema(dialect Dialect) (tables []string, latest int64, err error) {
	fsys, dir := migrationsOf(dialect)
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, 0, fmt.Errorf("migrations: %w", err)
	}
	live := map[string]bool{}
	var order []string
	for _, e := range entries {
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err != nil {
			return nil, 0, fmt.Errorf("migration %s has no version: %w", e.Name(), err)
		}
		latest = max(latest, v)
		b, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, 0, fmt.Errorf("migrations: %w", err)
		}
		up, _, _ := strings.Cut(string(b), "-- +goose Down")
		up = strings.ToLower(up)
		for _, m := range createTable().FindAllStringSubmatch(up, -1) {
			n := m[1]
			if !live[n] {
				order = append(order, n)
			}
			live[n] = true
		}
		for _, m := range dropTable().FindAllStringSubmatch(up, -1) {
			live[m[1]] = false
		}
	}
	for _, n := range order {
		if live[n] {
			tables = append(tables, n)
		}
	}
	return tables, latest, nil
}

// QuickCheck runs PRAGMA quick_check and returns "ok" or the problems it
// found, joined.
func (d *DB) QuickCheck(ctx context.Context) (string, error) {
	if d.Dialect == Postgres {
		// The server keeps its own storage consistent; what tuitbot can
		// check is that it answers.
		var one int
		if err := d.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			return "", err
		}
		return "ok", nil
	}
	conn, err := d.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	// The check reads every page once: caching them gains nothing, and
	// the pages would stay in this process's memory (SQLite's allocator
	// keeps what it once held) for as long as it runs.
	var size int
	if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&size); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = "+strconv.Itoa(quickCheckCachePages)); err != nil {
		return "", err
	}
	lines, err := quickCheck(ctx, conn)
	// Restored even when ctx has ended, since the connection goes back to
	// the pool.
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA cache_size = "+strconv.Itoa(size)); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return "", err
	}
	return strings.Join(lines, "; "), nil
}

// quickCheckCachePages is the page cache a quick check runs with.
const quickCheckCachePages = 16

func quickCheck(ctx context.Context, conn *sql.Conn) ([]string, error) {
	rows, err := conn.QueryContext(ctx, "PRAGMA quick_check(20)")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		lines = append(lines, s)
	}
	return lines, rows.Err()
}

// watchFiles opens the WAL on the pinned connection, which stays open for
// the life of the DB, and remembers which files the database, its WAL and
// its shared-memory index are. SQLite deletes the WAL only when the last
// connection closes, so while the pin holds, each of the three paths must keep naming the same file; if one is
// deleted or replaced, processes that open the database from now on no
// longer see what this one wrote.
func (d *DB) watchFiles(ctx context.Context) error {
	// A read opens the WAL on the pin; the schema version is one that
	// leaves the schema unparsed.
	var version int
	if err := d.pin.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&version); err != nil {
		return fmt.Errorf("database %s: %w", d.Path, err)
	}
	d.files = map[string]os.FileInfo{}
	for _, p := range d.watchedPaths() {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != d.Path {
				// Not in WAL mode (an unusual file system): nothing to watch.
				continue
			}
			return fmt.Errorf("database %s: %w", d.Path, err)
		}
		d.files[p] = st
	}
	if _, ok := d.files[d.Path+"-shm"]; ok {
		shm, err := os.Open(d.Path + "-shm")
		if err != nil {
			return fmt.Errorf("database %s: %w", d.Path, err)
		}
		d.shm = shm
	}
	if _, ok := d.files[d.Path+"-wal"]; ok {
		wal, err := os.Open(d.Path + "-wal")
		if err != nil {
			return fmt.Errorf("database %s: %w", d.Path, err)
		}
		d.wal = wal
	}
	return nil
}

func (d *DB) watchedPaths() []string {
	return []string{d.Path, d.Path + "-wal", d.Path + "-shm"}
}

// CheckFiles reports whether the database files are still the ones this
// process opened, and whether the WAL still holds what was committed to
// it. A deleted, replaced, truncated or overwritten -wal (or a deleted or
// replaced -shm or database) splits processes into different views of the
// data: rows written by one become invisible to the others, and repeats
// would pass as new calls.
func (d *DB) CheckFiles(ctx context.Context) error {
	for _, p := range d.watchedPaths() {
		was, ok := d.files[p]
		if !ok {
			continue
		}
		st, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("database file %s was deleted while tuitbot was running; writes made since may be invisible to other processes: stop every tuitbot process and start again (then check get_recent_mutations)", p)
		case err != nil:
			return fmt.Errorf("database file %s: %w", p, err)
		case !os.SameFile(was, st):
			return fmt.Errorf("database file %s was replaced while tuitbot was running; writes made since may be invisible to other processes: stop every tuitbot process and start again (then check get_recent_mutations)", p)
		}
	}
	return d.checkWAL(ctx)
}
