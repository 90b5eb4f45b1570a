package store

import (
	"context"
	"strings"
	"testing"

	"modernc.org/sqlite"
)

// defaultArenaSlots is how many slots SQLite's default lookaside arena
// (40 of 1,200 bytes, split into big and small slots) holds: what
// TestConnectionsGetTheSmallLookaside finds in use without the setting.
const defaultArenaSlots = 123

// TestConnectionsGetTheSmallLookaside: a statement that takes every slot of
// the arena finds well under the default's count, and some: the setting is
// in effect, and the arena is not switched off.
func TestConnectionsGetTheSmallLookaside(t *testing.T) {
	d, _ := openInternal(t)
	ctx := context.Background()
	conn, err := d.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	status := func(op sqlite.DBStatusOp) (cur, high int) {
		t.Helper()
		if err := conn.Raw(func(dc any) error {
			var err error
			cur, high, err = dc.(sqlite.DBStatus).Status(op, false)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return cur, high
	}
	// Ten long sums: more small allocations at once than either arena
	// holds.
	sum := "1" + strings.Repeat(" + 1", 300)
	cols := "SELECT " + sum + strings.Repeat(", "+sum, 9)
	rows, err := conn.QueryContext(ctx, cols)
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	_, high := status(sqlite.DBStatusLookasideUsed)
	if high == 0 || high > defaultArenaSlots/2 {
		t.Fatalf("lookaside slots in use at most %d, want between 1 and %d (the default arena holds %d)", high, defaultArenaSlots/2, defaultArenaSlots)
	}
	if _, full := status(sqlite.DBStatusLookasideMissFull); full == 0 {
		t.Fatal("no allocation found the lookaside full: the statement does not test the arena's size")
	}
}

// TestLookasideIsSetBeforeSQLiteStarts: once a connection has opened,
// SQLite refuses the setting, and the refusal is an error that says so.
func TestLookasideIsSetBeforeSQLiteStarts(t *testing.T) {
	openInternal(t)
	err := configureLookaside(lookasideSlotSize, 4)
	if err == nil || !strings.Contains(err.Error(), "before its first connection") {
		t.Fatalf("configure after open: %v, want a refusal", err)
	}
}
