package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// The gateway owns the audit (mutation_audit), approval (approval_queue)
// and decision log (action_log) tables: other packages ask through the
// functions below instead of running SQL on them. They take the database
// rather than a *Gateway so that read-only commands (status, stats) need
// not build one.

// Reader is the database access the read functions need; *store.DB,
// *sql.DB and *sql.Tx provide it.
type Reader interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// rowReader is the single-row part of Reader, which the gateway's own
// transaction wrappers provide.
type rowReader interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// PendingApprovals counts the account's items waiting for a human at now:
// pending and not yet expired. It is the one definition of the number: the
// queue bound (max_pending_approvals), get_pending_count, approve list and
// the status and stats reports all use it.
func PendingApprovals(ctx context.Context, db rowReader, account string, now time.Time) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM approval_queue WHERE account_id = ? AND status = 'pending' AND expires_at > ?`,
		account, ts(now)).Scan(&n)
	if err != nil {
		return 0, apperr.Wrap(apperr.DBError, err, "count approvals: %v", err)
	}
	return n, nil
}

// qRepliedTo finds an approval item or a live audit row answering post ?2
// of account ?1. x_reply_to_tweet and x_post are the tools whose Target is
// the post they answer (x_post's only for a reply body). The audit side
// names its index: the by-tool index also matches, and would walk every
// post and reply the account ever made.
//
// qRepliedToPostgres is the same for PostgreSQL, whose planner takes no
// index hints.
const qRepliedTo = `SELECT
	EXISTS (SELECT 1 FROM approval_queue WHERE account_id = ?1 AND target_tweet_id = ?2 AND tool_name IN ('x_reply_to_tweet', 'x_post'))
	OR EXISTS (SELECT 1 FROM mutation_audit INDEXED BY idx_mutation_audit_target WHERE account_id = ?1 AND target_tweet_id = ?2 AND tool_name IN ('x_reply_to_tweet', 'x_post')
		AND status IN ('pending','success','unknown','interrupted'))`

const qRepliedToPostgres = `SELECT
	EXISTS (SELECT 1 FROM approval_queue WHERE account_id = ?1 AND target_tweet_id = ?2 AND tool_name IN ('x_reply_to_tweet', 'x_post'))
	OR EXISTS (SELECT 1 FROM mutation_audit WHERE account_id = ?1 AND target_tweet_id = ?2 AND tool_name IN ('x_reply_to_tweet', 'x_post')
		AND status IN ('pending','success','unknown','interrupted'))`

// RepliedTo reports whether the account answered, or tried to answer, the
// post tweetID through the gateway: an approval item in any state, or an
// audit row that is pending, succeeded, or may have reached X (unknown,
// interrupted). A universal x_post counts when its body replies to the
// post. The lookup is on the indexed target_tweet_id column, so a post
// whose id merely appears somewhere in another call's text does not count.
func RepliedTo(ctx context.Context, db *store.DB, account, tweetID string) (bool, error) {
	q := qRepliedTo
	if db.Dialect == store.Postgres {
		q = qRepliedToPostgres
	}
	var yes bool
	err := db.QueryRowContext(ctx, q, account, tweetID).Scan(&yes)
	if err != nil {
		return false, apperr.Wrap(apperr.DBError, err, "check earlier replies: %v", err)
	}
	return yes, nil
}

// OpenApprovals returns the ids of the account's approval items a human
// can still act on or is acting on (pending or approved and replaying).
func OpenApprovals(ctx context.Context, db Reader, account string) ([]int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT id FROM approval_queue WHERE account_id = ? AND status IN ('pending','approved') ORDER BY id`, account)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
	}
	return out, nil
}

// ApprovalOutcome is where an approval item stands.
type ApprovalOutcome struct {
	// Status is one of the Approval* statuses; a pending item past its
	// expiry reads as expired.
	Status string
	// Result is the replay's result data once executed.
	Result json.RawMessage
}

// ApprovalOutcomes returns the state at now of the account's approval
// items ids; ids with no item are left out.
func ApprovalOutcomes(ctx context.Context, db Reader, account string, ids []int64, now time.Time) (map[int64]ApprovalOutcome, error) {
	out := map[int64]ApprovalOutcome{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{account, ts(now)}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, CASE WHEN status = 'pending' AND expires_at <= ?2 THEN 'expired' ELSE status END,
		COALESCE(result_json, '') FROM approval_queue WHERE account_id = ?1 AND id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id     int64
			o      ApprovalOutcome
			result string
		)
		if err := rows.Scan(&id, &o.Status, &result); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
		}
		if result != "" {
			o.Result = json.RawMessage(result)
		}
		out[id] = o
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
	}
	return out, nil
}

// SucceededByTool counts the account's mutations that succeeded since
// since, by tool.
func SucceededByTool(ctx context.Context, db Reader, account string, since time.Time) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT tool_name, count(*) FROM mutation_audit WHERE account_id = ? AND status = 'success'
		AND created_at >= ? GROUP BY tool_name`, account, ts(since))
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			t string
			n int
		)
		if err := rows.Scan(&t, &n); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
		}
		out[t] = n
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
	}
	return out, nil
}

// ActionEntry is one action log line: a policy decision of the gateway or
// an autopilot action.
type ActionEntry struct {
	ActionType string `json:"action_type"`
	Status     string `json:"status"`
	Message    string `json:"message"`
	Metadata   string `json:"metadata"`
	CreatedAt  string `json:"created_at"`
}

// Execer is the database access LogAction needs.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// LogAction appends a line to the account's action log at now. metadata
// must be a JSON object.
func LogAction(ctx context.Context, db Execer, account, actionType, status, message, metadata string, now time.Time) error {
	_, err := db.ExecContext(ctx, `INSERT INTO action_log (account_id, action_type, status, message, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		account, actionType, status, message, metadata, ts(now))
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "write action log: %v", err)
	}
	return nil
}

// ActionLog lists the account's action log lines since since, newest
// first, at most 500; actionType, when set, selects one type.
func ActionLog(ctx context.Context, db Reader, account string, since time.Time, actionType string) ([]ActionEntry, error) {
	q := `SELECT action_type, status, message, metadata, created_at FROM action_log WHERE account_id = ? AND created_at >= ?`
	args := []any{account, ts(since)}
	if actionType != "" {
		q += ` AND action_type = ?`
		args = append(args, actionType)
	}
	rows, err := db.QueryContext(ctx, q+` ORDER BY id DESC LIMIT 500`, args...)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read action log: %v", err)
	}
	defer rows.Close()
	out := []ActionEntry{}
	for rows.Next() {
		var e ActionEntry
		if err := rows.Scan(&e.ActionType, &e.Status, &e.Message, &e.Metadata, &e.CreatedAt); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read action log: %v", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read action log: %v", err)
	}
	return out, nil
}

// ActionCounts counts the account's action log lines since since by type
// and status.
func ActionCounts(ctx context.Context, db Reader, account string, since time.Time) (map[string]map[string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT action_type, status, count(*) FROM action_log WHERE account_id = ? AND created_at >= ?
		GROUP BY action_type, status`, account, ts(since))
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "count actions: %v", err)
	}
	defer rows.Close()
	out := map[string]map[string]int{}
	for rows.Next() {
		var (
			t, st string
			n     int
		)
		if err := rows.Scan(&t, &st, &n); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "count actions: %v", err)
		}
		if out[t] == nil {
			out[t] = map[string]int{}
		}
		out[t][st] = n
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "count actions: %v", err)
	}
	return out, nil
}
