package store_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestQuickCheckDoesNotCacheTheDatabase: PRAGMA quick_check reads every
// page once. Run through the connection's normal cache (2 MB by default)
// it would leave that much of the database in memory for the life of the
// process, because SQLite's allocator keeps what it once held; the check
// runs with a few pages of cache instead, and the connection gets its own
// cache size back afterwards.
func TestQuickCheckDoesNotCacheTheDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "big.db")
	// Fill a database well past the default cache (16 MB) through a
	// connection with a tiny cache, so the filling itself leaves little
	// memory behind.
	fill, err := store.Open(ctx, path, store.Options{Now: clock, Pragmas: []string{"cache_size(10)"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fill.ExecContext(ctx, `CREATE TABLE filler(b BLOB)`); err != nil {
		t.Fatal(err)
	}
	if _, err := fill.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 4000)
		INSERT INTO filler SELECT randomblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	if err := fill.Close(); err != nil {
		t.Fatal(err)
	}

	db := open(t, path, store.Options{})
	before := privateMemory(t)
	res, err := db.QuickCheck(ctx)
	if err != nil || res != "ok" {
		t.Fatalf("QuickCheck = %q, %v; want ok", res, err)
	}
	if grown := privateMemory(t) - before; grown > 1<<20 {
		t.Errorf("QuickCheck of a 16 MB database grew private memory by %d KiB; the check must not cache the pages it reads", grown>>10)
	}

	// Every connection the pool can hand out still has the default cache
	// (-2000, in KiB): the one that ran the check got its size back.
	var conns []interface{ Close() error }
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 4 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var size int
		if err := c.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&size); err != nil {
			t.Fatal(err)
		}
		if size != -2000 {
			t.Errorf("a connection's cache_size after QuickCheck = %d, want the default -2000", size)
		}
	}
}

// privateMemory is the process's RssAnon in bytes, read after the Go heap
// has handed back what it does not use, so that what remains in the delta
// is SQLite's.
func privateMemory(t *testing.T) int {
	t.Helper()
	debug.FreeOSMemory()
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(st), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("RssAnon line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no RssAnon in /proc/self/status")
	return 0
}
