package policy

import (
	"context"
	"math"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// Usage is one limit's state as of the counters' clock.
type Usage struct {
	Used        float64   `json:"used"`
	Max         float64   `json:"max"`
	WindowStart time.Time `json:"window_start"`
	ResetAt     time.Time `json:"reset_at"`
}

// CounterReader reads an account's windowed limit counters. The store
// side implements it; the engine never touches the database itself.
type CounterReader interface {
	// Snapshot returns every stored limit of the account by key, each in
	// the window in effect at the counters' clock (see Limit.UsageAt).
	Snapshot(ctx context.Context) (map[string]Usage, error)
	// Now is the counters' clock; it times a request that carries none.
	Now() time.Time
}

// CounterTx is an account's limit counters inside one write transaction of
// the caller, so that reading a limit and charging it cannot interleave
// with another writer (see Engine.ReserveTx).
type CounterTx interface {
	// Account is the account the counters belong to; reservations carry it.
	Account() string
	// Now is the counters' clock; it times a request that carries none.
	Now() time.Time
	// Window brings l's counter to the window in effect at now and returns
	// its use and start: the counter is created with l's settings when
	// missing, and a window that has elapsed (or starts after now, which
	// only a clock step back produces) restarts empty at now.
	Window(ctx context.Context, l Limit, now time.Time) (used float64, start time.Time, err error)
	// Add charges amt to the current window of the limit with key.
	Add(ctx context.Context, key string, amt float64, now time.Time) error
}

// UsageAt is the limit's state at now given its stored use and window
// start: an elapsed window (or one starting after now) counts as empty,
// starting now.
func (l Limit) UsageAt(used float64, start, now time.Time) Usage {
	used, start = l.window(used, start, true, now)
	return Usage{Used: used, Max: l.Max, WindowStart: start, ResetAt: start.Add(l.period())}
}

// Charge is what one executed call adds to one limit.
type Charge struct {
	Limit  Limit
	Amount float64
}

// Charges lists what req adds to each limit in limits that applies to it:
// one per call, or req.CostUSD for budget limits. Limits it would add
// nothing to are left out.
func Charges(limits []Limit, req Request) ([]Charge, error) {
	if math.IsNaN(req.CostUSD) || math.IsInf(req.CostUSD, 0) || req.CostUSD < 0 {
		return nil, apperr.New(apperr.InvalidInput, "policy counters: cost_usd %v must be a non-negative amount", req.CostUSD)
	}
	var out []Charge
	for _, l := range applicable(limits, req) {
		out = append(out, Charge{Limit: l, Amount: l.amount(req)})
	}
	return out, nil
}

// Check is Decide with the account's live counters. A zero req.Now is taken
// from the counters' clock. Counters are read only when the rules allow the
// call.
func (e *Engine) Check(ctx context.Context, c CounterReader, req Request) (Decision, error) {
	if req.Now.IsZero() && c != nil {
		req.Now = c.Now()
	}
	d := e.decideRules(req)
	if d.Outcome != Allow || len(e.activeLimits(req)) == 0 {
		return d, nil
	}
	if c == nil {
		return Decision{}, apperr.New(apperr.PolicyError, "policy counters are not available")
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

// Reservation is quota taken by ReserveTx for one call.
type Reservation struct {
	// Account is the account whose counters were charged.
	Account string
	Items   []Reserved
}

// Reserved is the charge taken from one limit: Amount in the window that
// started at WindowStart.
type Reserved struct {
	Key         string
	Amount      float64
	WindowStart time.Time
}

// Empty reports whether the reservation holds no quota.
func (r Reservation) Empty() bool { return len(r.Items) == 0 }

// ReserveTx decides req and, when it is allowed, takes its charge from
// every applicable limit through tx, the counters bound to the caller's
// write transaction, so that the reservation commits or rolls back with
// whatever else the caller records there (the gateway's duplicate check and
// pending audit row) and concurrent calls cannot together overshoot a
// limit. The transaction must already hold SQLite's write lock or take it
// on its first statement (BEGIN IMMEDIATE); a deferred transaction could let
// two processes read the same counters before either writes. If the
// mutation then provably did not run, the caller hands the reservation back
// to the counters' Release; if it ran (or its outcome is unknown) it stays.
func (e *Engine) ReserveTx(ctx context.Context, tx CounterTx, req Request) (Decision, Reservation, error) {
	if tx == nil {
		return Decision{}, Reservation{}, apperr.New(apperr.InternalError, "policy counters: no transaction")
	}
	if req.Now.IsZero() {
		req.Now = tx.Now()
	}
	d := e.decideRules(req)
	if d.Outcome != Allow {
		return d, Reservation{}, nil
	}
	limits := e.activeLimits(req)
	if len(limits) == 0 {
		return d, Reservation{}, nil
	}
	var (
		denial Decision
		denied bool
		starts = make([]time.Time, len(limits))
	)
	for i, l := range limits {
		used, start, err := tx.Window(ctx, l, req.Now)
		if err != nil {
			return Decision{}, Reservation{}, wrapCounters(err)
		}
		starts[i] = start
		amt := l.amount(req)
		if used+amt <= l.Max+limitEpsilon {
			continue
		}
		dd := limitDenial(l, used, amt, start.Add(l.period()))
		if !denied || dd.ResetAt.After(denial.ResetAt) {
			denial, denied = dd, true
		}
	}
	if denied {
		return denial, Reservation{}, nil
	}
	res := Reservation{Account: tx.Account()}
	for i, l := range limits {
		amt := l.amount(req)
		if err := tx.Add(ctx, l.Key, amt, req.Now); err != nil {
			return Decision{}, Reservation{}, wrapCounters(err)
		}
		res.Items = append(res.Items, Reserved{Key: l.Key, Amount: amt, WindowStart: starts[i]})
	}
	return d, res, nil
}

func wrapCounters(err error) error {
	return apperr.Wrap(apperr.PolicyError, err, "policy counters could not be updated")
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
