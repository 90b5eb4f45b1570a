package storetest

import (
	"context"
	"encoding/binary"
	"os"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// WriteTxCounter counts the write transactions committed on db
// from now on. On SQLite it counts the commit frames in the WAL (each
// commit ends with one); on PostgreSQL the transaction ids handed out,
// which only a transaction that writes takes.
func WriteTxCounter(t testing.TB, db *store.DB) func() int {
	t.Helper()
	if db.Dialect == store.Postgres {
		next := func() int64 {
			var x int64
			if err := db.QueryRowContext(context.Background(), `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&x); err != nil {
				t.Fatalf("read the next transaction id: %v", err)
			}
			return x
		}
		start := next()
		return func() int { return int(next() - start) }
	}
	salt, start := walCommits(t, db.Path+"-wal")
	return func() int {
		s, n := walCommits(t, db.Path+"-wal")
		if s != salt {
			t.Fatal("the WAL was reset while counting; commits cannot be counted")
		}
		return n - start
	}
}

// walCommits reads a SQLite WAL file: its salt, and how many valid
// frames end a commit (a frame header's database size is non-zero only in
// a commit's last frame).
func walCommits(t testing.TB, path string) (salt uint64, commits int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the WAL: %v", err)
	}
	if len(b) < 32 {
		return 0, 0
	}
	pageSize := int(binary.BigEndian.Uint32(b[8:12]))
	salt = binary.BigEndian.Uint64(b[16:24])
	for off := 32; off+24+pageSize <= len(b); off += 24 + pageSize {
		h := b[off : off+24]
		if binary.BigEndian.Uint64(h[8:16]) != salt {
			break
		}
		if binary.BigEndian.Uint32(h[4:8]) != 0 {
			commits++
		}
	}
	return salt, commits
}
