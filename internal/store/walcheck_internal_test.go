package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckWALUnderTheWriteLock forces the comparison that holds SQLite's
// write lock, the one taken when writers keep changing the index: it
// agrees with an untouched WAL beside a busy writer and notices a
// truncated one.
func TestCheckWALUnderTheWriteLock(t *testing.T) {
	ctx := context.Background()
	d, path := openInternal(t)
	d.walTries = 0
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	done := make(chan error, 1)
	go func() {
		for i := range 100 {
			if _, err := other.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('w', '2026-01-01T00:00:00.000Z')"); err != nil {
				done <- err
				return
			}
			if i%10 == 0 {
				if _, err := other.Exec("PRAGMA wal_checkpoint(RESTART)"); err != nil {
					done <- err
					return
				}
			}
		}
		done <- nil
	}()
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			running = false
		default:
		}
		if err := d.CheckFiles(ctx); err != nil {
			t.Fatalf("locked check beside a writer: %v", err)
		}
	}
	if _, err := d.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('x', '2026-01-01T00:00:00.000Z')"); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path+"-wal", 32); err != nil {
		t.Fatal(err)
	}
	err = d.CheckFiles(ctx)
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("locked check of a truncated WAL: %v", err)
	}
	// The write lock is given back.
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("the check kept the write lock: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}

// openInternal opens a new database in a temporary directory, closed when
// the test ends.
func openInternal(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tuitbot.db")
	d, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, path
}
