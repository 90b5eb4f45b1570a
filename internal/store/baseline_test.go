package store_test

import (
	"context"
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// schemaDump is everything a schema is made of, one line each, sorted:
// for SQLite every object's statement as sqlite_master keeps it, for
// PostgreSQL every column (type, nullability, default), constraint, index
// and trigger; and the migration versions recorded as applied.
func schemaDump(t *testing.T, db *sql.DB, postgres bool) []string {
	t.Helper()
	queries := []string{
		`SELECT type || ' ' || name || ' ON ' || tbl_name || ': ' || COALESCE(sql, '') FROM sqlite_master
			WHERE name NOT LIKE 'sqlite_stat%'`, // the planner's statistics, not the schema
	}
	if postgres {
		queries = []string{
			`SELECT table_name || '.' || column_name || ' ' || data_type || ' null=' || is_nullable || ' default=' || COALESCE(column_default, '') || ' collation=' || COALESCE(collation_name, '')
				FROM information_schema.columns WHERE table_schema = current_schema()`,
			`SELECT conrelid::regclass::text || ' ' || conname || ': ' || pg_get_constraintdef(oid)
				FROM pg_constraint WHERE connamespace = current_schema()::regnamespace`,
			`SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()`,
			`SELECT tgname || ': ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal`,
		}
	}
	queries = append(queries, `SELECT 'applied ' || version_id FROM goose_db_version WHERE is_applied`)
	var out []string
	for _, q := range queries {
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		rows.Close()
	}
	slices.Sort(out)
	return out
}

// A new database is created from the baseline, and its schema is exactly
// the one its migrations build, on SQLite and PostgreSQL; a database that
// exists opens without it.
func TestNewDatabaseFromBaselineIsTheMigratedSchema(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		postgres bool
		target   func(t *testing.T) string
		migrated func(t *testing.T) *sql.DB
	}{
		{"sqlite", false,
			func(t *testing.T) string { return filepath.Join(t.TempDir(), "tuitbot.db") },
			func(t *testing.T) *sql.DB { return migratedTo(t, filepath.Join(t.TempDir(), "m.db"), math.MaxInt64) }},
		{"postgres", true,
			func(t *testing.T) string { return pgtest.NewDatabase(t, "") },
			func(t *testing.T) *sql.DB {
				raw, err := sql.Open("pgx", pgtest.NewDatabase(t, ""))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { raw.Close() })
				p, err := goose.NewProvider(goose.DialectPostgres, raw, os.DirFS("migrations_postgres"), goose.WithDisableGlobalRegistry(true))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := p.Up(ctx); err != nil {
					t.Fatal(err)
				}
				return raw
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target(t)
			db := open(t, target, store.Options{})
			if !db.FromBaseline {
				t.Fatal("a new database was not created from the baseline")
			}
			got, want := schemaDump(t, db.DB, tc.postgres), schemaDump(t, tc.migrated(t), tc.postgres)
			if !slices.Equal(got, want) {
				t.Errorf("baseline schema differs from the migrated one (regenerate with `go run ./cmd/tuitbot docs`):\nonly in the baseline:\n%s\nonly migrated:\n%s",
					strings.Join(minus(got, want), "\n"), strings.Join(minus(want, got), "\n"))
			}
			db.Close()
			again := open(t, target, store.Options{})
			if again.FromBaseline {
				t.Error("a database that exists was created again from the baseline")
			}
		})
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// The baselines in the tree are what `tuitbot docs` generates from the
// migrations of this tree, and the SQLite database template is the
// database the SQLite baseline builds.
func TestBaselineFilesAreCurrent(t *testing.T) {
	files, err := store.BaselineFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s is stale: run `go run ./cmd/tuitbot docs`", path)
		}
	}
	if len(files) != 3 {
		t.Errorf("%d baseline files, want one per dialect and the SQLite database template", len(files))
	}
}
