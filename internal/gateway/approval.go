package gateway

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
)

// Approval statuses.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved" // claimed by a reviewer, replay running
	ApprovalExecuted = "executed"
	ApprovalFailed   = "failed"
	ApprovalRejected = "rejected"
	ApprovalExpired  = "expired"
)

// enqueue queues a call for approval. The item expires after ApprovalTTL,
// or at until when that is sooner (the end of an edit's window: an
// approval after it could not be carried out).
func (g *Gateway) enqueue(ctx context.Context, q querier, c Call, params json.RawMessage, ident identity, equiv string, d policy.Decision, until time.Time) (int64, error) {
	now := g.opts.Now()
	expires := now.Add(g.opts.ApprovalTTL)
	if !until.IsZero() && until.Before(expires) {
		expires = until
	}
	// The count runs in the caller's write transaction, so concurrent
	// callers cannot overshoot the bound together. An unbounded queue would
	// let a runaway agent bury the items a human must see.
	// On PostgreSQL the account's lock makes the count and the insert
	// one step across hosts (SQLite's write transaction already does).
	if err := store.WriteLock(ctx, g.opts.DB.Dialect, q, store.AccountScope(g.opts.AccountID)); err != nil {
		return 0, apperr.Wrap(apperr.DBError, err, "queue for approval: %v", err)
	}
	pending, err := PendingApprovals(ctx, q, g.opts.AccountID, now)
	if err != nil {
		return 0, err
	}
	if pending >= g.opts.MaxPendingApprovals {
		return 0, apperr.New(apperr.ApprovalQueueFull,
			"%s needs approval, but %d items are already waiting (mcp_policy.max_pending_approvals = %d); review or reject some with `tuitbot approve list` before queueing more",
			c.Tool, pending, g.opts.MaxPendingApprovals).With("pending", pending).With("max_pending_approvals", g.opts.MaxPendingApprovals)
	}
	// RETURNING rather than LastInsertId: PostgreSQL's driver has no
	// last insert id, and both dialects return the new row's id this way.
	var id int64
	err = q.QueryRowContext(ctx, `INSERT INTO approval_queue (account_id, tool_name, equivalent_tool, params_json, original_params,
		params_hash, intent_key, matched_rule_id, reason, caller, loop_name, status, created_at, expires_at, idempotency_key, target_tweet_id)
		VALUES (?, ?, NULLIF(?,''), ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, NULLIF(?,''), NULLIF(?,'')) RETURNING id`,
		g.opts.AccountID, c.Tool, equiv, string(params), string(params), ident.hash, ident.intent, d.RuleID, d.Reason, callerOf(c), c.Loop,
		ts(now), ts(expires), c.IdempotencyKey, targetOf(g.actions[c.Tool], params)).Scan(&id)
	if err != nil {
		return 0, apperr.Wrap(apperr.DBError, err, "queue for approval: %v", err)
	}
	it := ApprovalItem{ID: id, Tool: c.Tool, EquivalentTool: equiv, Params: params, OriginalParams: params, MatchedRuleID: d.RuleID,
		Reason: d.Reason, Caller: callerOf(c), Loop: c.Loop, Status: ApprovalPending, CreatedAt: ts(now), ExpiresAt: ts(expires),
		ContentHash: ContentHash(c.Tool, params)}
	if err := g.notice(ctx, q, NoticeCreated, it, ident.hash); err != nil {
		return 0, apperr.Wrap(apperr.DBError, err, "queue for approval: record its notification: %v", err)
	}
	return id, nil
}

// ApprovalItem is one queued call.
type ApprovalItem struct {
	ID   int64  `json:"id"`
	Tool string `json:"tool_name"`
	// EquivalentTool is the typed tool a universal request does the work
	// of, whose policy applied too.
	EquivalentTool string          `json:"equivalent_tool,omitempty"`
	Params         json.RawMessage `json:"params"`
	OriginalParams json.RawMessage `json:"original_params"`
	Edited         bool            `json:"edited"`
	// ContentHash identifies Params as shown (see ContentHash): pass it
	// back with a decision so that it holds only for this content.
	ContentHash   string          `json:"content_hash"`
	MatchedRuleID string          `json:"matched_rule_id"`
	Reason        string          `json:"reason"`
	Caller        string          `json:"caller"`
	Loop          string          `json:"loop,omitempty"`
	Status        string          `json:"status"`
	CreatedAt     string          `json:"created_at"`
	ExpiresAt     string          `json:"expires_at"`
	ReviewedAt    string          `json:"reviewed_at,omitempty"`
	ReviewedBy    string          `json:"reviewed_by,omitempty"`
	ReviewNotes   string          `json:"review_notes,omitempty"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	ErrorCode     string          `json:"error_code,omitempty"`
	ErrorMessage  string          `json:"error_message,omitempty"`
}

const approvalCols = `id, tool_name, COALESCE(equivalent_tool,''), params_json, original_params, matched_rule_id, reason, caller, loop_name, status,
	created_at, expires_at, COALESCE(reviewed_at,''), COALESCE(reviewed_by,''), COALESCE(review_notes,''),
	COALESCE(correlation_id,''), result_json, COALESCE(error_code,''), COALESCE(error_message,'')`

func scanApproval(sc interface{ Scan(...any) error }) (ApprovalItem, error) {
	var it ApprovalItem
	var params, orig string
	var result sql.NullString
	err := sc.Scan(&it.ID, &it.Tool, &it.EquivalentTool, &params, &orig, &it.MatchedRuleID, &it.Reason, &it.Caller, &it.Loop, &it.Status,
		&it.CreatedAt, &it.ExpiresAt, &it.ReviewedAt, &it.ReviewedBy, &it.ReviewNotes, &it.CorrelationID, &result,
		&it.ErrorCode, &it.ErrorMessage)
	if err != nil {
		return it, err
	}
	it.Params, it.OriginalParams = json.RawMessage(params), json.RawMessage(orig)
	it.Edited = params != orig
	it.ContentHash = ContentHash(it.Tool, it.Params)
	if result.Valid && json.Valid([]byte(result.String)) {
		it.Result = json.RawMessage(result.String)
	}
	return it, nil
}

// ExpireStale marks pending items past their expiry as expired.
func (g *Gateway) ExpireStale(ctx context.Context) (int64, error) {
	res, err := g.opts.DB.ExecContext(ctx, `UPDATE approval_queue SET status = 'expired' WHERE account_id = ? AND status = 'pending' AND expires_at <= ?`,
		g.opts.AccountID, ts(g.opts.Now()))
	if err != nil {
		return 0, apperr.Wrap(apperr.DBError, err, "expire approvals: %v", err)
	}
	return res.RowsAffected()
}

// Pending lists pending items, oldest first.
func (g *Gateway) Pending(ctx context.Context, limit int) ([]ApprovalItem, error) {
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	return g.PendingPage(ctx, limit, 0)
}

// PendingPage lists limit pending items, oldest first, after skipping
// offset of them, so a reviewer can page through a queue of any length.
func (g *Gateway) PendingPage(ctx context.Context, limit, offset int) ([]ApprovalItem, error) {
	if limit <= 0 {
		return nil, apperr.New(apperr.InvalidInput, "limit: must be at least 1")
	}
	if offset < 0 {
		return nil, apperr.New(apperr.InvalidInput, "offset: must not be negative")
	}
	if _, err := g.ExpireStale(ctx); err != nil {
		return nil, err
	}
	rows, err := g.opts.DB.QueryContext(ctx, `SELECT `+approvalCols+` FROM approval_queue WHERE account_id = ? AND status = 'pending'
		ORDER BY id LIMIT ? OFFSET ?`, g.opts.AccountID, limit, offset)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
	}
	defer rows.Close()
	out := []ApprovalItem{}
	for rows.Next() {
		it, err := scanApproval(rows)
		if err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// PendingCount counts the items waiting for a human (PendingApprovals).
func (g *Gateway) PendingCount(ctx context.Context) (int, error) {
	if _, err := g.ExpireStale(ctx); err != nil {
		return 0, err
	}
	return PendingApprovals(ctx, g.opts.DB, g.opts.AccountID, g.opts.Now())
}

// RepliedTo reports whether the account answered, or tried to answer, the
// post tweetID (see the package function RepliedTo).
func (g *Gateway) RepliedTo(ctx context.Context, tweetID string) (bool, error) {
	return RepliedTo(ctx, g.opts.DB, g.opts.AccountID, tweetID)
}

// Item returns one queued call.
func (g *Gateway) Item(ctx context.Context, id int64) (*ApprovalItem, error) {
	if _, err := g.ExpireStale(ctx); err != nil {
		return nil, err
	}
	it, err := scanApproval(g.opts.DB.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approval_queue WHERE id = ? AND account_id = ?`, id, g.opts.AccountID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.New(apperr.NotFound, "no approval item %d", id)
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read approval item: %v", err)
	}
	return &it, nil
}

// ContentHash identifies an item's exact content as a reviewer is shown
// it: its tool and canonical parameters. Any edit changes it. Links,
// buttons, the web page, the CLI and the MCP tools carry it, and a
// decision holds only while the item still has it (Decision.Shown).
func ContentHash(tool string, params json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(params)
	return hex.EncodeToString(h.Sum(nil))
}

// Decision is one reviewer's answer on an item.
type Decision struct {
	// Reviewer is who decided: cli, web, mcp, link:<channel>,
	// telegram:<user id>.
	Reviewer string
	Notes    string
	// Shown is the ContentHash of the item as the reviewer was shown it.
	// The decision is a compare-and-set on it, inside the transaction
	// that claims the item: an item edited since is not decided, and
	// ApprovalChanged says so. Empty decides the content as the claim
	// reads it, for a reviewer who was shown nothing beforehand; what runs
	// is then still exactly what the item records.
	Shown string
	// Hook, when set, runs in the claim's transaction once the item is
	// claimed; its error undoes the claim.
	Hook DecideHook
}

// claim moves a pending item to next, failing clearly when it is not
// pending (already decided, expired, or claimed by another reviewer).
func (g *Gateway) claim(ctx context.Context, id int64, next, reviewer, notes string) (*ApprovalItem, error) {
	return g.claimWith(ctx, id, next, Decision{Reviewer: reviewer, Notes: notes})
}

// claimWith claims item id for decision d and returns the item exactly as
// the claim read it: its parameters are the ones the claim compared, so
// an approval replays those and no others. The read, the comparison with
// d.Shown and the claim are one transaction (the row locked on
// PostgreSQL, the database on SQLite), and the UPDATE itself compares the
// parameters it read, so an edit landing anywhere in between makes the
// claim fail instead of deciding other content.
func (g *Gateway) claimWith(ctx context.Context, id int64, next string, d Decision) (*ApprovalItem, error) {
	if _, err := g.ExpireStale(ctx); err != nil {
		return nil, err
	}
	now := ts(g.opts.Now())
	var it ApprovalItem
	var claimed, changed bool
	err := g.opts.DB.Tx(ctx, func(tx *sql.Tx) error {
		q := `SELECT ` + approvalCols + ` FROM approval_queue WHERE id = ? AND account_id = ? AND status = 'pending' AND expires_at > ?`
		if g.opts.DB.Dialect == store.Postgres {
			// Wait for a reviewer on another host deciding the same item,
			// or an edit of it, rather than skip it: once they commit, the
			// row is read again as they left it, so the answer says what
			// happened (decided, or changed) instead of guessing. Both
			// hold the row only for a few statements. (SQLite's write
			// transaction already excludes every other writer.)
			q += ` FOR UPDATE`
		}
		var err error
		it, err = scanApproval(tx.QueryRowContext(ctx, q, id, g.opts.AccountID, now))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.Shown != "" && it.ContentHash != d.Shown {
			changed = true
			return nil
		}
		res, err := tx.ExecContext(ctx, `UPDATE approval_queue SET status = ?, reviewed_at = ?, reviewed_by = ?, review_notes = ?,
			claimed_by = ? WHERE id = ? AND account_id = ? AND status = 'pending' AND expires_at > ? AND params_json = ?`,
			next, now, d.Reviewer, d.Notes, g.instance, id, g.opts.AccountID, now, string(it.Params))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n != 1 {
			return err
		}
		claimed = true
		if d.Hook != nil {
			if err := d.Hook(ctx, tx); err != nil {
				return err
			}
		}
		decided := it
		decided.Status, decided.ReviewedAt, decided.ReviewedBy, decided.ReviewNotes = next, now, d.Reviewer, d.Notes
		return g.notice(ctx, tx, NoticeDecided, decided, "")
	})
	if err != nil {
		// A hook's own refusal (a link already used) is the answer.
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, apperr.Wrap(apperr.DBError, err, "update approval item: %v", err)
	}
	if changed {
		return nil, changedSinceShown(id)
	}
	if !claimed {
		return nil, g.undecided(ctx, id, d.Shown)
	}
	it.Status, it.ReviewedAt, it.ReviewedBy, it.ReviewNotes = next, now, d.Reviewer, d.Notes
	return &it, nil
}

// changedSinceShown is the answer to a decision on content the item no
// longer has.
func changedSinceShown(id int64) *apperr.Error {
	return apperr.New(apperr.ApprovalChanged,
		"approval item %d changed since you saw it (it was edited); nothing was decided: review it as it is now and decide again", id)
}

// undecided says why a claim of item id found nothing to claim: the item
// is gone, was decided or expired, or was edited away from what the
// reviewer was shown; or, when a change landed between the claim's read
// and its write, it was changed by someone else just now.
func (g *Gateway) undecided(ctx context.Context, id int64, shown string) error {
	it, err := g.Item(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case it.Status != ApprovalPending:
		return apperr.New(apperr.ApprovalNotPending, "approval item %d is %s, not pending", id, it.Status)
	case shown != "" && it.ContentHash != shown:
		return changedSinceShown(id)
	}
	return apperr.New(apperr.ApprovalNotPending, "approval item %d was changed by someone else just now; look at it again", id)
}

// Reject rejects a pending item.
func (g *Gateway) Reject(ctx context.Context, id int64, reviewer, notes string) (*ApprovalItem, error) {
	return g.RejectWith(ctx, id, Decision{Reviewer: reviewer, Notes: notes})
}

// RejectWith rejects a pending item as decision d.
func (g *Gateway) RejectWith(ctx context.Context, id int64, d Decision) (*ApprovalItem, error) {
	if _, err := g.claimWith(ctx, id, ApprovalRejected, d); err != nil {
		return nil, err
	}
	return g.Item(ctx, id)
}

// Edit replaces the editable text of a pending item; the original stays
// beside it for the diff. The edited call is validated like a new one.
func (g *Gateway) Edit(ctx context.Context, id int64, text string) (*ApprovalItem, error) {
	return g.EditFields(ctx, id, Changes{Text: &text})
}

// Changes are a human's edits of a pending item: its text, and other
// parameters the action lets a human replace (Action.Editable). A nil
// Text keeps the text; a Fields value of JSON null removes the parameter.
type Changes struct {
	Text   *string
	Fields map[string]json.RawMessage
}

// EditFields applies changes to a pending item; the edited call is
// validated as a whole and replaces the queued one, so its hash, intent,
// approval links and diff all follow the edit.
func (g *Gateway) EditFields(ctx context.Context, id int64, ch Changes) (*ApprovalItem, error) {
	it, err := g.Item(ctx, id)
	if err != nil {
		return nil, err
	}
	if it.Status != ApprovalPending {
		return nil, apperr.New(apperr.ApprovalNotPending, "approval item %d is %s, not pending", id, it.Status)
	}
	act, ok := g.actions[it.Tool]
	if !ok || (act.EditableText == "" && len(act.Editable) == 0) {
		return nil, apperr.New(apperr.ValidationError, "approval item %d (%s) has no editable text", id, it.Tool)
	}
	var m map[string]any
	if err := json.Unmarshal(it.Params, &m); err != nil {
		return nil, apperr.Wrap(apperr.InternalError, err, "stored params of item %d are corrupt", id)
	}
	if ch.Text != nil && act.EditableText == "" {
		return nil, apperr.New(apperr.ValidationError, "approval item %d (%s) has no single text to edit; change its %s instead",
			id, it.Tool, strings.Join(act.Editable, ", "))
	}
	if ch.Text != nil {
		if _, ok := m[act.EditableText]; !ok {
			return nil, apperr.New(apperr.ValidationError, "approval item %d has no %s to edit", id, act.EditableText)
		}
		m[act.EditableText] = *ch.Text
	}
	for _, name := range slices.Sorted(maps.Keys(ch.Fields)) {
		if !slices.Contains(act.Editable, name) {
			return nil, apperr.New(apperr.ValidationError, "%s: approval item %d (%s) does not let a human change it", name, id, it.Tool)
		}
		raw := ch.Fields[name]
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, apperr.New(apperr.InvalidInput, "%s: not JSON: %v", name, err)
		}
		if v == nil {
			delete(m, name)
			continue
		}
		m[name] = v
	}
	params, err := CanonicalOf(m)
	if err != nil {
		return nil, apperr.Wrap(apperr.InvalidInput, err, "edited params cannot be encoded")
	}
	if act.Validate != nil {
		if err := act.Validate(params); err != nil {
			return nil, err
		}
	}
	ident, err := identityOf(act, params)
	if err != nil {
		return nil, err
	}
	var n int64
	err = g.opts.DB.Tx(ctx, func(tx *sql.Tx) error {
		// Only over the parameters this edit started from: two edits at
		// once must not merge one into the other's stale copy.
		res, err := tx.ExecContext(ctx, `UPDATE approval_queue SET params_json = ?, params_hash = ?, intent_key = ? WHERE id = ? AND status = 'pending'
			AND params_json = ?`, string(params), ident.hash, ident.intent, id, string(it.Params))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n != 1 {
			return err
		}
		edited := *it
		edited.Params, edited.Edited, edited.ContentHash = params, true, ContentHash(it.Tool, params)
		return g.notice(ctx, tx, NoticeEdited, edited, ident.hash)
	})
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "edit approval item: %v", err)
	}
	if n != 1 {
		return nil, g.undecided(ctx, id, it.ContentHash)
	}
	return g.Item(ctx, id)
}

// Approve replays exactly the queued call (as edited) through the gateway.
// Only the approval outcome is bypassed: denials, limits, idempotency and
// audit all apply. The outcome is stored on the item.
func (g *Gateway) Approve(ctx context.Context, id int64, reviewer, notes string) (*ApprovalItem, Response, error) {
	return g.ApproveWith(ctx, id, Decision{Reviewer: reviewer, Notes: notes})
}

// ApproveWith approves as decision d: only while the item still has the
// content d.Shown, and replaying the parameters its claim read.
func (g *Gateway) ApproveWith(ctx context.Context, id int64, d Decision) (*ApprovalItem, Response, error) {
	// Refuse before claiming, so the item stays pending for a later try.
	if err := g.readyToSend(ctx); err != nil {
		return nil, Response{}, err
	}
	if err := g.agentMayApprove(ctx, id, d); err != nil {
		return nil, Response{}, err
	}
	it, err := g.claimWith(ctx, id, ApprovalApproved, d)
	if err != nil {
		return nil, Response{}, err
	}
	// The replay is the queued call: the audit row names who asked for
	// it, and who approved it beside them.
	resp, runErr := g.Do(ctx, Call{Tool: it.Tool, Params: it.Params, Caller: it.Caller, Loop: it.Loop, approvalID: id, decidedBy: it.ReviewedBy})
	status := ApprovalExecuted
	result := resp.Answer()
	var code, msg sql.NullString
	if runErr != nil {
		status = ApprovalFailed
		e := apperr.As(runErr)
		code = sql.NullString{String: string(e.Code), Valid: true}
		msg = sql.NullString{String: e.Message, Valid: true}
		result = e.Data
	} else if resp.Kind == Routed || resp.Kind == DryRun {
		// A policy rule (not approval) still intercepted the replay, e.g.
		// dry_run_mutations: nothing ran.
		status = ApprovalFailed
		code = sql.NullString{String: string(apperr.ValidationError), Valid: true}
		msg = sql.NullString{String: "policy answered " + string(resp.Kind) + " on replay; nothing was executed", Valid: true}
	}
	var resultJSON sql.NullString
	if result != nil {
		if b, err := json.Marshal(result); err == nil {
			resultJSON = sql.NullString{String: string(b), Valid: true}
		}
	}
	ctx = context.WithoutCancel(ctx)
	if _, err := g.opts.DB.ExecContext(ctx, `UPDATE approval_queue SET status = ?, correlation_id = ?, result_json = ?, error_code = ?, error_message = ?
		WHERE id = ?`, status, resp.CorrelationID, resultJSON, code, msg, id); err != nil {
		return nil, resp, apperr.Wrap(apperr.DBError, err, "record approval outcome: %v", err)
	}
	final, err := g.Item(ctx, id)
	if err != nil {
		return nil, resp, err
	}
	return final, resp, runErr
}

// DecisionTimes lists how long each item a person decided (approved or
// rejected, not expired) since since waited in the queue, oldest
// decision first, at most limit of them.
func (g *Gateway) DecisionTimes(ctx context.Context, since time.Time, limit int) ([]time.Duration, error) {
	rows, err := g.opts.DB.QueryContext(ctx, `SELECT created_at, reviewed_at FROM approval_queue
		WHERE account_id = ? AND reviewed_at >= ? AND COALESCE(reviewed_by, '') <> '' ORDER BY reviewed_at LIMIT ?`,
		g.opts.AccountID, ts(since), limit)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read decision times: %v", err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var queued, decided string
		if err := rows.Scan(&queued, &decided); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read decision times: %v", err)
		}
		q, err1 := store.ParseTime(queued)
		d, err2 := store.ParseTime(decided)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, max(d.Sub(q), 0))
	}
	return out, rows.Err()
}
