package gateway

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/flock"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/rollback"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// Audit text columns are capped so a huge body cannot bloat the table;
// truncation is rune-safe.
const (
	maxSummaryBytes = 1000
	maxResultBytes  = 64 << 10
)

func ts(t time.Time) string { return store.FormatTime(t) }

func auditSummary(act *Action, params json.RawMessage) string {
	var v any = params
	if act.Summary != nil {
		v = act.Summary(params)
	} else if !bytes.ContainsAny(params, "<>&\u2028\u2029") {
		// Canonical parameters are compact JSON already: encoding them
		// again would change nothing but these characters, which it
		// escapes.
		return tweettext.TruncateBytes(string(params), maxSummaryBytes)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return tweettext.TruncateBytes(string(b), maxSummaryBytes)
}

type priorRow struct {
	// intent is the row's intent key; tool is the tool that made it,
	// which may be another spelling of this call's effect.
	intent, tool, status, corr, errCode, dupOf string
	result                                     sql.NullString
	// resolution is happened or did_not_happen once someone resolved an
	// unknown or interrupted attempt.
	resolution string
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// checkDuplicateQ looks for an earlier identical call, by intent: a caller
// key reused with another intent is an error; a recent success is a
// duplicate; a recent pending, unknown or interrupted attempt blocks the
// repeat; an item already waiting for approval is returned instead of
// queueing it twice.
func (g *Gateway) checkDuplicateQ(ctx context.Context, q querier, c Call, id identity) (*Response, error) {
	now := g.opts.Now()
	// The two lookups by key come first, the caller's key before the
	// intent, and their answers are weighed after both have run: the call's
	// transaction plans them without sorts, and the lookup by intent turns
	// sorts back on for every statement after it (see store.KeyedTx).
	var (
		byKey    priorRow
		byKeyErr error
	)
	if c.IdempotencyKey != "" {
		byKeyErr = q.QueryRowContext(ctx, g.qPriorByKey, g.opts.AccountID, c.IdempotencyKey, ts(now.Add(-g.opts.KeyWindow))).
			Scan(&byKey.intent, &byKey.tool, &byKey.status, &byKey.corr, &byKey.errCode, &byKey.result, &byKey.resolution, &byKey.dupOf)
	}
	prior, queued, err := g.priorByIntent(ctx, q, id, now)
	if err != nil {
		return nil, err
	}
	if c.IdempotencyKey != "" {
		p, err := byKey, byKeyErr
		if err == nil && p.status == statusDuplicate && p.dupOf != "" {
			// The key's latest use was answered as a duplicate: the outcome
			// the key stands for is the original's, which may be older than
			// the database window.
			p, err = g.originalRow(ctx, q, p)
		}
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if r, err := g.queuedByKey(ctx, q, c, id); r != nil || err != nil {
				return r, err
			}
		case err != nil:
			return nil, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
		case !id.matches(p.intent):
			return nil, apperr.New(apperr.IdempotencyConflict,
				"idempotency_key %q was already used (correlation id %s) with different parameters; use a new key for a different request", c.IdempotencyKey, p.corr)
		default:
			if r, err := g.priorOutcome(ctx, q, c, id, p); r != nil || err != nil {
				return r, err
			}
		}
	}
	if prior != nil {
		if r, err := g.priorOutcome(ctx, q, c, id, *prior); r != nil || err != nil {
			return r, err
		}
	}
	if c.approvalID == 0 && queued != 0 {
		return &Response{Kind: Routed, ApprovalID: queued, Queued: &Queued{RoutedToApproval: true, ApprovalQueueID: queued, Duplicate: true,
			Reason: "an identical request is already waiting for approval"}}, nil
	}
	return nil, nil
}

// priorByIntent reads the latest earlier call with id's intent that counts
// for duplicates, and the item of such a call waiting for approval (0 when
// there is none), in one round trip (see qPriorOrQueued). Rows written
// before intent keys are looked up too while any of them could still
// answer a call.
func (g *Gateway) priorByIntent(ctx context.Context, q querier, id identity, now time.Time) (*priorRow, int64, error) {
	var rows [2]struct {
		id                                                      sql.NullInt64
		intent, tool, status, corr, errCode, result, resolution sql.NullString
	}
	var queued [2]sql.NullInt64
	window, at := ts(now.Add(-g.opts.DBWindow)), ts(now)
	var err error
	if g.legacy.matter(now) {
		err = q.QueryRowContext(ctx, g.qPrior,
			g.opts.AccountID, id.intent, window, g.opts.AccountID, id.hash, window,
			g.opts.AccountID, id.intent, at, g.opts.AccountID, id.hash, at).
			Scan(&rows[0].id, &rows[0].intent, &rows[0].tool, &rows[0].status, &rows[0].corr, &rows[0].errCode, &rows[0].result, &rows[0].resolution,
				&rows[1].id, &rows[1].intent, &rows[1].tool, &rows[1].status, &rows[1].corr, &rows[1].errCode, &rows[1].result, &rows[1].resolution,
				&queued[0], &queued[1])
	} else {
		err = q.QueryRowContext(ctx, g.qPriorByIntent, g.opts.AccountID, id.intent, window, g.opts.AccountID, id.intent, at).
			Scan(&rows[0].id, &rows[0].intent, &rows[0].tool, &rows[0].status, &rows[0].corr, &rows[0].errCode, &rows[0].result, &rows[0].resolution,
				&queued[0])
	}
	if err != nil {
		return nil, 0, apperr.Wrap(apperr.DBError, err, "read audit and approval queue: %v", err)
	}
	// The newer of the rows found by intent key and by parameters hash
	// (see qPriorOrQueued).
	latest := rows[0]
	if rows[1].id.Valid && (!latest.id.Valid || rows[1].id.Int64 > latest.id.Int64) {
		latest = rows[1]
	}
	var prior *priorRow
	if latest.id.Valid {
		prior = &priorRow{intent: latest.intent.String, tool: latest.tool.String, status: latest.status.String, corr: latest.corr.String,
			errCode: latest.errCode.String, result: latest.result, resolution: latest.resolution.String}
	}
	return prior, max(queued[0].Int64, queued[1].Int64), nil
}

// legacyRows says whether rows written before intent keys can still answer
// a call. Such a row has its parameters hash as its intent key (the
// migration that added the key copied it); every row written since has a
// key that no parameters hash equals, so none is ever added. A row can
// answer a call while it is in the duplicate window (as the window counts
// it), as an item waiting for approval, or forever while it is an unknown
// or interrupted attempt nobody resolved.
type legacyRows struct {
	// forever is set when an unresolved unknown or interrupted row exists.
	forever bool
	// until is when the last of the others stops counting.
	until time.Time
}

func (l legacyRows) matter(now time.Time) bool { return l.forever || now.Before(l.until) }

// findLegacyRows reads which rows written before intent keys can still
// answer a call; each part is read through an index (status, creation,
// pending items' expiry).
func (g *Gateway) findLegacyRows(ctx context.Context) (legacyRows, error) {
	now := g.opts.Now()
	cutoff := ts(now.Add(-g.opts.DBWindow))
	var (
		l                           legacyRows
		created, resolved, expiring sql.NullString
	)
	err := g.opts.DB.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM mutation_audit WHERE status IN ('unknown','interrupted') AND resolution IS NULL AND intent_key = params_hash),
		(SELECT max(created_at) FROM mutation_audit WHERE created_at >= ? AND intent_key = params_hash),
		(SELECT max(resolved_at) FROM mutation_audit WHERE status IN ('unknown','interrupted') AND resolved_at >= ? AND intent_key = params_hash),
		(SELECT max(expires_at) FROM approval_queue WHERE status = 'pending' AND expires_at > ? AND intent_key = params_hash)`,
		cutoff, cutoff, ts(now)).Scan(&l.forever, &created, &resolved, &expiring)
	if err != nil {
		return legacyRows{}, fmt.Errorf("gateway: look for audit rows older than intent keys: %w", err)
	}
	for _, v := range []struct {
		at   sql.NullString
		plus time.Duration
	}{{created, g.opts.DBWindow}, {resolved, g.opts.DBWindow}, {expiring, 0}} {
		if !v.at.Valid {
			continue
		}
		t, err := store.ParseTime(v.at.String)
		if err != nil {
			return legacyRows{}, fmt.Errorf("gateway: audit time %q: %w", v.at.String, err)
		}
		if end := t.Add(v.plus); end.After(l.until) {
			l.until = end
		}
	}
	return l, nil
}

// queuedByKey applies a caller's key to calls that went to approval: the
// key with another intent is a conflict, and the same call again gets the
// queued item (or, once approved, the outcome of its replay).
func (g *Gateway) queuedByKey(ctx context.Context, q querier, c Call, id identity) (*Response, error) {
	if c.approvalID != 0 {
		return nil, nil
	}
	var item int64
	var qintent, status, corr string
	err := q.QueryRowContext(ctx, `SELECT id, COALESCE(intent_key, params_hash), status, COALESCE(correlation_id,'') FROM approval_queue
		WHERE account_id = ? AND idempotency_key = ? AND created_at >= ? ORDER BY id DESC LIMIT 1`,
		g.opts.AccountID, c.IdempotencyKey, ts(g.opts.Now().Add(-g.opts.KeyWindow))).Scan(&item, &qintent, &status, &corr)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
	case !id.matches(qintent):
		return nil, apperr.New(apperr.IdempotencyConflict,
			"idempotency_key %q was already used (approval item %d) with different parameters; use a new key for a different request", c.IdempotencyKey, item)
	}
	switch status {
	case ApprovalPending, ApprovalApproved:
		return &Response{Kind: Routed, ApprovalID: item, Queued: &Queued{RoutedToApproval: true, ApprovalQueueID: item, Duplicate: true,
			Reason: "this idempotency_key already queued the same call for approval"}}, nil
	case ApprovalExecuted:
		if corr == "" {
			return nil, nil
		}
		p, err := g.originalRow(ctx, q, priorRow{corr: corr, dupOf: corr, intent: id.intent, tool: c.Tool})
		if err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
		}
		return g.priorOutcome(ctx, q, c, id, p)
	}
	// Rejected, expired or failed: the key may be used to try again.
	return nil, nil
}

// originalRow reads the row a duplicate row points at.
func (g *Gateway) originalRow(ctx context.Context, q querier, dup priorRow) (priorRow, error) {
	var p priorRow
	err := q.QueryRowContext(ctx, qOriginal, g.opts.AccountID, dup.dupOf).
		Scan(&p.intent, &p.tool, &p.status, &p.corr, &p.errCode, &p.result, &p.resolution)
	if errors.Is(err, sql.ErrNoRows) {
		// The original aged out under retention; the duplicate's own record
		// still says the call succeeded.
		return priorRow{intent: dup.intent, tool: dup.tool, status: statusSuccess, corr: dup.dupOf}, nil
	}
	return p, err
}

// priorOutcome answers a call from the earlier call p with the same
// intent, which another tool may have made. A duplicate row keeps this
// call's own tool and parameters hash, and points at p.
func (g *Gateway) priorOutcome(ctx context.Context, q querier, c Call, id identity, p priorRow) (*Response, error) {
	status := p.status
	if status == statusUnknown || status == statusInterrupted {
		switch p.resolution {
		case ResolvedHappened:
			// Resolved as having reached X: a success for every
			// duplicate check from now on.
			status = statusSuccess
		case ResolvedDidNotHappen:
			// Nothing reached X: the block is released.
			return nil, nil
		}
	}
	switch status {
	case statusSuccess:
		var cached any
		if p.result.Valid {
			if err := json.Unmarshal([]byte(p.result.String), &cached); err != nil {
				cached = p.result.String
			}
		}
		corr := uuid.NewString()
		now := g.opts.Now()
		// A duplicate row keeps no parameters: it shows the action alone.
		if _, err := q.ExecContext(ctx, qInsertDuplicate,
			corr, c.IdempotencyKey, c.Tool, id.hash, id.intent, fmt.Sprintf(`{"duplicate_of":%q}`, p.corr), g.opts.AccountID,
			callerOf(c), c.Loop, p.corr, g.instance, ts(now), ts(now), describe.RecordedOf(c.Tool, "", "").Name); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "record duplicate: %v", err)
		}
		return &Response{Kind: Duplicate, CorrelationID: p.corr, Duplicate: duplicateOfCall(p.corr, cached)}, nil
	case statusPending:
		return nil, apperr.New(apperr.MutationInFlight,
			"an identical %s (correlation id %s) is still running; wait for it and check get_mutation_detail instead of retrying", sameAs(c, p), p.corr).
			With("original_correlation_id", p.corr)
	case statusUnknown, statusInterrupted:
		return nil, apperr.New(apperr.OutcomeUnverified,
			"an identical %s (correlation id %s) ended with an unknown outcome and stays blocked until it is resolved: verify on X (for example read the timeline or get_tweet_by_id), then a human runs `tuitbot audit resolve %s --happened` or `--did-not-happen`; it is never retried automatically", sameAs(c, p), p.corr, p.corr).
			With("original_correlation_id", p.corr).With("original_status", p.status)
	case statusFailure:
		if p.errCode == string(apperr.ThreadPartial) {
			return nil, apperr.New(apperr.OutcomeUnverified,
				"this thread was already partially posted (correlation id %s); see get_mutation_detail for the posted ids and post only the remainder", p.corr).
				With("original_correlation_id", p.corr)
		}
	}
	return nil, nil
}

// sameAs names the earlier call p as a message shows it: by its tool, and,
// when another tool made it, as the same effect as this call.
func sameAs(c Call, p priorRow) string {
	if p.tool == "" || p.tool == c.Tool {
		return c.Tool
	}
	return fmt.Sprintf("request made with %s (the same effect as this %s)", p.tool, c.Tool)
}

// callerOf is who asked for the call. An approved replay names the caller
// of the queued call, not the approval: who decided is its own column
// (decided_by).
func callerOf(c Call) string {
	if c.Caller == "" {
		return "mcp"
	}
	return c.Caller
}

// insertPending writes the pending row and the decision that allowed it;
// the caller's transaction has already found no earlier identical call.
// It is the transaction's last statement: on PostgreSQL it is sent with
// the COMMIT (see store.ExecLast), and an error it meets comes from the
// commit.
func (g *Gateway) insertPending(ctx context.Context, q txQ, c Call, params json.RawMessage, id identity, corr, summary, equiv string, start time.Time, decision []any) error {
	var approval any
	if c.approvalID != 0 {
		approval = c.approvalID
	}
	var request sql.NullString
	act := g.actions[c.Tool]
	if act != nil && act.Request != nil {
		if b := act.Request(params); len(b) > 0 {
			request = sql.NullString{String: string(b), Valid: true}
		}
	}
	// What a list of rows shows is described from the summary, not the
	// parameters: the summary is what the row may keep (no signed URL's
	// query, no credential), so the description can hold nothing more.
	shown := describe.RecordedOf(c.Tool, equiv, summary)
	row := []any{corr, c.IdempotencyKey, c.Tool, equiv, id.hash, id.intent, summary, g.opts.AccountID, callerOf(c), c.Loop, approval, g.instance, ts(start), request,
		targetOf(act, params)}
	row = append(row, shownColumns(shown)...)
	row = append(row, c.decidedBy)
	if g.opts.DB.Dialect == store.Postgres {
		if err := store.ExecLast(ctx, q.tx, qInsertPendingLogged, append(decision, row...)...); err != nil {
			return apperr.Wrap(apperr.DBError, err, "write pending audit row: %v", err)
		}
		return nil
	}
	g.logDecision(ctx, q, decision)
	if _, err := q.ExecContext(ctx, qInsertPending, row...); err != nil {
		return apperr.Wrap(apperr.DBError, err, "write pending audit row: %v", err)
	}
	return nil
}

// outcomeOf is what completing an executed call records.
func (g *Gateway) outcomeOf(corr, status string, res Result, execErr error, elapsed time.Duration) *outcome {
	o := &outcome{Corr: corr, Status: status, ElapsedMS: elapsed.Milliseconds(), At: ts(g.opts.Now())}
	str := func(s string) *string { return &s }
	data := res.Data
	if execErr != nil {
		e := apperr.As(execErr)
		o.ErrCode = str(string(e.Code))
		o.ErrMsg = str(tweettext.TruncateBytes(e.Message, maxSummaryBytes))
		if data == nil {
			data = e.Data
		}
	}
	if data != nil {
		if b, err := json.Marshal(data); err == nil {
			o.Result = str(tweettext.TruncateBytes(string(b), maxResultBytes))
			o.Summary = str(tweettext.TruncateBytes(string(b), maxSummaryBytes))
		}
	}
	if res.Rollback != nil {
		if b, err := json.Marshal(res.Rollback); err == nil {
			o.Rollback = str(string(b))
		}
	}
	return o
}

// decisionRow is the action log row of a policy decision, as the arguments
// of qLogDecision.
func (g *Gateway) decisionRow(c Call, cat policy.Category, equiv string, d policy.Decision) []any {
	meta, _ := json.Marshal(decisionMeta{
		Caller: callerOf(c), Category: cat, Decision: d.Outcome, EquivalentTool: equiv, Loop: c.Loop,
		MatchedRuleID: d.RuleID, Reason: d.Reason, Source: d.Source, ToolName: c.Tool,
	})
	return []any{g.opts.AccountID, decisionStatus(d.Outcome), c.Tool, string(meta), ts(g.opts.Now())}
}

// decisionMeta is the metadata of a decision's action log row. Its fields
// are in the order of their names, as a map's would be, so that the rows
// read the same as they always have; it is a struct because every
// mutation writes one, and encoding a map sorts its keys each time.
type decisionMeta struct {
	Caller         string          `json:"caller"`
	Category       policy.Category `json:"category"`
	Decision       policy.Outcome  `json:"decision"`
	EquivalentTool string          `json:"equivalent_tool"`
	Loop           string          `json:"loop"`
	MatchedRuleID  string          `json:"matched_rule_id"`
	Reason         string          `json:"reason"`
	Source         string          `json:"source"`
	ToolName       string          `json:"tool_name"`
}

// decisionStatus is the action log status of a decision's outcome.
func decisionStatus(o policy.Outcome) string {
	switch o {
	case policy.Allow:
		return "allowed"
	case policy.Deny:
		return "denied"
	case policy.RequireApproval:
		return "routed_to_approval"
	case policy.DryRun:
		return "dry_run"
	}
	return ""
}

func (g *Gateway) logDecision(ctx context.Context, q querier, decision []any) {
	if _, err := q.ExecContext(ctx, qLogDecision, decision...); err != nil {
		g.opts.Logger.Warn("action_log write failed", "error", err)
	}
}

// lockInstance takes an exclusive lock on this process's liveness file.
// While the process lives the lock is held; the kernel drops it when the
// process dies, however it dies.
func (g *Gateway) lockInstance() (func(), error) {
	dir := g.lockDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gateway lock dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, "gateway-"+g.instance+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("gateway lock: %w", err)
	}
	if err := flock.TryLock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("gateway lock: %w", err)
	}
	return func() {
		_ = os.Remove(path)
		_ = f.Close()
	}, nil
}

func (g *Gateway) lockDir() string {
	if g.opts.LockDir != "" {
		return g.opts.LockDir
	}
	return filepath.Join(filepath.Dir(g.opts.DB.Path), "locks")
}

// instanceKey is the server lock a gateway holds on PostgreSQL while its
// process lives.
func instanceKey(owner string) string { return "gateway-instance:" + owner }

// lockOnServer holds this process's liveness lock on the PostgreSQL
// server: a session advisory lock on a connection of its own. The server
// drops it when the session ends, however the process or its host ends,
// so another host can tell a dead owner from a live one. (The lock files
// only reach processes sharing this machine's home.)
func (g *Gateway) lockOnServer(ctx context.Context) (func(), error) {
	conn, err := g.opts.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("gateway lock: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, store.LockKey(instanceKey(g.instance))); err != nil {
		conn.Close()
		return nil, fmt.Errorf("gateway lock: %w", err)
	}
	return func() {
		// Unlock, so that a start elsewhere right after this sees the
		// process gone, then discard the session rather than pool it.
		_, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(?)`, store.LockKey(instanceKey(g.instance)))
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
	}, nil
}

// ownerAliveOnServer reports whether owner's session still holds its
// server lock. When the server cannot say, the owner counts as alive: a
// live process's row must never be marked interrupted.
func (g *Gateway) ownerAliveOnServer(owner string) bool {
	ctx := context.Background()
	conn, err := g.opts.DB.Conn(ctx)
	if err != nil {
		return true
	}
	defer conn.Close()
	key := instanceKey(owner)
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, store.LockKey(key)).Scan(&got); err != nil || !got {
		return true
	}
	_, _ = conn.ExecContext(ctx, `SELECT pg_advisory_unlock(?)`, store.LockKey(key))
	return false
}

// ownerAlive reports whether the process that wrote a row still holds its
// liveness lock: on the PostgreSQL server, or else its lock file.
func (g *Gateway) ownerAlive(owner string) bool {
	if owner == g.instance {
		return true
	}
	if owner == "" || strings.ContainsAny(owner, `/\.`) {
		return false
	}
	path := filepath.Join(g.lockDir(), "gateway-"+owner+".lock")
	if g.opts.DB.Dialect == store.Postgres {
		if g.ownerAliveOnServer(owner) {
			return true
		}
		_ = os.Remove(path)
		return false
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := flock.TryLock(f); err != nil {
		return true
	}
	_ = flock.Unlock(f)
	_ = os.Remove(path)
	return false
}

// qInFlight tells whether any process left work that recover finishes:
// a pending audit row (its owner may have stopped) or an approved item
// (its replay interrupted, or claimed and never started).
const qInFlight = `SELECT EXISTS (SELECT 1 FROM mutation_audit WHERE status = 'pending')
	OR EXISTS (SELECT 1 FROM approval_queue WHERE status = 'approved')`

// recover marks rows left pending by dead processes as interrupted. They
// are never retried automatically: the call may or may not have reached X.
func (g *Gateway) recover(ctx context.Context) error {
	// Journals first: they turn a stopped process's pending rows into
	// interrupted ones that keep the outcome it saw.
	if err := g.recoverJournals(ctx); err != nil {
		return err
	}
	// Most starts find nothing in flight: one read through the indexes on
	// pending rows says so, and spares them the scans and writes below.
	var inFlight bool
	if err := g.opts.DB.QueryRowContext(ctx, qInFlight).Scan(&inFlight); err != nil {
		return fmt.Errorf("recover audit: %w", err)
	}
	if !inFlight {
		return nil
	}
	rows, err := g.opts.DB.QueryContext(ctx, `SELECT DISTINCT owner FROM mutation_audit WHERE status = 'pending'`)
	if err != nil {
		return fmt.Errorf("recover audit: %w", err)
	}
	var owners []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			rows.Close()
			return err
		}
		owners = append(owners, o)
	}
	rows.Close()
	for _, o := range owners {
		if g.ownerAlive(o) {
			continue
		}
		res, err := g.opts.DB.ExecContext(ctx, `UPDATE mutation_audit SET status = 'interrupted', completed_at = ?,
			error_code = ?, error_message = 'the process stopped before the outcome was recorded; verify on X before repeating'
			WHERE status = 'pending' AND owner = ?`, ts(g.opts.Now()), string(apperr.XOutcomeUnknown), o)
		if err != nil {
			return fmt.Errorf("recover audit: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			g.opts.Logger.Warn("marked mutations of a stopped process as interrupted", "rows", n)
		}
	}
	// An approved item whose replay was interrupted would otherwise stay
	// "approved" for good: neither pending nor decided. Its outcome is as
	// unknown as the audit row's.
	if _, err := g.opts.DB.ExecContext(ctx, `UPDATE approval_queue SET status = 'failed',
		correlation_id = (SELECT correlation_id FROM mutation_audit m WHERE m.approval_id = approval_queue.id AND m.status = 'interrupted' ORDER BY m.id DESC LIMIT 1),
		error_code = ?, error_message = 'the process stopped while running the approved call; verify on X before queueing it again'
		WHERE status = 'approved' AND EXISTS (SELECT 1 FROM mutation_audit m WHERE m.approval_id = approval_queue.id AND m.status = 'interrupted')`,
		string(apperr.XOutcomeUnknown)); err != nil {
		return fmt.Errorf("recover approvals: %w", err)
	}
	return g.releaseDeadClaims(ctx)
}

// releaseDeadClaims puts items back in the queue that a dead process had
// claimed but never started: with no audit row for the replay, nothing was
// sent (the pending row is written before any I/O), so the human's
// decision can simply be taken again.
func (g *Gateway) releaseDeadClaims(ctx context.Context) error {
	rows, err := g.opts.DB.QueryContext(ctx, `SELECT id, COALESCE(claimed_by,'') FROM approval_queue a WHERE status = 'approved'
		AND NOT EXISTS (SELECT 1 FROM mutation_audit m WHERE m.approval_id = a.id)`)
	if err != nil {
		return fmt.Errorf("recover approvals: %w", err)
	}
	type claim struct {
		id    int64
		owner string
	}
	var claims []claim
	for rows.Next() {
		var c claim
		if err := rows.Scan(&c.id, &c.owner); err != nil {
			rows.Close()
			return fmt.Errorf("recover approvals: %w", err)
		}
		claims = append(claims, c)
	}
	rows.Close()
	for _, c := range claims {
		if g.ownerAlive(c.owner) {
			continue
		}
		if _, err := g.opts.DB.ExecContext(ctx, `UPDATE approval_queue SET status = 'pending', reviewed_at = NULL, reviewed_by = NULL,
			claimed_by = NULL WHERE id = ? AND status = 'approved'`, c.id); err != nil {
			return fmt.Errorf("recover approvals: %w", err)
		}
		g.opts.Logger.Warn("approval item claimed by a stopped process is pending again; nothing was sent", "id", c.id)
	}
	return nil
}

func (g *Gateway) applyRetention(ctx context.Context) error {
	cut := ts(g.opts.Now().Add(-g.opts.AuditRetention))
	if _, err := g.opts.DB.ExecContext(ctx, `DELETE FROM mutation_audit WHERE created_at < ? AND status != 'pending'`, cut); err != nil {
		return fmt.Errorf("audit retention: %w", err)
	}
	if _, err := g.opts.DB.ExecContext(ctx, `DELETE FROM action_log WHERE created_at < ?`, cut); err != nil {
		return fmt.Errorf("action log retention: %w", err)
	}
	return nil
}

// AuditEntry is one mutation_audit row. The seed's names come first:
// result_summary is always a string, error_message is null when there is
// no error and rollback_action is the undo guidance. Fields beyond the seed
// keep their own names.
type AuditEntry struct {
	CorrelationID  string `json:"correlation_id"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Tool           string `json:"tool_name"`
	// EquivalentTool is the typed tool a universal request does the work
	// of, whose policy applied too.
	EquivalentTool string `json:"equivalent_tool,omitempty"`
	ParamsHash     string `json:"params_hash"`
	// IntentKey identifies what the call does on X, whatever tool spelled
	// it; calls with one intent key are identical for duplicate checks.
	IntentKey     string             `json:"intent_key,omitempty"`
	ParamsSummary string             `json:"params_summary"`
	Status        string             `json:"status"`
	ResultSummary string             `json:"result_summary"`
	ErrorMessage  *string            `json:"error_message"`
	Rollback      *rollback.Guidance `json:"rollback_action"`
	ElapsedMS     int64              `json:"elapsed_ms"`
	CreatedAt     string             `json:"created_at"`
	CompletedAt   string             `json:"completed_at,omitempty"`
	AccountID     string             `json:"account_id"`
	Result        json.RawMessage    `json:"result,omitempty"`
	ErrorCode     string             `json:"error_code,omitempty"`
	// Caller is who asked for the call (mcp, autopilot, cli, web), an
	// approved call's too; Loop the autopilot loop that did.
	Caller     string `json:"caller"`
	Loop       string `json:"loop,omitempty"`
	ApprovalID int64  `json:"approval_id,omitempty"`
	// DecidedBy is the person who approved the call (cli, web, mcp_agent,
	// link:<channel>, telegram:<user id>); empty when no person was asked.
	DecidedBy   string `json:"decided_by,omitempty"`
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// Request is the canonical request a universal write sent (no header
	// values), for a human verifying an unknown outcome.
	Request json.RawMessage `json:"request,omitempty"`
	// Resolution records how an unknown or interrupted attempt was
	// resolved, by whom (cli, mcp, auto) and when.
	Resolution string `json:"resolution,omitempty"`
	ResolvedBy string `json:"resolved_by,omitempty"`
	ResolvedAt string `json:"resolved_at,omitempty"`
	// Shown is the row as a list of rows shows it, as written with the
	// row, or described from its parameters' summary for a row written
	// before that was stored. It stays out of the row's JSON: the summary
	// already says the same to a program.
	Shown describe.Recorded `json:"-"`
}

// auditStatuses are every status an audit row can have.
var auditStatuses = []string{statusPending, statusSuccess, statusFailure, statusUnknown, statusInterrupted, statusDuplicate, statusHandedOff}

// AuditFilter narrows Recent.
type AuditFilter struct {
	Tool, Status string
	// Caller is who started the mutation (mcp, autopilot, cli, web...).
	Caller string
	Since  time.Time
	// Search keeps the rows whose parameters (a post's text, the ids of
	// its target) hold it, ignoring case, or whose target is it.
	Search string
	Limit  int
	// Brief reads only what a list of rows shows (when, the tool, what it
	// shows, status, resolution, who): everything else is left empty,
	// and no JSON is decoded but an old row's summary (see Shown).
	Brief bool
}

const auditCols = `correlation_id, COALESCE(idempotency_key,''), tool_name, COALESCE(equivalent_tool,''), params_hash, COALESCE(intent_key,''), params_summary, status,
	COALESCE(result_summary,''), result_json, COALESCE(error_code,''), error_message, rollback_action, COALESCE(elapsed_ms,0),
	account_id, caller, loop_name, COALESCE(approval_id,0), COALESCE(duplicate_of,''), created_at, COALESCE(completed_at,''),
	request_json, COALESCE(resolution,''), COALESCE(resolved_by,''), COALESCE(resolved_at,''),
	action_name, COALESCE(description,''), COALESCE(target_kind,''), COALESCE(decided_by,'')`

// auditBriefCols are the columns of a brief row (AuditFilter.Brief). A
// row written before what it shows was stored has no action_name, and is
// described by describeOld: reading its parameters for every row would
// cost each page two more columns a row.
//
// A value most rows lack is read as NULL, not as an empty string: the
// driver reads a NULL with one call, text with three and a copy.
const auditBriefCols = `correlation_id, tool_name, status, caller, created_at, resolution,
	action_name, description, NULLIF(target_kind,''), decided_by`

// briefScan scans brief rows (AuditFilter.Brief), and the flag that may
// follow them, into fields of its own: their addresses stay put, so the
// destinations are made once a read, not once a row, and each row's
// values are then copied into its entry.
type briefScan struct {
	// The values a row may lack (NULL) are read as any, and so is the
	// flag that may follow the row: read into a string or a bool, they
	// would be converted through reflection (or refused).
	resolution, name, text, kind, decidedBy, flag any
	flagged                                       bool
}

// newBriefScan scans brief rows, followed by a flag when flag is set.
func newBriefScan(flag bool) *briefScan {
	return &briefScan{flagged: flag}
}

// scan scans the current row of rows into e, the values every row has
// straight into its fields; described is false for a row that does not
// store what it shows.
func (b *briefScan) scan(rows *sql.Rows, e *AuditEntry) (described bool, err error) {
	if b.flagged {
		err = rows.Scan(&e.CorrelationID, &e.Tool, &e.Status, &e.Caller, &e.CreatedAt, &b.resolution, &b.name, &b.text, &b.kind, &b.decidedBy, &b.flag)
	} else {
		err = rows.Scan(&e.CorrelationID, &e.Tool, &e.Status, &e.Caller, &e.CreatedAt, &b.resolution, &b.name, &b.text, &b.kind, &b.decidedBy)
	}
	if err != nil {
		return false, err
	}
	e.Resolution, e.DecidedBy = textOf(b.resolution), textOf(b.decidedBy)
	// Every stored action has a name: the tool's, at least.
	name := textOf(b.name)
	if name == "" {
		// Described after the read (describeOld).
		e.Shown = describe.Recorded{}
		return false, nil
	}
	e.Shown = storedShown(name, textOf(b.text), textOf(b.kind))
	return true, nil
}

// truthOf is the truth v holds, as a driver reads a boolean or a number:
// a bool, or an integer; NULL is false.
func truthOf(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case int64:
		return v != 0
	}
	return false
}

// textOf is the text v holds, as the driver reads a column: "" for NULL.
func textOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// describeOld describes the rows out[i] for i in old, written before what
// a row shows was stored, from their parameters' summary, in one query.
func (g *Gateway) describeOld(ctx context.Context, out []AuditEntry, old []int) error {
	if len(old) == 0 {
		return nil
	}
	args := make([]any, 0, len(old)+1)
	args = append(args, g.opts.AccountID)
	at := make(map[string]int, len(old))
	for _, i := range old {
		args = append(args, out[i].CorrelationID)
		at[out[i].CorrelationID] = i
	}
	rows, err := g.opts.DB.QueryContext(ctx, `SELECT correlation_id, COALESCE(equivalent_tool,''), params_summary FROM mutation_audit
		WHERE account_id = ? AND correlation_id IN (?`+strings.Repeat(", ?", len(old)-1)+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var corr, equiv, summary string
		if err := rows.Scan(&corr, &equiv, &summary); err != nil {
			return err
		}
		if i, ok := at[corr]; ok {
			out[i].Shown = describe.RecordedOf(out[i].Tool, equiv, summary)
		}
	}
	return rows.Err()
}

// shownColumns are what a row shows, as its action_name, description and
// target_kind: the description is the posted text, or else the id of the
// target that target_kind names.
func shownColumns(r describe.Recorded) []any {
	if r.Text != "" || r.Target.Kind == describe.KindNone {
		return []any{r.Name, r.Text, ""}
	}
	return []any{r.Name, r.Target.ID, string(r.Target.Kind)}
}

// storedShown is what a row shows as its columns store it: name,
// description and target_kind.
func storedShown(name, description, kind string) describe.Recorded {
	if kind == "" {
		return describe.Recorded{Name: name, Text: description}
	}
	return describe.Recorded{Name: name, Target: describe.Target{Kind: describe.Kind(kind), ID: description}}
}

func scanAudit(sc interface{ Scan(...any) error }) (AuditEntry, error) {
	var e AuditEntry
	var result, errMsg, undo, request, name sql.NullString
	var text, kind string
	err := sc.Scan(&e.CorrelationID, &e.IdempotencyKey, &e.Tool, &e.EquivalentTool, &e.ParamsHash, &e.IntentKey, &e.ParamsSummary, &e.Status,
		&e.ResultSummary, &result, &e.ErrorCode, &errMsg, &undo, &e.ElapsedMS, &e.AccountID, &e.Caller, &e.Loop,
		&e.ApprovalID, &e.DuplicateOf, &e.CreatedAt, &e.CompletedAt, &request, &e.Resolution, &e.ResolvedBy, &e.ResolvedAt,
		&name, &text, &kind, &e.DecidedBy)
	if err != nil {
		return e, err
	}
	// A row written before what it shows was stored is described from
	// its summary.
	if name.Valid {
		e.Shown = storedShown(name.String, text, kind)
	} else {
		e.Shown = describe.RecordedOf(e.Tool, e.EquivalentTool, e.ParamsSummary)
	}
	if request.Valid && json.Valid([]byte(request.String)) {
		e.Request = json.RawMessage(request.String)
	}
	if result.Valid && json.Valid([]byte(result.String)) {
		e.Result = json.RawMessage(result.String)
	}
	if errMsg.Valid && errMsg.String != "" {
		e.ErrorMessage = &errMsg.String
	}
	if undo.Valid {
		var rb rollback.Guidance
		if json.Unmarshal([]byte(undo.String), &rb) == nil {
			e.Rollback = &rb
		}
	}
	return e, nil
}

// likeEscaper makes a search term match itself literally in LIKE ...
// ESCAPE '!'.
var likeEscaper = strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")

// Recent lists audit rows, newest first.
func (g *Gateway) Recent(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	out, _, err := g.recent(ctx, f, false, nil)
	return out, err
}

// RecentUnresolved is Recent, and says besides whether some outcome may
// be unresolved: false only when the rows read prove there is none, so a
// page that lists the unresolved need not ask for them. The answer rides
// on every row of the one statement (an uncorrelated subquery, computed
// once), which costs far less than a second statement.
func (g *Gateway) RecentUnresolved(ctx context.Context, f AuditFilter) ([]AuditEntry, bool, error) {
	return g.recent(ctx, f, true, nil)
}

// RecentUnresolvedInto is RecentUnresolved reading the rows into into's
// storage when it has room for the page: a page shown again and again
// then writes its rows over the last view's instead of asking for (and
// clearing) as many new ones. A brief read (AuditFilter.Brief) sets in
// each entry only what it reads, and leaves the rest as into had it: into
// should hold only what brief reads wrote.
func (g *Gateway) RecentUnresolvedInto(ctx context.Context, f AuditFilter, into []AuditEntry) ([]AuditEntry, bool, error) {
	return g.recent(ctx, f, true, into)
}

func (g *Gateway) recent(ctx context.Context, f AuditFilter, flag bool, into []AuditEntry) ([]AuditEntry, bool, error) {
	if f.Limit <= 0 || f.Limit > maxAuditRows {
		f.Limit = 20
	}
	// An unknown filter value would match nothing and look like "no
	// mutations": refuse it, naming the field.
	if f.Status != "" && !slices.Contains(auditStatuses, f.Status) {
		return nil, false, apperr.New(apperr.InvalidInput, "status: %q is not an audit status; allowed values: %s", f.Status, strings.Join(auditStatuses, ", "))
	}
	if f.Tool != "" {
		if _, ok := g.actions[f.Tool]; !ok {
			return nil, false, apperr.New(apperr.InvalidInput, "tool_name: %q is not a mutation tool", f.Tool)
		}
	}
	cols := auditCols
	if f.Brief {
		cols = auditBriefCols
	}
	// Every value is bound as g.arg() writes it, so that each shape is
	// planned once (see arg).
	arg := g.arg()
	var head []any
	if flag {
		// NULL (false) in the common case, which the driver reads with
		// one call a row.
		cols += `, CASE WHEN EXISTS (SELECT 1 FROM mutation_audit` + g.indexed("idx_mutation_audit_unresolved") + ` WHERE account_id = ` + arg + `
			AND status IN ('unknown', 'interrupted') AND resolution IS NULL) THEN 1 END`
		head = append(head, g.opts.AccountID)
	}
	// cond is the filter's condition on a row of the account, bound to
	// condArgs.
	var cond string
	var condArgs []any
	if f.Tool != "" {
		cond += ` AND tool_name = ` + arg
		condArgs = append(condArgs, f.Tool)
	}
	if f.Status != "" {
		cond += ` AND status = ` + arg
		condArgs = append(condArgs, f.Status)
	}
	if f.Caller != "" {
		cond += ` AND caller = ` + arg
		condArgs = append(condArgs, f.Caller)
	}
	if !f.Since.IsZero() {
		cond += ` AND created_at >= ` + arg
		condArgs = append(condArgs, ts(f.Since))
	}
	if f.Search = strings.TrimSpace(f.Search); f.Search != "" {
		// A scan of the newest rows until the page is full: searches are
		// rare and a person waits for them.
		// The summary is JSON: the term is looked for as JSON spells it
		// (a quote as \", & as \u0026).
		enc, _ := json.Marshal(strings.ToLower(f.Search))
		term := string(enc[1 : len(enc)-1])
		cond += ` AND (LOWER(params_summary) LIKE ` + arg + ` ESCAPE '!' OR target_tweet_id = ` + arg + `)`
		condArgs = append(condArgs, "%"+likeEscaper.Replace(term)+"%", f.Search)
	}
	lim, limArgs := g.limitOf(f.Limit)
	tail := cond + ` ORDER BY id DESC` + lim
	// part is a read of the account's rows from q, followed by tail, and
	// its arguments: acct times the account after head.
	part := func(q string, acct int) (string, []any) {
		args := slices.Clone(head)
		for range acct {
			args = append(args, g.opts.AccountID)
		}
		return `SELECT ` + cols + ` FROM mutation_audit ` + q + tail, append(append(args, condArgs...), limArgs...)
	}
	if g.opts.DB.Dialect != store.SQLite {
		q, args := part(`WHERE account_id = `+arg, 1)
		return g.readRecent(ctx, q, args, f, flag, into)
	}
	// The page's rows are most often among the newest rows of the table:
	// every row of a one-account home, and the rows of any filter but a
	// rare one. Those are read first, as the table keeps them, backwards
	// from its newest row, which costs no lookup a row as reading them
	// through an index does (the account's, the tool's, the status's):
	// at most the newest recentWindow rows (MAX(id) is the table's last
	// row, found at once). Only when they hold fewer rows than the page
	// is it read again, through the indexes, as below. (One statement
	// that read on past them, a UNION ALL of the two, would copy every
	// row through a subquery: half as dear again as the read.)
	q, args := part(`NOT INDEXED WHERE id > (SELECT MAX(id) FROM mutation_audit) - `+strconv.Itoa(recentWindow)+` AND account_id = `+arg, 1)
	out, unresolved, err := g.readRecent(ctx, q, args, f, flag, into)
	if err != nil || len(out) >= f.Limit {
		return out, unresolved, err
	}
	into = out
	if cond == "" {
		// The trail as it opens: the account's newest rows. Read through
		// the account's index, each would cost a second lookup in the
		// table. The index gives the oldest of them at once, without
		// the table (it holds the ids), and the table, which is kept in
		// id order, is read backwards from its newest row down to that
		// one: the rows of the page, and those of other accounts written
		// meanwhile, which are skipped.
		q, args = part(`NOT INDEXED WHERE account_id = `+arg+` AND id >= (SELECT MIN(id) FROM
			(SELECT id FROM mutation_audit INDEXED BY idx_mutation_audit_account WHERE account_id = `+arg+` ORDER BY id DESC LIMIT `+strconv.Itoa(maxAuditRows)+`))`, 2)
	} else {
		q, args = part(`WHERE account_id = `+arg, 1)
	}
	return g.readRecent(ctx, q, args, f, flag, into)
}

// recentWindow is how many of the table's newest rows a read of the audit
// trail on SQLite looks through before it turns to the indexes: ten pages
// of a filter that keeps one row in ten.
const recentWindow = 1000

// readRecent reads the rows of q, a read of the audit trail as filtered
// by f, with args, and (flag) whether some outcome may be unresolved.
func (g *Gateway) readRecent(ctx context.Context, q string, args []any, f AuditFilter, flag bool, into []AuditEntry) ([]AuditEntry, bool, error) {
	out := into[:0]
	if cap(out) < f.Limit {
		out = make([]AuditEntry, 0, f.Limit)
	}
	// Without rows there is nothing to say there is no unresolved one.
	unresolved := true
	var old []int
	// A page asks the same few shapes again and again; parsing the query
	// was a large part of each (the reads are prepared). Each shape reads
	// the account's rows newest first, from the table or through an index
	// that gives them in that order ((account_id, id), or the tool's),
	// stopping at the page's last row: never all of them and a sort,
	// whatever the statistics.
	err := g.opts.DB.ReadInOrder(ctx, func(oq store.OrderedQuerier) error {
		rows, err := oq.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var sc interface{ Scan(...any) error } = rows
		var last any
		if flag {
			sc = &suffixScan{sc: rows, last: &last}
		}
		var brief *briefScan
		if f.Brief {
			brief = newBriefScan(flag)
		}
		for len(out) < f.Limit && rows.Next() {
			var err error
			if f.Brief {
				// The entry is new (zero) or one a brief read wrote:
				// each field it reads is written below.
				out = out[:len(out)+1]
				var described bool
				if described, err = brief.scan(rows, &out[len(out)-1]); err == nil && flag {
					unresolved = truthOf(brief.flag)
				}
				if err == nil && !described {
					old = append(old, len(out)-1)
				}
			} else {
				var e AuditEntry
				e, err = scanAudit(sc)
				out = append(out, e)
				if err == nil && flag {
					unresolved = truthOf(last)
				}
			}
			if err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, false, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
	}
	if err := g.describeOld(ctx, out, old); err != nil {
		return nil, false, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
	}
	return out, unresolved, nil
}

// maxAuditRows is the most rows one read of the audit trail returns.
const maxAuditRows = 100

// limitOf is the LIMIT clause of a read of at most n (1..maxAuditRows)
// rows, and its arguments. SQLite reads a bound LIMIT's value to plan the
// statement, so binding one makes it parse and plan the statement again
// at every run (6 % of the audit page's CPU): there the clause is
// the written maximum, the same text for every n, and the caller stops
// reading at n (SQLite steps no further than it is asked). PostgreSQL
// plans a prepared statement once whatever is bound, and would send every
// row up to the limit: there n is bound.
func (g *Gateway) limitOf(n int) (string, []any) {
	if g.opts.DB.Dialect == store.SQLite {
		return " LIMIT " + strconv.Itoa(maxAuditRows), nil
	}
	return " LIMIT ?", []any{n}
}

// arg is a bound value in a statement that runs again and again (a
// call's duplicate lookups, a page's read of the audit trail or the
// approval queue). SQLite plans a statement again at every run, as
// costly as parsing it, when a bound
// value may change its plan: one compared with an indexed column once
// statistics sample it (sqlite_stat4, which PRAGMA optimize gathers), a
// LIMIT, a LIKE pattern. A value behind a unary plus is an expression
// the planner does not look into, and the statement is planned once; an
// index on the column is used as before. PostgreSQL plans a prepared
// statement without the values (and has no unary plus for text).
func (g *Gateway) arg() string {
	return argIn(g.opts.DB.Dialect)
}

// argIn is a bound value written as Gateway.arg says, in dialect d.
func argIn(d store.Dialect) string {
	if d == store.SQLite {
		return "+?"
	}
	return "?"
}

// suffixScan scans the last column into last, the others as asked; dest
// is kept from row to row.
type suffixScan struct {
	sc   interface{ Scan(...any) error }
	last any
	dest []any
}

func (s *suffixScan) Scan(dest ...any) error {
	s.dest = append(append(s.dest[:0], dest...), s.last)
	return s.sc.Scan(s.dest...)
}

// Unresolved lists the unknown and interrupted attempts nobody has
// resolved yet, newest first: each blocks identical calls until a person
// says what happened. The partial index on exactly these rows, in id
// order, makes this cheap however long the trail is.
func (g *Gateway) Unresolved(ctx context.Context, limit int) ([]AuditEntry, error) {
	if limit <= 0 || limit > maxAuditRows {
		limit = maxAuditRows
	}
	lim, limArgs := g.limitOf(limit)
	rows, err := g.stmts.queryRead(ctx, `SELECT `+auditCols+` FROM mutation_audit`+g.indexed("idx_mutation_audit_unresolved_order")+`
		WHERE account_id = `+g.arg()+` AND status IN ('unknown', 'interrupted') AND resolution IS NULL ORDER BY id DESC`+lim,
		append([]any{g.opts.AccountID}, limArgs...)...)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read unresolved outcomes: %v", err)
	}
	defer rows.Close()
	out := []AuditEntry{}
	for len(out) < limit && rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read unresolved outcomes: %v", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Detail returns one audit row.
func (g *Gateway) Detail(ctx context.Context, corr string) (*AuditEntry, error) {
	// Prepared, as the other pages' reads are, so the plan test sees it.
	s, err := g.opts.DB.Prepared(context.WithoutCancel(ctx), `SELECT `+auditCols+` FROM mutation_audit WHERE correlation_id = `+g.arg()+` AND account_id = `+g.arg())
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
	}
	e, err := scanAudit(s.QueryRowContext(ctx, corr, g.opts.AccountID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.New(apperr.NotFound, "no mutation with correlation_id %q", corr)
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
	}
	return &e, nil
}

// targetOf is the post act acts on, or "" when it names none.
func targetOf(act *Action, params json.RawMessage) string {
	if act == nil || act.Target == nil {
		return ""
	}
	return act.Target(params)
}
