package store

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a dropped pooled connection", fmt.Errorf("sync limits: %w", driver.ErrBadConn), true},
		{"a connection cut mid-answer", fmt.Errorf("remove limits: %w", io.ErrUnexpectedEOF), true},
		{"a refused connection", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"an unreachable server", &unreachableError{"cannot connect"}, true},
		{"a connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"a server shutting down", &pgconn.PgError{Code: "57P01"}, true},
		{"a serialization failure", &pgconn.PgError{Code: "40001"}, true},
		{"a wrong password", &pgconn.PgError{Code: "28P01"}, false},
		{"a unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"a cancelled caller", fmt.Errorf("read: %w", context.Canceled), false},
		{"anything else", errors.New("database is not tuitbot's"), false},
	}
	for _, tt := range tests {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%s: %v) = %t, want %t", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestTransientSQLiteBusy: another connection holds SQLite's write lock
// past the busy timeout, as another process writing, migrating or backing
// up does. The write that gave up waits is transient: it succeeds once
// the lock is released. A database that is not SQLite's is not.
func TestTransientSQLiteBusy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, "CREATE TABLE t (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	lock, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	writer, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	_, busy := writer.ExecContext(ctx, "INSERT INTO t VALUES (1)")
	if busy == nil {
		t.Fatal("a write beside another connection's write lock succeeded")
	}
	if !Transient(fmt.Errorf("sync limits: %w", busy)) {
		t.Errorf("Transient(%v) = false, want true: the write succeeds once the lock is released", busy)
	}
	if _, err := lock.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.ExecContext(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatalf("the write after the lock was released: %v", err)
	}

	bad := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(bad, bytes.Repeat([]byte("not a database "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	notDB, err := sql.Open("sqlite", "file:"+bad)
	if err != nil {
		t.Fatal(err)
	}
	defer notDB.Close()
	_, err = notDB.ExecContext(ctx, "SELECT count(*) FROM sqlite_master")
	if err == nil || Transient(err) {
		t.Errorf("Transient(%v) = true for a file that is not a database", err)
	}
}
