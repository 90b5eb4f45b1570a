package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"math/rand/v2"
	"strconv"
	"time"
)

// Bounds of the pause between two tries of a busy BEGIN IMMEDIATE: it
// starts short, since another process holds the lock for one transaction
// (well under a millisecond to a few), and grows to a few milliseconds, so
// that a long holder (a backup, a sqlite3 shell) is not polled hot.
const (
	busyPauseMin = 50 * time.Microsecond
	busyPauseMax = 4 * time.Millisecond
)

// writeGate lets one write transaction of this process at a time ask
// SQLite for its write lock. SQLite has one writer anyway; queueing the
// others here costs nothing, while letting them all wait in SQLite's busy
// handler puts each to sleep in steps of up to 100 ms, long after the lock
// was free again, and holds a pooled connection meanwhile. Only other
// processes' writers then contend through SQLite, and beginImmediate
// retries them in short, jittered pauses instead of those steps.
type writeGate chan struct{}

func newWriteGate() writeGate { return make(writeGate, 1) }

// enter waits for the gate until deadline or the end of ctx. It reports
// whether the caller passed the gate: one that did not (another writer of
// this process held it for the whole busy timeout) goes on to ask SQLite,
// which answers SQLITE_BUSY if that writer still holds the lock, as it
// answered before the gate existed.
func (g writeGate) enter(ctx context.Context, deadline time.Time) (bool, error) {
	select {
	case g <- struct{}{}:
		return true, nil
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case g <- struct{}{}:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

func (g writeGate) leave() { <-g }

// sqliteTx runs fn in a write transaction on SQLite: through the gate, then
// BEGIN IMMEDIATE (see beginImmediate).
func (d *DB) sqliteTx(ctx context.Context, fn func(*sql.Tx) error) error {
	deadline := time.Now().Add(d.busyWait)
	passed, err := d.writes.enter(ctx, deadline)
	if err != nil {
		return wrapBegin(err)
	}
	if passed {
		defer d.writes.leave()
	}
	conn, err := d.DB.Conn(ctx)
	if err != nil {
		return wrapBegin(err)
	}
	defer conn.Close()
	tx, err := beginImmediate(ctx, conn, deadline, d.busyWait)
	if err != nil {
		return wrapBegin(err)
	}
	return finish(tx, fn)
}

// beginImmediate begins a write transaction on conn with its busy timeout
// off for the BEGIN alone: while another process holds the lock the BEGIN
// is tried again after short random pauses until deadline, the end of the
// busy timeout (wait) the caller began with; after that the caller gets
// SQLITE_BUSY as before. Once the BEGIN holds the write lock, the busy
// timeout is back for the statements of the transaction and for whoever
// uses the connection next.
func beginImmediate(ctx context.Context, conn *sql.Conn, deadline time.Time, wait time.Duration) (*sql.Tx, error) {
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return nil, err
	}
	restore := func() error {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA busy_timeout = "+strconv.FormatInt(wait.Milliseconds(), 10))
		return err
	}
	giveUp := func(err error) (*sql.Tx, error) {
		if restore() != nil {
			// A connection left without its busy timeout must not go back
			// to the pool.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		return nil, err
	}
	pause := busyPauseMin
	for {
		tx, err := conn.BeginTx(ctx, nil)
		if err == nil {
			if err := restore(); err != nil {
				_ = tx.Rollback()
				return giveUp(err)
			}
			return tx, nil
		}
		left := time.Until(deadline)
		if !IsBusy(err) || left <= 0 {
			return giveUp(err)
		}
		t := time.NewTimer(min(busyPauseMin+rand.N(pause), left))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return giveUp(ctx.Err())
		}
		pause = min(2*pause, busyPauseMax)
	}
}
