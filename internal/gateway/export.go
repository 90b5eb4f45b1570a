package gateway

import (
	"context"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// ExportAudit streams the account's audit rows created at or after since
// (zero: all), oldest first, one row at a time.
func (g *Gateway) ExportAudit(ctx context.Context, since time.Time, emit store.RowFunc) error {
	cols := auditExportColumns()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	args := []any{g.opts.AccountID}
	if !since.IsZero() {
		args = append(args, ts(since))
	}
	return g.exportRows(ctx, "read audit rows", "SELECT "+strings.Join(names, ", ")+" FROM mutation_audit"+g.auditExportRange(!since.IsZero()),
		args, nullsAs(cols, emit))
}

// exportColumn is a column of an export and what a NULL in it is written
// as (nil: it stays NULL, or the column is never NULL).
type exportColumn struct {
	name   string
	ifNull any
}

// auditExportColumns are the audit export's columns, in order.
func auditExportColumns() []exportColumn {
	return []exportColumn{
		{"id", nil}, {"correlation_id", nil}, {"created_at", nil}, {"completed_at", ""},
		{"tool_name", nil}, {"equivalent_tool", ""}, {"status", nil}, {"caller", nil}, {"loop_name", nil}, {"decided_by", ""}, {"params_summary", nil},
		{"result_summary", ""}, {"error_code", ""}, {"error_message", ""},
		{"elapsed_ms", int64(0)}, {"approval_id", int64(0)}, {"duplicate_of", ""},
		{"idempotency_key", ""}, {"params_hash", nil}, {"resolution", ""},
	}
}

// nullsAs hands emit each row with its NULLs replaced as cols say. They
// are replaced here, not by COALESCE in the query, because the driver
// hands a NULL over at a third of the cost of an empty string, and most
// of an audit row's optional columns are NULL: a fifth of the export's
// reading.
func nullsAs(cols []exportColumn, emit store.RowFunc) store.RowFunc {
	var nullable []int
	for i, c := range cols {
		if c.ifNull != nil {
			nullable = append(nullable, i)
		}
	}
	return func(names []string, vals []any) error {
		for _, i := range nullable {
			if vals[i] == nil {
				vals[i] = cols[i].ifNull
			}
		}
		return emit(names, vals)
	}
}

// auditExportRange is what follows FROM mutation_audit in the audit
// export: the account's rows (from since on, when sinceArg: created_at is
// then the second argument), in id order. On SQLite they are read from
// the table itself, which is kept in id order, from the account's first
// row on (one seek of the account's index finds it): read through that
// index, every row would cost a second lookup in the table, a third of
// the export. Rows of other accounts after the first are skipped as they
// come; an export reads at most the table once.
func (g *Gateway) auditExportRange(sinceArg bool) string {
	since := ""
	if sinceArg {
		since = " AND created_at >= ?2"
	}
	if g.opts.DB.Dialect == store.SQLite {
		return ` NOT INDEXED WHERE account_id = ?1` + since + `
		AND id >= (SELECT MIN(id) FROM mutation_audit INDEXED BY idx_mutation_audit_account WHERE account_id = ?1) ORDER BY id`
	}
	if sinceArg {
		since = " AND created_at >= ?"
	}
	return ` WHERE account_id = ?` + since + ` ORDER BY id`
}

// ExportApprovals streams the account's approval items created at or
// after since, oldest first.
func (g *Gateway) ExportApprovals(ctx context.Context, since time.Time, emit store.RowFunc) error {
	return g.exportRows(ctx, "read approval items", `SELECT id, created_at, tool_name, params_json, status, matched_rule_id, reason, caller, loop_name,
		expires_at, COALESCE(reviewed_at, '') AS reviewed_at, COALESCE(reviewed_by, '') AS reviewed_by, COALESCE(review_notes, '') AS review_notes,
		COALESCE(correlation_id, '') AS correlation_id, COALESCE(error_code, '') AS error_code, COALESCE(error_message, '') AS error_message
		FROM approval_queue`+g.indexed("idx_approval_account")+` WHERE account_id = ? AND created_at >= ? ORDER BY id`,
		[]any{g.opts.AccountID, exportSince(since)}, emit)
}

// exportRows streams query's rows in the order of the (account_id, id)
// index it names, so the first row goes out at once and nothing is
// sorted or held, whatever the statistics say: SQLite is told the index
// (its choice among the created_at index and the others that start with
// account_id would rest on statistics), PostgreSQL reads with sorts off
// (see store.StreamInOrder). A since filter reads the account's rows and
// skips the older ones, which costs an export no more than the rows it
// writes unless since leaves out most of the trail.
func (g *Gateway) exportRows(ctx context.Context, what, query string, args []any, emit store.RowFunc) error {
	var emitErr error
	err := g.opts.DB.StreamInOrder(ctx, query, args, func(cols []string, vals []any) error {
		emitErr = emit(cols, vals)
		return emitErr
	})
	if err != nil && emitErr == nil {
		return apperr.Wrap(apperr.DBError, err, "%s: %v", what, err)
	}
	return err
}

// indexed is SQLite's INDEXED BY clause for index, or nothing on
// PostgreSQL, whose planner takes no hints.
func (g *Gateway) indexed(index string) string {
	if g.opts.DB.Dialect == store.SQLite {
		return " INDEXED BY " + index
	}
	return ""
}

// exportSince is the lower bound of an export's created_at: every stored
// timestamp sorts after the empty string.
func exportSince(since time.Time) string {
	if since.IsZero() {
		return ""
	}
	return ts(since)
}
