package app

import (
	"context"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/metrics"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// newMetrics builds the app's own metrics registry. The queue, the rate
// limits and the loop states are read when scraped, from the services a
// holds by then.
func (a *App) newMetrics() *metrics.Metrics {
	src := metrics.Sources{Now: a.Now, Log: a.Log}
	if a.DB != nil {
		src.Approvals = func(ctx context.Context) (metrics.Approvals, error) {
			n, oldest, err := gateway.PendingSummary(ctx, a.DB, config.DefaultAccountName, a.Now())
			return metrics.Approvals{Pending: n, Oldest: oldest}, err
		}
		src.Loops = func(ctx context.Context) ([]metrics.Loop, error) {
			counts, err := autopilot.LoopCounts(ctx, a.DB, config.DefaultAccountName, a.Cfg.Breaker.ErrorThreshold, a.Now())
			out := make([]metrics.Loop, 0, len(counts))
			for _, c := range counts {
				out = append(out, metrics.Loop{Name: c.Name, Runs: c.Runs, Errors: c.Errors, Breaker: c.Breaker})
			}
			return out, err
		}
	}
	src.RateLimits = func() []metrics.RateLimit {
		if a.xc == nil {
			return nil
		}
		var out []metrics.RateLimit
		for _, s := range a.xc.RateLimits() {
			if s.HasWindow {
				out = append(out, metrics.RateLimit{Endpoint: s.Endpoint, Remaining: s.Remaining})
			}
		}
		return out
	}
	return metrics.New(src)
}

// Healthy is what the unauthenticated /healthz reports: whether the
// database (when this process uses one) answers and is intact, the
// gateway runs and the token file is usable. It makes no call to X or the
// LLM, so a container probing it every few seconds costs nothing.
func (a *App) Healthy(ctx context.Context) bool {
	if a.DB != nil || a.DBErr != nil {
		if a.dbCheck(ctx, false).Status != "ok" || a.GatewayErr != nil {
			return false
		}
	}
	return a.tokenCheck().Status != "error"
}

// meteredX counts every X attempt and its cost before the ledger records
// it.
type meteredX struct {
	next xapi.UsageRecorder
	m    *metrics.Metrics
}

func (u meteredX) RecordXUsage(ctx context.Context, r xapi.Usage) error {
	u.m.ObserveXRequest(r.Endpoint, r.Status, r.CostUSD)
	if u.next == nil {
		return nil
	}
	return u.next.RecordXUsage(ctx, r)
}

// meteredLLM counts the cost of every LLM call before the ledger records
// it.
type meteredLLM struct {
	next llm.UsageRecorder
	m    *metrics.Metrics
}

func (u meteredLLM) RecordLLMUsage(ctx context.Context, r llm.Usage) error {
	u.m.ObserveLLMCost(r.CostUSD)
	if u.next == nil {
		return nil
	}
	return u.next.RecordLLMUsage(ctx, r)
}
