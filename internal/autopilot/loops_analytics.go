package autopilot

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Posts are measured once, when they are about a day old: early numbers
// say little, and a week later the post no longer moves.
const (
	measureAfter  = 24 * time.Hour
	measureWithin = 7 * 24 * time.Hour
)

// analyticsLoop takes a follower snapshot and measures the account's own
// posts and replies about a day after posting; the measured topics feed
// suggest_topics and the content loop's topic choice.
func (r *Runner) analyticsLoop(it *iter) error {
	ctx := it.work
	snap, err := r.d.Workflow.TakeSnapshot(ctx)
	if err != nil {
		return err
	}
	it.note("followers %d", snap.Followers)
	x, err := r.d.X()
	if err != nil {
		return err
	}
	n, err := r.measure(ctx, x)
	if err != nil {
		return err
	}
	it.note("%s measured", plural(n, "post", "posts"))
	return nil
}

type ownPost struct{ id, kind, topic string }

func (r *Runner) measure(ctx context.Context, x *xapi.Client) (int, error) {
	now := r.now()
	rows, err := r.d.DB.QueryContext(ctx, `SELECT id, kind, topic FROM (
		SELECT tweet_id AS id, kind, topic, created_at FROM original_tweets WHERE account_id = ?1 AND created_at <= ?2 AND created_at >= ?3
		UNION ALL
		SELECT reply_tweet_id, 'reply', '', created_at FROM replies_sent WHERE account_id = ?1 AND created_at <= ?2 AND created_at >= ?3
	) p WHERE NOT EXISTS (SELECT 1 FROM tweet_performance t WHERE t.account_id = ?1 AND t.tweet_id = p.id)
	ORDER BY created_at LIMIT ?4`, r.d.AccountID, ts(now.Add(-measureAfter)), ts(now.Add(-measureWithin)), xapi.MaxBatchIDs)
	if err != nil {
		return 0, apperr.Wrap(apperr.DBError, err, "read own posts: %v", err)
	}
	var posts []ownPost
	for rows.Next() {
		var p ownPost
		if err := rows.Scan(&p.id, &p.kind, &p.topic); err != nil {
			rows.Close()
			return 0, apperr.Wrap(apperr.DBError, err, "read own posts: %v", err)
		}
		posts = append(posts, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, apperr.Wrap(apperr.DBError, err, "read own posts: %v", err)
	}
	if len(posts) == 0 {
		return 0, nil
	}
	ids := make([]string, len(posts))
	for i, p := range posts {
		ids[i] = p.id
	}
	page, err := x.GetTweets(ctx, ids)
	if err != nil {
		return 0, err
	}
	got := map[string]xapi.TweetMetrics{}
	for _, t := range page.Data {
		got[t.ID] = t.PublicMetrics
	}
	for _, p := range posts {
		// A post X no longer returns (deleted) is stored with zeros so it is
		// not asked for again.
		m := got[p.id]
		_, err := r.d.DB.ExecContext(ctx, `INSERT INTO tweet_performance (tweet_id, account_id, kind, topic, likes, retweets, replies,
			impressions, score, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(account_id, tweet_id) DO NOTHING`,
			p.id, r.d.AccountID, p.kind, p.topic, m.LikeCount, m.RetweetCount, m.ReplyCount, m.ImpressionCount, performance(m), ts(now))
		if err != nil {
			return 0, apperr.Wrap(apperr.DBError, err, "store performance: %v", err)
		}
	}
	return len(posts), nil
}

// performance weighs replies over retweets over likes, per thousand
// impressions.
func performance(m xapi.TweetMetrics) float64 {
	imp := max(m.ImpressionCount, 1)
	return float64(m.LikeCount*3+m.ReplyCount*5+m.RetweetCount*4) / float64(imp) * 1000
}
