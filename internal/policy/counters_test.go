package policy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// memCounters is the in-memory counter backend: one account's counters
// in a map. The SQL backends (internal/store/counters on SQLite and
// PostgreSQL) join it through RegisterCounterBackend, so the suites below
// run unchanged on each.
type memCounters struct {
	account string
	now     func() time.Time
	rows    map[string]*memRow
	// fail makes every counter operation fail, as a broken database would.
	fail error
}

type memRow struct {
	limit Limit
	used  float64
	start time.Time
}

// memDB is a CounterDB of memCounters, one per account.
type memDB map[string]*memCounters

func openMemDB(*testing.T, bool) CounterDB { return memDB{} }

func (db memDB) Counters(account string, now func() time.Time) CounterStore {
	m, ok := db[account]
	if !ok {
		m = &memCounters{account: account, now: now, rows: map[string]*memRow{}}
		db[account] = m
	}
	return m
}

func (m *memCounters) Account() string { return m.account }
func (m *memCounters) Now() time.Time  { return m.now() }

func (m *memCounters) Snapshot(context.Context) (map[string]Usage, error) {
	if m.fail != nil {
		return nil, m.fail
	}
	out := map[string]Usage{}
	for k, r := range m.rows {
		out[k] = r.limit.UsageAt(r.used, r.start, m.now())
	}
	return out, nil
}

func (m *memCounters) Window(_ context.Context, l Limit, now time.Time) (float64, time.Time, error) {
	if m.fail != nil {
		return 0, time.Time{}, m.fail
	}
	r, ok := m.rows[l.Key]
	if !ok {
		r = &memRow{start: now}
		m.rows[l.Key] = r
	}
	r.limit = l
	r.used, r.start = l.window(r.used, r.start, ok, now)
	return r.used, r.start, nil
}

func (m *memCounters) Add(_ context.Context, key string, amt float64, _ time.Time) error {
	if m.fail != nil {
		return m.fail
	}
	m.rows[key].used += amt
	return nil
}

// Update runs fn on the counters themselves, restoring the rows as they
// were when fn fails, as a rolled-back transaction would.
func (m *memCounters) Update(_ context.Context, fn func(CounterTx) error) error {
	saved := make(map[string]memRow, len(m.rows))
	for k, r := range m.rows {
		saved[k] = *r
	}
	if err := fn(m); err != nil {
		m.rows = make(map[string]*memRow, len(saved))
		for k, r := range saved {
			m.rows[k] = &r
		}
		return err
	}
	return nil
}

func (m *memCounters) Break(*testing.T) { m.fail = errors.New("disk I/O error") }

// forEachCounterBackend runs fn once per counter backend, each in a
// subtest named after it, on the backend's shared database: fn keeps to
// accounts of its own (newAccount).
func forEachCounterBackend(t *testing.T, fn func(t *testing.T, db CounterDB)) {
	t.Helper()
	for _, b := range counterBackends {
		t.Run(b.Name, func(t *testing.T) { fn(t, b.Open(t, false)) })
	}
}

// forEachOwnCounterBackend is forEachCounterBackend with a database of
// fn's own, which it may break.
func forEachOwnCounterBackend(t *testing.T, fn func(t *testing.T, db CounterDB)) {
	t.Helper()
	for _, b := range counterBackends {
		t.Run(b.Name, func(t *testing.T) { fn(t, b.Open(t, true)) })
	}
}

// TestCounterSuiteCoversEveryBackend guards the registration: without it
// the suites would quietly run on the in-memory counters alone.
func TestCounterSuiteCoversEveryBackend(t *testing.T) {
	var got []string
	for _, b := range counterBackends {
		got = append(got, b.Name)
	}
	if want := []string{"memory", "sqlite", "postgres"}; !slices.Equal(got, want) {
		t.Fatalf("counter backends = %v, want %v", got, want)
	}
}

var accountSeq atomic.Int64

// newAccount names an account no other test uses.
func newAccount() string { return fmt.Sprintf("acct%d", accountSeq.Add(1)) }

// decideWith decides r on a new account of db whose counters hold usage
// (each key's use, in the window that started at start), with the
// counters' clock at r.Now. It returns what Check reads from them and
// fails t unless ReserveTx on the same counters (rolled back) and Decide
// over the same usage agree, so every path from the engine to the counters
// decides alike on every backend.
func decideWith(t *testing.T, db CounterDB, e *Engine, r Request, usage map[string]float64, start time.Time) Decision {
	t.Helper()
	ctx := context.Background()
	now := r.Now
	c := db.Counters(newAccount(), func() time.Time { return now })
	seedUsage(t, c, e.Limits(), usage, start)
	got, err := e.Check(ctx, c, r)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if want := e.Decide(r, usageMap(usage, start)); !sameDecision(got, want) {
		t.Errorf("Check on the counters = %+v, Decide on the same usage = %+v", got, want)
	}
	errRollback := errors.New("roll back")
	err = c.Update(ctx, func(tx CounterTx) error {
		d, _, err := e.ReserveTx(ctx, tx, r)
		if err != nil {
			return err
		}
		if !sameDecision(d, got) {
			t.Errorf("ReserveTx = %+v, Check = %+v", d, got)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("ReserveTx: %v", err)
	}
	return got
}

// seedUsage stores usage in c's counters of limits, each in the window
// that started at start.
func seedUsage(t *testing.T, c CounterStore, limits []Limit, usage map[string]float64, start time.Time) {
	t.Helper()
	ctx := context.Background()
	err := c.Update(ctx, func(tx CounterTx) error {
		for _, l := range limits {
			used, ok := usage[l.Key]
			if !ok {
				continue
			}
			if _, _, err := tx.Window(ctx, l, start); err != nil {
				return err
			}
			if err := tx.Add(ctx, l.Key, used, start); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed counters: %v", err)
	}
}

func sameDecision(a, b Decision) bool {
	return a.Outcome == b.Outcome && a.RuleID == b.RuleID && a.Reason == b.Reason && a.Code == b.Code &&
		a.ResetAt.Equal(b.ResetAt) && a.Source == b.Source
}

// usedOf is the use of key in c's current window; 0 when it has no row.
func usedOf(t *testing.T, c CounterReader, key string) float64 {
	t.Helper()
	snap, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return snap[key].Used
}

func TestReserveTxChargesEveryLimitOrNone(t *testing.T) {
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		ctx := context.Background()
		clk := &clock{t: base()}
		cfg := bare()
		cfg.MaxMutationsPerHour = 3
		cfg.DailyBudgetUSD = 1
		e := mustEngine(t, cfg)
		acct := newAccount()
		m := db.Counters(acct, clk.now)
		call := func(cost float64) Request {
			r := req("x_unfollow_user")
			r.Now, r.CostUSD = time.Time{}, cost // ReserveTx takes the counters' clock
			return r
		}
		reserve := func(r Request) (Decision, Reservation, error) {
			var (
				d   Decision
				res Reservation
			)
			err := m.Update(ctx, func(tx CounterTx) error {
				var err error
				d, res, err = e.ReserveTx(ctx, tx, r)
				return err
			})
			return d, res, err
		}

		d, res, err := reserve(call(0.4))
		if err != nil || d.Outcome != Allow {
			t.Fatalf("first: %+v %v", d, err)
		}
		if res.Account != acct || len(res.Items) != 2 {
			t.Fatalf("reservation = %+v, want both limits of %s", res, acct)
		}
		for _, it := range res.Items {
			if !it.WindowStart.Equal(base()) {
				t.Errorf("%s reserved in the window of %v, want %v", it.Key, it.WindowStart, base())
			}
		}
		// Over budget: denied, and the hourly count is not charged either.
		d, res, err = reserve(call(0.7))
		if err != nil || !res.Empty() {
			t.Fatalf("over budget: %+v %v", res, err)
		}
		wantDecision(t, d, Deny, LimitKeyDailyBudget, apperr.PolicyBudget)
		if !d.ResetAt.Equal(base().Add(24 * time.Hour)) {
			t.Errorf("ResetAt = %v", d.ResetAt)
		}
		if got := usedOf(t, m, LimitKeyMaxMutationsPerHour); got != 1 {
			t.Errorf("hourly used %v after a budget denial, want 1", got)
		}
		if got := usedOf(t, m, LimitKeyDailyBudget); math.Abs(got-0.4) > 1e-9 {
			t.Errorf("budget used %v, want 0.4", got)
		}

		// Check reads the same counters and agrees.
		r := call(0.7)
		dc, err := e.Check(ctx, m, r)
		if err != nil {
			t.Fatal(err)
		}
		wantDecision(t, dc, Deny, LimitKeyDailyBudget, apperr.PolicyBudget)

		// The hourly window restarts once elapsed.
		clk.advance(time.Hour)
		for range 3 {
			if d, _, err := reserve(call(0)); err != nil || d.Outcome != Allow {
				t.Fatalf("after the hour: %+v %v", d, err)
			}
		}
		d, _, err = reserve(call(0))
		if err != nil {
			t.Fatal(err)
		}
		wantDecision(t, d, Deny, LimitKeyMaxMutationsPerHour, apperr.PolicyRateLimited)
		if got := usedOf(t, m, LimitKeyMaxMutationsPerHour); got != 3 {
			t.Errorf("hourly used %v after the denial, want 3", got)
		}
	})
}

func TestReserveTxLeavesCountersAloneUnlessAllowed(t *testing.T) {
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		ctx := context.Background()
		m := db.Counters(newAccount(), (&clock{t: base()}).now)
		cfg := DefaultConfig() // x_post_tweet needs approval
		cfg.BlockedTools = []string{"x_retweet"}
		e := mustEngine(t, cfg)
		for _, tool := range []string{"x_post_tweet", "x_retweet", "x_delete_tweet"} {
			err := m.Update(ctx, func(tx CounterTx) error {
				d, res, err := e.ReserveTx(ctx, tx, req(tool))
				if err != nil || d.Outcome == Allow || !res.Empty() {
					t.Errorf("%s: %+v %+v %v", tool, d, res, err)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		snap, err := m.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap) != 0 {
			t.Errorf("counters touched by calls that were not allowed: %v", snap)
		}
	})
}

func TestCounterFailuresArePolicyErrors(t *testing.T) {
	forEachOwnCounterBackend(t, func(t *testing.T, db CounterDB) {
		ctx := context.Background()
		m := db.Counters(newAccount(), (&clock{t: base()}).now)
		m.Break(t)
		e := mustEngine(t, DefaultConfig())
		err := m.Update(ctx, func(tx CounterTx) error {
			_, _, err := e.ReserveTx(ctx, tx, req("x_unfollow_user"))
			return err
		})
		if apperr.CodeOf(err) != apperr.PolicyError {
			t.Errorf("ReserveTx: %v", err)
		}
		if _, err := e.Check(ctx, m, req("x_unfollow_user")); apperr.CodeOf(err) != apperr.PolicyError {
			t.Errorf("Check: %v", err)
		}
		// Rules that decide without limits need no counters.
		if d, err := e.Check(ctx, m, req("x_post_tweet")); err != nil || d.Outcome != RequireApproval {
			t.Errorf("Check of a routed call: %+v %v", d, err)
		}
		if _, _, err := e.ReserveTx(ctx, nil, req("x_unfollow_user")); err == nil {
			t.Error("ReserveTx without counters succeeded")
		}
	})
}

func TestCharges(t *testing.T) {
	cfg := bare()
	cfg.RateLimits = []Limit{
		{Key: "likes", Dimension: DimTool, MatchValue: "x_like_tweet", Max: 10, PeriodSeconds: 60},
		{Key: "engage", Dimension: DimCategory, MatchValue: "engage", Max: 10, PeriodSeconds: 60},
		{Key: "spend-engage", Dimension: DimBudget, MatchValue: "engage", Max: 10, PeriodSeconds: 60},
	}
	e := mustEngine(t, cfg)
	like := req("x_like_tweet")
	like.CostUSD = 0.5
	got, err := Charges(e.Limits(), like)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"likes": 1, "engage": 1, "spend-engage": 0.5}
	if len(got) != len(want) {
		t.Fatalf("charges = %+v, want %v", got, want)
	}
	for _, c := range got {
		if want[c.Limit.Key] != c.Amount {
			t.Errorf("%s charged %v, want %v", c.Limit.Key, c.Amount, want[c.Limit.Key])
		}
	}
	// A free call adds nothing to a budget.
	got, _ = Charges(e.Limits(), req("x_follow_user"))
	if len(got) != 1 || got[0].Limit.Key != "engage" {
		t.Errorf("free follow charges = %+v", got)
	}
	for _, cost := range []float64{-0.01, math.NaN(), math.Inf(1)} {
		r := req("x_like_tweet")
		r.CostUSD = cost
		if _, err := Charges(e.Limits(), r); apperr.CodeOf(err) != apperr.InvalidInput {
			t.Errorf("cost %v: err = %v", cost, err)
		}
	}
}
