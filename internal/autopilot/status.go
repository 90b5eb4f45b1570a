package autopilot

import (
	"context"
	"slices"
	"time"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// Status is what `tuitbot status` shows: every loop's state, today's
// counts against their caps, the approval queue and today's X spend.
type Status struct {
	Now              string       `json:"now"`
	Mode             string       `json:"mode"`
	ApprovalMode     bool         `json:"approval_mode"`
	ActiveHours      string       `json:"active_hours"`
	ActiveNow        bool         `json:"active_now"`
	Loops            []LoopStatus `json:"loops"`
	Today            Counts       `json:"today"`
	Caps             Caps         `json:"caps"`
	PendingApprovals int          `json:"pending_approvals"`
	XSpendTodayUSD   float64      `json:"x_spend_today_usd"`
	XCallsToday      int          `json:"x_calls_today"`
}

// Caps are the configured limits the counts are held to.
type Caps struct {
	RepliesPerDay       int     `json:"replies_per_day"`
	TweetsPerDay        int     `json:"tweets_per_day"`
	ThreadsPerWeek      int     `json:"threads_per_week"`
	TargetRepliesPerDay int     `json:"target_replies_per_day"`
	RepliesPerAuthor    int     `json:"replies_per_author_per_day"`
	ProductMentionRatio float64 `json:"product_mention_ratio"`
}

// LoopStatus is one loop's persisted state.
type LoopStatus struct {
	Name              string `json:"name"`
	Enabled           bool   `json:"enabled"`
	State             string `json:"state"`
	Breaker           string `json:"breaker"`
	LastRun           string `json:"last_run,omitempty"`
	NextRun           string `json:"next_run,omitempty"`
	PausedUntil       string `json:"paused_until,omitempty"`
	BreakerOpenedAt   string `json:"breaker_opened_at,omitempty"`
	ConsecutiveErrors int    `json:"consecutive_errors"`
	Runs              int    `json:"runs"`
	Errors            int    `json:"errors"`
	LastError         string `json:"last_error,omitempty"`
	LastResult        string `json:"last_result,omitempty"`
}

func tsz(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return ts(t)
}

// Status reads the state every process shares from the database; it changes
// nothing.
func (r *Runner) Status(ctx context.Context) (*Status, error) {
	now := r.now()
	st := &Status{Now: ts(now), Mode: r.cfg.Mode, ApprovalMode: r.cfg.EffectiveApprovalMode(),
		ActiveHours: r.sched.describe(), ActiveNow: r.sched.active(now),
		Caps: Caps{RepliesPerDay: r.cfg.Limits.MaxRepliesPerDay, TweetsPerDay: r.cfg.Limits.MaxTweetsPerDay,
			ThreadsPerWeek: r.cfg.Limits.MaxThreadsPerWeek, TargetRepliesPerDay: r.cfg.Targets.MaxTargetRepliesPerDay,
			RepliesPerAuthor: r.cfg.Limits.MaxRepliesPerAuthorPerDay, ProductMentionRatio: r.cfg.Limits.ProductMentionRatio}}
	threshold := r.cfg.Breaker.ErrorThreshold
	for _, n := range LoopNames() {
		ls, err := readState(ctx, r.d.DB, r.d.AccountID, n)
		if err != nil {
			return nil, err
		}
		st.Loops = append(st.Loops, LoopStatus{
			Name: n, Enabled: slices.Contains(r.cfg.Intervals.EnabledLoops, n), State: ls.State,
			Breaker: breakerState(ls, threshold, now),
			LastRun: tsz(ls.LastRun), NextRun: tsz(ls.NextRun), PausedUntil: tsz(ls.PausedUntil), BreakerOpenedAt: tsz(ls.BreakerOpenedAt),
			ConsecutiveErrors: ls.ConsecutiveErrors, Runs: ls.Runs, Errors: ls.Errors, LastError: ls.LastError, LastResult: ls.LastResult,
		})
	}
	var err error
	if st.Today, err = r.counts(ctx, now); err != nil {
		return nil, err
	}
	if st.PendingApprovals, err = gateway.PendingApprovals(ctx, r.d.DB, r.d.AccountID, now); err != nil {
		return nil, err
	}
	if st.XCallsToday, st.XSpendTodayUSD, err = workflow.XSpendSince(ctx, r.d.DB, r.d.AccountID, dayStart(now)); err != nil {
		return nil, err
	}
	return st, nil
}

// Planned is when one loop runs next.
type Planned struct {
	Loop string `json:"loop"`
	// At is zero when the loop is due now.
	At time.Time `json:"at,omitzero"`
}

// Plan reads when each of the runner's loops runs next, in the order a tick
// runs them, from the state every process shares: what a daemon starting
// now would do first. A loop paused by its breaker or a rate limit runs
// when the pause ends.
func (r *Runner) Plan(ctx context.Context) ([]Planned, error) {
	now := r.now()
	var out []Planned
	for _, n := range r.loops {
		ls, err := readState(ctx, r.d.DB, r.d.AccountID, n)
		if err != nil {
			return nil, err
		}
		at := ls.NextRun
		if ls.PausedUntil.After(at) {
			at = ls.PausedUntil
		}
		if !at.After(now) {
			at = time.Time{}
		}
		out = append(out, Planned{Loop: n, At: at})
	}
	return out, nil
}
