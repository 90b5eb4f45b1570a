package workflow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
)

// Composer stores drafts and scheduled items, and queues them for
// approval in composer mode.
type Composer struct {
	*Service
	Gateway *gateway.Gateway
	// Generator is nil when no LLM is configured.
	Generator    func() (*content.Generator, error)
	ComposerMode func() bool
}

// ComposeRequest is compose_tweet's input after parsing.
type ComposeRequest struct {
	Topic        string
	Format       string
	Content      string
	Tweets       []string
	ScheduledFor *time.Time
}

// Draft is one stored draft or scheduled item.
type Draft struct {
	ID            int64    `json:"draft_id"`
	ContentType   string   `json:"content_type"`
	Text          string   `json:"text,omitempty"`
	Tweets        []string `json:"tweets,omitempty"`
	Topic         string   `json:"topic,omitempty"`
	Source        string   `json:"source"`
	Status        string   `json:"status"`
	ScheduledFor  string   `json:"scheduled_for,omitempty"`
	ApprovalID    int64    `json:"approval_queue_id,omitempty"`
	PostedTweetID string   `json:"posted_tweet_id,omitempty"`
	// Options are the post settings the publisher sends with it.
	Options   *actions.PostOptions `json:"options,omitempty"`
	CreatedAt string               `json:"created_at"`
	UpdatedAt string               `json:"updated_at"`
}

// ComposeResult is compose_tweet's data.
type ComposeResult struct {
	Draft
	Generated        bool `json:"generated"`
	RoutedToApproval bool `json:"routed_to_approval"`
	// DryRun is set when the policy answered dry run for compose_tweet:
	// the text is shown, nothing is stored or queued.
	DryRun bool   `json:"dry_run,omitempty"`
	Note   string `json:"note,omitempty"`
}

func validateDraft(text string, tweets []string) error {
	if len(tweets) > 0 {
		return actions.ThreadParams{Tweets: tweets}.Validate()
	}
	return actions.CheckText("content", text, -1, false)
}

// Compose generates (or takes) content and stores it.
func (c *Composer) Compose(ctx context.Context, r ComposeRequest) (*ComposeResult, error) {
	if r.Content != "" && len(r.Tweets) > 0 {
		return nil, apperr.New(apperr.InvalidInput, "content, tweets: give one, not both")
	}
	res := &ComposeResult{}
	source := "mcp"
	if r.Content == "" && len(r.Tweets) == 0 && strings.TrimSpace(r.Topic) == "" {
		return nil, apperr.New(apperr.InvalidInput, "topic: required (or pass content to store your own text)")
	}
	// The policy may name compose_tweet itself; it is asked before the LLM
	// spends anything.
	dec, err := c.Gateway.Admit(ctx, actions.ComposeTool, policy.CatContent)
	if err != nil {
		return nil, err
	}
	if r.Content == "" && len(r.Tweets) == 0 {
		gen, err := c.Generator()
		if err != nil {
			return nil, err
		}
		text, err := gen.GenerateTweet(ctx, r.Topic, r.Format)
		if err != nil {
			return nil, err
		}
		r.Content, res.Generated, source = text, true, "ai_assist"
	}
	if err := validateDraft(r.Content, r.Tweets); err != nil {
		return nil, err
	}
	if r.ScheduledFor != nil && !r.ScheduledFor.After(c.Now()) {
		return nil, apperr.New(apperr.InvalidInput, "scheduled_for: %s is not in the future", r.ScheduledFor.UTC().Format(time.RFC3339))
	}
	if dec.Outcome == policy.DryRun {
		res.DryRun, res.Text, res.Tweets, res.Topic, res.Source = true, r.Content, r.Tweets, r.Topic, source
		res.Note = fmt.Sprintf("dry run (rule %s): nothing was stored or queued", dec.RuleID)
		return res, nil
	}
	d, err := c.insertDraft(ctx, r, source)
	if err != nil {
		return nil, err
	}
	res.Draft = *d
	switch {
	case r.ScheduledFor != nil && c.ComposerMode():
		res.Note = "scheduled; when it is due the publisher sends it through the gateway, which queues it for approval in composer mode"
	case r.ScheduledFor != nil:
		res.Note = "scheduled; `tuitbot run` posts it through the gateway when due"
	case c.ComposerMode() || dec.Outcome == policy.RequireApproval:
		// A rule that requires approval for compose_tweet queues the
		// draft's post, as composer mode does.
		if err := c.queue(ctx, d, res, &dec, "mcp"); err != nil {
			return nil, err
		}
	default:
		res.Note = "stored as a draft; post it with x_post_tweet or x_post_thread when ready"
	}
	return res, nil
}

// queue sends the draft's post through the gateway; composer mode routes it
// to approval, and the draft remembers the queue id.
func (c *Composer) queue(ctx context.Context, d *Draft, res *ComposeResult, via *policy.Decision, caller string) error {
	tool, params := "x_post_tweet", any(actions.PostParams{Text: d.Text})
	if d.ContentType == "thread" {
		tool, params = "x_post_thread", actions.ThreadParams{Tweets: d.Tweets}
	}
	resp, err := c.Gateway.Do(ctx, gateway.Call{Tool: tool, Params: params, Caller: caller, Via: via})
	if err != nil {
		return err
	}
	switch resp.Kind {
	case gateway.Routed:
		res.RoutedToApproval, res.ApprovalID, res.Status = true, resp.ApprovalID, "queued"
		_, err = c.DB.ExecContext(ctx, `UPDATE drafts SET status = 'queued', approval_id = ?, updated_at = ? WHERE id = ?`, resp.ApprovalID, c.ts(c.Now()), d.ID)
		return dbErr(err, "update draft")
	default:
		res.Note = fmt.Sprintf("the gateway answered %s instead of queueing", resp.Kind)
	}
	return nil
}

func (c *Composer) insertDraft(ctx context.Context, r ComposeRequest, source string) (*Draft, error) {
	now := c.ts(c.Now())
	d := &Draft{ContentType: "tweet", Text: r.Content, Tweets: r.Tweets, Topic: r.Topic, Source: source, Status: "draft", CreatedAt: now, UpdatedAt: now}
	body := r.Content
	if len(r.Tweets) > 0 {
		d.ContentType = "thread"
		b, _ := json.Marshal(r.Tweets)
		body = string(b)
	}
	var sched sql.NullString
	if r.ScheduledFor != nil {
		d.Status, d.ScheduledFor = "scheduled", c.ts(*r.ScheduledFor)
		sched = sql.NullString{String: d.ScheduledFor, Valid: true}
	}
	// RETURNING works on SQLite and PostgreSQL alike; the PostgreSQL
	// driver has no LastInsertId.
	err := c.DB.QueryRowContext(ctx, `INSERT INTO drafts (account_id, content_type, content, topic, source, status, scheduled_for, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, c.account(), d.ContentType, body, d.Topic, source, d.Status, sched, now, now).Scan(&d.ID)
	if err != nil {
		return nil, dbErr(err, "store draft")
	}
	return d, nil
}

const draftCols = `id, content_type, content, topic, source, status, COALESCE(scheduled_for,''), COALESCE(approval_id,0),
	COALESCE(posted_tweet_id,''), COALESCE(options,''), created_at, updated_at`

func scanDraft(sc interface{ Scan(...any) error }) (Draft, error) {
	var d Draft
	var body, opts string
	err := sc.Scan(&d.ID, &d.ContentType, &body, &d.Topic, &d.Source, &d.Status, &d.ScheduledFor, &d.ApprovalID, &d.PostedTweetID, &opts, &d.CreatedAt, &d.UpdatedAt)
	if err != nil {
		return d, err
	}
	if d.Options, err = decodeOptions(opts); err != nil {
		return d, err
	}
	if d.ContentType == "thread" {
		_ = json.Unmarshal([]byte(body), &d.Tweets)
	} else {
		d.Text = body
	}
	return d, nil
}

// syncQueued brings queued drafts up to date with their approval items.
// Approval replays the queued post through the gateway, which knows nothing
// of drafts, so a draft learns the outcome here: executed means posted;
// rejected, expired or failed gives the text back as a draft, so nothing is
// silently dropped.
func (s *Service) syncQueued(ctx context.Context) error {
	now := s.Now()
	rows, err := s.DB.QueryContext(ctx, `SELECT approval_id FROM drafts WHERE account_id = ? AND status = 'queued' AND approval_id IS NOT NULL`, s.account())
	if err != nil {
		return dbErr(err, "read queued drafts")
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return dbErr(err, "read queued drafts")
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return dbErr(err, "read queued drafts")
	}
	outcomes, err := gateway.ApprovalOutcomes(ctx, s.DB, s.account(), ids, now)
	if err != nil {
		return err
	}
	for id, o := range outcomes {
		switch o.Status {
		case gateway.ApprovalExecuted:
			_, err = s.DB.ExecContext(ctx, `UPDATE drafts SET status = 'posted', updated_at = ?, posted_tweet_id = ?
				WHERE account_id = ? AND approval_id = ? AND status = 'queued'`, s.ts(now), postedID(o.Result), s.account(), id)
		case gateway.ApprovalRejected, gateway.ApprovalExpired, gateway.ApprovalFailed:
			_, err = s.DB.ExecContext(ctx, `UPDATE drafts SET status = 'draft', approval_id = NULL, updated_at = ?
				WHERE account_id = ? AND approval_id = ? AND status = 'queued'`, s.ts(now), s.account(), id)
		}
		if err != nil {
			return dbErr(err, "update queued drafts")
		}
	}
	return nil
}

// Drafts lists drafts, optionally by status, newest first.
func (s *Service) Drafts(ctx context.Context, status string) ([]Draft, error) {
	if err := s.syncQueued(ctx); err != nil {
		return nil, err
	}
	q := `SELECT ` + draftCols + ` FROM drafts WHERE account_id = ? AND status != 'deleted'`
	args := []any{s.account()}
	if status != "" {
		q += ` AND status = ?`
		args = append(args, status)
	}
	rows, err := s.DB.QueryContext(ctx, q+` ORDER BY id DESC LIMIT 500`, args...)
	if err != nil {
		return nil, dbErr(err, "read drafts")
	}
	defer rows.Close()
	out := []Draft{}
	for rows.Next() {
		d, err := scanDraft(rows)
		if err != nil {
			return nil, dbErr(err, "read drafts")
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Draft returns one draft.
func (s *Service) Draft(ctx context.Context, id int64) (*Draft, error) {
	if err := s.syncQueued(ctx); err != nil {
		return nil, err
	}
	d, err := scanDraft(s.DB.QueryRowContext(ctx, `SELECT `+draftCols+` FROM drafts WHERE account_id = ? AND id = ? AND status != 'deleted'`, s.account(), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.New(apperr.NotFound, "draft_id: no draft %d", id)
	}
	if err != nil {
		return nil, dbErr(err, "read draft")
	}
	return &d, nil
}

// DraftUpdate changes a draft; nil fields stay.
type DraftUpdate struct {
	Content      *string
	Tweets       []string
	ScheduledFor *time.Time
	Unschedule   bool
}

// UpdateDraft edits a draft or scheduled item that has not been queued or
// posted.
func (s *Service) UpdateDraft(ctx context.Context, id int64, u DraftUpdate) (*Draft, error) {
	d, err := s.Draft(ctx, id)
	if err != nil {
		return nil, err
	}
	if d.Status != "draft" && d.Status != "scheduled" {
		return nil, apperr.New(apperr.ValidationError, "draft_id: draft %d is %s; only drafts and scheduled items can be edited (edit a queued item with `tuitbot approve edit`)", id, d.Status)
	}
	body := d.Text
	if d.ContentType == "thread" {
		b, _ := json.Marshal(d.Tweets)
		body = string(b)
	}
	switch {
	case u.Content != nil && len(u.Tweets) > 0:
		return nil, apperr.New(apperr.InvalidInput, "content, tweets: give one, not both")
	case u.Content != nil:
		if d.ContentType != "tweet" {
			return nil, apperr.New(apperr.InvalidInput, "content: draft %d is a thread; pass tweets", id)
		}
		if err := validateDraft(*u.Content, nil); err != nil {
			return nil, err
		}
		body = *u.Content
	case len(u.Tweets) > 0:
		if d.ContentType != "thread" {
			return nil, apperr.New(apperr.InvalidInput, "tweets: draft %d is a single tweet; pass content", id)
		}
		if err := validateDraft("", u.Tweets); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(u.Tweets)
		body = string(b)
	}
	status, sched := d.Status, sql.NullString{String: d.ScheduledFor, Valid: d.ScheduledFor != ""}
	if u.ScheduledFor != nil {
		if !u.ScheduledFor.After(s.Now()) {
			return nil, apperr.New(apperr.InvalidInput, "scheduled_for: must be in the future")
		}
		status, sched = "scheduled", sql.NullString{String: s.ts(*u.ScheduledFor), Valid: true}
	}
	if u.Unschedule {
		status, sched = "draft", sql.NullString{}
	}
	// A time chosen by hand (or none) is not a queue slot any more.
	_, err = s.DB.ExecContext(ctx, `UPDATE drafts SET content = ?, status = ?, scheduled_for = ?,
		queue_slot = CASE WHEN ? THEN NULL ELSE queue_slot END, updated_at = ? WHERE id = ? AND account_id = ?`,
		body, status, sched, u.ScheduledFor != nil || u.Unschedule, s.ts(s.Now()), id, s.account())
	if err != nil {
		return nil, dbErr(err, "update draft")
	}
	return s.Draft(ctx, id)
}

// SendToApproval queues a draft's post (or thread) for a person's
// approval, whatever the mode: the call goes through the gateway with an
// approval requirement, and the policy's own decision applies too (the
// stricter wins, so a denial still denies). The draft becomes queued.
func (c *Composer) SendToApproval(ctx context.Context, id int64, caller string) (*ComposeResult, error) {
	d, err := c.Draft(ctx, id)
	if err != nil {
		return nil, err
	}
	if d.Status != "draft" && d.Status != "scheduled" {
		return nil, apperr.New(apperr.ValidationError, "draft_id: draft %d is %s; only drafts and scheduled items can be sent to approval", id, d.Status)
	}
	res := &ComposeResult{Draft: *d}
	via := policy.Decision{Outcome: policy.RequireApproval, RuleID: "sent_to_approval", Reason: "sent to approval by " + caller, Source: caller}
	if err := c.queue(ctx, d, res, &via, caller); err != nil {
		return nil, err
	}
	if !res.RoutedToApproval {
		return nil, apperr.New(apperr.ValidationError, "draft_id: draft %d was not queued: %s", id, res.Note)
	}
	return res, nil
}

// DeleteDraft removes a draft. A queued draft's approval item is rejected
// too, so it cannot be posted after being deleted.
func (c *Composer) DeleteDraft(ctx context.Context, id int64) error {
	d, err := c.Draft(ctx, id)
	if err != nil {
		return err
	}
	if d.Status == "posted" {
		return apperr.New(apperr.ValidationError, "draft_id: draft %d is already posted; delete the tweet with x_delete_tweet", id)
	}
	if d.Status == "queued" && d.ApprovalID != 0 && c.Gateway != nil {
		if _, err := c.Gateway.Reject(ctx, d.ApprovalID, "draft_deleted", "draft deleted"); err != nil && apperr.CodeOf(err) != apperr.ApprovalNotPending {
			return err
		}
	}
	_, err = c.DB.ExecContext(ctx, `UPDATE drafts SET status = 'deleted', updated_at = ? WHERE id = ? AND account_id = ?`, c.ts(c.Now()), id, c.account())
	return dbErr(err, "delete draft")
}

// MeasuredTopics reads topic performance for suggest_topics.
func (s *Service) MeasuredTopics(ctx context.Context) ([]content.TopicScore, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT topic, avg(score), count(*) FROM tweet_performance WHERE account_id = ? AND topic != ''
		GROUP BY topic ORDER BY avg(score) DESC LIMIT 100`, s.account())
	if err != nil {
		return nil, dbErr(err, "read topic performance")
	}
	defer rows.Close()
	var out []content.TopicScore
	for rows.Next() {
		var t content.TopicScore
		if err := rows.Scan(&t.Topic, &t.AvgPerformance, &t.Posts); err != nil {
			return nil, dbErr(err, "read topic performance")
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// postedID is the id of the post an executed item made, read from its
// result: id for a tweet, root_tweet_id for a thread; NULL when neither is
// there. It is read here rather than by the database's JSON functions,
// which differ between SQLite and PostgreSQL.
func postedID(result json.RawMessage) sql.NullString {
	var m map[string]any
	if json.Unmarshal(result, &m) != nil {
		return sql.NullString{}
	}
	for _, k := range []string{"id", "root_tweet_id"} {
		switch v := m[k].(type) {
		case string:
			return sql.NullString{String: v, Valid: true}
		case float64:
			return sql.NullString{String: strconv.FormatFloat(v, 'f', -1, 64), Valid: true}
		}
	}
	return sql.NullString{}
}
