package policy

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// memCounters is an in-memory CounterReader and CounterTx for the engine's
// decision tests; the SQLite implementation and its tests live in
// internal/store/counters.
type memCounters struct {
	account string
	clk     *clock
	rows    map[string]*memRow
	// fail makes every counter operation fail, as a broken database would.
	fail error
}

type memRow struct {
	limit Limit
	used  float64
	start time.Time
}

func newMem(clk *clock) *memCounters {
	return &memCounters{account: "acct", clk: clk, rows: map[string]*memRow{}}
}

func (m *memCounters) Account() string { return m.account }
func (m *memCounters) Now() time.Time  { return m.clk.now() }

func (m *memCounters) Snapshot(context.Context) (map[string]Usage, error) {
	if m.fail != nil {
		return nil, m.fail
	}
	out := map[string]Usage{}
	for k, r := range m.rows {
		out[k] = r.limit.UsageAt(r.used, r.start, m.clk.now())
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

func TestReserveTxChargesEveryLimitOrNone(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: base()}
	cfg := bare()
	cfg.MaxMutationsPerHour = 3
	cfg.DailyBudgetUSD = 1
	e := mustEngine(t, cfg)
	m := newMem(clk)
	call := func(cost float64) Request {
		r := req("x_unfollow_user")
		r.Now, r.CostUSD = time.Time{}, cost // ReserveTx takes the counters' clock
		return r
	}

	d, res, err := e.ReserveTx(ctx, m, call(0.4))
	if err != nil || d.Outcome != Allow {
		t.Fatalf("first: %+v %v", d, err)
	}
	if res.Account != "acct" || len(res.Items) != 2 {
		t.Fatalf("reservation = %+v, want both limits of acct", res)
	}
	for _, it := range res.Items {
		if !it.WindowStart.Equal(base()) {
			t.Errorf("%s reserved in the window of %v, want %v", it.Key, it.WindowStart, base())
		}
	}
	// Over budget: denied, and the hourly count is not charged either.
	d, res, err = e.ReserveTx(ctx, m, call(0.7))
	if err != nil || !res.Empty() {
		t.Fatalf("over budget: %+v %v", res, err)
	}
	wantDecision(t, d, Deny, LimitKeyDailyBudget, apperr.PolicyBudget)
	if !d.ResetAt.Equal(base().Add(24 * time.Hour)) {
		t.Errorf("ResetAt = %v", d.ResetAt)
	}
	if got := m.rows[LimitKeyMaxMutationsPerHour].used; got != 1 {
		t.Errorf("hourly used %v after a budget denial, want 1", got)
	}
	if got := m.rows[LimitKeyDailyBudget].used; math.Abs(got-0.4) > 1e-9 {
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
		if d, _, err := e.ReserveTx(ctx, m, call(0)); err != nil || d.Outcome != Allow {
			t.Fatalf("after the hour: %+v %v", d, err)
		}
	}
	d, _, err = e.ReserveTx(ctx, m, call(0))
	if err != nil {
		t.Fatal(err)
	}
	wantDecision(t, d, Deny, LimitKeyMaxMutationsPerHour, apperr.PolicyRateLimited)
}

func TestReserveTxLeavesCountersAloneUnlessAllowed(t *testing.T) {
	ctx := context.Background()
	m := newMem(&clock{t: base()})
	cfg := DefaultConfig() // x_post_tweet needs approval
	cfg.BlockedTools = []string{"x_retweet"}
	e := mustEngine(t, cfg)
	for _, tool := range []string{"x_post_tweet", "x_retweet", "x_delete_tweet"} {
		d, res, err := e.ReserveTx(ctx, m, req(tool))
		if err != nil || d.Outcome == Allow || !res.Empty() {
			t.Errorf("%s: %+v %+v %v", tool, d, res, err)
		}
	}
	if len(m.rows) != 0 {
		t.Errorf("counters touched by calls that were not allowed: %v", m.rows)
	}
}

func TestCounterFailuresArePolicyErrors(t *testing.T) {
	ctx := context.Background()
	m := newMem(&clock{t: base()})
	m.fail = errors.New("disk I/O error")
	e := mustEngine(t, DefaultConfig())
	if _, _, err := e.ReserveTx(ctx, m, req("x_unfollow_user")); apperr.CodeOf(err) != apperr.PolicyError {
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
