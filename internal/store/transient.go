package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Transient reports whether err is a database failure that trying again
// may cure: the server could not be reached, a connection broke or was
// refused, the server ended a session or a transaction it may take again
// (a restart, a serialization conflict), or another process held SQLite's
// lock past the busy timeout (a long write, a migration, a backup, a
// sqlite3 shell left in a transaction). A refused or malformed statement,
// a full disk or a database that is not tuitbot's is not.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		// Every SQLite error but a busy lock, a full disk or a corrupt
		// file among them, stays until someone acts.
		return IsBusy(err)
	}
	var ue *unreachableError
	if errors.As(err, &ue) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08 is a connection exception; 57P01-57P03 a server that is
		// shutting down or starting; 40001 and 40P01 a transaction the
		// server chose to abort.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" ||
			pe.Code == "40001" || pe.Code == "40P01"
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if pgconn.SafeToRetry(err) {
		return true
	}
	return false
}

// unreachableError is a database server that could not be connected to
// for a reason Transient accepts.
type unreachableError struct{ msg string }

func (e *unreachableError) Error() string { return e.msg }

// IsBusy reports whether err is SQLite's SQLITE_BUSY (or one of its
// extended codes: a WAL being recovered, a snapshot gone stale): another
// connection, usually another process, held the lock for longer than
// the busy timeout this connection waited. It is released when that
// connection finishes.
func IsBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}
