package store

import (
	"context"
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
	if d.Dialect != Postgres {
		return nil, fmt.Errorf("session lock %s: only on PostgreSQL", key)
	}
	conn, err := d.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("session lock %s: %w", key, err)
	}
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtextextended(?, 0))`, key).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("session lock %s: %w", key, err)
	}
	if !got {
		conn.Close()
		return nil, fmt.Errorf("session lock %s: %w", key, ErrLockHeld)
	}
	return func() {
		// Unlock first, so the next holder can take it as soon as this
		// returns; the server would notice the closed session only a
		// moment later. The connection is discarded either way, never
		// pooled with the lock possibly still held.
		_, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(hashtextextended(?, 0))`, key)
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
	}, nil
}
