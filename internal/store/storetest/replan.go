package storetest

import (
	"encoding/binary"
	"strconv"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Replans is how many times SQLite planned query again over its second
// and third runs on the database file at path, each with its arguments
// bound afresh (NULLs), as a prepared statement is run again and again.
// SQLite plans a statement again at each run when a bound value may
// change its plan: a bound LIMIT, or a value compared with an indexed
// column that has statistics (sqlite_stat4). database/sql does not show
// the count, so the file is opened here, read-only, on a connection of
// its own.
func Replans(t testing.TB, path, query string) int {
	t.Helper()
	tls := libc.NewTLS()
	defer tls.Close()
	cpath, err := libc.CString(path)
	if err != nil {
		t.Fatal(err)
	}
	defer libc.Xfree(tls, cpath)
	// SQLite writes the handles it makes to C memory: Go memory passed
	// as a uintptr may be on a stack that moves before it is read
	// (as it does under the race detector).
	const size = strconv.IntSize / 8 // a pointer's
	out := libc.Xmalloc(tls, size)
	if out == 0 {
		t.Fatal("out of memory")
	}
	defer libc.Xfree(tls, out)
	handle := func() uintptr {
		b := libc.GoBytes(out, size)
		if size == 4 {
			return uintptr(binary.NativeEndian.Uint32(b))
		}
		return uintptr(binary.NativeEndian.Uint64(b))
	}
	if rc := sqlite3.Xsqlite3_open_v2(tls, cpath, out, sqlite3.SQLITE_OPEN_READONLY, 0); rc != sqlite3.SQLITE_OK {
		t.Fatalf("open %s: SQLite result code %d", path, rc)
	}
	h := handle()
	defer sqlite3.Xsqlite3_close_v2(tls, h)
	cquery, err := libc.CString(query)
	if err != nil {
		t.Fatal(err)
	}
	defer libc.Xfree(tls, cquery)
	if rc := sqlite3.Xsqlite3_prepare_v2(tls, h, cquery, -1, out, 0); rc != sqlite3.SQLITE_OK {
		t.Fatalf("prepare %s: %s", query, libc.GoString(sqlite3.Xsqlite3_errmsg(tls, h)))
	}
	s := handle()
	if s == 0 {
		t.Fatalf("prepare %s: no statement", query)
	}
	defer sqlite3.Xsqlite3_finalize(tls, s)
	n := sqlite3.Xsqlite3_bind_parameter_count(tls, s)
	run := func() {
		sqlite3.Xsqlite3_reset(tls, s)
		for i := int32(1); i <= n; i++ {
			sqlite3.Xsqlite3_bind_null(tls, s, i)
		}
		// The result does not matter (a NULL LIMIT is an error): a
		// statement is planned again, if it must be, before it runs.
		for sqlite3.Xsqlite3_step(tls, s) == sqlite3.SQLITE_ROW {
		}
	}
	run()
	before := sqlite3.Xsqlite3_stmt_status(tls, s, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0)
	run()
	run()
	return int(sqlite3.Xsqlite3_stmt_status(tls, s, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0) - before)
}
