// Package discovery finds reply opportunities: search X, score every tweet
// with the 6-signal scorer, persist them without duplicates, and rank.
package discovery

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/scoring"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Service runs discovery for one account.
type Service struct {
	DB        *store.DB
	X         func() (*xapi.Client, error)
	Keywords  []string
	Weights   scoring.Weights
	Threshold float64
	AccountID string
	Now       func() time.Time
}

// MaxQueryLength is X's limit on a recent-search query.
const MaxQueryLength = 512

// Query is one find_reply_opportunities request.
type Query struct {
	Query    string
	MinScore float64
	Limit    int
	// SinceID overrides the remembered cursor for this query.
	SinceID string
}

// Candidate is one scored tweet.
type Candidate struct {
	TweetID           string            `json:"tweet_id"`
	AuthorID          string            `json:"author_id"`
	AuthorUsername    string            `json:"author_username"`
	AuthorFollowers   int64             `json:"author_followers"`
	Text              string            `json:"text"`
	CreatedAt         string            `json:"created_at"`
	Likes             int64             `json:"like_count"`
	Retweets          int64             `json:"retweet_count"`
	Replies           int64             `json:"reply_count"`
	Quotes            int64             `json:"quote_count"`
	Impressions       int64             `json:"impression_count"`
	HasMedia          bool              `json:"has_media"`
	IsQuote           bool              `json:"is_quote"`
	Score             float64           `json:"score_total"`
	Breakdown         scoring.Breakdown `json:"score_breakdown"`
	MatchedKeywords   []string          `json:"matched_keywords"`
	RecommendedAction string            `json:"recommended_action"`
	AlreadyReplied    bool              `json:"already_replied"`
	DiscoveredAt      string            `json:"discovered_at,omitempty"`
}

// Result is find_reply_opportunities' data.
type Result struct {
	Candidates    []Candidate `json:"candidates"`
	TotalSearched int         `json:"total_searched"`
	NewTweets     int         `json:"new_tweets"`
	Query         string      `json:"query"`
	Threshold     float64     `json:"threshold"`
	SinceID       string      `json:"since_id,omitempty"`
	NewestID      string      `json:"newest_id,omitempty"`
}

func (s *Service) account() string {
	if s.AccountID == "" {
		return "default"
	}
	return s.AccountID
}

// DefaultQuery is the product keywords joined with OR, quoted when they
// contain spaces. A keyword listed twice (in two config lists, or in
// another case: X search ignores case) appears once, so it neither wastes
// the query's length limit nor reads as a mistake.
func (s *Service) DefaultQuery() string {
	var parts []string
	seen := map[string]bool{}
	for _, k := range s.Keywords {
		k = strings.TrimSpace(k)
		if k == "" || seen[strings.ToLower(k)] {
			continue
		}
		seen[strings.ToLower(k)] = true
		if strings.ContainsAny(k, " \t") {
			k = `"` + strings.ReplaceAll(k, `"`, "") + `"`
		}
		parts = append(parts, k)
	}
	return strings.Join(parts, " OR ")
}

func cursorKey(q string) string { return "discovery_since:" + q }

// Cursor returns the remembered since_id of a query.
func (s *Service) Cursor(ctx context.Context, q string) (string, error) {
	var v string
	err := s.DB.QueryRowContext(ctx, `SELECT value FROM cursors WHERE account_id = ? AND key = ?`, s.account(), cursorKey(q)).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (s *Service) setCursor(ctx context.Context, q, v string) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO cursors (account_id, key, value, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(account_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		s.account(), cursorKey(q), v, store.FormatTime(s.Now()))
	return err
}

// Find searches X, scores, persists and ranks. Repeated calls resume from
// the remembered since_id, so the same tweets are not bought twice.
func (s *Service) Find(ctx context.Context, q Query) (*Result, error) {
	if q.Query == "" {
		q.Query = s.DefaultQuery()
	}
	if strings.TrimSpace(q.Query) == "" {
		return nil, apperr.New(apperr.InvalidInput, "query: required (or set business.product_keywords)")
	}
	// X refuses longer recent-search queries with a bare 400; say which
	// field is wrong before spending a request.
	if len(q.Query) > MaxQueryLength {
		return nil, apperr.New(apperr.InvalidInput, "query: %d characters, X accepts at most %d (pass a shorter query or fewer business keywords)", len(q.Query), MaxQueryLength)
	}
	if q.Limit <= 0 {
		q.Limit = 10
	}
	since := q.SinceID
	if since == "" {
		c, err := s.Cursor(ctx, q.Query)
		if err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read discovery cursor: %v", err)
		}
		since = c
	}
	x, err := s.X()
	if err != nil {
		return nil, err
	}
	me, err := x.MyUserID(ctx)
	if err != nil {
		return nil, err
	}
	page, err := x.SearchRecent(ctx, xapi.SearchParams{Query: q.Query, MaxResults: min(max(q.Limit*2, 10), 100), SinceID: since})
	if err != nil {
		return nil, err
	}
	scorer := scoring.New(s.Keywords, s.Weights, s.Now)
	res := &Result{Candidates: []Candidate{}, TotalSearched: len(page.Data), Query: q.Query, Threshold: q.MinScore, SinceID: since, NewestID: page.Meta.NewestID}
	var all []Candidate
	for _, tw := range page.Data {
		if !replyable(tw, me) {
			continue
		}
		c := s.candidate(scorer, tw)
		isNew, err := s.persist(ctx, c, q.Query)
		if err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "store discovered tweet: %v", err)
		}
		if isNew {
			res.NewTweets++
		}
		all = append(all, c)
	}
	if page.Meta.NewestID != "" {
		if err := s.setCursor(ctx, q.Query, page.Meta.NewestID); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "save discovery cursor: %v", err)
		}
	}
	if err := s.markReplied(ctx, all); err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Score > all[j].Score })
	for _, c := range all {
		if c.Score >= q.MinScore && len(res.Candidates) < q.Limit {
			res.Candidates = append(res.Candidates, c)
		}
	}
	return res, nil
}

// replyable reports whether a search hit is a reply opportunity at all: our
// own posts are not (replying to ourselves), and neither are reposts, whose
// conversation belongs to the original post.
func replyable(tw xapi.Tweet, me string) bool {
	if tw.AuthorID == me {
		return false
	}
	for _, r := range tw.ReferencedTweets {
		if r.Type == "retweeted" {
			return false
		}
	}
	return true
}

func (s *Service) candidate(sc *scoring.Scorer, tw xapi.Tweet) Candidate {
	in := scoring.Input{Text: tw.Text, CreatedAt: tw.CreatedAt,
		Likes: tw.PublicMetrics.LikeCount, Retweets: tw.PublicMetrics.RetweetCount, Replies: tw.PublicMetrics.ReplyCount,
		Quotes: tw.PublicMetrics.QuoteCount, Impressions: tw.PublicMetrics.ImpressionCount}
	if tw.Author != nil {
		in.AuthorUsername, in.AuthorFollowers = tw.Author.Username, tw.Author.PublicMetrics.FollowersCount
	}
	in.HasMedia = tw.Attachments != nil && len(tw.Attachments.MediaKeys) > 0
	for _, r := range tw.ReferencedTweets {
		switch r.Type {
		case "quoted":
			in.IsQuote = true
		case "retweeted":
			in.IsRetweet = true
		case "replied_to":
			in.IsReply = true
		}
	}
	b := sc.Score(in)
	kw := b.MatchedKeywords
	if kw == nil {
		kw = []string{}
	}
	c := Candidate{TweetID: tw.ID, AuthorID: tw.AuthorID, AuthorUsername: in.AuthorUsername, AuthorFollowers: in.AuthorFollowers,
		Text: tw.Text, Likes: in.Likes, Retweets: in.Retweets, Replies: in.Replies, Quotes: in.Quotes, Impressions: in.Impressions,
		HasMedia: in.HasMedia, IsQuote: in.IsQuote, Score: b.Total, Breakdown: b, MatchedKeywords: kw,
		RecommendedAction: scoring.Recommend(b.Total, s.Threshold)}
	if !tw.CreatedAt.IsZero() {
		c.CreatedAt = tw.CreatedAt.UTC().Format(time.RFC3339)
	}
	return c
}

// persist upserts a discovered tweet; the metrics and score are refreshed,
// the discovery time and reply state are kept.
func (s *Service) persist(ctx context.Context, c Candidate, query string) (bool, error) {
	bd, _ := json.Marshal(c.Breakdown)
	kw, _ := json.Marshal(c.MatchedKeywords)
	res, err := s.DB.ExecContext(ctx, `INSERT INTO discovered_tweets (tweet_id, account_id, author_id, author_username, author_followers,
		content, tweet_created_at, like_count, retweet_count, reply_count, quote_count, impression_count, has_media, is_quote,
		relevance_score, score_breakdown, matched_keywords, query, discovered_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(account_id, tweet_id) DO NOTHING`,
		c.TweetID, s.account(), c.AuthorID, c.AuthorUsername, c.AuthorFollowers, c.Text, c.CreatedAt, c.Likes, c.Retweets,
		c.Replies, c.Quotes, c.Impressions, c.HasMedia, c.IsQuote, c.Score, string(bd), string(kw), query, store.FormatTime(s.Now()))
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	if n == 1 {
		return true, nil
	}
	_, err = s.DB.ExecContext(ctx, `UPDATE discovered_tweets SET like_count = ?, retweet_count = ?, reply_count = ?, quote_count = ?,
		impression_count = ?, relevance_score = ?, score_breakdown = ?, author_followers = ? WHERE account_id = ? AND tweet_id = ?`,
		c.Likes, c.Retweets, c.Replies, c.Quotes, c.Impressions, c.Score, string(bd), c.AuthorFollowers, s.account(), c.TweetID)
	return false, err
}

func (s *Service) markReplied(ctx context.Context, cs []Candidate) error {
	for i := range cs {
		var replied int
		err := s.DB.QueryRowContext(ctx, `SELECT replied_to FROM discovered_tweets WHERE account_id = ? AND tweet_id = ?`, s.account(), cs[i].TweetID).Scan(&replied)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return apperr.Wrap(apperr.DBError, err, "read discovered tweet: %v", err)
		}
		cs[i].AlreadyReplied = replied == 1
	}
	return nil
}

const rowCols = `tweet_id, author_id, author_username, author_followers, content, tweet_created_at, like_count, retweet_count,
	reply_count, quote_count, impression_count, has_media, is_quote, relevance_score, score_breakdown, matched_keywords, replied_to, discovered_at`

func (s *Service) scanRows(rows *sql.Rows) ([]Candidate, error) {
	defer rows.Close()
	out := []Candidate{}
	for rows.Next() {
		var c Candidate
		var bd, kw string
		var replied int
		if err := rows.Scan(&c.TweetID, &c.AuthorID, &c.AuthorUsername, &c.AuthorFollowers, &c.Text, &c.CreatedAt, &c.Likes,
			&c.Retweets, &c.Replies, &c.Quotes, &c.Impressions, &c.HasMedia, &c.IsQuote, &c.Score, &bd, &kw, &replied, &c.DiscoveredAt); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read discovered tweets: %v", err)
		}
		_ = json.Unmarshal([]byte(bd), &c.Breakdown)
		_ = json.Unmarshal([]byte(kw), &c.MatchedKeywords)
		c.AlreadyReplied = replied == 1
		c.RecommendedAction = scoring.Recommend(c.Score, s.Threshold)
		out = append(out, c)
	}
	return out, rows.Err()
}

// Feed reads scored, unreplied tweets from the database only.
func (s *Service) Feed(ctx context.Context, minScore float64, limit int) ([]Candidate, error) {
	if limit <= 0 {
		limit = 10
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT `+rowCols+` FROM discovered_tweets WHERE account_id = ? AND replied_to = 0
		AND relevance_score >= ? ORDER BY relevance_score DESC, tweet_id DESC LIMIT ?`, s.account(), minScore, limit)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read discovery feed: %v", err)
	}
	return s.scanRows(rows)
}

// Get returns one discovered tweet.
func (s *Service) Get(ctx context.Context, tweetID string) (*Candidate, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+rowCols+` FROM discovered_tweets WHERE account_id = ? AND tweet_id = ?`, s.account(), tweetID)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read discovered tweet: %v", err)
	}
	cs, err := s.scanRows(rows)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, apperr.New(apperr.NotFound, "candidate %s is not in the discovery feed; run find_reply_opportunities first", tweetID)
	}
	return &cs[0], nil
}

// Author is who wrote a discovered tweet.
type Author struct {
	ID       string
	Username string
}

// Authors returns the authors of those of tweetIDs discovery has seen, by
// tweet id; tweets it never found are absent. Replies and the per-author
// limits learn a target's author here when their caller did not know it.
func (s *Service) Authors(ctx context.Context, tweetIDs []string) (map[string]Author, error) {
	out := map[string]Author{}
	// Chunks keep the statement under SQLite's bound-parameter limit.
	const chunk = 500
	for start := 0; start < len(tweetIDs); start += chunk {
		ids := tweetIDs[start:min(start+chunk, len(tweetIDs))]
		args := []any{s.account()}
		for _, id := range ids {
			args = append(args, id)
		}
		rows, err := s.DB.QueryContext(ctx, `SELECT tweet_id, author_id, author_username FROM discovered_tweets
			WHERE account_id = ? AND tweet_id IN (`+placeholders(len(ids))+`)`, args...)
		if err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read discovered authors: %v", err)
		}
		for rows.Next() {
			var id string
			var a Author
			if err := rows.Scan(&id, &a.ID, &a.Username); err != nil {
				rows.Close()
				return nil, apperr.Wrap(apperr.DBError, err, "read discovered authors: %v", err)
			}
			out[id] = a
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read discovered authors: %v", err)
		}
	}
	return out, nil
}

// Username is the handle of author id as discovery last saw it, "" when
// it never found a post of theirs: what tuitbot knows before a read of X.
func (s *Service) Username(ctx context.Context, id string) (string, error) {
	var name string
	err := s.DB.QueryRowContext(ctx, `SELECT author_username FROM discovered_tweets WHERE account_id = ? AND author_id = ? AND author_username <> ''
		ORDER BY discovered_at DESC LIMIT 1`, s.account(), id).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", apperr.Wrap(apperr.DBError, err, "read a discovered author: %v", err)
	}
	return name, nil
}

// placeholders is n comma-separated bind parameters.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// AuthorTweetIDs lists the discovered tweets one author wrote.
func (s *Service) AuthorTweetIDs(ctx context.Context, authorID string) ([]string, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT tweet_id FROM discovered_tweets WHERE account_id = ? AND author_id = ? ORDER BY tweet_id`,
		s.account(), authorID)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read discovered tweets: %v", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read discovered tweets: %v", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read discovered tweets: %v", err)
	}
	return out, nil
}

// MarkReplied records that the account answered a discovered tweet, so the
// feed stops offering it. A tweet discovery never found is left alone.
func (s *Service) MarkReplied(ctx context.Context, tweetID, replyTweetID string) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE discovered_tweets SET replied_to = 1, reply_tweet_id = ? WHERE account_id = ? AND tweet_id = ?`,
		replyTweetID, s.account(), tweetID)
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "mark discovered tweet replied: %v", err)
	}
	return nil
}

// NamedCursor reads a position other loops keep beside the search cursors
// (the last mention seen, the next topic); empty when never set.
func (s *Service) NamedCursor(ctx context.Context, key string) (string, error) {
	var v string
	err := s.DB.QueryRowContext(ctx, `SELECT value FROM cursors WHERE account_id = ? AND key = ?`, s.account(), key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", apperr.Wrap(apperr.DBError, err, "read cursor %s: %v", key, err)
	}
	return v, nil
}

// SetNamedCursor stores a position NamedCursor reads.
func (s *Service) SetNamedCursor(ctx context.Context, key, value string) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO cursors (account_id, key, value, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(account_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		s.account(), key, value, store.FormatTime(s.Now()))
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "save cursor %s: %v", key, err)
	}
	return nil
}
