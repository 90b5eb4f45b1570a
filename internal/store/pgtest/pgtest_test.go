package pgtest_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// TestNewDatabase proves a test gets its own empty database on a live
// server, and that a copy of a template carries the template's tables.
func TestNewDatabase(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewDatabase(t, "")
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE probe (v TEXT)`); err != nil {
		t.Fatalf("create table: %v", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO probe VALUES ('x')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	tmpl := pgtest.NewDatabase(t, "")
	tdb, err := sql.Open("pgx", tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tdb.ExecContext(ctx, `CREATE TABLE from_template (v TEXT)`); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := tdb.QueryRowContext(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	tdb.Close()
	cp := pgtest.NewDatabase(t, name)
	cdb, err := sql.Open("pgx", cp)
	if err != nil {
		t.Fatal(err)
	}
	defer cdb.Close()
	var n int
	if err := cdb.QueryRowContext(ctx, `SELECT count(*) FROM from_template`).Scan(&n); err != nil {
		t.Fatalf("the copy lacks the template's table: %v", err)
	}
	if err := cdb.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'probe'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("databases are not separate: probe tables = %d, err %v", n, err)
	}
}
