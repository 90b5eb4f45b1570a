package autopilot

import (
	"context"
	"time"
)

// AuthorReplies exposes authorReplies to the external tests.
func AuthorReplies(ctx context.Context, r *Runner, authorID string, now time.Time) (int, error) {
	return r.authorReplies(ctx, authorID, now)
}

// Handled exposes handled to the external tests.
func Handled(ctx context.Context, r *Runner, tweetID string) (bool, error) {
	return r.handled(ctx, tweetID)
}

// RecentTexts exposes recentTexts to the external tests.
func RecentTexts(ctx context.Context, r *Runner, kind string) ([]string, error) {
	return r.recentTexts(ctx, kind)
}
