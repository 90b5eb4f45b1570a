package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"
)

// A new database is created from one baseline schema per dialect, in one
// transaction, instead of by running every migration one by one (most of
// a fresh home's first start); the versions it covers are then recorded
// as applied, so goose carries on from there, and any migration newer
// than the baseline still runs. A database with tables always migrates.
// The baselines are generated (BaselineFiles, written by `tuitbot docs`)
// and a test keeps each equal to the schema its migrations build.

//go:embed baseline/*.sql baseline/sqlite.db.gz
var baselines embed.FS

// baselinePaths are the generated files, from the repository root.
var baselinePaths = map[Dialect]string{
	SQLite:   "internal/store/baseline/sqlite.sql",
	Postgres: "internal/store/baseline/postgres.sql",
}

const versionsLine = "-- versions:"

// versionTable is goose's table of applied migrations.
const versionTable = "goose_db_version"

// baseline is a dialect's baseline: its SQL and the migrations it covers.
type baseline struct {
	sql      string
	versions []int64
}

func baselineOf(d Dialect) (baseline, error) {
	b, err := fs.ReadFile(baselines, "baseline/"+filepath.Base(baselinePaths[d]))
	if err != nil {
		return baseline{}, fmt.Errorf("baseline schema: %w", err)
	}
	return parseBaseline(string(b))
}

func parseBaseline(text string) (baseline, error) {
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(line, versionsLine)
		if !ok {
			continue
		}
		var vs []int64
		for f := range strings.FieldsSeq(rest) {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return baseline{}, fmt.Errorf("baseline schema: version %q: %w", f, err)
			}
			vs = append(vs, v)
		}
		return baseline{sql: text, versions: vs}, nil
	}
	return baseline{}, errors.New("baseline schema: no versions line")
}

// applyBaseline creates the schema of a database that has no tables yet
// and records the migrations it covers, all in one transaction; it
// returns those versions.
func (d *DB) applyBaseline(ctx context.Context) ([]int64, error) {
	bl, err := baselineOf(d.Dialect)
	if err != nil {
		return nil, err
	}
	if err := d.Tx(ctx, func(tx *sql.Tx) error { return d.writeBaseline(ctx, tx, bl) }); err != nil {
		return nil, fmt.Errorf("baseline schema: %w", err)
	}
	return bl.versions, nil
}

// writeBaseline runs bl in tx and records its versions in goose's table,
// which it creates, as goose does, when checking for pending migrations
// has not.
func (d *DB) writeBaseline(ctx context.Context, tx *sql.Tx, bl baseline) error {
	dialect, exists := database.DialectSQLite3, `SELECT count(*) FROM sqlite_master WHERE name = ?`
	if d.Dialect == Postgres {
		dialect, exists = database.DialectPostgres, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`
	}
	versions, err := database.NewStore(dialect, versionTable)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, bl.sql); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, exists, versionTable).Scan(&n); err != nil {
		return err
	}
	record := bl.versions
	if n == 0 {
		if err := versions.CreateVersionTable(ctx, tx); err != nil {
			return err
		}
		// Version 0 is the row goose writes when it creates its table.
		record = append([]int64{0}, record...)
	}
	for _, v := range record {
		if err := versions.Insert(ctx, tx, database.InsertRequest{Version: v}); err != nil {
			return err
		}
	}
	return nil
}

// isNew reports whether q, a database's migration state, shows a database
// with no table but goose's and no migration applied.
func isNew(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, d Dialect) (bool, error) {
	tables := `SELECT count(*), count(*) FILTER (WHERE name = 'goose_db_version') FROM sqlite_master
		WHERE type = 'table' AND name <> 'sqlite_sequence'`
	if d == Postgres {
		tables = `SELECT count(*), count(*) FILTER (WHERE table_name = 'goose_db_version') FROM information_schema.tables
			WHERE table_schema = current_schema()`
	}
	var all, versioned int
	if err := q.QueryRowContext(ctx, tables).Scan(&all, &versioned); err != nil {
		return false, err
	}
	if all > versioned {
		return false, nil
	}
	if versioned == 0 {
		return true, nil
	}
	var applied int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&applied); err != nil {
		return false, err
	}
	return applied == 0, nil
}

// baselinePostgres creates a new PostgreSQL database from the baseline.
// Hosts sharing the server may start at once: the transaction holds the
// lock goose migrates under, so the one that finds the database empty
// creates it while the others wait, then find it current.
func (d *DB) baselinePostgres(ctx context.Context) error {
	bl, err := baselineOf(Postgres)
	if err != nil {
		return err
	}
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", lock.DefaultLockID); err != nil {
			return err
		}
		fresh, err := isNew(ctx, tx, Postgres)
		if err != nil {
			return err
		}
		if !fresh {
			return nil // migrate it
		}
		d.FromBaseline = true
		return d.writeBaseline(ctx, tx, bl)
	})
	if err != nil {
		d.FromBaseline = false
		return fmt.Errorf("baseline schema: %w", err)
	}
	return nil
}

// BaselineFiles returns the generated baseline of each dialect, keyed by
// its path from the repository root. The SQLite one is the schema the
// migrations build, as SQLite records it; a PostgreSQL server is not at
// hand where docs are generated, so its baseline is its migrations' up
// statements in order, run in one transaction.
func BaselineFiles(ctx context.Context) (map[string]string, error) {
	sqlite, err := sqliteBaseline(ctx)
	if err != nil {
		return nil, err
	}
	pg, err := postgresBaseline()
	if err != nil {
		return nil, err
	}
	bl, err := parseBaseline(sqlite)
	if err != nil {
		return nil, err
	}
	tmpl, err := templateOf(ctx, bl)
	if err != nil {
		return nil, err
	}
	return map[string]string{baselinePaths[SQLite]: sqlite, baselinePaths[Postgres]: pg, templatePath: tmpl}, nil
}

const baselineHeader = "-- Code generated by `tuitbot docs`; DO NOT EDIT.\n"

func migrationVersions(d Dialect) ([]int64, error) {
	fsys, dir := migrationsOf(d)
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var out []int64
	for _, e := range entries {
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err != nil {
			return nil, fmt.Errorf("migration %s has no version: %w", e.Name(), err)
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out, nil
}

func versionsComment(vs []int64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatInt(v, 10)
	}
	return versionsLine + " " + strings.Join(s, " ") + "\n"
}

// sqliteBaseline migrates a scratch database and writes out its schema in
// the order SQLite created it.
func sqliteBaseline(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "tuitbot-baseline-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, "baseline.db"), nil))
	if err != nil {
		return "", err
	}
	defer db.Close()
	fsys, sub := migrationsOf(SQLite)
	mfs, err := fs.Sub(fsys, sub)
	if err != nil {
		return "", err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, mfs, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return "", fmt.Errorf("baseline schema: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return "", fmt.Errorf("baseline schema: migrate: %w", err)
	}
	stmts, err := sqliteSchema(ctx, db)
	if err != nil {
		return "", err
	}
	vs, err := migrationVersions(SQLite)
	if err != nil {
		return "", err
	}
	return baselineHeader + "-- The schema of a new SQLite database: what its migrations build.\n" +
		versionsComment(vs) + "\n" + strings.Join(stmts, ";\n\n") + ";\n", nil
}

// sqliteSchema lists the statements that made db's schema, as SQLite
// keeps them, in the order they were made; SQLite's own objects (indexes
// of constraints, sqlite_sequence) and goose's table are left out.
func sqliteSchema(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT sql FROM sqlite_master
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name <> ? ORDER BY rowid`, versionTable)
	if err != nil {
		return nil, fmt.Errorf("baseline schema: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("baseline schema: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// postgresBaseline joins the up statements of the PostgreSQL migrations.
func postgresBaseline() (string, error) {
	fsys, dir := migrationsOf(Postgres)
	vs, err := migrationVersions(Postgres)
	if err != nil {
		return "", err
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(baselineHeader + "-- The schema of a new PostgreSQL database: the up statements of its migrations, in order.\n")
	b.WriteString(versionsComment(vs))
	for _, e := range entries {
		raw, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return "", err
		}
		up, _, _ := strings.Cut(string(raw), "-- +goose Down")
		up = strings.TrimPrefix(strings.TrimSpace(up), "-- +goose Up")
		if strings.Contains(up, "+goose NO TRANSACTION") {
			return "", fmt.Errorf("migration %s runs outside a transaction; the baseline cannot hold it", e.Name())
		}
		var kept []string
		for line := range strings.SplitSeq(up, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "-- +goose") {
				continue // StatementBegin/End only group what runs as one
			}
			kept = append(kept, line)
		}
		fmt.Fprintf(&b, "\n-- %s\n%s\n", e.Name(), strings.TrimSpace(strings.Join(kept, "\n")))
	}
	return b.String(), nil
}

// MigrationHistory returns the rows of the migration history of the
// database q reads, in order, as "version:applied" joined by commas: two
// databases whose histories differ answer differently. Tests that reuse a
// database compare it with a freshly migrated one's.
func MigrationHistory(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (string, error) {
	rows, err := q.QueryContext(ctx, `SELECT version_id, is_applied FROM `+versionTable+` ORDER BY version_id, is_applied`)
	if err != nil {
		return "", fmt.Errorf("read the migration history: %w", err)
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var v int64
		var applied bool
		if err := rows.Scan(&v, &applied); err != nil {
			return "", fmt.Errorf("read the migration history: %w", err)
		}
		parts = append(parts, strconv.FormatInt(v, 10)+":"+strconv.FormatBool(applied))
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read the migration history: %w", err)
	}
	return strings.Join(parts, ","), nil
}
