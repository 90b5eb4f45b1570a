package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// capMax is the cap every concurrency test sets; capCost is what each call
// is estimated to cost for the budget case.
const (
	capMax  = 3
	capCost = 0.01
)

// capConfig is a policy that lets capMax calls of fakeTool run along one
// limit dimension.
func capConfig(t testing.TB, dim string) policy.Config {
	t.Helper()
	cfg := policy.Config{EnforceForMutations: true}
	switch dim {
	case policy.DimGlobal:
		cfg.MaxMutationsPerHour = capMax
	case policy.DimTool:
		cfg.RateLimits = []policy.Limit{{Key: "cap", Dimension: policy.DimTool, MatchValue: fakeTool, Max: capMax, PeriodSeconds: 3600}}
	case policy.DimCategory:
		cfg.RateLimits = []policy.Limit{{Key: "cap", Dimension: policy.DimCategory, MatchValue: string(policy.CatWrite), Max: capMax, PeriodSeconds: 3600}}
	case policy.DimBudget:
		cfg.DailyBudgetUSD = capMax * capCost
	default:
		t.Fatalf("unknown limit dimension %q", dim)
	}
	return cfg
}

func capDimensions() []string {
	return []string{policy.DimGlobal, policy.DimTool, policy.DimCategory, policy.DimBudget}
}

// limitDenied reports whether err is a limit or budget denial.
func limitDenied(err error) bool {
	c := apperr.CodeOf(err)
	return c == apperr.PolicyRateLimited || c == apperr.PolicyBudget
}

// capEnv is a gateway over the real engine with cfg, whose fake action
// costs capCost.
func capEnv(t *testing.T, cfg policy.Config) *env {
	t.Helper()
	e := newEnv(t)
	e.withEngine(cfg, policy.ModeAutopilot, false)
	a, _ := e.g.Action(fakeTool)
	a.Cost = func(json.RawMessage) float64 { return capCost }
	return e
}

// TestCapsHoldUnderConcurrency: concurrent distinct calls never execute
// more than a limit allows. Every executor blocks until all calls have
// either entered it or been answered, so every call is decided while the
// others are still in flight: charging only after execution would let all
// of them through.
func TestCapsHoldUnderConcurrency(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		const n = 30
		for _, dim := range capDimensions() {
			t.Run(dim, func(t *testing.T) {
				e := capEnv(t, capConfig(t, dim))
				entered, release := make(chan struct{}, n), make(chan struct{})
				e.act.setRun(func(ctx context.Context, params json.RawMessage) (Result, error) {
					entered <- struct{}{}
					<-release
					return Result{Data: map[string]any{"ok": true}}, nil
				})
				results := make(chan error, n)
				for i := range n {
					go func() {
						_, err := e.do(e.g, map[string]any{"text": fmt.Sprintf("like %d", i)}, "")
						results <- err
					}()
				}
				var running, answered int
				var errs []error
				for running+answered < n {
					select {
					case <-entered:
						running++
					case err := <-results:
						answered++
						errs = append(errs, err)
					}
				}
				close(release)
				for range running {
					errs = append(errs, <-results)
				}
				denied := 0
				for _, err := range errs {
					switch {
					case err == nil:
					case limitDenied(err):
						denied++
					default:
						t.Errorf("unexpected error: %v", err)
					}
				}
				if got := e.act.count(); got != capMax || denied != n-capMax {
					t.Fatalf("%d calls ran and %d were denied, want %d and %d", got, denied, capMax, n-capMax)
				}
			})
		}
	})
}

// TestReservationFollowsTheOutcome: a call that failed before sending, or
// that X refused, gives its quota back; one whose outcome is unknown keeps
// it, as does one that succeeded.
func TestReservationFollowsTheOutcome(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		tests := []struct {
			name      string
			firstErr  error
			firstData bool // the first call returns a result X may not have applied
			secondRun bool
		}{
			{"success keeps the quota", nil, false, false},
			{"failure before sending releases it", apperr.New(apperr.XNotConfigured, "no X client"), false, true},
			{"refused by X releases it", apperr.New(apperr.XForbidden, "forbidden"), false, true},
			{"unknown outcome keeps it", apperr.New(apperr.XOutcomeUnknown, "timed out after sending"), false, false},
			{"5xx to a write keeps it", nil, true, false},
		}
		for _, dim := range capDimensions() {
			for _, tt := range tests {
				t.Run(dim+"/"+tt.name, func(t *testing.T) {
					cfg := capConfig(t, dim)
					// A cap of one call.
					switch dim {
					case policy.DimGlobal:
						cfg.MaxMutationsPerHour = 1
					case policy.DimBudget:
						cfg.DailyBudgetUSD = capCost
					default:
						cfg.RateLimits[0].Max = 1
					}
					e := capEnv(t, cfg)
					e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
						return Result{Data: map[string]any{"ok": true}, Unknown: tt.firstData}, tt.firstErr
					})
					if _, err := e.do(e.g, map[string]any{"text": "first"}, ""); (err != nil) != (tt.firstErr != nil) {
						t.Fatalf("first call: %v", err)
					}
					e.act.setRun(nil)
					_, err := e.do(e.g, map[string]any{"text": "second"}, "")
					if tt.secondRun && err != nil {
						t.Fatalf("second call: %v, want it to run on the released quota", err)
					}
					if !tt.secondRun && !limitDenied(err) {
						t.Fatalf("second call: %v, want a limit denial", err)
					}
				})
			}
		}
	})
}
