package policy

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// timeLayout is fixed-width UTC, so stored times compare correctly as text
// inside SQL (window expiry is decided in the UPDATE itself).
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Usage is one limit's state as of the counters' clock.
type Usage struct {
	Used        float64   `json:"used"`
	Max         float64   `json:"max"`
	WindowStart time.Time `json:"window_start"`
	ResetAt     time.Time `json:"reset_at"`
}

// Counters are the per-account windowed limit counters, stored in the
// policy_counters table. Windows reset lazily: a window that has elapsed is
// treated as empty when read and restarted by the next write.
//
// Writes run in BEGIN IMMEDIATE transactions; the database should have a
// busy_timeout so concurrent writers wait instead of failing.
type Counters struct {
	db      *sql.DB
	account string
	now     func() time.Time
}

// NewCounters returns the counters of accountID. now is the clock (nil means
// time.Now).
func NewCounters(db *sql.DB, accountID string, now func() time.Time) *Counters {
	if now == nil {
		now = time.Now
	}
	return &Counters{db: db, account: accountID, now: now}
}

func (c *Counters) ready() error {
	if c == nil || c.db == nil {
		return apperr.New(apperr.InternalError, "policy counters: no database")
	}
	if c.account == "" {
		return apperr.New(apperr.ConfigError, "policy counters: account id is required")
	}
	return nil
}

// Sync makes the stored limits match limits: new ones are inserted with an
// empty window, existing ones take the configured dimension, match value, max
// and period while keeping their use, and rows of limits no longer configured
// are removed. Call it on every start so config changes apply to an existing
// database.
func (c *Counters) Sync(ctx context.Context, limits []Limit) error {
	if err := c.ready(); err != nil {
		return err
	}
	now := fmtTime(c.now())
	err := c.immediate(ctx, func(conn *sql.Conn) error {
		keys := make([]any, 0, len(limits)+1)
		keys = append(keys, c.account)
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
				c.account, l.Key, l.Dimension, l.MatchValue, l.Max, l.PeriodSeconds, now, now)
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

// Snapshot returns every stored limit of the account by key.
func (c *Counters) Snapshot(ctx context.Context) (map[string]Usage, error) {
	if err := c.ready(); err != nil {
		return nil, err
	}
	rows, err := c.db.QueryContext(ctx,
		`SELECT key, used, max_value, period_seconds, window_start FROM policy_counters WHERE account_id = ?`, c.account)
	if err != nil {
		return nil, wrapDB("read counters", err)
	}
	defer rows.Close()
	now := c.now()
	out := map[string]Usage{}
	for rows.Next() {
		var (
			key, ws   string
			used, max float64
			period    int64
		)
		if err := rows.Scan(&key, &used, &max, &period, &ws); err != nil {
			return nil, wrapDB("read counters", err)
		}
		start, err := parseTime(ws)
		if err != nil {
			return nil, wrapDB("read counters", fmt.Errorf("limit %q has a malformed window_start: %w", key, err))
		}
		l := Limit{PeriodSeconds: period}
		used, start = l.window(used, start, true, now)
		out[key] = Usage{Used: used, Max: max, WindowStart: start, ResetAt: start.Add(l.period())}
	}
	if err := rows.Err(); err != nil {
		return nil, wrapDB("read counters", err)
	}
	return out, nil
}

// Consume charges an executed call to every limit in limits that applies to
// it: one per call, or req.CostUSD for budget limits. The gateway calls it
// only after X carried out the mutation, so denied, routed and dry-run calls
// never use quota. All charges are applied together or not at all.
func (c *Counters) Consume(ctx context.Context, limits []Limit, req Request) error {
	if err := c.ready(); err != nil {
		return err
	}
	if math.IsNaN(req.CostUSD) || math.IsInf(req.CostUSD, 0) || req.CostUSD < 0 {
		return apperr.New(apperr.InvalidInput, "policy counters: cost_usd %v must be a non-negative amount", req.CostUSD)
	}
	charges := applicable(limits, req)
	if len(charges) == 0 {
		return nil
	}
	now := c.now()
	err := c.immediate(ctx, func(conn *sql.Conn) error {
		for _, l := range charges {
			if err := checkLimit(l); err != nil {
				return err
			}
			if err := c.charge(ctx, conn, l, l.amount(req), now); err != nil {
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

// charge adds amt to the limit's row, restarting the window first when it
// has elapsed (or lies in the future after a clock step back). The row is
// created if missing and takes l's current settings.
func (c *Counters) charge(ctx context.Context, conn DBTX, l Limit, amt float64, now time.Time) error {
	n := fmtTime(now)
	expired := fmtTime(now.Add(-l.period()))
	_, err := conn.ExecContext(ctx, `
INSERT INTO policy_counters (account_id, key, dimension, match_value, max_value, period_seconds, used, window_start, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
ON CONFLICT (account_id, key) DO UPDATE SET
  used = CASE WHEN window_start <= ?9 OR window_start > ?8 THEN ?7 ELSE used + ?7 END,
  window_start = CASE WHEN window_start <= ?9 OR window_start > ?8 THEN ?8 ELSE window_start END,
  dimension = ?3, match_value = ?4, max_value = ?5, period_seconds = ?6, updated_at = ?8`,
		c.account, l.Key, l.Dimension, l.MatchValue, l.Max, l.PeriodSeconds, amt, n, expired)
	if err != nil {
		return fmt.Errorf("charge limit %q: %w", l.Key, err)
	}
	return nil
}

// Check is Decide with the account's live counters. A zero req.Now is taken
// from the counters' clock. Counters are read only when the rules allow the
// call.
func (e *Engine) Check(ctx context.Context, c *Counters, req Request) (Decision, error) {
	if req.Now.IsZero() && c != nil {
		req.Now = c.now()
	}
	d := e.decideRules(req)
	if d.Outcome != Allow || len(e.activeLimits(req)) == 0 {
		return d, nil
	}
	snap, err := c.Snapshot(ctx)
	if err != nil {
		return Decision{}, apperr.Wrap(apperr.PolicyError, err, "policy counters could not be read")
	}
	usage := func(key string) (float64, time.Time, bool) {
		u, ok := snap[key]
		return u.Used, u.WindowStart, ok
	}
	if deny, ok := e.checkLimits(req, usage); ok {
		return deny, nil
	}
	return d, nil
}

// Reservation is quota taken by Reserve for one call.
type Reservation struct {
	account string
	items   []reserved
}

type reserved struct {
	key         string
	amount      float64
	windowStart string
}

// Empty reports whether the reservation holds no quota.
func (r Reservation) Empty() bool { return len(r.items) == 0 }

// DBTX is the part of a transaction the counters use; *sql.Tx and
// *sql.Conn both provide it.
type DBTX interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Reserve is Check and Consume in one step: when the call is allowed, its
// charge is taken from every applicable limit in the same transaction that
// checked them, so concurrent calls cannot together overshoot a limit. If the
// mutation then provably did not run, hand the reservation to Release; if it
// ran (or its outcome is unknown) keep it. Use either Reserve/Release or
// Check/Consume for a call, never both.
func (e *Engine) Reserve(ctx context.Context, c *Counters, req Request) (Decision, Reservation, error) {
	if err := c.ready(); err != nil {
		return Decision{}, Reservation{}, err
	}
	var (
		d   Decision
		res Reservation
	)
	err := c.immediate(ctx, func(conn *sql.Conn) error {
		var err error
		d, res, err = e.ReserveTx(ctx, c, conn, req)
		return err
	})
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return Decision{}, Reservation{}, err
		}
		return Decision{}, Reservation{}, apperr.Wrap(apperr.PolicyError, err, "policy counters could not be updated")
	}
	return d, res, nil
}

// ReserveTx is Reserve inside the caller's write transaction tx, so that
// the reservation commits or rolls back with whatever else the caller
// records there (the gateway's duplicate check and pending audit row).
// tx must already hold SQLite's write lock or take it on its first
// statement (BEGIN IMMEDIATE); a deferred transaction could let two
// processes read the same counters before either writes.
func (e *Engine) ReserveTx(ctx context.Context, c *Counters, tx DBTX, req Request) (Decision, Reservation, error) {
	if err := c.ready(); err != nil {
		return Decision{}, Reservation{}, err
	}
	if req.Now.IsZero() {
		req.Now = c.now()
	}
	d := e.decideRules(req)
	if d.Outcome != Allow {
		return d, Reservation{}, nil
	}
	limits := e.activeLimits(req)
	if len(limits) == 0 {
		return d, Reservation{}, nil
	}
	res := Reservation{account: c.account}
	var (
		denial Decision
		denied bool
	)
	now := req.Now
	err := func() error {
		type state struct {
			used  float64
			start string
		}
		states := make([]state, len(limits))
		for i, l := range limits {
			// Charging zero brings the row into existence and restarts an
			// elapsed window, so the read below sees the current window.
			if err := c.charge(ctx, tx, l, 0, now); err != nil {
				return err
			}
			err := tx.QueryRowContext(ctx,
				`SELECT used, window_start FROM policy_counters WHERE account_id = ? AND key = ?`,
				c.account, l.Key).Scan(&states[i].used, &states[i].start)
			if err != nil {
				return fmt.Errorf("read limit %q: %w", l.Key, err)
			}
			amt := l.amount(req)
			if states[i].used+amt <= l.Max+limitEpsilon {
				continue
			}
			start, err := parseTime(states[i].start)
			if err != nil {
				return fmt.Errorf("limit %q has a malformed window_start: %w", l.Key, err)
			}
			dd := limitDenial(l, states[i].used, amt, start.Add(l.period()))
			if !denied || dd.ResetAt.After(denial.ResetAt) {
				denial, denied = dd, true
			}
		}
		if denied {
			return nil
		}
		upd := fmtTime(now)
		for i, l := range limits {
			amt := l.amount(req)
			_, err := tx.ExecContext(ctx,
				`UPDATE policy_counters SET used = used + ?, updated_at = ? WHERE account_id = ? AND key = ?`,
				amt, upd, c.account, l.Key)
			if err != nil {
				return fmt.Errorf("reserve limit %q: %w", l.Key, err)
			}
			res.items = append(res.items, reserved{key: l.Key, amount: amt, windowStart: states[i].start})
		}
		return nil
	}()
	if err != nil {
		return Decision{}, Reservation{}, apperr.Wrap(apperr.PolicyError, err, "policy counters could not be updated")
	}
	if denied {
		return denial, Reservation{}, nil
	}
	return d, res, nil
}

// Release returns reserved quota. A window that restarted since the
// reservation is left alone: the charge went with the old window.
func (c *Counters) Release(ctx context.Context, r Reservation) error {
	if r.Empty() {
		return nil
	}
	if err := c.ready(); err != nil {
		return err
	}
	if r.account != c.account {
		return apperr.New(apperr.InternalError, "policy counters: reservation belongs to another account")
	}
	now := fmtTime(c.now())
	err := c.immediate(ctx, func(conn *sql.Conn) error {
		for _, it := range r.items {
			_, err := conn.ExecContext(ctx, `
UPDATE policy_counters SET used = MAX(used - ?, 0), updated_at = ?
WHERE account_id = ? AND key = ? AND window_start = ?`,
				it.amount, now, c.account, it.key, it.windowStart)
			if err != nil {
				return fmt.Errorf("release limit %q: %w", it.key, err)
			}
		}
		return nil
	})
	if err != nil {
		return wrapDB("release", err)
	}
	return nil
}

// activeLimits are the limits Decide would check for req.
func (e *Engine) activeLimits(req Request) []Limit {
	var out []Limit
	for _, l := range applicable(e.limits, req) {
		if e.enforce || l.Dimension == DimBudget {
			out = append(out, l)
		}
	}
	return out
}

// applicable filters limits to those that apply to req and would be charged
// a non-zero amount.
func applicable(limits []Limit, req Request) []Limit {
	var out []Limit
	for _, l := range limits {
		if l.appliesTo(req) && l.amount(req) != 0 {
			out = append(out, l)
		}
	}
	return out
}

func checkLimit(l Limit) error {
	if l.Key == "" {
		return errors.New("limit with an empty key")
	}
	if l.PeriodSeconds <= 0 || l.PeriodSeconds > maxPeriodSeconds {
		return fmt.Errorf("limit %q: period_seconds %d out of range", l.Key, l.PeriodSeconds)
	}
	return nil
}

// immediate runs fn inside BEGIN IMMEDIATE on one connection, so the write
// lock is held from the first statement and read-then-write sequences cannot
// interleave with another writer.
func (c *Counters) immediate(ctx context.Context, fn func(*sql.Conn) error) error {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
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

// rollback ends a failed transaction even when ctx is done. If that fails the
// connection is discarded rather than returned to the pool mid-transaction.
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
