package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"
)

// WatchCommits is SQLite's stand-in for Listen: it calls heard whenever
// the value probe reads (one row, one integer column) differs from the
// one it read last, looking every `every`, until ctx ends or the
// connection fails; it returns why it stopped. It reads probe only once
// another connection (this process's or another process's) has committed
// since its last look, as a write to the WAL file and then PRAGMA
// data_version tell, so a quiet database costs nothing (on Linux; one
// stat per look elsewhere) and commits a pragma and a read each.
// listening, when set, is called once the first value is read: from then
// on no change is missed. It runs on a read-only connection of its own,
// outside the pool.
func (d *DB) WatchCommits(ctx context.Context, every time.Duration, probe string, listening, heard func()) error {
	if d.Dialect != SQLite {
		return errors.New("store: WatchCommits needs SQLite")
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(d.Path)+"?"+busyTimeout+"&_pragma=query_only(1)")
	if err != nil {
		return fmt.Errorf("watch database %s: %w", d.Path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("watch database %s: %w", d.Path, err)
	}
	defer conn.Close()
	version, err := conn.PrepareContext(ctx, "PRAGMA data_version")
	if err != nil {
		return fmt.Errorf("watch database %s: %w", d.Path, err)
	}
	defer version.Close()
	read, err := conn.PrepareContext(ctx, probe)
	if err != nil {
		return fmt.Errorf("watch database %s: %w", d.Path, err)
	}
	defer read.Close()
	// The version is read before the value, so a commit between the two
	// changes the version again and is looked at next time.
	var ver, val int64
	look := func() (changed bool, err error) {
		var v, x int64
		if err := version.QueryRowContext(ctx).Scan(&v); err != nil {
			return false, err
		}
		if v == ver {
			return false, nil
		}
		ver = v
		if err := read.QueryRowContext(ctx).Scan(&x); err != nil {
			return false, err
		}
		changed, val = x != val, x
		return changed, nil
	}
	// On Linux the kernel tells of each write to the WAL; elsewhere (or
	// without a WAL) the WAL's size and time are looked at every `every`.
	// The watch is in place before the first look, so no commit falls
	// between the two.
	writes, stop, err := walWrites(d.Path + "-wal")
	if err == nil {
		defer stop()
	}
	var ticks <-chan time.Time
	if writes == nil {
		tick := time.NewTicker(every)
		defer tick.Stop()
		ticks = tick.C
	}
	if _, err := look(); err != nil {
		return d.stopped(ctx, err)
	}
	if listening != nil {
		listening()
	}
	// A commit's frames reach the WAL a moment before the commit is
	// visible (SQLite then updates the shared WAL index, of which no
	// write is told), so a write is looked at again `every` later.
	var again <-chan time.Time
	var wal os.FileInfo
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-writes:
			again = time.After(every)
		case <-again:
			again = nil
		case <-ticks:
			// A commit appends to the WAL, so while the WAL's size and
			// time stay as they were there is nothing to read: a stat
			// costs far less than a statement. (Were a commit to leave
			// both as they were, the dispatcher's poll still finds its
			// rows.)
			if st, err := os.Stat(d.Path + "-wal"); err == nil {
				same := wal != nil && st.Size() == wal.Size() && st.ModTime().Equal(wal.ModTime())
				wal = st
				if same {
					continue
				}
			}
		}
		changed, err := look()
		if err != nil {
			return d.stopped(ctx, err)
		}
		if changed {
			heard()
		}
	}
}

func (d *DB) stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("watch database %s: %w", d.Path, err)
}
