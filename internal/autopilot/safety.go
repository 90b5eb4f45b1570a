package autopilot

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
)

// A queued autopilot action counts against the caps while a human can still
// approve it; once executed it is counted from replies_sent or
// original_tweets like any other post. Which approval items are still open
// is the gateway's to say (gateway.OpenApprovals): the query gets their ids
// as a JSON array in parameter n.
func stillQueued(d store.Dialect, n int) string {
	if d == store.Postgres {
		return fmt.Sprintf(`(a.status = 'queued' AND a.approval_id IN (SELECT value::bigint FROM json_array_elements_text(?%d::json)))`, n)
	}
	return fmt.Sprintf(`(a.status = 'queued' AND a.approval_id IN (SELECT value FROM json_each(?%d)))`, n)
}

// countedAction is an autopilot action that uses up a cap: posted (or
// maybe posted) or still waiting for approval.
func countedAction(d store.Dialect, n int) string {
	return `(a.status IN ('posted','unknown') OR ` + stillQueued(d, n) + `)`
}

// openApprovals is the JSON array of the approval items a human can still
// act on, for stillQueued.
func (r *Runner) openApprovals(ctx context.Context) (string, error) {
	ids, err := gateway.OpenApprovals(ctx, r.d.DB, r.d.AccountID)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return "", apperr.Wrap(apperr.InternalError, err, "encode approval ids: %v", err)
	}
	return string(b), nil
}

// Counts are today's (UTC) actions against their caps.
type Counts struct {
	Day string `json:"day"`
	// Replies counts every reply of the account today, the autopilot's
	// queued ones included.
	Replies int `json:"replies"`
	// ProductMentions counts the replies among them that name the product.
	ProductMentions int `json:"product_mentions"`
	Tweets          int `json:"tweets"`
	// ThreadsWeek counts threads of the last seven UTC days.
	ThreadsWeek   int `json:"threads_week"`
	TargetReplies int `json:"target_replies"`
}

func (r *Runner) count(ctx context.Context, q string, args ...any) (int, error) {
	var n int
	if err := r.d.DB.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, apperr.Wrap(apperr.DBError, err, "count autopilot actions: %v", err)
	}
	return n, nil
}

// counts reads today's counts from the database, so every process (and a
// restarted one) sees the same numbers.
func (r *Runner) counts(ctx context.Context, now time.Time) (Counts, error) {
	day := ts(dayStart(now))
	week := ts(dayStart(now).AddDate(0, 0, -6))
	acct := r.d.AccountID
	c := Counts{Day: dayStart(now).Format("2006-01-02")}
	open, err := r.openApprovals(ctx)
	if err != nil {
		return c, err
	}
	if c.Replies, err = r.count(ctx, `SELECT count(*) FROM (
		SELECT target_tweet_id FROM replies_sent WHERE account_id = ?1 AND created_at >= ?2
		UNION
		SELECT a.target_tweet_id FROM autopilot_actions a WHERE a.account_id = ?1 AND a.kind = 'reply' AND a.created_at >= ?2
			AND `+countedAction(r.d.DB.Dialect, 3)+`)`, acct, day, open); err != nil {
		return c, err
	}
	name := strings.TrimSpace(r.cfg.Business.ProductName)
	// SQLite's instr is PostgreSQL's strpos.
	contains := "instr"
	if r.d.DB.Dialect == store.Postgres {
		contains = "strpos"
	}
	if c.ProductMentions, err = r.count(ctx, `SELECT count(*) FROM (
		SELECT target_tweet_id FROM replies_sent WHERE account_id = ?1 AND created_at >= ?2
			AND (mentions_product = 1 OR (?3 != '' AND `+contains+`(lower(content), lower(?3)) > 0))
		UNION
		SELECT a.target_tweet_id FROM autopilot_actions a WHERE a.account_id = ?1 AND a.kind = 'reply' AND a.created_at >= ?2
			AND a.mentions_product = 1 AND `+countedAction(r.d.DB.Dialect, 4)+`)`, acct, day, name, open); err != nil {
		return c, err
	}
	posts := func(kind, since string) (int, error) {
		return r.count(ctx, `SELECT
			(SELECT count(*) FROM original_tweets WHERE account_id = ?1 AND kind = ?2 AND created_at >= ?3) +
			(SELECT count(*) FROM autopilot_actions a WHERE a.account_id = ?1 AND a.kind = ?2 AND a.created_at >= ?3
				AND (a.status = 'unknown' OR `+stillQueued(r.d.DB.Dialect, 4)+` OR (a.status = 'posted' AND NOT EXISTS (
					SELECT 1 FROM original_tweets o WHERE o.account_id = a.account_id AND o.tweet_id = a.tweet_id))))`, acct, kind, since, open)
	}
	if c.Tweets, err = posts(kindTweet, day); err != nil {
		return c, err
	}
	if c.ThreadsWeek, err = posts(kindThread, week); err != nil {
		return c, err
	}
	c.TargetReplies, err = r.count(ctx, `SELECT count(*) FROM autopilot_actions a WHERE a.account_id = ?1 AND a.loop_name = ?2
		AND a.kind = 'reply' AND a.created_at >= ?3 AND `+countedAction(r.d.DB.Dialect, 4), acct, LoopTargets, day, open)
	return c, err
}

// authorReplies counts today's replies to one author.
func (r *Runner) authorReplies(ctx context.Context, authorID string, now time.Time) (int, error) {
	open, err := r.openApprovals(ctx)
	if err != nil {
		return 0, err
	}
	return r.count(ctx, `SELECT count(*) FROM (
		SELECT s.target_tweet_id FROM replies_sent s LEFT JOIN discovered_tweets d ON d.account_id = s.account_id AND d.tweet_id = s.target_tweet_id
			WHERE s.account_id = ?1 AND s.created_at >= ?2 AND (s.author_id = ?3 OR d.author_id = ?3)
		UNION
		SELECT a.target_tweet_id FROM autopilot_actions a WHERE a.account_id = ?1 AND a.kind = 'reply' AND a.author_id = ?3
			AND a.created_at >= ?2 AND `+countedAction(r.d.DB.Dialect, 4)+`)`, r.d.AccountID, ts(dayStart(now)), authorID, open)
}

// handled reports whether the account already answered (or tried to
// answer) a post: a reply on record, an autopilot attempt that must not be
// repeated, or the gateway's word that an approval item or an audit row
// (success, pending or unknown) answers it. The audit check is what keeps a
// restarted process from answering twice when it died between X taking a
// reply and the local bookkeeping.
func (r *Runner) handled(ctx context.Context, tweetID string) (bool, error) {
	var n bool
	err := r.d.DB.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM replies_sent WHERE account_id = ?1 AND target_tweet_id = ?2)
		OR EXISTS (SELECT 1 FROM autopilot_actions WHERE account_id = ?1 AND kind = 'reply' AND target_tweet_id = ?2
			AND status NOT IN ('failed','denied'))`,
		r.d.AccountID, tweetID).Scan(&n)
	if err != nil {
		return false, apperr.Wrap(apperr.DBError, err, "check earlier replies: %v", err)
	}
	if n {
		return true, nil
	}
	return gateway.RepliedTo(ctx, r.d.DB, r.d.AccountID, tweetID)
}

// recentTexts are the account's latest replies or tweets, queued ones
// included, newest first, for the similarity check.
func (r *Runner) recentTexts(ctx context.Context, kind string) ([]string, error) {
	q := `SELECT content FROM (
		SELECT content, created_at FROM replies_sent WHERE account_id = ?1
		UNION ALL
		SELECT content, created_at FROM autopilot_actions WHERE account_id = ?1 AND kind = 'reply' AND status = 'queued'
	) ORDER BY created_at DESC LIMIT ?2`
	if kind == kindTweet {
		q = `SELECT content FROM (
			SELECT content, created_at FROM original_tweets WHERE account_id = ?1 AND kind = 'tweet'
			UNION ALL
			SELECT content, created_at FROM autopilot_actions WHERE account_id = ?1 AND kind = 'tweet' AND status = 'queued'
		) ORDER BY created_at DESC LIMIT ?2`
	}
	rows, err := r.d.DB.QueryContext(ctx, q, r.d.AccountID, content.RecentRepliesCompared)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read recent texts: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read recent texts: %v", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// lastAction is when a loop last posted or queued something; zero if never.
func (r *Runner) lastAction(ctx context.Context, loop string) (time.Time, error) {
	var s sql.NullString
	err := r.d.DB.QueryRowContext(ctx, `SELECT max(created_at) FROM autopilot_actions WHERE account_id = ? AND loop_name = ?
		AND status IN ('posted','queued','unknown')`, r.d.AccountID, loop).Scan(&s)
	if err != nil {
		return time.Time{}, apperr.Wrap(apperr.DBError, err, "read last action: %v", err)
	}
	return parseTS(s), nil
}

// mentionsProduct reports whether text names the product (or links it).
func (r *Runner) mentionsProduct(text string) bool {
	low := strings.ToLower(text)
	b := r.cfg.Business
	if n := strings.ToLower(strings.TrimSpace(b.ProductName)); n != "" && strings.Contains(low, n) {
		return true
	}
	if u := strings.ToLower(strings.TrimSpace(b.ProductURL)); u != "" {
		u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
		if u = strings.TrimSuffix(u, "/"); u != "" && strings.Contains(low, u) {
			return true
		}
	}
	return false
}

// mayMention decides whether the next reply may mention the product so
// that the share of today's replies that do stays within
// limits.product_mention_ratio once it is sent.
func (r *Runner) mayMention(c Counts) bool {
	if strings.TrimSpace(r.cfg.Business.ProductName) == "" {
		return false
	}
	ratio := r.cfg.Limits.ProductMentionRatio
	return float64(c.ProductMentions+1) <= ratio*float64(c.Replies+1)+1e-9
}

// cursor reads a value the loops keep in the cursors table.
func (r *Runner) cursor(ctx context.Context, key string) (string, error) {
	var v string
	err := r.d.DB.QueryRowContext(ctx, `SELECT value FROM cursors WHERE account_id = ? AND key = ?`, r.d.AccountID, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", apperr.Wrap(apperr.DBError, err, "read cursor %s: %v", key, err)
	}
	return v, nil
}

func (r *Runner) setCursor(ctx context.Context, key, value string) error {
	_, err := r.d.DB.ExecContext(ctx, `INSERT INTO cursors (account_id, key, value, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(account_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		r.d.AccountID, key, value, ts(r.now()))
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "save cursor %s: %v", key, err)
	}
	return nil
}
