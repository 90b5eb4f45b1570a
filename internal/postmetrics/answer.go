package postmetrics

import (
	"context"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/policy"
)

// HoursOf reads the active hours and timezone of [schedule].
func HoursOf(s config.Schedule) (Hours, *time.Location, error) {
	tz := strings.TrimSpace(s.Timezone)
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return Hours{}, nil, apperr.New(apperr.ConfigError, "schedule.timezone: %q is not an IANA timezone", s.Timezone)
	}
	h := Hours{Start: s.ActiveHoursStart, End: s.ActiveHoursEnd}
	for _, d := range s.ActiveDays {
		i := strings.Index("sunmontuewedthufrisat", strings.ToLower(strings.TrimSpace(d)))
		if i < 0 || i%3 != 0 || len(strings.TrimSpace(d)) != 3 {
			return Hours{}, nil, apperr.New(apperr.ConfigError, "schedule.active_days: %q is not a day (mon..sun)", d)
		}
		h.Days[i/3] = true
	}
	return h, loc, nil
}

// Budget is the spend budget as the policy keeps it: its limits and
// their stored use.
type Budget interface {
	Limits() []policy.Limit
	Snapshot(ctx context.Context) (map[string]policy.Usage, error)
}

// Client is what a refresh reads X through.
type Client interface {
	Timeline
	X
}

// Refresh is how a ranking back-fills first: the budget to check, the
// read client, and the account's X spend since a time (the usage ledger),
// from which the refresh's cost is reported.
type Refresh struct {
	Budget Budget
	Client func() (Client, error)
	Spent  func(ctx context.Context, since time.Time) (float64, error)
}

// RefreshReport says what a refresh read and what it cost.
type RefreshReport struct {
	Report
	PostsRead        int     `json:"posts_read"`
	EstimatedCostUSD float64 `json:"estimated_cost_usd"`
	CostUSD          float64 `json:"cost_usd"`
}

// Answer is get_best_posting_times' data.
type Answer struct {
	*Ranking
	LookbackDays int `json:"lookback_days"`
	// Source is analytics or public when every ranked post came from one
	// source, mixed otherwise.
	Source  string         `json:"source"`
	Refresh *RefreshReport `json:"refresh,omitempty"`
}

// BestTimesRequest is what get_best_posting_times is asked.
type BestTimesRequest struct {
	Query
	LookbackDays int
	// Refresh back-fills the lookback from X first, through rf.
	Refresh bool
}

// BestTimes ranks the hours of the week from the stored rows of the last
// LookbackDays, after back-filling them from X when asked. A refresh is
// checked against the spend budget at its ceiling cost before any X call
// (policy_denied_budget).
func (s *Store) BestTimes(ctx context.Context, req BestTimesRequest, rf Refresh) (*Answer, error) {
	now := s.Now()
	since := now.Add(-time.Duration(req.LookbackDays) * 24 * time.Hour)
	var rr *RefreshReport
	if req.Refresh {
		var err error
		if rr, err = s.refresh(ctx, rf, since); err != nil {
			return nil, err
		}
	}
	samples, err := s.Samples(ctx, since)
	if err != nil {
		return nil, err
	}
	rank, err := Rank(samples, req.Query)
	if err != nil {
		if ae, ok := err.(*apperr.Error); ok && rr != nil {
			ae.With("refresh", rr)
		}
		return nil, err
	}
	a := &Answer{Ranking: rank, LookbackDays: req.LookbackDays, Refresh: rr, Source: "mixed"}
	if len(rank.Sources) == 1 {
		for k := range rank.Sources {
			a.Source = k
		}
	}
	return a, nil
}

func (s *Store) refresh(ctx context.Context, rf Refresh, since time.Time) (*RefreshReport, error) {
	rr := &RefreshReport{EstimatedCostUSD: RefreshCostCeiling()}
	start := s.Now()
	if rf.Budget != nil {
		usage, err := rf.Budget.Snapshot(ctx)
		if err != nil {
			return nil, apperr.Wrap(apperr.PolicyError, err, "policy counters could not be read")
		}
		if d, denied := policy.BudgetDenial(rf.Budget.Limits(), usage, rr.EstimatedCostUSD, start); denied {
			return nil, d.Err().With("estimated_cost_usd", rr.EstimatedCostUSD)
		}
	}
	c, err := rf.Client()
	if err != nil {
		return nil, err
	}
	var before float64
	if rf.Spent != nil {
		if before, err = rf.Spent(ctx, start); err != nil {
			return nil, err
		}
	}
	rep, n, err := s.Backfill(ctx, c, c, since)
	if err != nil {
		return nil, err
	}
	rr.Report, rr.PostsRead = rep, n
	if rf.Spent != nil {
		after, err := rf.Spent(ctx, start)
		if err != nil {
			return nil, err
		}
		rr.CostUSD = after - before
	}
	return rr, nil
}
