package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// NotifyQuery is the statement that, run in a transaction, wakes every
// session listening on channel (Listen) once the transaction commits, and
// never if it rolls back. Its one argument is the channel.
const NotifyQuery = `SELECT pg_notify(?, '')`

// Listen listens on PostgreSQL's channel on a connection of its own and
// calls heard for every notification (see NotifyQuery), until ctx ends or
// the connection fails; it returns why it stopped. listening, when set, is
// called once the LISTEN is in place: from then on no notification is
// missed. The connection is never returned to the pool.
func (d *DB) Listen(ctx context.Context, channel string, listening, heard func()) error {
	if d.Dialect != Postgres {
		return errors.New("store: LISTEN needs PostgreSQL")
	}
	conn, err := d.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", channel, err)
	}
	defer func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
	}()
	err = conn.Raw(func(dc any) error {
		pc := dc.(pgConn).c.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
			return err
		}
		if listening != nil {
			listening()
		}
		for {
			if _, err := pc.WaitForNotification(ctx); err != nil {
				return err
			}
			heard()
		}
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("listen on %s: %w", channel, err)
}
