package store

import (
	"fmt"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite gives every connection a lookaside arena for its small, short-lived
// allocations: by default 40 slots of 1,200 bytes, 48,000 bytes, which the
// allocator serves from a 64 KiB block. SQLite writes every slot as it opens
// the connection, so each connection keeps its arena resident for life, and
// the allocator keeps the block after the connection closes. tuitbot's
// statements are short: a 16 KiB arena runs the gateway's mutation path as
// fast as the default (BenchmarkGatewayAllowedMutation), while no arena at
// all costs it about a tenth more CPU.
const (
	// lookasideSlotSize is SQLite's own default slot size.
	lookasideSlotSize = 1200
	// lookasideBytes is the arena each connection gets; SQLite also uses
	// what the allocator rounds the request up to, which is this.
	lookasideBytes = 16 << 10
)

// SQLite takes this setting only before it is first initialised, and for
// the whole process, so the package sets it as it loads: before any
// connection can be opened through it.
func init() {
	// A process that opened SQLite before this package loaded keeps
	// SQLite's default, which costs memory and nothing else.
	_ = configureLookaside(lookasideSlotSize, lookasideBytes/lookasideSlotSize)
}

// configureLookaside sets the lookaside arena of connections opened from
// now on: count slots of slotSize bytes.
func configureLookaside(slotSize, count int32) error {
	tls := libc.NewTLS()
	defer tls.Close()
	args := libc.NewVaList(slotSize, count)
	if args == 0 {
		return fmt.Errorf("configure SQLite lookaside: out of memory")
	}
	defer libc.Xfree(tls, args)
	if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_LOOKASIDE, args); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("configure SQLite lookaside: SQLite result code %d (it accepts the setting only before its first connection)", rc)
	}
	return nil
}
