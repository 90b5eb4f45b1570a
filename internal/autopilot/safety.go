package autopilot

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/workflow"
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

// column runs a query on the autopilot's ledger that yields one text
// column.
func (r *Runner) column(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := r.d.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read autopilot actions: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read autopilot actions: %v", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read autopilot actions: %v", err)
	}
	return out, nil
}

// counts reads today's counts from the database, so every process (and a
// restarted one) sees the same numbers. A reply counts once per target
// post, whether the ledger of sent replies, the autopilot's own ledger, or
// both hold it.
func (r *Runner) counts(ctx context.Context, now time.Time) (Counts, error) {
	day := ts(dayStart(now))
	acct := r.d.AccountID
	c := Counts{Day: dayStart(now).Format("2006-01-02")}
	open, err := r.openApprovals(ctx)
	if err != nil {
		return c, err
	}
	sent, err := r.d.Workflow.RepliesSince(ctx, dayStart(now))
	if err != nil {
		return c, err
	}
	name := strings.ToLower(strings.TrimSpace(r.cfg.Business.ProductName))
	replied, mentioned := map[string]bool{}, map[string]bool{}
	for _, s := range sent {
		replied[s.TargetTweetID] = true
		if s.MentionsProduct || (name != "" && strings.Contains(strings.ToLower(s.Content), name)) {
			mentioned[s.TargetTweetID] = true
		}
	}
	own, err := r.column(ctx, `SELECT a.target_tweet_id FROM autopilot_actions a WHERE a.account_id = ?1 AND a.kind = 'reply'
		AND a.created_at >= ?2 AND `+countedAction(r.d.DB.Dialect, 3), acct, day, open)
	if err != nil {
		return c, err
	}
	for _, t := range own {
		replied[t] = true
	}
	own, err = r.column(ctx, `SELECT a.target_tweet_id FROM autopilot_actions a WHERE a.account_id = ?1 AND a.kind = 'reply'
		AND a.created_at >= ?2 AND a.mentions_product = 1 AND `+countedAction(r.d.DB.Dialect, 3), acct, day, open)
	if err != nil {
		return c, err
	}
	for _, t := range own {
		mentioned[t] = true
	}
	c.Replies, c.ProductMentions = len(replied), len(mentioned)
	if c.Tweets, err = r.posts(ctx, kindTweet, dayStart(now), open); err != nil {
		return c, err
	}
	if c.ThreadsWeek, err = r.posts(ctx, kindThread, dayStart(now).AddDate(0, 0, -6), open); err != nil {
		return c, err
	}
	c.TargetReplies, err = r.count(ctx, `SELECT count(*) FROM autopilot_actions a WHERE a.account_id = ?1 AND a.loop_name = ?2
		AND a.kind = 'reply' AND a.created_at >= ?3 AND `+countedAction(r.d.DB.Dialect, 4), acct, LoopTargets, day, open)
	return c, err
}

// posts counts the posts of a kind since a time: those on record, plus the
// autopilot's that may be on X without a record (unknown outcome), wait for
// approval, or were posted but never recorded.
func (r *Runner) posts(ctx context.Context, kind string, since time.Time, open string) (int, error) {
	recorded, err := r.d.Workflow.PostIDsSince(ctx, kind, since)
	if err != nil {
		return 0, err
	}
	n := len(recorded)
	pending, err := r.count(ctx, `SELECT count(*) FROM autopilot_actions a WHERE a.account_id = ?1 AND a.kind = ?2 AND a.created_at >= ?3
		AND (a.status = 'unknown' OR `+stillQueued(r.d.DB.Dialect, 4)+`)`, r.d.AccountID, kind, ts(since), open)
	if err != nil {
		return 0, err
	}
	n += pending
	posted, err := r.column(ctx, `SELECT a.tweet_id FROM autopilot_actions a WHERE a.account_id = ?1 AND a.kind = ?2
		AND a.created_at >= ?3 AND a.status = 'posted'`, r.d.AccountID, kind, ts(since))
	if err != nil {
		return 0, err
	}
	known, err := r.d.Workflow.RecordedPosts(ctx, posted)
	if err != nil {
		return 0, err
	}
	for _, id := range posted {
		if !known[id] {
			n++
		}
	}
	return n, nil
}

// authorReplies counts today's replies to one author, once per target
// post. A sent reply is the author's when it names them or when discovery
// found its target written by them.
func (r *Runner) authorReplies(ctx context.Context, authorID string, now time.Time) (int, error) {
	open, err := r.openApprovals(ctx)
	if err != nil {
		return 0, err
	}
	sent, err := r.d.Workflow.RepliesSince(ctx, dayStart(now))
	if err != nil {
		return 0, err
	}
	targets := map[string]bool{}
	var unnamed []string
	for _, s := range sent {
		if s.AuthorID == authorID {
			targets[s.TargetTweetID] = true
		} else {
			unnamed = append(unnamed, s.TargetTweetID)
		}
	}
	found, err := r.d.Discovery.Authors(ctx, unnamed)
	if err != nil {
		return 0, err
	}
	for _, t := range unnamed {
		if a, ok := found[t]; ok && a.ID == authorID {
			targets[t] = true
		}
	}
	own, err := r.column(ctx, `SELECT a.target_tweet_id FROM autopilot_actions a WHERE a.account_id = ?1 AND a.kind = 'reply'
		AND a.author_id = ?2 AND a.created_at >= ?3 AND `+countedAction(r.d.DB.Dialect, 4), r.d.AccountID, authorID, ts(dayStart(now)), open)
	if err != nil {
		return 0, err
	}
	for _, t := range own {
		targets[t] = true
	}
	return len(targets), nil
}

// suggestionsToday counts today's reply suggestions (hand-offs).
func (r *Runner) suggestionsToday(ctx context.Context, now time.Time) (int, error) {
	return r.count(ctx, `SELECT count(*) FROM autopilot_actions WHERE account_id = ?1 AND kind = 'reply' AND status = ?2
		AND created_at >= ?3`, r.d.AccountID, statusSuggested, ts(dayStart(now)))
}

// handled reports whether the account already answered (or tried to
// answer) a post: a reply on record, an autopilot attempt that must not be
// repeated, or the gateway's word that an approval item or an audit row
// (success, pending or unknown) answers it. The audit check is what keeps a
// restarted process from answering twice when it died between X taking a
// reply and the local bookkeeping.
func (r *Runner) handled(ctx context.Context, tweetID string) (bool, error) {
	if done, err := r.d.Workflow.RepliedTo(ctx, tweetID); done || err != nil {
		return done, err
	}
	n, err := r.count(ctx, `SELECT count(*) FROM autopilot_actions WHERE account_id = ?1 AND kind = 'reply' AND target_tweet_id = ?2
		AND status NOT IN ('failed','denied')`, r.d.AccountID, tweetID)
	if err != nil {
		return false, err
	}
	if n != 0 {
		return true, nil
	}
	return gateway.RepliedTo(ctx, r.d.DB, r.d.AccountID, tweetID)
}

// recentTexts are the account's latest replies or tweets, queued ones
// included, newest first, for the similarity check.
func (r *Runner) recentTexts(ctx context.Context, kind string) ([]string, error) {
	n := content.RecentRepliesCompared
	sent, err := r.d.Workflow.RecentTexts(ctx, kind, n)
	if err != nil {
		return nil, err
	}
	rows, err := r.d.DB.QueryContext(ctx, `SELECT content, created_at FROM autopilot_actions WHERE account_id = ? AND kind = ?
		AND status = 'queued' ORDER BY created_at DESC LIMIT ?`, r.d.AccountID, kind, n)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read recent texts: %v", err)
	}
	defer rows.Close()
	var queued []workflow.PostText
	for rows.Next() {
		var p workflow.PostText
		if err := rows.Scan(&p.Content, &p.CreatedAt); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read recent texts: %v", err)
		}
		queued = append(queued, p)
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read recent texts: %v", err)
	}
	return newestTexts(sent, queued, n), nil
}

// newestTexts merges two lists ordered newest first and keeps the n
// newest texts.
func newestTexts(a, b []workflow.PostText, n int) []string {
	var out []string
	for len(out) < n && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || (len(a) > 0 && a[0].CreatedAt >= b[0].CreatedAt) {
			out, a = append(out, a[0].Content), a[1:]
		} else {
			out, b = append(out, b[0].Content), b[1:]
		}
	}
	return out
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

// cursor reads a position the loops keep (last mention seen, next
// topic, served slot) through discovery, which owns the cursors.
func (r *Runner) cursor(ctx context.Context, key string) (string, error) {
	return r.d.Discovery.NamedCursor(ctx, key)
}

func (r *Runner) setCursor(ctx context.Context, key, value string) error {
	return r.d.Discovery.SetNamedCursor(ctx, key, value)
}
