package mcpserver

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/scoring"
)

// ScoreInput is score_tweet's input.
type ScoreInput struct {
	Text            string `json:"text" jsonschema:"the tweet text"`
	AuthorUsername  string `json:"author_username" jsonschema:"the author's handle"`
	AuthorFollowers int64  `json:"author_followers" jsonschema:"the author's follower count"`
	Likes           int64  `json:"likes" jsonschema:"like count"`
	Retweets        int64  `json:"retweets" jsonschema:"retweet count"`
	Replies         int64  `json:"replies" jsonschema:"reply count"`
	Quotes          int64  `json:"quotes,omitempty" jsonschema:"quote count"`
	Impressions     int64  `json:"impressions,omitempty" jsonschema:"impression count"`
	CreatedAt       string `json:"created_at" jsonschema:"RFC 3339 time the tweet was posted"`
	HasMedia        bool   `json:"has_media,omitempty" jsonschema:"the tweet has media attached"`
	IsQuote         bool   `json:"is_quote,omitempty" jsonschema:"the tweet quotes another"`
}

// ScoreResult is score_tweet's data.
type ScoreResult struct {
	scoring.Breakdown
	Threshold         float64 `json:"threshold"`
	MeetsThreshold    bool    `json:"meets_threshold"`
	RecommendedAction string  `json:"recommended_action"`
}

// FindInput is find_reply_opportunities' input.
type FindInput struct {
	Query    string   `json:"query,omitempty" jsonschema:"X search query; default: the product keywords joined with OR"`
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"lowest score to return, 0-100; default scoring.threshold"`
	Limit    int      `json:"limit,omitempty" jsonschema:"candidates to return, 1-100, default 10"`
	SinceID  string   `json:"since_id,omitempty" jsonschema:"override the remembered cursor for this query"`
}

// Limits declares the arguments' limits.
func (FindInput) Limits() argcheck.Limits {
	return argcheck.Limits{"min_score": scoreRange(), "limit": argcheck.Between(1, 100), "since_id": {ID: true}}
}

// FeedInput is get_discovery_feed's input.
type FeedInput struct {
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"lowest score, 0-100; default scoring.threshold"`
	Limit    int      `json:"limit,omitempty" jsonschema:"rows, 1-100, default 10"`
}

// Limits declares the arguments' limits.
func (FeedInput) Limits() argcheck.Limits {
	return argcheck.Limits{"min_score": scoreRange(), "limit": argcheck.Between(1, 100)}
}

// UnrepliedInput is list_unreplied_tweets' input.
type UnrepliedInput struct {
	Threshold float64 `json:"threshold,omitempty" jsonschema:"lowest score, 0-100, default 0"`
	Limit     int     `json:"limit,omitempty" jsonschema:"rows, 1-500, default 100"`
}

// Limits declares the arguments' limits.
func (UnrepliedInput) Limits() argcheck.Limits {
	return argcheck.Limits{"threshold": scoreRange(), "limit": argcheck.Between(1, 500)}
}

// scoreRange bounds a score argument.
func scoreRange() argcheck.Rule { return argcheck.Between(0, 100) }

func scoreOr(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

func discoveryTools() []*Tool {
	local := func(name, title, desc string, out any) Spec {
		return Spec{Name: name, Title: title, Category: "discovery", Description: desc, Needs: Needs{DB: true},
			Profiles: workflowOnly, Hints: readLocal, Errors: []apperr.Code{apperr.DBError}}
	}
	return []*Tool{
		def(Spec{Name: "score_tweet", Title: "Score tweet", Category: "scoring", Profiles: allProfiles, Hints: readLocal,
			Description: "Score a tweet 0-100 on the six signals (keyword relevance, follower sweet spot, recency, engagement rate, reply count, content type). Pure: no X call."},
			func(_ context.Context, c *Call, in ScoreInput) (Result, error) {
				t, err := time.Parse(time.RFC3339, in.CreatedAt)
				if err != nil {
					return Result{}, apperr.New(apperr.InvalidInput, "created_at: %q is not an RFC 3339 time", in.CreatedAt)
				}
				for f, v := range map[string]int64{"author_followers": in.AuthorFollowers, "likes": in.Likes, "retweets": in.Retweets,
					"replies": in.Replies, "quotes": in.Quotes, "impressions": in.Impressions} {
					if v < 0 {
						return Result{}, apperr.New(apperr.InvalidInput, "%s: must not be negative", f)
					}
				}
				a := c.Deps
				b := scoring.New(a.Keywords(), a.ScoringWeights(), a.Now).Score(scoring.Input{Text: in.Text, AuthorUsername: in.AuthorUsername,
					AuthorFollowers: in.AuthorFollowers, Likes: in.Likes, Retweets: in.Retweets, Replies: in.Replies, Quotes: in.Quotes,
					Impressions: in.Impressions, CreatedAt: t, HasMedia: in.HasMedia, IsQuote: in.IsQuote})
				th := a.Cfg.Scoring.Threshold
				return Result{Data: ScoreResult{Breakdown: b, Threshold: th, MeetsThreshold: b.Total >= th, RecommendedAction: scoring.Recommend(b.Total, th)}}, nil
			}),
		def(Spec{Name: "find_reply_opportunities", Title: "Find reply opportunities", Category: "discovery", Needs: Needs{X: true, DB: true},
			Description: "Search X, score every tweet, store them in the discovery feed without duplicates and return the best. Remembers since_id per query so repeated calls do not buy the same tweets again.",
			Profiles:    workflowOnly, Hints: Hints{OpenWorld: true}, Errors: append([]apperr.Code{apperr.DBError}, xErrors...)},
			func(ctx context.Context, c *Call, in FindInput) (Result, error) {
				min := scoreOr(in.MinScore, c.Deps.Cfg.Scoring.Threshold)
				d, err := c.Deps.Discovery()
				if err != nil {
					return Result{}, err
				}
				res, err := d.Find(ctx, discovery.Query{Query: in.Query, MinScore: min, Limit: orDefault(in.Limit, 10), SinceID: in.SinceID})
				return Result{Data: res}, err
			}),
		def(local("get_discovery_feed", "Discovery feed", "Scored tweets not yet replied to, best first. Reads the database only.", []discovery.Candidate{}),
			func(ctx context.Context, c *Call, in FeedInput) (Result, error) {
				min := scoreOr(in.MinScore, c.Deps.Cfg.Scoring.Threshold)
				d, err := c.Deps.Discovery()
				if err != nil {
					return Result{}, err
				}
				cs, err := d.Feed(ctx, min, orDefault(in.Limit, 10))
				return Result{Data: map[string]any{"tweets": cs, "count": len(cs), "min_score": min}}, err
			}),
		def(local("list_unreplied_tweets", "Unreplied tweets", "Every discovered tweet not yet replied to at or above a threshold. Reads the database only.", []discovery.Candidate{}),
			func(ctx context.Context, c *Call, in UnrepliedInput) (Result, error) {
				d, err := c.Deps.Discovery()
				if err != nil {
					return Result{}, err
				}
				cs, err := d.Feed(ctx, in.Threshold, orDefault(in.Limit, 100))
				return Result{Data: map[string]any{"tweets": cs, "count": len(cs)}}, err
			}),
	}
}
