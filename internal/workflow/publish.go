package workflow

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
)

// Draft statuses the scheduled publisher moves drafts through.
const (
	DraftScheduled  = "scheduled"
	DraftPublishing = "publishing"
	DraftPosted     = "posted"
	DraftQueued     = "queued"
	DraftFailed     = "failed"
)

// DueDraft is a scheduled draft whose time has come.
type DueDraft struct {
	ID          int64
	ContentType string
	// Content is the text, or a thread's posts as a JSON array.
	Content string
	Topic   string
	// EvergreenTweetID is the post a recycled evergreen item reposts or
	// quotes (or whose variant it posts).
	EvergreenTweetID string
	// ScheduledFor is the time it was due at when read: claiming it
	// checks that it still is (a missed slot may have moved it).
	ScheduledFor string
	// Options are the post settings to send with it.
	Options *actions.PostOptions
}

// DueDrafts lists up to limit scheduled drafts due now, earliest first.
func (s *Service) DueDrafts(ctx context.Context, limit int) ([]DueDraft, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT id, content_type, content, COALESCE(options,''), topic, COALESCE(evergreen_tweet_id, ''), scheduled_for FROM drafts WHERE account_id = ? AND status = ?
		AND scheduled_for <= ? ORDER BY scheduled_for, id LIMIT ?`, s.account(), DraftScheduled, s.ts(s.Now()), limit)
	if err != nil {
		return nil, dbErr(err, "read scheduled drafts")
	}
	defer rows.Close()
	var out []DueDraft
	for rows.Next() {
		var d DueDraft
		var opts string
		if err := rows.Scan(&d.ID, &d.ContentType, &d.Content, &opts, &d.Topic, &d.EvergreenTweetID, &d.ScheduledFor); err != nil {
			return nil, dbErr(err, "read scheduled drafts")
		}
		if d.Options, err = parseOptions(opts); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "draft %d: %v", d.ID, err)
		}
		out = append(out, d)
	}
	return out, dbErr(rows.Err(), "read scheduled drafts")
}

// ClaimDraft moves a due draft to publishing; false when it is no longer
// scheduled at the time it was read for (another process took it, it was
// edited, or its missed slot moved it). Claiming first means a process
// that dies mid-post leaves the draft in publishing, never posted a
// second time.
func (s *Service) ClaimDraft(ctx context.Context, d DueDraft) (bool, error) {
	res, err := s.DB.ExecContext(ctx, `UPDATE drafts SET status = ?, updated_at = ? WHERE id = ? AND account_id = ? AND status = ? AND scheduled_for = ?`,
		DraftPublishing, s.ts(s.Now()), d.ID, s.account(), DraftScheduled, d.ScheduledFor)
	if err != nil {
		return false, dbErr(err, "claim draft")
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SetDraftStatus records what publishing a draft led to; an empty
// postedTweetID or a zero approvalID keeps the stored one.
func (s *Service) SetDraftStatus(ctx context.Context, id int64, status, postedTweetID string, approvalID int64) error {
	var approval any
	if approvalID != 0 {
		approval = approvalID
	}
	tweet := sql.NullString{String: postedTweetID, Valid: postedTweetID != ""}
	_, err := s.DB.ExecContext(ctx, `UPDATE drafts SET status = ?, posted_tweet_id = COALESCE(?, posted_tweet_id),
		approval_id = COALESCE(?, approval_id), updated_at = ? WHERE id = ? AND account_id = ?`,
		status, tweet, approval, s.ts(s.Now()), id, s.account())
	return dbErr(err, "update draft status")
}

// FailPublishing marks failed the drafts a dead process was publishing:
// whether X took them is unknown, and a second attempt could post twice.
// It returns how many there were.
func (s *Service) FailPublishing(ctx context.Context) (int64, error) {
	res, err := s.DB.ExecContext(ctx, `UPDATE drafts SET status = ?, updated_at = ? WHERE account_id = ? AND status = ?`,
		DraftFailed, s.ts(s.Now()), s.account(), DraftPublishing)
	if err != nil {
		return 0, dbErr(err, "recover drafts")
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// DraftCall is the gateway call that publishes a stored item: a post, a
// thread (content is its posts as a JSON array), or a recycled evergreen
// post, reposted or quoted; opts are the post's options.
func DraftCall(contentType, content, evergreenTweetID string, opts *actions.PostOptions) (tool string, params any, err error) {
	switch contentType {
	case "thread":
		var tweets []string
		if err := json.Unmarshal([]byte(content), &tweets); err != nil {
			return "", nil, apperr.Wrap(apperr.ValidationError, err, "content: the stored thread is unreadable: %v", err)
		}
		return "x_post_thread", actions.ThreadParams{Tweets: tweets, Options: opts}, nil
	case ContentRepost:
		return "x_retweet", actions.TweetIDParams{TweetID: evergreenTweetID}, nil
	case ContentQuote:
		return "x_quote_tweet", actions.PostParams{Text: content, QuotedTweetID: evergreenTweetID, Options: opts}, nil
	}
	return "x_post_tweet", actions.PostParams{Text: content, Options: opts}, nil
}
