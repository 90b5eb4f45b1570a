package mcpserver

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/postmetrics"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// BestTimesInput is get_best_posting_times' input.
type BestTimesInput struct {
	LookbackDays int    `json:"lookback_days,omitempty" jsonschema:"days of history to read, 7-365, default 90"`
	Metric       string `json:"metric,omitempty" jsonschema:"what to rank by: engagement_rate (default), engagements, impressions or likes"`
	MinPosts     int    `json:"min_posts,omitempty" jsonschema:"fewest measured original posts to rank from, 1-1000, default 10"`
	Top          int    `json:"top,omitempty" jsonschema:"buckets to return, 1-168, default 5"`
	Refresh      bool   `json:"refresh,omitempty" jsonschema:"first back-fill the lookback's metrics from X (reads the account's timeline and post analytics; checked against the spend budget before any X call)"`
}

// Limits declares the arguments' limits.
func (BestTimesInput) Limits() argcheck.Limits {
	return argcheck.Limits{"lookback_days": argcheck.Between(7, 365), "min_posts": argcheck.Between(1, 1000),
		"top": argcheck.Between(1, 168), "metric": {Enum: postmetrics.Metrics}}
}

// SuggestSlotsInput is suggest_queue_slots' input.
type SuggestSlotsInput struct {
	Count int `json:"count,omitempty" jsonschema:"best hours of the week to turn into slots, 1-14, default 3"`
}

// Limits declares the arguments' limits.
func (SuggestSlotsInput) Limits() argcheck.Limits {
	return argcheck.Limits{"count": argcheck.Between(1, 14)}
}

// bestTimesDescription is what an agent reads; bestTimesDoc states the
// algorithm in docs/tools.md.
const bestTimesDescription = "The hours of the week when the account's own original posts do best, ranked from their measured metrics (captured by the analytics loop at 1 h, 24 h and 7 days; source analytics or public) in schedule.timezone, inside the active hours, each with its post count and a confidence; one viral post cannot rank its hour first. " +
	"Fewer than min_posts measured posts answers insufficient_data with the count. refresh: true back-fills from X first, checked against the spend budget before any X call. The algorithm is in docs/tools.md."

const bestTimesDoc = "**Data.** The analytics loop captures each own post's metrics at 1 h, 24 h and 7 days after it was posted, one row per post and checkpoint in the `post_metrics` table: `GET /2/tweets/analytics` for posts under 30 days where the account's tier allows it, else (and on X's 403) `public_metrics`, the row and the answer then saying `source: public`. " +
	"The ranking reads only original posts (no replies, reposts or quotes) posted in the last `lookback_days`, each at its latest checkpoint.\n\n" +
	"**Algorithm.** Each post's value `v` is the metric: `engagement_rate = (likes + reposts + replies + quotes + bookmarks) / impressions` (posts without impressions are left out), or `engagements`, `impressions` or `likes`. " +
	"Values are first capped at the account's 95th percentile, `v' = min(v, p95)`, so one viral post counts as one very good post. " +
	"Posts are bucketed by weekday × hour in `schedule.timezone`. With `median_all` the median over every post and, for a bucket `b` of `n` posts, `median_b` the median of its capped values, the bucket scores\n\n" +
	"    shrunk_b = (n · median_b + k · median_all) / (n + k),   k = 5\n\n" +
	"so a bucket needs 5 posts of its own to weigh as much as the account's whole history, and a bucket with one post moves at most a sixth of the way from the account's median toward that post's capped value. " +
	"`confidence = n / (n + k)`: low below 0.5, medium from 0.5, high from 0.75. Only buckets inside the active hours and days (`[schedule]`) are ranked; the best `top` are returned, highest score first. " +
	"Fewer than `min_posts` (default 10) measured posts answers `insufficient_data` with `posts` (the count) and `min_posts`.\n\n" +
	"**Refresh.** `refresh: true` first reads the account's timeline (at most 500 posts of the lookback) and the analytics of those under 30 days, and captures each post at the latest checkpoint it has reached. " +
	"Its ceiling cost (every post read twice at the post-read price) is checked against the spend budget (`mcp_policy.daily_budget_usd`) before any X call, answering `policy_denied_budget` when it does not fit; the answer's `refresh` reports the posts read and captured, the estimate and the cost the usage ledger recorded."

func postMetricsOf(c *Call) (*postmetrics.Store, *workflow.Service, error) {
	s, err := c.Deps.Workflow()
	if err != nil {
		return nil, nil, err
	}
	now := c.Deps.Now
	if now == nil {
		now = time.Now
	}
	return &postmetrics.Store{DB: s.DB, Account: s.AccountID, Now: now}, s, nil
}

func bestTimesTools() []*Tool {
	errs := []apperr.Code{apperr.InsufficientData, apperr.ConfigError, apperr.DBError, apperr.InvalidInput}
	return []*Tool{
		def(Spec{Name: "get_best_posting_times", Title: "Get best posting times", Category: "analytics", Description: bestTimesDescription, Doc: bestTimesDoc,
			Needs: Needs{DB: true}, Profiles: workflowOnly, Hints: readX,
			Errors: append(errs, apperr.PolicyBudget, apperr.PolicyError, apperr.XForbidden, apperr.XAPIError)},
			func(ctx context.Context, c *Call, in BestTimesInput) (Result, error) {
				pm, wf, err := postMetricsOf(c)
				if err != nil {
					return Result{}, err
				}
				top := in.Top
				if top == 0 {
					top = 5
				}
				q, err := postmetrics.QueryOf(c.Deps.Cfg, in.Metric, in.MinPosts, top)
				if err != nil {
					return Result{}, err
				}
				days := in.LookbackDays
				if days == 0 {
					days = postmetrics.DefaultLookbackDays
				}
				rf := postmetrics.Refresh{
					Client: func() (postmetrics.Client, error) { return c.Deps.X() },
					Spent: func(ctx context.Context, since time.Time) (float64, error) {
						_, usd, err := workflow.XSpendSince(ctx, wf.DB, pm.Account, since)
						return usd, err
					},
				}
				if c.Deps.Policy != nil {
					rf.Budget = c.Deps.Policy
				}
				a, err := pm.BestTimes(ctx, postmetrics.BestTimesRequest{Query: q, LookbackDays: days, Refresh: in.Refresh}, rf)
				return Result{Data: a}, err
			}),
		def(Spec{Name: "suggest_queue_slots", Title: "Suggest queue slots", Category: "analytics",
			Description: "Propose posting-queue slots in the [queue] slot syntax (\"tue,thu 09:00\") from get_best_posting_times' best hours (default lookback, engagement rate), beside the slots [queue] holds now. Reads local records only and writes nothing: putting them into the configuration stays a human step (tuitbot queue apply-suggestion).",
			Needs:       Needs{DB: true}, Profiles: workflowOnly, Hints: readLocal, Errors: errs},
			func(ctx context.Context, c *Call, in SuggestSlotsInput) (Result, error) {
				pm, _, err := postMetricsOf(c)
				if err != nil {
					return Result{}, err
				}
				s, err := pm.SuggestSlots(ctx, c.Deps.Cfg, in.Count)
				return Result{Data: s}, err
			}),
	}
}
