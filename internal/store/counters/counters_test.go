package counters_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

func usageOf(t *testing.T, c *counters.Store, key string) policy.Usage {
	t.Helper()
	snap, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	u, ok := snap[key]
	if !ok {
		t.Fatalf("no counter %q in %v", key, snap)
	}
	return u
}

func mustConsume(t *testing.T, c *counters.Store, e *policy.Engine, r policy.Request, n int) {
	t.Helper()
	for range n {
		if err := c.Consume(context.Background(), e.Limits(), r); err != nil {
			t.Fatalf("Consume: %v", err)
		}
	}
}

func mustCheck(t *testing.T, e *policy.Engine, c *counters.Store, r policy.Request) policy.Decision {
	t.Helper()
	d, err := e.Check(context.Background(), c, r)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return d
}

func TestSyncCreatesAndKeepsUse(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk, _, e, c := agencyAt20(t)
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		snap, err := c.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap) != len(e.Limits()) {
			t.Fatalf("snapshot has %d rows, want %d", len(snap), len(e.Limits()))
		}
		u := snap[policy.LimitKeyMaxMutationsPerHour]
		if u.Used != 0 || u.Max != 20 || !u.WindowStart.Equal(base()) || !u.ResetAt.Equal(base().Add(time.Hour)) {
			t.Errorf("fresh usage = %+v", u)
		}
		// A second Sync (next start) keeps the use.
		mustConsume(t, c, e, req("x_post_tweet"), 2)
		clk.advance(time.Minute)
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		if u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour); u.Used != 2 || !u.WindowStart.Equal(base()) {
			t.Errorf("after resync: %+v", u)
		}
	})
}

// The original seeded limits with INSERT OR IGNORE, so a changed max never
// reached an existing database.
func TestConfigChangeTakesEffectAfterSync(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := &clock{t: base()}
		db := openDB(t)
		c := counters.New(db, "acct", clk.now)

		cfg := bare()
		cfg.MaxMutationsPerHour = 20
		cfg.RateLimits = []policy.Limit{{Key: "old", Dimension: policy.DimGlobal, Max: 100, PeriodSeconds: 60}}
		e1 := mustEngine(t, cfg)
		if err := c.Sync(ctx, e1.Limits()); err != nil {
			t.Fatal(err)
		}
		mustConsume(t, c, e1, req("x_post_tweet"), 5)
		wantDecision(t, mustCheck(t, e1, c, req("x_post_tweet")), policy.Allow, "", "")

		// Restart with a lower cap and without the "old" limit.
		cfg.MaxMutationsPerHour = 5
		cfg.RateLimits = nil
		e2 := mustEngine(t, cfg)
		if err := c.Sync(ctx, e2.Limits()); err != nil {
			t.Fatal(err)
		}
		u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour)
		if u.Max != 5 || u.Used != 5 {
			t.Errorf("after sync: %+v", u)
		}
		d := mustCheck(t, e2, c, req("x_post_tweet"))
		wantDecision(t, d, policy.Deny, policy.LimitKeyMaxMutationsPerHour, apperr.PolicyRateLimited)
		if !d.ResetAt.Equal(base().Add(time.Hour)) {
			t.Errorf("ResetAt = %v", d.ResetAt)
		}
		snap, err := c.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := snap["old"]; ok {
			t.Error("a limit removed from config is still stored")
		}

		// Raising it again frees the calls.
		cfg.MaxMutationsPerHour = 10
		e3 := mustEngine(t, cfg)
		if err := c.Sync(ctx, e3.Limits()); err != nil {
			t.Fatal(err)
		}
		wantDecision(t, mustCheck(t, e3, c, req("x_post_tweet")), policy.Allow, "", "")

		// No limits at all clears the account's rows.
		if err := c.Sync(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if snap, _ := c.Snapshot(ctx); len(snap) != 0 {
			t.Errorf("rows left after syncing no limits: %v", snap)
		}
	})
}

func TestWindowResetWithClock(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := &clock{t: base()}
		db := openDB(t)
		cfg := bare()
		cfg.MaxMutationsPerHour = 3
		e := mustEngine(t, cfg)
		c := counters.New(db, "acct", clk.now)
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		mustConsume(t, c, e, req("x_post_tweet"), 3)

		clk.advance(59 * time.Minute)
		r := req("x_post_tweet")
		r.Now = time.Time{} // Check takes the counters' clock
		d := mustCheck(t, e, c, r)
		wantDecision(t, d, policy.Deny, policy.LimitKeyMaxMutationsPerHour, apperr.PolicyRateLimited)
		if !d.ResetAt.Equal(base().Add(time.Hour)) {
			t.Errorf("ResetAt = %v, want %v", d.ResetAt, base().Add(time.Hour))
		}
		if err := d.Err(); err == nil || err.Extra["rate_limit_reset"] != "2026-03-04T13:00:00Z" {
			t.Errorf("envelope error = %v", err)
		}

		clk.advance(time.Minute) // exactly one period after the window start
		wantDecision(t, mustCheck(t, e, c, r), policy.Allow, "", "")
		if u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour); u.Used != 0 || !u.WindowStart.Equal(clk.t) {
			t.Errorf("elapsed window not reset on read: %+v", u)
		}
		clk.advance(5 * time.Minute)
		mustConsume(t, c, e, req("x_post_tweet"), 1)
		u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour)
		if u.Used != 1 || !u.WindowStart.Equal(clk.t) || !u.ResetAt.Equal(clk.t.Add(time.Hour)) {
			t.Errorf("window after consume in a new period: %+v", u)
		}
	})
}

func TestClockStepBackDoesNotBlock(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		clk := &clock{t: base().Add(24 * time.Hour)}
		db := openDB(t)
		cfg := bare()
		cfg.MaxMutationsPerHour = 1
		e := mustEngine(t, cfg)
		c := counters.New(db, "acct", clk.now)
		mustConsume(t, c, e, req("x_post_tweet"), 1)
		clk.t = base() // the clock was a day ahead and got corrected
		wantDecision(t, mustCheck(t, e, c, policy.Request{Tool: "x_post_tweet", Category: policy.CatWrite}), policy.Allow, "", "")
		mustConsume(t, c, e, req("x_post_tweet"), 1)
		if u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour); u.Used != 1 || !u.WindowStart.Equal(base()) {
			t.Errorf("after step back: %+v", u)
		}
	})
}

func TestPerAccountIsolation(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := &clock{t: base()}
		db := openDB(t)
		cfg := bare()
		cfg.MaxMutationsPerHour = 2
		e := mustEngine(t, cfg)
		a := counters.New(db, "alice", clk.now)
		b := counters.New(db, "bob", clk.now)
		for _, c := range []*counters.Store{a, b} {
			if err := c.Sync(ctx, e.Limits()); err != nil {
				t.Fatal(err)
			}
		}
		mustConsume(t, a, e, req("x_post_tweet"), 2)
		wantDecision(t, mustCheck(t, e, a, req("x_post_tweet")), policy.Deny, policy.LimitKeyMaxMutationsPerHour, apperr.PolicyRateLimited)
		wantDecision(t, mustCheck(t, e, b, req("x_post_tweet")), policy.Allow, "", "")
		if u := usageOf(t, b, policy.LimitKeyMaxMutationsPerHour); u.Used != 0 {
			t.Errorf("bob used %v", u.Used)
		}
		// Syncing one account leaves the other's rows alone.
		if err := b.Sync(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if u := usageOf(t, a, policy.LimitKeyMaxMutationsPerHour); u.Used != 2 {
			t.Errorf("alice used %v after bob's sync", u.Used)
		}
	})
}

func TestOnlyConsumeConsumes(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := &clock{t: base()}
		db := openDB(t)
		cfg := policy.DefaultConfig() // x_post_tweet needs approval
		cfg.BlockedTools = []string{"x_retweet"}
		cfg.DailyBudgetUSD = 5
		e := mustEngine(t, cfg)
		c := counters.New(db, "acct", clk.now)
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		for range 30 {
			for _, tool := range []string{"x_post_tweet", "x_retweet", "x_unfollow_user", "x_delete_tweet"} {
				r := req(tool)
				r.CostUSD = 1
				_ = mustCheck(t, e, c, r)
				_ = e.Decide(r, noUsage)
			}
		}
		snap, err := c.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k, u := range snap {
			if u.Used != 0 {
				t.Errorf("%s used %v without Consume", k, u.Used)
			}
		}
		r := req("x_unfollow_user")
		r.CostUSD = 0.25
		mustConsume(t, c, e, r, 1)
		if u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour); u.Used != 1 {
			t.Errorf("hourly used %v, want 1", u.Used)
		}
		if u := usageOf(t, c, policy.LimitKeyDailyBudget); u.Used != 0.25 {
			t.Errorf("budget used %v, want 0.25", u.Used)
		}
	})
}

func TestConsumeChargesMatchingLimitsOnly(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		clk := &clock{t: base()}
		db := openDB(t)
		cfg := bare()
		cfg.RateLimits = []policy.Limit{
			{Key: "likes", Dimension: policy.DimTool, MatchValue: "x_like_tweet", Max: 10, PeriodSeconds: 60},
			{Key: "engage", Dimension: policy.DimCategory, MatchValue: "engage", Max: 10, PeriodSeconds: 60},
			{Key: "all", Dimension: policy.DimGlobal, Max: 10, PeriodSeconds: 60},
			{Key: "spend-engage", Dimension: policy.DimBudget, MatchValue: "engage", Max: 10, PeriodSeconds: 60},
		}
		e := mustEngine(t, cfg)
		c := counters.New(db, "acct", clk.now) // no Sync: Consume creates rows
		like := req("x_like_tweet")
		like.CostUSD = 0.5
		mustConsume(t, c, e, like, 1)
		mustConsume(t, c, e, req("x_follow_user"), 1)
		mustConsume(t, c, e, req("x_post_tweet"), 1)
		want := map[string]float64{"likes": 1, "engage": 2, "all": 3, "spend-engage": 0.5}
		for k, v := range want {
			if u := usageOf(t, c, k); u.Used != v {
				t.Errorf("%s used %v, want %v", k, u.Used, v)
			}
		}
	})
}

func TestBudgetDeniedBeforeCall(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := &clock{t: base()}
		db := openDB(t)
		cfg := bare()
		cfg.DailyBudgetUSD = 1
		e := mustEngine(t, cfg)
		c := counters.New(db, "acct", clk.now)
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		call := func(cost float64) policy.Request {
			r := req("x_post")
			r.Now, r.CostUSD = clk.t, cost
			return r
		}
		for range 3 {
			mustConsume(t, c, e, call(0.3), 1)
		}
		clk.advance(time.Hour)
		d := mustCheck(t, e, c, call(0.2))
		wantDecision(t, d, policy.Deny, policy.LimitKeyDailyBudget, apperr.PolicyBudget)
		if !d.ResetAt.Equal(base().Add(24 * time.Hour)) {
			t.Errorf("ResetAt = %v, want %v", d.ResetAt, base().Add(24*time.Hour))
		}
		if err := d.Err(); err == nil || err.Code != apperr.PolicyBudget || err.Extra["rate_limit_reset"] == nil {
			t.Errorf("envelope error = %v", err)
		}
		wantDecision(t, mustCheck(t, e, c, call(0.1)), policy.Allow, "", "")
		clk.t = base().Add(24 * time.Hour)
		wantDecision(t, mustCheck(t, e, c, call(0.9)), policy.Allow, "", "")
	})
}

func TestConsumeRejectsBadCost(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		db := openDB(t)
		e := mustEngine(t, bare())
		c := counters.New(db, "acct", nil)
		for _, cost := range []float64{-0.01, math.NaN(), math.Inf(1)} {
			r := req("x_post")
			r.CostUSD = cost
			if err := c.Consume(context.Background(), e.Limits(), r); apperr.CodeOf(err) != apperr.InvalidInput {
				t.Errorf("cost %v: err = %v", cost, err)
			}
		}
	})
}

func TestConcurrentConsumeCountsExactly(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := &clock{t: base()}
		db := openDB(t)
		cfg := bare()
		cfg.MaxMutationsPerHour = 1000
		cfg.DailyBudgetUSD = 1000
		cfg.RateLimits = []policy.Limit{{Key: "engage", Dimension: policy.DimCategory, MatchValue: "engage", Max: 1000, PeriodSeconds: 3600}}
		e := mustEngine(t, cfg)
		c := counters.New(db, "acct", clk.now)
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		const n = 50
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				r := req("x_like_tweet")
				r.CostUSD = 0.01
				errs <- c.Consume(ctx, e.Limits(), r)
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("Consume: %v", err)
			}
		}
		for _, k := range []string{policy.LimitKeyMaxMutationsPerHour, "engage"} {
			if u := usageOf(t, c, k); u.Used != n {
				t.Errorf("%s used %v, want %d", k, u.Used, n)
			}
		}
		if u := usageOf(t, c, policy.LimitKeyDailyBudget); math.Abs(u.Used-0.5) > 1e-9 {
			t.Errorf("budget used %v, want 0.5", u.Used)
		}
	})
}

func TestConcurrentReserveNeverOvershoots(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := &clock{t: base()}
		db := openDB(t)
		cfg := bare()
		cfg.MaxMutationsPerHour = 10
		e := mustEngine(t, cfg)
		c := counters.New(db, "acct", clk.now)
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		const n = 50
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			allowed int
			denied  int
			failed  []error
		)
		for range n {
			wg.Go(func() {
				d, _, err := c.Reserve(ctx, e, req("x_post_tweet"))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					failed = append(failed, err)
				case d.Outcome == policy.Allow:
					allowed++
				case d.Outcome == policy.Deny && d.Code == apperr.PolicyRateLimited:
					denied++
				}
			})
		}
		wg.Wait()
		if len(failed) > 0 {
			t.Fatalf("Reserve errors: %v", failed)
		}
		if allowed != 10 || denied != 40 {
			t.Errorf("allowed %d denied %d, want 10 and 40", allowed, denied)
		}
		if u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour); u.Used != 10 {
			t.Errorf("used %v, want 10", u.Used)
		}
	})
}

func TestReserveAndRelease(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := &clock{t: base()}
		db := openDB(t)
		cfg := policy.DefaultConfig()
		cfg.MaxMutationsPerHour = 2
		cfg.DailyBudgetUSD = 1
		e := mustEngine(t, cfg)
		c := counters.New(db, "acct", clk.now)
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		call := func(tool string, cost float64) policy.Request {
			r := req(tool)
			r.Now, r.CostUSD = time.Time{}, cost
			return r
		}

		// Routed calls reserve nothing.
		d, res, err := c.Reserve(ctx, e, call("x_post_tweet", 0.5))
		if err != nil || d.Outcome != policy.RequireApproval || !res.Empty() {
			t.Fatalf("routed: %+v %+v %v", d, res, err)
		}

		d, res, err = c.Reserve(ctx, e, call("x_unfollow_user", 0.4))
		if err != nil || d.Outcome != policy.Allow || res.Empty() {
			t.Fatalf("first: %+v %v", d, err)
		}
		if u := usageOf(t, c, policy.LimitKeyDailyBudget); math.Abs(u.Used-0.4) > 1e-9 {
			t.Errorf("budget used %v after reserve", u.Used)
		}
		// X did not process the call: the quota comes back.
		if err := c.Release(ctx, res); err != nil {
			t.Fatal(err)
		}
		if u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour); u.Used != 0 {
			t.Errorf("hourly used %v after release", u.Used)
		}

		// A denial by one limit takes nothing from the others.
		if _, _, err := c.Reserve(ctx, e, call("x_unfollow_user", 0.7)); err != nil {
			t.Fatal(err)
		}
		d, res, err = c.Reserve(ctx, e, call("x_unfollow_user", 0.7))
		if err != nil || d.Outcome != policy.Deny || d.Code != apperr.PolicyBudget || !res.Empty() {
			t.Fatalf("over budget: %+v %v", d, err)
		}
		if !d.ResetAt.Equal(base().Add(24 * time.Hour)) {
			t.Errorf("ResetAt = %v", d.ResetAt)
		}
		if u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour); u.Used != 1 {
			t.Errorf("hourly used %v after a budget denial, want 1", u.Used)
		}

		// A release after the window restarted leaves the new window alone.
		_, res, err = c.Reserve(ctx, e, call("x_unfollow_user", 0))
		if err != nil || res.Empty() {
			t.Fatal(err)
		}
		clk.advance(time.Hour)
		mustConsume(t, c, e, req("x_unfollow_user"), 1)
		if err := c.Release(ctx, res); err != nil {
			t.Fatal(err)
		}
		if u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour); u.Used != 1 {
			t.Errorf("hourly used %v, want 1 (stale release must not refund)", u.Used)
		}

		// Reservations are bound to their account.
		_, res, err = c.Reserve(ctx, e, call("x_unfollow_user", 0))
		if err != nil {
			t.Fatal(err)
		}
		if err := counters.New(db, "other", clk.now).Release(ctx, res); err == nil {
			t.Error("released another account's reservation")
		}
	})
}

func TestCountersErrors(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		e := mustEngine(t, policy.DefaultConfig())
		if err := counters.New(openDB(t), "", nil).Sync(ctx, e.Limits()); apperr.CodeOf(err) != apperr.ConfigError {
			t.Errorf("empty account: %v", err)
		}

		// A database without the table: every operation reports a coded error.
		path := t.TempDir() + "/empty.db"
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		c := counters.New(db, "acct", nil)
		if err := c.Sync(ctx, e.Limits()); apperr.CodeOf(err) != apperr.DBError {
			t.Errorf("Sync: %v", err)
		}
		if _, err := c.Snapshot(ctx); apperr.CodeOf(err) != apperr.DBError {
			t.Errorf("Snapshot: %v", err)
		}
		if err := c.Consume(ctx, e.Limits(), req("x_unfollow_user")); apperr.CodeOf(err) != apperr.DBError {
			t.Errorf("Consume: %v", err)
		}
		if _, err := e.Check(ctx, c, req("x_unfollow_user")); apperr.CodeOf(err) != apperr.PolicyError {
			t.Errorf("Check: %v", err)
		}
		if _, _, err := c.Reserve(ctx, e, req("x_unfollow_user")); apperr.CodeOf(err) != apperr.PolicyError {
			t.Errorf("Reserve: %v", err)
		}
		// Rules that decide without limits need no database.
		d, err := e.Check(ctx, c, req("x_post_tweet"))
		if err != nil || d.Outcome != policy.RequireApproval {
			t.Errorf("Check of a routed call: %+v %v", d, err)
		}

		// A cancelled context fails cleanly and leaves no transaction open.
		good := counters.New(openDB(t), "acct", nil)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := good.Consume(cctx, e.Limits(), req("x_unfollow_user")); err == nil || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled Consume: %v", err)
		}
		if err := good.Consume(ctx, e.Limits(), req("x_unfollow_user")); err != nil {
			t.Errorf("Consume after a cancelled one: %v", err)
		}
	})
}

// A start whose limits are those stored writes nothing: the rows keep
// when they were last changed. A limit that changed, or one no longer
// configured, is still written.
func TestSyncOfUnchangedLimitsWritesNothing(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk, db, e, c := agencyAt20(t)
		updated := func() map[string]string {
			t.Helper()
			rows, err := db.QueryContext(ctx, `SELECT key, updated_at FROM policy_counters WHERE account_id = 'acct'`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			out := map[string]string{}
			for rows.Next() {
				var k, at string
				if err := rows.Scan(&k, &at); err != nil {
					t.Fatal(err)
				}
				out[k] = at
			}
			return out
		}
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		first := updated()
		clk.advance(time.Minute)
		if err := c.Sync(ctx, e.Limits()); err != nil {
			t.Fatal(err)
		}
		if again := updated(); len(again) != len(first) || again[policy.LimitKeyMaxMutationsPerHour] != first[policy.LimitKeyMaxMutationsPerHour] {
			t.Errorf("unchanged limits rewritten: %v, then %v", first, again)
		}
		cfg := bare()
		cfg.MaxMutationsPerHour = 30
		cfg.Template = policy.TemplateAgencyMode
		changed := mustEngine(t, cfg).Limits()
		if err := c.Sync(ctx, changed); err != nil {
			t.Fatal(err)
		}
		if u := usageOf(t, c, policy.LimitKeyMaxMutationsPerHour); u.Max != 30 {
			t.Errorf("changed max not written: %+v", u)
		}
		if err := c.Sync(ctx, changed[:1]); err != nil {
			t.Fatal(err)
		}
		if n := len(updated()); n != 1 {
			t.Errorf("%d limits stored after one was kept, want 1", n)
		}
	})
}
