package mcpserver

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// DaysInput selects a window in days.
type DaysInput struct {
	Days int `json:"days,omitempty" jsonschema:"window in days, 1-365, default 7"`
}

// HoursInput selects a window in hours.
type HoursInput struct {
	SinceHours int `json:"since_hours,omitempty" jsonschema:"window in hours, default 24"`
}

// ActionLogInput filters get_action_log.
type ActionLogInput struct {
	SinceHours int    `json:"since_hours,omitempty" jsonschema:"window in hours, default 24"`
	ActionType string `json:"action_type,omitempty" jsonschema:"only this action type, e.g. mcp_policy"`
}

// FollowerTrendInput is get_follower_trend's input.
type FollowerTrendInput struct {
	Limit        int  `json:"limit,omitempty" jsonschema:"snapshots, 1-1000, default 7"`
	TakeSnapshot bool `json:"take_snapshot,omitempty" jsonschema:"read the follower count from X now and store a snapshot first"`
}

// Limits declares the arguments' limits.
func (FollowerTrendInput) Limits() argcheck.Limits {
	return argcheck.Limits{"limit": argcheck.Between(1, 1000)}
}

// UsernameTargetInput names a target account.
type UsernameTargetInput struct {
	Username string `json:"username" jsonschema:"the @handle, with or without the @"`
}

// IdentifierInput names an author.
type IdentifierInput struct {
	Identifier string `json:"identifier" jsonschema:"username (with or without @) or numeric user id"`
}

// RateLimits is get_rate_limits' data.
type RateLimits struct {
	X                 []xapi.RateLimitState   `json:"x"`
	Policy            map[string]policy.Usage `json:"policy"`
	RecommendedWaitMS int64                   `json:"recommended_wait_ms"`
}

func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

func wf(c *Call) (*workflow.Service, error) { return c.Deps.Workflow() }

func analyticsTools() []*Tool {
	local := func(name, title, cat, desc string, out any) Spec {
		return Spec{Name: name, Title: title, Category: cat, Description: desc, Needs: Needs{DB: true},
			Profiles: workflowOnly, Hints: readLocal, Errors: []apperr.Code{apperr.DBError}}
	}
	return []*Tool{
		def(local("get_stats", "Stats", "analytics", "Summarise the last days: executed mutations by tool, replies, tweets, threads, follower delta, pending approvals and spend.", workflow.Stats{}),
			func(ctx context.Context, c *Call, in DaysInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				st, err := s.Stats(ctx, orDefault(in.Days, 7))
				return Result{Data: st}, err
			}),
		def(Spec{Name: "get_follower_trend", Title: "Follower trend", Category: "analytics", Needs: Needs{DB: true, X: true},
			Description: "List follower snapshots, newest first. take_snapshot reads X now and stores one first; the analytics loop and `tuitbot analytics snapshot` take them too.",
			Profiles:    workflowOnly, Hints: readX, Errors: append([]apperr.Code{apperr.DBError}, xErrors...)},
			func(ctx context.Context, c *Call, in FollowerTrendInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				if in.TakeSnapshot {
					if _, err := s.TakeSnapshot(ctx); err != nil {
						return Result{}, err
					}
				}
				snaps, err := s.FollowerTrend(ctx, orDefault(in.Limit, 7), time.Time{})
				return Result{Data: map[string]any{"snapshots": snaps}}, err
			}),
		def(local("get_recent_replies", "Recent replies", "analytics", "List the replies we sent in the last hours.", []workflow.Reply{}),
			func(ctx context.Context, c *Call, in HoursInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				rs, err := s.RecentReplies(ctx, orDefault(in.SinceHours, 24))
				return Result{Data: map[string]any{"replies": rs, "count": len(rs)}}, err
			}),
		def(local("get_reply_count_today", "Replies today", "analytics", "Count the replies sent since the start of the UTC day.", map[string]int{}),
			func(ctx context.Context, c *Call, _ NoInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				n, err := s.ReplyCountToday(ctx)
				return Result{Data: map[string]any{"replies_today": n, "max_replies_per_day": c.Deps.Cfg.Limits.MaxRepliesPerDay}}, err
			}),
		def(local("get_x_usage", "X usage and cost", "analytics", "Calls, billable items and estimated USD per day and endpoint, from the X cost ledger.", workflow.XUsage{}),
			func(ctx context.Context, c *Call, in DaysInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				u, err := s.XUsage(ctx, orDefault(in.Days, 7))
				return Result{Data: u}, err
			}),
		def(local("get_llm_usage", "LLM usage and cost", "analytics", "Calls, tokens and estimated USD per day and model, from the LLM ledger.", workflow.LLMUsage{}),
			func(ctx context.Context, c *Call, in DaysInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				u, err := s.LLMUsage(ctx, orDefault(in.Days, 7))
				return Result{Data: u}, err
			}),
		def(local("get_action_log", "Action log", "action_log", "List action log entries (every policy decision and autopilot action) of the last hours.", []workflow.ActionEntry{}),
			func(ctx context.Context, c *Call, in ActionLogInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				es, err := s.ActionLog(ctx, orDefault(in.SinceHours, 24), in.ActionType)
				return Result{Data: map[string]any{"entries": es, "count": len(es)}}, err
			}),
		def(local("get_action_counts", "Action counts", "action_log", "Count action log entries by type and status over the last hours.", map[string]map[string]int{}),
			func(ctx context.Context, c *Call, in HoursInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				m, err := s.ActionCounts(ctx, orDefault(in.SinceHours, 24))
				return Result{Data: m}, err
			}),
		def(local("get_rate_limits", "Rate limits", "rate_limits", "X's live rate-limit headers per endpoint and our policy counters, with recommended_wait_ms.", RateLimits{}),
			func(ctx context.Context, c *Call, _ NoInput) (Result, error) {
				out := RateLimits{X: []xapi.RateLimitState{}, Policy: map[string]policy.Usage{}}
				if x, err := c.Deps.X(); err == nil {
					out.X = x.RateLimits()
				}
				if c.Deps.Policy != nil {
					snap, err := c.Deps.Policy.Snapshot(ctx)
					if err != nil {
						return Result{}, apperr.Wrap(apperr.DBError, err, "read policy counters: %v", err)
					}
					out.Policy = snap
				}
				now := c.Deps.Now()
				for _, s := range out.X {
					out.RecommendedWaitMS = max(out.RecommendedWaitMS, s.RecommendedWaitMS)
				}
				for _, u := range out.Policy {
					if u.Max > 0 && u.Used >= u.Max && u.ResetAt.After(now) {
						out.RecommendedWaitMS = max(out.RecommendedWaitMS, u.ResetAt.Sub(now).Milliseconds())
					}
				}
				return Result{Data: out}, nil
			}),
		def(local("list_target_accounts", "Target accounts", "targets", "List the accounts the targets loop monitors.", []workflow.Target{}),
			func(ctx context.Context, c *Call, _ NoInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				ts, err := s.Targets(ctx)
				return Result{Data: map[string]any{"targets": ts, "count": len(ts)}}, err
			}),
		def(Spec{Name: "add_target_account", Title: "Add target account", Category: "targets", Needs: Needs{DB: true, X: true},
			Description: "Add an account to monitor (its id is resolved on X when X is available). Local only: nothing changes on X.",
			Profiles:    workflowOnly, Hints: Hints{Idempotent: true, OpenWorld: true}, Errors: append([]apperr.Code{apperr.DBError}, xErrors...)},
			func(ctx context.Context, c *Call, in UsernameTargetInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				t, err := s.AddTarget(ctx, in.Username)
				return Result{Data: t}, err
			}),
		def(Spec{Name: "remove_target_account", Title: "Remove target account", Category: "targets", Needs: Needs{DB: true},
			Description: "Stop monitoring an account. Local only: nothing changes on X.",
			Profiles:    workflowOnly, Hints: Hints{Destructive: true, Idempotent: true}, Errors: []apperr.Code{apperr.DBError, apperr.NotFound}},
			func(ctx context.Context, c *Call, in UsernameTargetInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				if err := s.RemoveTarget(ctx, in.Username); err != nil {
					return Result{}, err
				}
				return Result{Data: map[string]any{"removed": true, "username": in.Username}}, nil
			}),
		def(Spec{Name: "get_author_context", Title: "Author context", Category: "targets", Needs: Needs{DB: true, X: true},
			Description: "An author's profile, our interaction history with them and their recent tweets.",
			Profiles:    workflowOnly, Hints: readX, Errors: append([]apperr.Code{apperr.DBError}, xErrors...)},
			func(ctx context.Context, c *Call, in IdentifierInput) (Result, error) {
				s, err := wf(c)
				if err != nil {
					return Result{}, err
				}
				ac, err := s.AuthorContext(ctx, in.Identifier)
				return Result{Data: ac}, err
			}),
	}
}
