package autopilot

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/postmetrics"
	"github.com/tuitbot/tuitbot/internal/workflow"
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
	rep, err := r.capturePostMetrics(ctx, x)
	if err != nil {
		return err
	}
	if rep.Captured > 0 {
		it.note("%s captured at 1 h, 24 h or 7 days (%d analytics, %d public)", plural(rep.Captured, "post metric", "post metrics"), rep.Analytics, rep.Public)
	}
	return nil
}

// capturePostMetrics measures the account's own posts as they reach 1 h,
// 24 h and 7 days (post_metrics), from which get_best_posting_times ranks
// the hours of the week.
func (r *Runner) capturePostMetrics(ctx context.Context, x *xapi.Client) (postmetrics.Report, error) {
	now := r.now()
	last := postmetrics.Checkpoints[len(postmetrics.Checkpoints)-1]
	own, err := r.d.Workflow.PostedBetween(ctx, now.Add(-last-24*time.Hour), now.Add(-postmetrics.Checkpoints[0]))
	if err != nil {
		return postmetrics.Report{}, err
	}
	posts := make([]postmetrics.Post, len(own))
	for i, p := range own {
		kind := postmetrics.KindOriginal
		if p.Kind == workflow.KindReply {
			kind = postmetrics.KindReply
		}
		posts[i] = postmetrics.Post{TweetID: p.TweetID, Kind: kind, PostedAt: p.At}
	}
	pm := &postmetrics.Store{DB: r.d.DB, Account: r.d.AccountID, Now: r.now}
	return pm.Capture(ctx, x, posts, false)
}

func (r *Runner) measure(ctx context.Context, x *xapi.Client) (int, error) {
	now := r.now()
	posts, err := r.d.Workflow.Unmeasured(ctx, now.Add(-measureWithin), now.Add(-measureAfter), xapi.MaxBatchIDs)
	if err != nil {
		return 0, err
	}
	if len(posts) == 0 {
		return 0, nil
	}
	ids := make([]string, len(posts))
	for i, p := range posts {
		ids[i] = p.TweetID
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
		m := got[p.TweetID]
		if err := r.d.Workflow.RecordPerformance(ctx, workflow.Performance{TweetID: p.TweetID, Kind: p.Kind, Topic: p.Topic,
			Likes: m.LikeCount, Retweets: m.RetweetCount, Replies: m.ReplyCount, Impressions: m.ImpressionCount,
			Score: performance(m)}); err != nil {
			return 0, err
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
