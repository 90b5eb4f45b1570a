package postmetrics

import (
	"context"
	"errors"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// AnalyticsMaxAge is the oldest post X serves analytics for; older posts
// are measured by their public metrics.
const AnalyticsMaxAge = 30 * 24 * time.Hour

// Post is one of the account's own posts to measure.
type Post struct {
	TweetID  string
	Kind     string
	PostedAt time.Time
	// Public, when set, are the post's public metrics as just read (a
	// back-fill reads them with the timeline), sparing a lookup.
	Public *xapi.TweetMetrics
}

// KindOf classifies a post of the account's timeline.
func KindOf(t xapi.Tweet) string {
	for _, r := range t.ReferencedTweets {
		switch r.Type {
		case "retweeted":
			return KindRepost
		case "replied_to":
			return KindReply
		case "quoted":
			return KindQuote
		}
	}
	return KindOriginal
}

// X is what capturing needs of X: both are reads through the read client.
type X interface {
	GetTweets(ctx context.Context, ids []string) (*xapi.Page[xapi.Tweet], error)
	PostAnalytics(ctx context.Context, ids []string, start, end time.Time) ([]xapi.PostAnalytics, error)
}

// Report says what one capture did.
type Report struct {
	Captured  int `json:"captured"`
	Analytics int `json:"analytics"`
	Public    int `json:"public"`
	// AnalyticsDenied is set when X answered 403 to the analytics read
	// (the account's tier has no access); those posts fell back to public
	// metrics.
	AnalyticsDenied bool `json:"analytics_denied,omitempty"`
}

// due is the checkpoint age p stands for at now. In a loop's capture
// (backfill false) that is the checkpoint reached and not yet passed by
// the next one, so a checkpoint missed while nothing ran is skipped rather
// than filled with numbers of another age; the last checkpoint stays due
// for a day. A back-fill takes the latest checkpoint reached.
func due(p Post, now time.Time, backfill bool) (time.Duration, bool) {
	age := now.Sub(p.PostedAt)
	for i := len(Checkpoints) - 1; i >= 0; i-- {
		cp := Checkpoints[i]
		if age < cp {
			continue
		}
		if backfill {
			return cp, true
		}
		until := cp + 24*time.Hour
		if i+1 < len(Checkpoints) {
			until = Checkpoints[i+1]
		}
		return cp, age < until
	}
	return 0, false
}

// Capture measures each of posts that is due for a checkpoint it was not
// yet measured at, and stores one row per post and checkpoint. Posts
// younger than AnalyticsMaxAge are read through GET /2/tweets/analytics;
// a 403 there (or a post it does not return) falls back to the post's
// public metrics, and the row says source public.
func (s *Store) Capture(ctx context.Context, x X, posts []Post, backfill bool) (Report, error) {
	var rep Report
	now := s.Now()
	type job struct {
		p  Post
		cp time.Duration
	}
	var ids []string
	for _, p := range posts {
		ids = append(ids, p.TweetID)
	}
	have, err := s.Captured(ctx, ids)
	if err != nil {
		return rep, err
	}
	var jobs []job
	for _, p := range posts {
		cp, ok := due(p, now, backfill)
		if ok && !have[p.TweetID][int(cp/time.Hour)] {
			jobs = append(jobs, job{p, cp})
		}
	}
	rows := map[string]Row{}
	// Analytics first, for the posts young enough.
	var young []job
	for _, j := range jobs {
		if now.Sub(j.p.PostedAt) < AnalyticsMaxAge {
			young = append(young, j)
		}
	}
	for len(young) > 0 && !rep.AnalyticsDenied {
		n := min(len(young), xapi.MaxBatchIDs)
		batch := young[:n]
		young = young[n:]
		bids := make([]string, n)
		start := now
		for i, j := range batch {
			bids[i] = j.p.TweetID
			if j.p.PostedAt.Before(start) {
				start = j.p.PostedAt
			}
		}
		got, err := x.PostAnalytics(ctx, bids, start.Add(-time.Minute).Truncate(time.Minute), now.Truncate(time.Minute).Add(time.Minute))
		var ae *apperr.Error
		if errors.As(err, &ae) && ae.Code == apperr.XForbidden {
			rep.AnalyticsDenied = true
			break
		}
		if err != nil {
			return rep, err
		}
		for _, a := range got {
			rows[a.ID] = Row{Impressions: a.Impressions, Likes: a.Likes, Reposts: a.Retweets, Replies: a.Replies, Quotes: a.Quotes,
				Bookmarks: a.Bookmarks, Source: SourceAnalytics}
		}
	}
	// Public metrics for the rest: those already read, then a lookup.
	var lookup []string
	for _, j := range jobs {
		if _, ok := rows[j.p.TweetID]; ok {
			continue
		}
		if j.p.Public != nil {
			rows[j.p.TweetID] = publicRow(*j.p.Public)
			continue
		}
		lookup = append(lookup, j.p.TweetID)
	}
	for len(lookup) > 0 {
		n := min(len(lookup), xapi.MaxBatchIDs)
		page, err := x.GetTweets(ctx, lookup[:n])
		if err != nil {
			return rep, err
		}
		// A post X no longer returns (deleted) gets no row.
		for _, t := range page.Data {
			rows[t.ID] = publicRow(t.PublicMetrics)
		}
		lookup = lookup[n:]
	}
	for _, j := range jobs {
		r, ok := rows[j.p.TweetID]
		if !ok {
			continue
		}
		r.TweetID, r.Kind, r.PostedAt, r.Checkpoint = j.p.TweetID, j.p.Kind, j.p.PostedAt, j.cp
		stored, err := s.Record(ctx, r)
		if err != nil {
			return rep, err
		}
		if !stored {
			continue
		}
		rep.Captured++
		if r.Source == SourceAnalytics {
			rep.Analytics++
		} else {
			rep.Public++
		}
	}
	return rep, nil
}

// publicRow is a row from public_metrics; X reports impressions there
// only for the owner's posts, and zero is taken as not said.
func publicRow(m xapi.TweetMetrics) Row {
	imp := m.ImpressionCount
	if imp == 0 {
		imp = -1
	}
	return Row{Impressions: imp, Likes: m.LikeCount, Reposts: m.RetweetCount, Replies: m.ReplyCount, Quotes: m.QuoteCount,
		Bookmarks: m.BookmarkCount, Source: SourcePublic}
}

// Timeline is what a back-fill reads: the account's own posts.
type Timeline interface {
	UserTweets(ctx context.Context, userID string, p xapi.ListParams) (*xapi.Page[xapi.Tweet], error)
}

// RefreshMaxPosts is the most posts a back-fill reads from the timeline.
const RefreshMaxPosts = 500

// RefreshCostCeiling is the most a back-fill can cost: every post read
// from the timeline, and again through analytics. The budget check uses
// it, before any X call.
func RefreshCostCeiling() float64 { return 2 * RefreshMaxPosts * xapi.PricePostRead }

// Backfill reads the account's posts made since (at most RefreshMaxPosts,
// newest first) and captures each at the latest checkpoint it reached.
func (s *Store) Backfill(ctx context.Context, tl Timeline, x X, since time.Time) (Report, int, error) {
	var posts []Post
	token := ""
	for len(posts) < RefreshMaxPosts {
		page, err := tl.UserTweets(ctx, "", xapi.ListParams{MaxResults: 100, PaginationToken: token})
		if err != nil {
			return Report{}, len(posts), err
		}
		older := false
		for _, t := range page.Data {
			if t.CreatedAt.Before(since) {
				older = true
				break
			}
			m := t.PublicMetrics
			posts = append(posts, Post{TweetID: t.ID, Kind: KindOf(t), PostedAt: t.CreatedAt, Public: &m})
			if len(posts) == RefreshMaxPosts {
				break
			}
		}
		token = page.Meta.NextToken
		if older || token == "" {
			break
		}
	}
	rep, err := s.Capture(ctx, x, posts, true)
	return rep, len(posts), err
}
