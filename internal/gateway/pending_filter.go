package gateway

import (
	"context"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// PendingFilter narrows PendingFiltered. Empty fields match everything.
type PendingFilter struct {
	Tool, Caller string
	// AfterID lists only items newer than this id: what a page that
	// already shows the queue up to AfterID has not seen yet.
	AfterID int64
	// Limit (1-500) and Offset page through the matches, oldest first.
	Limit, Offset int
	// NoCount skips counting the matches (the total comes back as -1),
	// for a caller that knows it already, from PendingFacets.
	NoCount bool
}

// PendingFiltered lists the pending, unexpired items matching f, oldest
// first, and how many match in all. Unlike PendingPage it only reads (an
// expired item is left out rather than marked), so a page that polls the
// queue does not write to the database.
func (g *Gateway) PendingFiltered(ctx context.Context, f PendingFilter) ([]ApprovalItem, int, error) {
	if f.Limit < 1 || f.Limit > 500 {
		return nil, 0, apperr.New(apperr.InvalidInput, "limit: must be 1-500")
	}
	if f.Offset < 0 {
		return nil, 0, apperr.New(apperr.InvalidInput, "offset: must not be negative")
	}
	// Bound as g.arg() writes it: planned once (see arg).
	arg := g.arg()
	where := ` FROM approval_queue WHERE account_id = ` + arg + ` AND status = 'pending' AND expires_at > ` + arg + ` AND id > ` + arg
	args := []any{g.opts.AccountID, ts(g.opts.Now()), f.AfterID}
	if f.Tool != "" {
		where += ` AND tool_name = ` + arg
		args = append(args, f.Tool)
	}
	if f.Caller != "" {
		where += ` AND caller = ` + arg
		args = append(args, f.Caller)
	}
	total := -1
	if f.NoCount {
		// nothing to count
	} else if err := g.opts.DB.QueryRowContext(ctx, `SELECT count(*)`+where, args...).Scan(&total); err != nil {
		return nil, 0, apperr.Wrap(apperr.DBError, err, "count approval queue: %v", err)
	}
	// A page polls the same few shapes: prepared once, not per request.
	// The page's ids are chosen first, from the index alone, and only its
	// rows are read: sorting every match with all its columns to keep a
	// page of them cost more than the rest of the page together.
	rows, err := g.stmts.queryRead(ctx, `SELECT `+approvalCols+` FROM approval_queue WHERE id IN (SELECT id`+where+
		` ORDER BY id LIMIT `+arg+` OFFSET `+arg+`) ORDER BY id`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
	}
	defer rows.Close()
	out := []ApprovalItem{}
	for rows.Next() {
		it, err := scanApproval(rows)
		if err != nil {
			return nil, 0, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, apperr.Wrap(apperr.DBError, err, "read approval queue: %v", err)
	}
	return out, total, nil
}

// PendingFacet is how many pending items one tool and caller have.
type PendingFacet struct {
	Tool, Caller string
	Count        int
}

// PendingFacets counts the pending, unexpired items by tool and caller,
// for the filters of a review page. The counts of pending items are kept
// by triggers (approval_pending_counts); the items among them that expired
// without being marked are few, and subtracted here, so the page reads a
// few rows however long the queue is.
func (g *Gateway) PendingFacets(ctx context.Context) ([]PendingFacet, error) {
	// SQLite, without statistics, would rather read the whole queue by
	// the index whose first two columns match; PostgreSQL has no hints.
	hint := ""
	if g.opts.DB.Dialect == store.SQLite {
		hint = " INDEXED BY idx_approval_pending_expiry"
	}
	rows, err := g.stmts.queryRead(ctx, `SELECT tool_name, caller, sum(n) FROM (
			SELECT tool_name, caller, n FROM approval_pending_counts WHERE account_id = ? AND n > 0
			UNION ALL
			SELECT tool_name, caller, -count(*) FROM approval_queue`+hint+`
			WHERE account_id = ? AND status = 'pending' AND expires_at <= ? GROUP BY tool_name, caller) AS c
		GROUP BY tool_name, caller HAVING sum(n) > 0 ORDER BY tool_name, caller`,
		g.opts.AccountID, g.opts.AccountID, ts(g.opts.Now()))
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "count approval queue: %v", err)
	}
	defer rows.Close()
	out := []PendingFacet{}
	for rows.Next() {
		var f PendingFacet
		if err := rows.Scan(&f.Tool, &f.Caller, &f.Count); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "count approval queue: %v", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
