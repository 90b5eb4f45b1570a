package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
	"slices"
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
		Reason: d.Reason, Caller: callerOf(c), Loop: c.Loop, Status: ApprovalPending, CreatedAt: ts(now), ExpiresAt: ts(expires)}
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
	MatchedRuleID  string          `json:"matched_rule_id"`
	Reason         string          `json:"reason"`
	Caller         string          `json:"caller"`
	Loop           string          `json:"loop,omitempty"`
	Status         string          `json:"status"`
	CreatedAt      string          `json:"created_at"`
	ExpiresAt      string          `json:"expires_at"`
	ReviewedAt     string          `json:"reviewed_at,omitempty"`
	ReviewedBy     string          `json:"reviewed_by,omitempty"`
	ReviewNotes    string          `json:"review_notes,omitempty"`
	CorrelationID  string          `json:"correlation_id,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	ErrorCode      string          `json:"error_code,omitempty"`
	ErrorMessage   string          `json:"error_message,omitempty"`
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

// claim moves a pending item to next, failing clearly when it is not
// pending (already decided, expired, or claimed by another reviewer).
func (g *Gateway) claim(ctx context.Context, id int64, next, reviewer, notes string) (*ApprovalItem, error) {
	return g.claimWith(ctx, id, next, reviewer, notes, nil)
}

// claimWith claims like claim; hook, when set, runs in the claim's
// transaction once the item is claimed.
func (g *Gateway) claimWith(ctx context.Context, id int64, next, reviewer, notes string, hook DecideHook) (*ApprovalItem, error) {
	it, err := g.Item(ctx, id)
	if err != nil {
		return nil, err
	}
	now := ts(g.opts.Now())
	var claimed int64
	err = g.opts.DB.Tx(ctx, func(tx *sql.Tx) error {
		if g.opts.DB.Dialect == store.Postgres {
			// A reviewer on another host claiming the same item holds its
			// row: skip it instead of queueing behind them, since it is
			// not pending for this reviewer either way. (SQLite's write
			// transaction already excludes every other claimer.)
			var got int64
			err := tx.QueryRowContext(ctx, `SELECT id FROM approval_queue WHERE id = ? AND account_id = ? AND status = 'pending' AND expires_at > ?
				FOR UPDATE SKIP LOCKED`, id, g.opts.AccountID, now).Scan(&got)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE approval_queue SET status = ?, reviewed_at = ?, reviewed_by = ?, review_notes = ?,
			claimed_by = ? WHERE id = ? AND account_id = ? AND status = 'pending' AND expires_at > ?`,
			next, now, reviewer, notes, g.instance, id, g.opts.AccountID, now)
		if err != nil {
			return err
		}
		if claimed, err = res.RowsAffected(); err != nil || claimed != 1 {
			return err
		}
		if hook != nil {
			if err := hook(ctx, tx); err != nil {
				return err
			}
		}
		decided := *it
		decided.Status, decided.ReviewedAt, decided.ReviewedBy, decided.ReviewNotes = next, now, reviewer, notes
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
	if claimed != 1 {
		return nil, apperr.New(apperr.ApprovalNotPending, "approval item %d is %s, not pending", id, it.Status)
	}
	it.Status = next
	return it, nil
}

// Reject rejects a pending item.
func (g *Gateway) Reject(ctx context.Context, id int64, reviewer, notes string) (*ApprovalItem, error) {
	return g.RejectWith(ctx, id, reviewer, notes, nil)
}

// RejectWith rejects a pending item, running hook in the transaction that
// decides it.
func (g *Gateway) RejectWith(ctx context.Context, id int64, reviewer, notes string, hook DecideHook) (*ApprovalItem, error) {
	if _, err := g.claimWith(ctx, id, ApprovalRejected, reviewer, notes, hook); err != nil {
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
	if !ok || act.EditableText == "" {
		return nil, apperr.New(apperr.ValidationError, "approval item %d (%s) has no editable text", id, it.Tool)
	}
	var m map[string]any
	if err := json.Unmarshal(it.Params, &m); err != nil {
		return nil, apperr.Wrap(apperr.InternalError, err, "stored params of item %d are corrupt", id)
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
		res, err := tx.ExecContext(ctx, `UPDATE approval_queue SET params_json = ?, params_hash = ?, intent_key = ? WHERE id = ? AND status = 'pending'`,
			string(params), ident.hash, ident.intent, id)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n != 1 {
			return err
		}
		edited := *it
		edited.Params, edited.Edited = params, true
		return g.notice(ctx, tx, NoticeEdited, edited, ident.hash)
	})
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "edit approval item: %v", err)
	}
	if n != 1 {
		return nil, apperr.New(apperr.ApprovalNotPending, "approval item %d is no longer pending", id)
	}
	return g.Item(ctx, id)
}

// Approve replays exactly the queued call (as edited) through the gateway.
// Only the approval outcome is bypassed: denials, limits, idempotency and
// audit all apply. The outcome is stored on the item.
func (g *Gateway) Approve(ctx context.Context, id int64, reviewer, notes string) (*ApprovalItem, Response, error) {
	return g.ApproveWith(ctx, id, reviewer, notes, nil)
}

// ApproveWith approves like Approve, running hook in the transaction that
// claims the item.
func (g *Gateway) ApproveWith(ctx context.Context, id int64, reviewer, notes string, hook DecideHook) (*ApprovalItem, Response, error) {
	// Refuse before claiming, so the item stays pending for a later try.
	if err := g.readyToSend(ctx); err != nil {
		return nil, Response{}, err
	}
	it, err := g.claimWith(ctx, id, ApprovalApproved, reviewer, notes, hook)
	if err != nil {
		return nil, Response{}, err
	}
	resp, runErr := g.Do(ctx, Call{Tool: it.Tool, Params: it.Params, Caller: "approval", Loop: it.Loop, approvalID: id})
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
