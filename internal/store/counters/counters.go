// Package counters keeps the policy engine's windowed limit counters (call
// counts and the USD spend budget) in the policy_counters table. It owns
// that table: no other package reads or writes it. The engine reaches it
// through policy.CounterReader (Store) and policy.CounterTx (Store.Tx, bound
// to the gateway's write transaction).
//
// Times are stored as store.FormatTime text (UTC, millisecond precision,
// fixed width) like every other table, so that the window expiry can be
// decided by comparing strings inside SQL.
package counters

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
)

// DBTX is the part of a transaction the counters use; *sql.Tx and *sql.Conn
// both provide it.
type DBTX interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Store is the limit counters of one account. Windows reset lazily: a
// window that has elapsed is treated as empty when read and restarted by
// the next write.
//
// Its own writes run in BEGIN IMMEDIATE transactions; the database should
// have a busy_timeout so concurrent writers wait instead of failing.
type Store struct {
	db      *sql.DB
	account string
	now     func() time.Time
}

var _ policy.CounterReader = (*Store)(nil)

// New returns the counters of accountID. now is the clock (nil means
// time.Now).
func New(db *sql.DB, accountID string, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, account: accountID, now: now}
}

// Now is the counters' clock.
func (s *Store) Now() time.Time { return s.now() }

func (s *Store) ready() error {
	if s == nil || s.db == nil {
		return apperr.New(apperr.InternalError, "policy counters: no database")
	}
	if s.account == "" {
		return apperr.New(apperr.ConfigError, "policy counters: account id is required")
	}
	return nil
}

// Sync makes the stored limits match limits: new ones are inserted with an
// empty window, existing ones take the configured dimension, match value,
// max and period while keeping their use, and rows of limits no longer
// configured are removed. Call it on every start so config changes apply to
// an existing database.
func (s *Store) Sync(ctx context.Context, limits []policy.Limit) error {
	if err := s.ready(); err != nil {
		return err
	}
	for _, l := range limits {
		if err := checkLimit(l); err != nil {
			return err
		}
	}
	// Most starts find the limits as they left them: one read says so,
	// and spares the start a write transaction.
	if same, err := s.stored(ctx, limits); err != nil {
		return wrapDB("sync limits", err)
	} else if same {
		return nil
	}
	now := store.FormatTime(s.now())
	err := s.immediate(ctx, func(conn *sql.Conn) error {
		keys := make([]any, 0, len(limits)+1)
		keys = append(keys, s.account)
		for _, l := range limits {
			if err := checkLimit(l); err != nil {
				return err
			}
			_, err := conn.ExecContext(ctx, `
INSERT INTO policy_counters (account_id, key, dimension, match_value, max_value, period_seconds, used, window_start, updated_at)
VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)
ON CONFLICT (account_id, key) DO UPDATE SET
  dimension = excluded.dimension, match_value = excluded.match_value, max_value = excluded.max_value,
  period_seconds = excluded.period_seconds, updated_at = excluded.updated_at`,
				s.account, l.Key, l.Dimension, l.MatchValue, l.Max, l.PeriodSeconds, now, now)
			if err != nil {
				return fmt.Errorf("upsert limit %q: %w", l.Key, err)
			}
			keys = append(keys, l.Key)
		}
		q := `DELETE FROM policy_counters WHERE account_id = ?`
		if len(limits) > 0 {
			q += ` AND key NOT IN (?` + strings.Repeat(", ?", len(limits)-1) + `)`
		}
		if _, err := conn.ExecContext(ctx, q, keys...); err != nil {
			return fmt.Errorf("remove unconfigured limits: %w", err)
		}
		return nil
	})
	if err != nil {
		return wrapDB("sync limits", err)
	}
	return nil
}

// stored reports whether the account's stored limits are limits, no more
// and no fewer, each with the same dimension, match value, max and period.
func (s *Store) stored(ctx context.Context, limits []policy.Limit) (bool, error) {
	want := make(map[string]policy.Limit, len(limits))
	for _, l := range limits {
		want[l.Key] = l
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT key, dimension, match_value, max_value, period_seconds FROM policy_counters WHERE account_id = ?`, s.account)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var l policy.Limit
		if err := rows.Scan(&l.Key, &l.Dimension, &l.MatchValue, &l.Max, &l.PeriodSeconds); err != nil {
			return false, err
		}
		w, ok := want[l.Key]
		if !ok || w.Dimension != l.Dimension || w.MatchValue != l.MatchValue || w.Max != l.Max || w.PeriodSeconds != l.PeriodSeconds {
			return false, rows.Close()
		}
		n++
	}
	return n == len(want), rows.Err()
}

// Snapshot returns every stored limit of the account by key, as of the
// counters' clock.
func (s *Store) Snapshot(ctx context.Context) (map[string]policy.Usage, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT key, used, max_value, period_seconds, window_start FROM policy_counters WHERE account_id = ?`, s.account)
	if err != nil {
		return nil, wrapDB("read counters", err)
	}
	defer rows.Close()
	now := s.now()
	out := map[string]policy.Usage{}
	for rows.Next() {
		var (
			key, ws   string
			used, max float64
			period    int64
		)
		if err := rows.Scan(&key, &used, &max, &period, &ws); err != nil {
			return nil, wrapDB("read counters", err)
		}
		start, err := store.ParseTime(ws)
		if err != nil {
			return nil, wrapDB("read counters", fmt.Errorf("limit %q has a malformed window_start: %w", key, err))
		}
		out[key] = policy.Limit{Max: max, PeriodSeconds: period}.UsageAt(used, start, now)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapDB("read counters", err)
	}
	return out, nil
}

// Consume charges an executed call to every limit in limits that applies
// to it (see policy.Charges). It is the after-the-fact alternative to a
// reservation; never use both for one call. All charges are applied
// together or not at all.
func (s *Store) Consume(ctx context.Context, limits []policy.Limit, req policy.Request) error {
	if err := s.ready(); err != nil {
		return err
	}
	charges, err := policy.Charges(limits, req)
	if err != nil {
		return err
	}
	if len(charges) == 0 {
		return nil
	}
	now := s.now()
	err = s.immediate(ctx, func(conn *sql.Conn) error {
		for _, c := range charges {
			if err := s.charge(ctx, conn, c.Limit, c.Amount, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrapDB("consume", err)
	}
	return nil
}

// Reserve is e.ReserveTx in a transaction of its own, for callers that
// record nothing else with the decision.
func (s *Store) Reserve(ctx context.Context, e *policy.Engine, req policy.Request) (policy.Decision, policy.Reservation, error) {
	if err := s.ready(); err != nil {
		return policy.Decision{}, policy.Reservation{}, err
	}
	var (
		d   policy.Decision
		res policy.Reservation
	)
	err := s.immediate(ctx, func(conn *sql.Conn) error {
		var err error
		d, res, err = e.ReserveTx(ctx, s.Tx(conn), req)
		return err
	})
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return policy.Decision{}, policy.Reservation{}, err
		}
		return policy.Decision{}, policy.Reservation{}, apperr.Wrap(apperr.PolicyError, err, "policy counters could not be updated")
	}
	return d, res, nil
}

// Release returns reserved quota. A window that restarted since the
// reservation is left alone: the charge went with the old window.
func (s *Store) Release(ctx context.Context, r policy.Reservation) error {
	if r.Empty() {
		return nil
	}
	if err := s.ready(); err != nil {
		return err
	}
	if r.Account != s.account {
		return apperr.New(apperr.InternalError, "policy counters: reservation belongs to another account")
	}
	now := store.FormatTime(s.now())
	err := s.immediate(ctx, func(conn *sql.Conn) error {
		for _, it := range r.Items {
			_, err := conn.ExecContext(ctx, `
UPDATE policy_counters SET used = CASE WHEN used > ?1 THEN used - ?1 ELSE 0 END, updated_at = ?2
WHERE account_id = ?3 AND key = ?4 AND window_start = ?5`,
				it.Amount, now, s.account, it.Key, store.FormatTime(it.WindowStart))
			if err != nil {
				return fmt.Errorf("release limit %q: %w", it.Key, err)
			}
		}
		return nil
	})
	if err != nil {
		return wrapDB("release", err)
	}
	return nil
}

// Tx binds the counters to tx, a write transaction of the caller that
// already holds SQLite's write lock or takes it on its first statement
// (BEGIN IMMEDIATE): the gateway passes its own, so that the reservation
// commits or rolls back with the audit row it writes there.
func (s *Store) Tx(tx DBTX) policy.CounterTx { return txCounters{s: s, tx: tx} }

type txCounters struct {
	s  *Store
	tx DBTX
}

func (t txCounters) Account() string { return t.s.account }
func (t txCounters) Now() time.Time  { return t.s.now() }

func (t txCounters) Window(ctx context.Context, l policy.Limit, now time.Time) (float64, time.Time, error) {
	if err := t.s.ready(); err != nil {
		return 0, time.Time{}, err
	}
	// Charging zero brings the row into existence and restarts an elapsed
	// window, and returns the row as it then is: the current window, read
	// in the same statement (on PostgreSQL the row's lock is held from
	// here to the end of the transaction, so one round trip fewer holds it
	// for less time).
	var (
		used float64
		ws   string
	)
	if err := t.s.chargeReturning(ctx, t.tx, l, 0, now, &used, &ws); err != nil {
		return 0, time.Time{}, err
	}
	start, err := store.ParseTime(ws)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("limit %q has a malformed window_start: %w", l.Key, err)
	}
	return used, start, nil
}

func (t txCounters) Add(ctx context.Context, key string, amt float64, now time.Time) error {
	_, err := t.tx.ExecContext(ctx,
		`UPDATE policy_counters SET used = used + ?, updated_at = ? WHERE account_id = ? AND key = ?`,
		amt, store.FormatTime(now), t.s.account, key)
	if err != nil {
		return fmt.Errorf("reserve limit %q: %w", key, err)
	}
	return nil
}

// charge adds amt to the limit's row, restarting the window first when it
// has elapsed (or lies in the future after a clock step back). The row is
// created if missing and takes l's current settings.
func (s *Store) charge(ctx context.Context, conn DBTX, l policy.Limit, amt float64, now time.Time) error {
	if err := checkLimit(l); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, qCharge, chargeArgs(s.account, l, amt, now)...); err != nil {
		return fmt.Errorf("charge limit %q: %w", l.Key, err)
	}
	return nil
}

// chargeReturning is charge that also reads the row's used amount and
// window start after the charge into used and windowStart.
func (s *Store) chargeReturning(ctx context.Context, conn DBTX, l policy.Limit, amt float64, now time.Time, used *float64, windowStart *string) error {
	if err := checkLimit(l); err != nil {
		return err
	}
	err := conn.QueryRowContext(ctx, qCharge+` RETURNING used, window_start`, chargeArgs(s.account, l, amt, now)...).Scan(used, windowStart)
	if err != nil {
		return fmt.Errorf("charge limit %q: %w", l.Key, err)
	}
	return nil
}

// qCharge is charge's statement. The existing row's columns are named
// with the table: PostgreSQL finds a bare name ambiguous beside
// excluded's.
const qCharge = `
INSERT INTO policy_counters (account_id, key, dimension, match_value, max_value, period_seconds, used, window_start, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
ON CONFLICT (account_id, key) DO UPDATE SET
  used = CASE WHEN policy_counters.window_start <= ?9 OR policy_counters.window_start > ?8 THEN ?7 ELSE policy_counters.used + ?7 END,
  window_start = CASE WHEN policy_counters.window_start <= ?9 OR policy_counters.window_start > ?8 THEN ?8 ELSE policy_counters.window_start END,
  dimension = ?3, match_value = ?4, max_value = ?5, period_seconds = ?6, updated_at = ?8`

func chargeArgs(account string, l policy.Limit, amt float64, now time.Time) []any {
	n := store.FormatTime(now)
	expired := store.FormatTime(now.Add(-time.Duration(l.PeriodSeconds) * time.Second))
	return []any{account, l.Key, l.Dimension, l.MatchValue, l.Max, l.PeriodSeconds, amt, n, expired}
}

// maxPeriodSeconds matches the engine's bound on a limit window (366 days).
const maxPeriodSeconds = 366 * 24 * 3600

func checkLimit(l policy.Limit) error {
	if l.Key == "" {
		return errors.New("limit with an empty key")
	}
	if l.PeriodSeconds <= 0 || l.PeriodSeconds > maxPeriodSeconds {
		return fmt.Errorf("limit %q: period_seconds %d out of range", l.Key, l.PeriodSeconds)
	}
	return nil
}

// immediate runs fn inside BEGIN IMMEDIATE on one connection, so the write
// lock is held from the first statement and read-then-write sequences
// cannot interleave with another writer. On PostgreSQL every counter
// statement writes the rows it reads first (charging zero brings a row
// into the window), so the row locks it takes hold them until the
// transaction ends: a concurrent charge waits, then sees this one's.
func (s *Store) immediate(ctx context.Context, fn func(*sql.Conn) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	dialect := store.DialectOf(s.db)
	begin := "BEGIN IMMEDIATE"
	if dialect == store.Postgres {
		begin = "BEGIN"
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return err
	}

	if err := fn(conn); err != nil {
		rollback(ctx, conn)
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		rollback(ctx, conn)
		return err
	}
	return nil
}

// rollback ends a failed transaction even when ctx is done. If that fails
// the connection is discarded rather than returned to the pool
// mid-transaction.
func rollback(ctx context.Context, conn *sql.Conn) {
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

func wrapDB(op string, err error) error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	return apperr.Wrap(apperr.DBError, err, "policy counters: %s failed", op)
}
