package workflow

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// The kinds of the account's own posts in original_tweets.
const (
	KindTweet  = "tweet"
	KindThread = "thread"
	// KindReply is what RecentTexts and Unmeasured call a reply.
	KindReply = "reply"
)

// SentReply is one reply the account sent, as the local ledger keeps it.
type SentReply struct {
	TargetTweetID   string
	ReplyTweetID    string
	AuthorID        string
	AuthorUsername  string
	Content         string
	MentionsProduct bool
	Caller          string
	CreatedAt       string
}

// RecordReply keeps a reply X took, stamped now. The caller defaults to mcp
// until SendReply (or recordAuthor) says otherwise.
func (s *Service) RecordReply(ctx context.Context, r SentReply) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO replies_sent (account_id, target_tweet_id, reply_tweet_id, content, created_at, author_id, author_username)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		s.account(), r.TargetTweetID, r.ReplyTweetID, r.Content, s.ts(s.Now()), r.AuthorID, r.AuthorUsername)
	return dbErr(err, "record reply")
}

// RepliesSince lists the replies sent at or after since, oldest first.
func (s *Service) RepliesSince(ctx context.Context, since time.Time) ([]SentReply, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT target_tweet_id, reply_tweet_id, author_id, author_username, content, mentions_product,
		caller, created_at FROM replies_sent WHERE account_id = ? AND created_at >= ? ORDER BY created_at, id`, s.account(), s.ts(since))
	if err != nil {
		return nil, dbErr(err, "read replies")
	}
	defer rows.Close()
	var out []SentReply
	for rows.Next() {
		var r SentReply
		var mention int
		if err := rows.Scan(&r.TargetTweetID, &r.ReplyTweetID, &r.AuthorID, &r.AuthorUsername, &r.Content, &mention,
			&r.Caller, &r.CreatedAt); err != nil {
			return nil, dbErr(err, "read replies")
		}
		r.MentionsProduct = mention == 1
		out = append(out, r)
	}
	return out, dbErr(rows.Err(), "read replies")
}

// RepliedTo reports whether the ledger holds a reply to a post.
func (s *Service) RepliedTo(ctx context.Context, targetTweetID string) (bool, error) {
	n, err := s.count(ctx, `SELECT count(*) FROM replies_sent WHERE account_id = ? AND target_tweet_id = ?`, s.account(), targetTweetID)
	return n > 0, dbErr(err, "read replies")
}

// RecordPost keeps a tweet or thread (by its first post) X took, stamped
// now. Inside a call the gateway executes, the row is written with the
// call's completion (see RecordXUsage).
func (s *Service) RecordPost(ctx context.Context, kind, tweetID, text string) error {
	args := []any{s.account(), tweetID, kind, text, s.ts(s.Now())}
	if ok, err := store.Defer(ctx, qInsertPost, args...); ok || err != nil {
		return dbErr(err, "record post")
	}
	_, err := s.DB.ExecContext(ctx, qInsertPost, args...)
	return dbErr(err, "record post")
}

const qInsertPost = `INSERT INTO original_tweets (account_id, tweet_id, kind, content, created_at) VALUES (?, ?, ?, ?, ?)`

// TagPost records a post's topic and caller, for topic performance.
func (s *Service) TagPost(ctx context.Context, tweetID, topic, caller string) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE original_tweets SET topic = ?, caller = ? WHERE account_id = ? AND tweet_id = ?`,
		topic, caller, s.account(), tweetID)
	return dbErr(err, "tag post")
}

// PostIDsSince lists the ids of the posts of one kind made at or after
// since.
func (s *Service) PostIDsSince(ctx context.Context, kind string, since time.Time) ([]string, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT tweet_id FROM original_tweets WHERE account_id = ? AND kind = ? AND created_at >= ?
		ORDER BY created_at, id`, s.account(), kind, s.ts(since))
	if err != nil {
		return nil, dbErr(err, "read posts")
	}
	return scanStrings(rows, "read posts")
}

// RecordedPosts reports which of tweetIDs the ledger holds as posts, of any
// kind and age.
func (s *Service) RecordedPosts(ctx context.Context, tweetIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	// Chunks keep the statement under SQLite's bound-parameter limit.
	const chunk = 500
	for start := 0; start < len(tweetIDs); start += chunk {
		ids := tweetIDs[start:min(start+chunk, len(tweetIDs))]
		args := []any{s.account()}
		for _, id := range ids {
			args = append(args, id)
		}
		rows, err := s.DB.QueryContext(ctx, `SELECT tweet_id FROM original_tweets WHERE account_id = ? AND tweet_id IN (`+
			strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")+`)`, args...)
		if err != nil {
			return nil, dbErr(err, "read posts")
		}
		found, err := scanStrings(rows, "read posts")
		if err != nil {
			return nil, err
		}
		for _, id := range found {
			out[id] = true
		}
	}
	return out, nil
}

// PostText is one of the account's texts with when it was posted.
type PostText struct {
	Content   string
	CreatedAt string
}

// RecentTexts are the last n replies (kind reply) or tweets (kind tweet),
// newest first, for the similarity check.
func (s *Service) RecentTexts(ctx context.Context, kind string, n int) ([]PostText, error) {
	q := `SELECT content, created_at FROM replies_sent WHERE account_id = ? ORDER BY created_at DESC LIMIT ?`
	args := []any{s.account(), n}
	if kind != KindReply {
		q = `SELECT content, created_at FROM original_tweets WHERE account_id = ? AND kind = ? ORDER BY created_at DESC LIMIT ?`
		args = []any{s.account(), kind, n}
	}
	rows, err := s.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, dbErr(err, "read recent texts")
	}
	defer rows.Close()
	var out []PostText
	for rows.Next() {
		var p PostText
		if err := rows.Scan(&p.Content, &p.CreatedAt); err != nil {
			return nil, dbErr(err, "read recent texts")
		}
		out = append(out, p)
	}
	return out, dbErr(rows.Err(), "read recent texts")
}

// OwnPost is a post or reply of the account awaiting measurement.
type OwnPost struct {
	TweetID string
	Kind    string
	Topic   string
}

// Unmeasured lists up to limit posts and replies made between from and to
// (inclusive) that have no performance yet, oldest first.
func (s *Service) Unmeasured(ctx context.Context, from, to time.Time, limit int) ([]OwnPost, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT id, kind, topic FROM (
		SELECT tweet_id AS id, kind, topic, created_at FROM original_tweets WHERE account_id = ?1 AND created_at <= ?2 AND created_at >= ?3
		UNION ALL
		SELECT reply_tweet_id, 'reply', '', created_at FROM replies_sent WHERE account_id = ?1 AND created_at <= ?2 AND created_at >= ?3
	) p WHERE NOT EXISTS (SELECT 1 FROM tweet_performance t WHERE t.account_id = ?1 AND t.tweet_id = p.id)
	ORDER BY created_at LIMIT ?4`, s.account(), s.ts(to), s.ts(from), limit)
	if err != nil {
		return nil, dbErr(err, "read own posts")
	}
	defer rows.Close()
	var out []OwnPost
	for rows.Next() {
		var p OwnPost
		if err := rows.Scan(&p.TweetID, &p.Kind, &p.Topic); err != nil {
			return nil, dbErr(err, "read own posts")
		}
		out = append(out, p)
	}
	return out, dbErr(rows.Err(), "read own posts")
}

// Performance is one measurement of a post.
type Performance struct {
	TweetID, Kind, Topic                  string
	Likes, Retweets, Replies, Impressions int64
	Score                                 float64
}

// RecordPerformance stores a post's measurement, stamped now; a post is
// measured once, so a second measurement is ignored.
func (s *Service) RecordPerformance(ctx context.Context, p Performance) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO tweet_performance (tweet_id, account_id, kind, topic, likes, retweets, replies,
		impressions, score, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(account_id, tweet_id) DO NOTHING`,
		p.TweetID, s.account(), p.Kind, p.Topic, p.Likes, p.Retweets, p.Replies, p.Impressions, p.Score, s.ts(s.Now()))
	return dbErr(err, "store performance")
}

func scanStrings(rows *sql.Rows, what string) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, dbErr(err, what)
		}
		out = append(out, v)
	}
	return out, dbErr(rows.Err(), what)
}

// PostedAt is one of the account's own posts or replies and when it was
// made.
type PostedAt struct {
	TweetID string
	// Kind is KindTweet, KindThread or KindReply.
	Kind string
	At   time.Time
}

// PostedBetween lists the posts and replies made between from and to
// (inclusive), oldest first: what the analytics loop measures at fixed
// ages.
func (s *Service) PostedBetween(ctx context.Context, from, to time.Time) ([]PostedAt, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT id, kind, created_at FROM (
		SELECT tweet_id AS id, kind, created_at FROM original_tweets WHERE account_id = ?1 AND created_at <= ?2 AND created_at >= ?3
		UNION ALL
		SELECT reply_tweet_id, 'reply', created_at FROM replies_sent WHERE account_id = ?1 AND created_at <= ?2 AND created_at >= ?3
	) p ORDER BY created_at`, s.account(), s.ts(to), s.ts(from))
	if err != nil {
		return nil, dbErr(err, "read own posts")
	}
	defer rows.Close()
	var out []PostedAt
	for rows.Next() {
		var p PostedAt
		var at string
		if err := rows.Scan(&p.TweetID, &p.Kind, &at); err != nil {
			return nil, dbErr(err, "read own posts")
		}
		if p.At, err = store.ParseTime(at); err != nil {
			return nil, dbErr(err, "read own posts")
		}
		out = append(out, p)
	}
	return out, dbErr(rows.Err(), "read own posts")
}
