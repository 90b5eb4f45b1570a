package autopilot

import (
	"context"
	"time"

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
	return nil
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
