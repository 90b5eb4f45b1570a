package gateway

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// ExportAudit streams the account's audit rows created at or after since
// (zero: all), oldest first, one row at a time.
func (g *Gateway) ExportAudit(ctx context.Context, since time.Time, emit store.RowFunc) error {
	rows, err := g.opts.DB.QueryContext(ctx, `SELECT id, correlation_id, created_at, COALESCE(completed_at, '') AS completed_at,
		tool_name, COALESCE(equivalent_tool, '') AS equivalent_tool, status, caller, loop_name, COALESCE(decided_by, '') AS decided_by, params_summary,
		COALESCE(result_summary, '') AS result_summary, COALESCE(error_code, '') AS error_code, COALESCE(error_message, '') AS error_message,
		COALESCE(elapsed_ms, 0) AS elapsed_ms, COALESCE(approval_id, 0) AS approval_id, COALESCE(duplicate_of, '') AS duplicate_of,
		COALESCE(idempotency_key, '') AS idempotency_key, params_hash, COALESCE(resolution, '') AS resolution
		FROM mutation_audit WHERE account_id = ? AND created_at >= ? ORDER BY id`, g.opts.AccountID, exportSince(since))
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "read audit rows: %v", err)
	}
	return store.Stream(rows, emit)
}

// ExportApprovals streams the account's approval items created at or
// after since, oldest first.
func (g *Gateway) ExportApprovals(ctx context.Context, since time.Time, emit store.RowFunc) error {
	rows, err := g.opts.DB.QueryContext(ctx, `SELECT id, created_at, tool_name, params_json, status, matched_rule_id, reason, caller, loop_name,
		expires_at, COALESCE(reviewed_at, '') AS reviewed_at, COALESCE(reviewed_by, '') AS reviewed_by, COALESCE(review_notes, '') AS review_notes,
		COALESCE(correlation_id, '') AS correlation_id, COALESCE(error_code, '') AS error_code, COALESCE(error_message, '') AS error_message
		FROM approval_queue WHERE account_id = ? AND created_at >= ? ORDER BY id`, g.opts.AccountID, exportSince(since))
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "read approval items: %v", err)
	}
	return store.Stream(rows, emit)
}

// exportSince is the lower bound of an export's created_at: every stored
// timestamp sorts after the empty string.
func exportSince(since time.Time) string {
	if since.IsZero() {
		return ""
	}
	return ts(since)
}
