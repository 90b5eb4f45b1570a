package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// ErrLockHeld says another session holds a server lock.
var ErrLockHeld = errors.New("held by another session")

// TrySessionLock takes the PostgreSQL session lock named key on a
// connection of its own and keeps it until release is called or the
// session ends, which the server notices when this process or its host
// dies. It is how processes on several hosts agree on one holder (one
// autopilot runner per account). It returns ErrLockHeld when another
// session holds it; on SQLite it is an error, since processes there share
// a home and its lock files instead.
func (d *DB) TrySessionLock(ctx context.Context, key string) (release func(), err error) {
	l, err := d.TrySessionLease(ctx, key)
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

// SessionLease is a held session lock (TrySessionLease).
type SessionLease struct {
	conn *sql.Conn
	key  string
}

// ErrLockLost says a session lock is no longer held: its session ended
// (the server restarted, the connection broke, an administrator ended it)
// and another session may hold it now.
var ErrLockLost = errors.New("session lock lost")

// TrySessionLease is TrySessionLock with a lease that can tell whether the
// lock is still held, for holders that must stop when it is not.
func (d *DB) TrySessionLease(ctx context.Context, key string) (*SessionLease, error) {
	if d.Dialect != Postgres {
		return nil, fmt.Errorf("session lock %s: only on PostgreSQL", key)
	}
	conn, err := d.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("session lock %s: %w", key, err)
	}
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, LockKey(key)).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("session lock %s: %w", key, err)
	}
	if !got {
		conn.Close()
		return nil, fmt.Errorf("session lock %s: %w", key, ErrLockHeld)
	}
	return &SessionLease{conn: conn, key: key}, nil
}

// Held returns nil while the lock is held by this lease's session, and an
// error wrapping ErrLockLost once it is not (or cannot be confirmed: a
// holder that cannot reach the server must assume another took over).
func (l *SessionLease) Held(ctx context.Context) error {
	// The lock's 64-bit key is split into classid (high half) and objid
	// (low half) in pg_locks.
	var held bool
	err := l.conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid()
		AND locktype = 'advisory' AND granted AND objsubid = 1
		AND ((classid::bigint << 32) | objid::bigint) = ?)`, LockKey(l.key)).Scan(&held)
	switch {
	case err != nil:
		return fmt.Errorf("session lock %s: %w: %w", l.key, ErrLockLost, err)
	case !held:
		return fmt.Errorf("session lock %s: %w", l.key, ErrLockLost)
	}
	return nil
}

// Release gives the lock up.
func (l *SessionLease) Release() {
	// Unlock first, so the next holder can take it as soon as this
	// returns; the server would notice the closed session only a moment
	// later. The connection is discarded either way, never pooled with
	// the lock possibly still held.
	_, _ = l.conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(?)`, LockKey(l.key))
	_ = l.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = l.conn.Close()
}
