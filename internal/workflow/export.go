package workflow

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// ExportPosts streams what the account posted (original posts and
// replies, as recorded when each was sent) at or after since, oldest
// first, one row at a time.
func (s *Service) ExportPosts(ctx context.Context, since time.Time, emit store.RowFunc) error {
	lo := exportSince(since)
	rows, err := s.DB.QueryContext(ctx, `SELECT created_at, tweet_id, kind, in_reply_to_tweet_id, in_reply_to_username, content, topic, caller FROM (
		SELECT created_at, tweet_id, kind, '' AS in_reply_to_tweet_id, '' AS in_reply_to_username, content, topic, caller, id, 0 AS src
			FROM original_tweets WHERE account_id = ? AND created_at >= ?
		UNION ALL
		SELECT created_at, reply_tweet_id, 'reply', target_tweet_id, author_username, content, '', caller, id, 1
			FROM replies_sent WHERE account_id = ? AND created_at >= ?
	) AS posts ORDER BY created_at, src, id`, s.account(), lo, s.account(), lo)
	if err != nil {
		return dbErr(err, "read posts")
	}
	return store.Stream(rows, emit)
}

func exportSince(since time.Time) string {
	if since.IsZero() {
		return ""
	}
	return store.FormatTime(since)
}
