package xapi

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// postAnalyticsFields are the counts PostAnalytics asks X for.
const postAnalyticsFields = "bookmarks,engagements,impressions,likes,quote_tweets,replies,retweets"

// PostAnalytics are one post's totals from GET /2/tweets/analytics.
type PostAnalytics struct {
	ID          string
	Impressions int64
	Likes       int64
	Retweets    int64
	Replies     int64
	Quotes      int64
	Bookmarks   int64
}

// analyticsCounts is the set of counts X sends, either at the top of a
// post's entry or inside each of its time buckets.
type analyticsCounts struct {
	Impressions *int64 `json:"impressions"`
	Likes       *int64 `json:"likes"`
	Retweets    *int64 `json:"retweets"`
	Replies     *int64 `json:"replies"`
	QuoteTweets *int64 `json:"quote_tweets"`
	Bookmarks   *int64 `json:"bookmarks"`
}

func (c analyticsCounts) any() bool {
	return c.Impressions != nil || c.Likes != nil || c.Retweets != nil || c.Replies != nil || c.QuoteTweets != nil || c.Bookmarks != nil
}

func (c analyticsCounts) addTo(p *PostAnalytics) {
	add := func(dst *int64, v *int64) {
		if v != nil {
			*dst += *v
		}
	}
	add(&p.Impressions, c.Impressions)
	add(&p.Likes, c.Likes)
	add(&p.Retweets, c.Retweets)
	add(&p.Replies, c.Replies)
	add(&p.Quotes, c.QuoteTweets)
	add(&p.Bookmarks, c.Bookmarks)
}

type wireAnalytics struct {
	ID string `json:"id"`
	analyticsCounts
	Timestamped []struct {
		Timestamp string           `json:"timestamp"`
		Metrics   *analyticsCounts `json:"metrics"`
	} `json:"timestamped_metrics"`
}

func analyticsIDs(d []wireAnalytics) []string {
	out := make([]string, len(d))
	for i := range d {
		out[i] = d[i].ID
	}
	return out
}

// PostAnalytics reads the totals of up to 100 of the account's own posts
// between start and end. X grants it by tier: an account without access
// gets x_forbidden, which callers answer by falling back to the posts'
// public metrics.
func (c *Client) PostAnalytics(ctx context.Context, ids []string, start, end time.Time) ([]PostAnalytics, error) {
	if err := checkIDs("ids", ids); err != nil {
		return nil, err
	}
	if !start.Before(end) {
		return nil, apperr.New(apperr.InvalidInput, "start_time: must be before end_time")
	}
	q := url.Values{
		"ids":              {strings.Join(ids, ",")},
		"start_time":       {start.UTC().Format(time.RFC3339)},
		"end_time":         {end.UTC().Format(time.RFC3339)},
		"granularity":      {"total"},
		"analytics.fields": {postAnalyticsFields},
	}
	env, _, err := getEnvelope(ctx, c, "/2/tweets/analytics", q.Encode(), analyticsIDs)
	if err != nil {
		return nil, err
	}
	out := make([]PostAnalytics, 0, len(env.Data))
	for _, w := range env.Data {
		p := PostAnalytics{ID: w.ID}
		if w.analyticsCounts.any() {
			w.analyticsCounts.addTo(&p)
		} else {
			for _, b := range w.Timestamped {
				if b.Metrics != nil {
					b.Metrics.addTo(&p)
				}
			}
		}
		out = append(out, p)
	}
	return out, nil
}
