// Package postmetrics keeps the account's own posts measured at fixed ages
// (the post_metrics table) and answers, from them, when the account's
// posts do best. The analytics loop captures; get_best_posting_times and
// suggest_queue_slots read.
package postmetrics

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// The kinds of post a row describes. Only originals feed the best times:
// a reply's or a repost's reach is borrowed from the post it answers.
const (
	KindOriginal = "original"
	KindReply    = "reply"
	KindQuote    = "quote"
	KindRepost   = "repost"
)

// Where a row's counts came from.
const (
	SourceAnalytics = "analytics" // GET /2/tweets/analytics
	SourcePublic    = "public"    // the post's public_metrics
)

// Checkpoints are the ages at which a post is measured: an hour says how
// it started, a day how it did, a week where it ended.
var Checkpoints = []time.Duration{time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

// Row is one post measured at one checkpoint.
type Row struct {
	TweetID  string
	Kind     string
	PostedAt time.Time
	// Checkpoint is the age the row stands for (one of Checkpoints).
	Checkpoint time.Duration
	// Impressions is -1 when X did not say.
	Impressions                                int64
	Likes, Reposts, Replies, Quotes, Bookmarks int64
	Source                                     string
}

// Store reads and writes one account's rows.
type Store struct {
	DB      *store.DB
	Account string
	Now     func() time.Time
}

func (s *Store) account() string {
	if s.Account == "" {
		return "default"
	}
	return s.Account
}

func dbErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae
	}
	return apperr.Wrap(apperr.DBError, err, "post metrics: %s", what)
}

// Record stores r unless the post already has a row for r's checkpoint;
// it reports whether r was stored. The unique key decides, so two loops
// racing over one post store one row.
func (s *Store) Record(ctx context.Context, r Row) (bool, error) {
	var imp any
	if r.Impressions >= 0 {
		imp = r.Impressions
	}
	res, err := s.DB.ExecContext(ctx, `INSERT INTO post_metrics (account_id, tweet_id, kind, posted_unix, checkpoint_hours, captured_at,
		impressions, likes, reposts, replies, quotes, bookmarks, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (account_id, tweet_id, checkpoint_hours) DO NOTHING`,
		s.account(), r.TweetID, r.Kind, r.PostedAt.Unix(), int(r.Checkpoint/time.Hour), store.FormatTime(s.Now()),
		imp, r.Likes, r.Reposts, r.Replies, r.Quotes, r.Bookmarks, r.Source)
	if err != nil {
		return false, dbErr(err, "record")
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return false, dbErr(err, "record")
	}
	// The post's latest checkpoint is the one the ranking reads.
	_, err = s.DB.ExecContext(ctx, `UPDATE post_metrics SET latest = CASE WHEN checkpoint_hours = (SELECT max(checkpoint_hours)
		FROM post_metrics q WHERE q.account_id = ?1 AND q.tweet_id = ?2) THEN 1 ELSE 0 END WHERE account_id = ?1 AND tweet_id = ?2`,
		s.account(), r.TweetID)
	return true, dbErr(err, "mark the latest checkpoint")
}

// Captured returns, for each of ids that has rows, the checkpoints it was
// measured at (in hours).
func (s *Store) Captured(ctx context.Context, ids []string) (map[string]map[int]bool, error) {
	out := map[string]map[int]bool{}
	for len(ids) > 0 {
		n := min(len(ids), 200)
		args := []any{s.account()}
		q := `SELECT tweet_id, checkpoint_hours FROM post_metrics WHERE account_id = ? AND tweet_id IN (`
		for i, id := range ids[:n] {
			if i > 0 {
				q += ","
			}
			q += "?"
			args = append(args, id)
		}
		rows, err := s.DB.QueryContext(ctx, q+")", args...)
		if err != nil {
			return nil, dbErr(err, "read captured")
		}
		for rows.Next() {
			var id string
			var h int
			if err := rows.Scan(&id, &h); err != nil {
				rows.Close()
				return nil, dbErr(err, "read captured")
			}
			if out[id] == nil {
				out[id] = map[int]bool{}
			}
			out[id][h] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, dbErr(err, "read captured")
		}
		ids = ids[n:]
	}
	return out, nil
}

// Rows lists the account's rows of one post, oldest checkpoint first; for
// tests and the CLI.
func (s *Store) Rows(ctx context.Context, tweetID string) ([]Row, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT tweet_id, kind, posted_unix, checkpoint_hours, impressions, likes, reposts, replies,
		quotes, bookmarks, source FROM post_metrics WHERE account_id = ? AND tweet_id = ? ORDER BY checkpoint_hours`, s.account(), tweetID)
	if err != nil {
		return nil, dbErr(err, "read rows")
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var posted int64
		var h int
		var imp sql.NullInt64
		if err := rows.Scan(&r.TweetID, &r.Kind, &posted, &h, &imp, &r.Likes, &r.Reposts, &r.Replies, &r.Quotes, &r.Bookmarks, &r.Source); err != nil {
			return nil, dbErr(err, "read rows")
		}
		r.PostedAt, r.Checkpoint, r.Impressions = time.Unix(posted, 0).UTC(), time.Duration(h)*time.Hour, -1
		if imp.Valid {
			r.Impressions = imp.Int64
		}
		out = append(out, r)
	}
	return out, dbErr(rows.Err(), "read rows")
}

// Sample is one post as the best-time ranking sees it: its latest
// checkpoint's counts.
type Sample struct {
	PostedUnix  int64
	Impressions int64 // -1: unknown
	Engagements int64 // likes + reposts + replies + quotes + bookmarks
	Likes       int64
	Source      string
}

// Samples reads the account's original posts made since, each at the
// latest checkpoint it was measured at: one indexed range read.
func (s *Store) Samples(ctx context.Context, since time.Time) ([]Sample, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT posted_unix, impressions, likes, reposts + replies + quotes + bookmarks, source
		FROM post_metrics WHERE account_id = ? AND kind = ? AND latest = 1 AND posted_unix >= ?`, s.account(), KindOriginal, since.Unix())
	if err != nil {
		return nil, dbErr(err, "read samples")
	}
	defer rows.Close()
	var out []Sample
	var imp sql.NullInt64
	var rest int64
	for rows.Next() {
		var sm Sample
		if err := rows.Scan(&sm.PostedUnix, &imp, &sm.Likes, &rest, &sm.Source); err != nil {
			return nil, dbErr(err, "read samples")
		}
		sm.Engagements, sm.Impressions = sm.Likes+rest, -1
		if imp.Valid {
			sm.Impressions = imp.Int64
		}
		out = append(out, sm)
	}
	return out, dbErr(rows.Err(), "read samples")
}

// Export streams the account's measured rows captured since since (zero:
// all), oldest capture first, for `tuitbot export --what metrics`.
func (s *Store) Export(ctx context.Context, since time.Time, emit store.RowFunc) error {
	from := ""
	if !since.IsZero() {
		from = store.FormatTime(since)
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT captured_at, tweet_id, kind, posted_unix, checkpoint_hours, impressions,
		likes, reposts, replies, quotes, bookmarks, source
		FROM post_metrics WHERE account_id = ? AND captured_at >= ? ORDER BY captured_at, tweet_id, checkpoint_hours`, s.account(), from)
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "read post metrics: %v", err)
	}
	return store.Stream(rows, emit)
}
