package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
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
