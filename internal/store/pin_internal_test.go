package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"modernc.org/sqlite"
)

// TestPinKeepsTheWALWithoutTheSchema: the pinned connection is what keeps
// the WAL in place when the pool closes every other connection, and it
// does so without parsing the schema, which would cost every process a
// second copy of it in memory for its whole life. Every start but a
// home's first opens a database that already has its schema.
func TestPinKeepsTheWALWithoutTheSchema(t *testing.T) {
	ctx := context.Background()
	for _, again := range []bool{false, true} {
		name := "new database"
		if again {
			name = "database opened again"
		}
		t.Run(name, func(t *testing.T) {
			d, path := openInternal(t)
			if again {
				d.Close()
				var err error
				if d, err = Open(ctx, path, Options{}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { d.Close() })
			}
			if _, err := d.ExecContext(ctx, "INSERT INTO action_log (action_type, created_at) VALUES ('x', '2026-01-01T00:00:00.000Z')"); err != nil {
				t.Fatal(err)
			}
			pooled, err := d.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pooled.ExecContext(ctx, "SELECT count(*) FROM action_log"); err != nil {
				t.Fatal(err)
			}
			parsed := schemaBytes(t, pooled)
			pooled.Close()
			pinHolds := func(when string) {
				t.Helper()
				if pinned := schemaBytes(t, d.pin); parsed == 0 || pinned*10 > parsed {
					t.Errorf("%s: the pinned connection holds %d bytes of schema against %d on a pooled one; it should hold next to none", when, pinned, parsed)
				}
			}
			pinHolds("after open")

			// Closing every pooled connection would fold the WAL into the
			// database and delete it, were the pin not open.
			d.SetMaxIdleConns(0)
			if n := d.Stats().OpenConnections; n != 0 {
				t.Fatalf("%d pooled connections open, want none", n)
			}
			for _, p := range []string{path + "-wal", path + "-shm"} {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s: %v; the pin must keep it", filepath.Base(p), err)
				}
			}
			if err := d.CheckFiles(ctx); err != nil {
				t.Errorf("CheckFiles with only the pin open: %v", err)
			}
			// The pin still takes SQLite's write lock, which the WAL check
			// needs.
			d.walTries = 0
			if err := d.CheckFiles(ctx); err != nil {
				t.Errorf("CheckFiles under the write lock: %v", err)
			}
			pinHolds("after the write lock")
		})
	}
}

// schemaBytes is the memory conn's parsed schema takes.
func schemaBytes(t *testing.T, conn *sql.Conn) int {
	t.Helper()
	var n int
	err := conn.Raw(func(dc any) error {
		st, ok := dc.(sqlite.DBStatus)
		if !ok {
			t.Fatalf("driver connection %T reports no status", dc)
		}
		var err error
		n, _, err = st.Status(sqlite.DBStatusSchemaUsed, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
