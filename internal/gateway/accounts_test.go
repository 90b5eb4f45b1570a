package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// accountGateway opens the gateway of account name over e's database, as
// the application does for each account: its own engine for cfg, its own
// counters and its own action.
func (e *env) accountGateway(name string, cfg policy.Config) (*Gateway, *fakeAction) {
	e.t.Helper()
	eng, err := policy.NewEngine(cfg, func(t string) bool { return t == fakeTool })
	if err != nil {
		e.t.Fatalf("policy engine: %v", err)
	}
	ctr := counters.New(e.db.DB, name, e.clock.Now)
	if err := ctr.Sync(e.ctx, eng.Limits()); err != nil {
		e.t.Fatalf("sync limits: %v", err)
	}
	opts := e.opts
	opts.AccountID = name
	opts.Policy = enginePolicy{eng, ctr}
	opts.Mode = func() (string, bool) { return policy.ModeAutopilot, false }
	g, err := New(e.ctx, opts)
	if err != nil {
		e.t.Fatalf("gateway.New(%s): %v", name, err)
	}
	e.t.Cleanup(func() { g.Close() })
	act := &fakeAction{}
	a := act.action()
	a.Cost = func(json.RawMessage) float64 { return capCost }
	g.Register(a)
	return g, act
}

// TestAccountsNeverShareACap: two accounts with the same cap, called
// concurrently with the same parameters, each run exactly the cap. Every
// executor blocks until all calls of both accounts have entered it or been
// answered, so every decision is taken while the others are in flight: a
// counter shared by accident would let only capMax through in all, a
// counter not held under the write lock would let more through.
func TestAccountsNeverShareACap(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		const perAccount = 20
		accounts := []string{"brand_a", "brand_b"}
		for _, dim := range capDimensions() {
			t.Run(dim, func(t *testing.T) {
				e := newEnv(t)
				total := perAccount * len(accounts)
				entered, release := make(chan struct{}, total), make(chan struct{})
				block := func(context.Context, json.RawMessage) (Result, error) {
					entered <- struct{}{}
					<-release
					return Result{Data: map[string]any{"ok": true}}, nil
				}
				gws := map[string]*Gateway{}
				acts := map[string]*fakeAction{}
				for _, name := range accounts {
					g, act := e.accountGateway(name, capConfig(t, dim))
					act.setRun(block)
					gws[name], acts[name] = g, act
				}
				type answer struct {
					account string
					err     error
				}
				results := make(chan answer, total)
				for _, name := range accounts {
					for i := range perAccount {
						go func() {
							_, err := gws[name].Do(e.ctx, Call{Tool: fakeTool, Params: map[string]any{"text": fmt.Sprintf("like %d", i)}})
							results <- answer{name, err}
						}()
					}
				}
				var running int
				var answers []answer
				for running+len(answers) < total {
					select {
					case <-entered:
						running++
					case a := <-results:
						answers = append(answers, a)
					}
				}
				close(release)
				for range running {
					answers = append(answers, <-results)
				}
				denied := map[string]int{}
				for _, a := range answers {
					switch {
					case a.err == nil:
					case limitDenied(a.err):
						denied[a.account]++
					default:
						t.Errorf("%s: unexpected error: %v", a.account, a.err)
					}
				}
				for _, name := range accounts {
					if got := acts[name].count(); got != capMax || denied[name] != perAccount-capMax {
						t.Errorf("account %s: %d calls ran and %d were denied, want %d and %d", name, got, denied[name], capMax, perAccount-capMax)
					}
				}
				// Each account's charge is in its own counter rows.
				for _, name := range accounts {
					var used float64
					if err := e.db.QueryRowContext(e.ctx, `SELECT COALESCE(SUM(used), 0) FROM policy_counters WHERE account_id = ?`, name).Scan(&used); err != nil {
						t.Fatal(err)
					}
					if used <= 0 {
						t.Errorf("account %s has no charge in policy_counters", name)
					}
				}
			})
		}
	})
}

// TestSameTextTwoAccountsIsTwoIntents: identical calls to two accounts
// both run, once each, even when they race and share an idempotency key;
// repeating one to the same account is a duplicate.
func TestSameTextTwoAccountsIsTwoIntents(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		tests := []struct {
			name string
			key  string
		}{
			{"no key", ""},
			{"same key", "caller-key-1"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e := newEnv(t)
				open := policy.Config{EnforceForMutations: true}
				ga, acta := e.accountGateway("brand_a", open)
				gb, actb := e.accountGateway("brand_b", open)
				params := map[string]any{"text": "same words"}
				const callers = 10
				var wg sync.WaitGroup
				kinds := make(chan Kind, 2*callers)
				for i := range 2 * callers {
					g := ga
					if i%2 == 1 {
						g = gb
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						r, err := g.Do(e.ctx, Call{Tool: fakeTool, Params: params, IdempotencyKey: tt.key})
						if err != nil {
							t.Errorf("Do: %v", err)
							return
						}
						kinds <- r.Kind
					}()
				}
				wg.Wait()
				close(kinds)
				count := map[Kind]int{}
				for k := range kinds {
					count[k]++
				}
				if acta.count() != 1 || actb.count() != 1 {
					t.Fatalf("executions: brand_a %d, brand_b %d; want exactly one each", acta.count(), actb.count())
				}
				if count[Executed] != 2 || count[Duplicate] != 2*callers-2 {
					t.Fatalf("answers %v; want 2 executed and %d duplicates", count, 2*callers-2)
				}
				// A later repeat to one account is still a duplicate there.
				r, err := ga.Do(e.ctx, Call{Tool: fakeTool, Params: params, IdempotencyKey: tt.key})
				if err != nil || r.Kind != Duplicate || acta.count() != 1 {
					t.Fatalf("repeat to brand_a: kind %s, err %v, executions %d; want a duplicate", r.Kind, err, acta.count())
				}
				rows := map[string]int{}
				q, err := e.db.QueryContext(e.ctx, `SELECT account_id, count(*) FROM mutation_audit WHERE status = 'success' GROUP BY account_id`)
				if err != nil {
					t.Fatal(err)
				}
				defer q.Close()
				for q.Next() {
					var acc string
					var n int
					if err := q.Scan(&acc, &n); err != nil {
						t.Fatal(err)
					}
					rows[acc] = n
				}
				if rows["brand_a"] != 1 || rows["brand_b"] != 1 || len(rows) != 2 {
					t.Fatalf("successful audit rows per account %v; want one for each account", rows)
				}
			})
		}
	})
}

// TestAccountsShareTheDatabasesStatements: the gateways of several accounts
// on one database prepare its hot queries once between them, and one
// gateway closing leaves the others' statements working.
func TestAccountsShareTheDatabasesStatements(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.mustDo(map[string]any{"text": "first"}, "")
		prepared := e.db.Statements()
		if want := len(hotQueries(e.db.Dialect)); prepared < want {
			t.Fatalf("%d statements prepared after one gateway's call, want at least its %d hot queries", prepared, want)
		}
		cfg := policy.Config{}
		a, actA := e.accountGateway("brand_a", cfg)
		b, actB := e.accountGateway("brand_b", cfg)
		if err := a.stmts.prepare(e.ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.stmts.prepare(e.ctx); err != nil {
			t.Fatal(err)
		}
		if n := e.db.Statements(); n != prepared {
			t.Errorf("%d statements prepared with three gateways ready to call, want the first one's %d", n, prepared)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Do(e.ctx, Call{Tool: fakeTool, Params: map[string]any{"text": "after"}}); err != nil {
			t.Fatalf("brand_b after brand_a closed: %v", err)
		}
		if actA.count() != 0 || actB.count() != 1 {
			t.Errorf("actions ran %d (brand_a) and %d (brand_b) times, want 0 and 1", actA.count(), actB.count())
		}
		if _, err := e.g.Do(e.ctx, Call{Tool: fakeTool, Params: map[string]any{"text": "later"}}); err != nil {
			t.Fatalf("default after brand_a closed: %v", err)
		}
	})
}
