package store

import (
	"context"
	"database/sql"
	"fmt"
)

// RowFunc receives one row of a streamed read: the column names (the same
// slice every call) and the row's values (reused by the next call; copy
// what must outlive it). A non-nil error stops the read.
type RowFunc func(cols []string, vals []any) error

// Stream hands each row of rows to emit as it is read, so a read of any
// size holds one row at a time. It closes rows. Values come as the driver
// gives them: int64, float64, string, []byte, time.Time, bool or nil.
func Stream(rows *sql.Rows, emit RowFunc) error {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("read columns: %w", err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read row: %w", err)
		}
		if err := emit(cols, vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read rows: %w", err)
	}
	return nil
}

// StreamInOrder runs query through ReadInOrder and streams its rows to
// emit as Stream does.
func (d *DB) StreamInOrder(ctx context.Context, query string, args []any, emit RowFunc) error {
	return d.ReadInOrder(ctx, func(q OrderedQuerier) error {
		rows, err := q.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		return Stream(rows, emit)
	})
}

// OrderedQuerier runs the queries of a ReadInOrder.
type OrderedQuerier struct {
	d  *DB
	tx *sql.Tx
}

// Query runs query (prepared once, see Prepared) in the read.
func (q OrderedQuerier) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := q.d.Prepared(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil, err
	}
	q.d.stmts.mu.Lock()
	if q.d.stmts.inOrder == nil {
		q.d.stmts.inOrder = map[string]bool{}
	}
	q.d.stmts.inOrder[query] = true
	q.d.stmts.mu.Unlock()
	if q.tx != nil {
		s = q.tx.StmtContext(ctx, s)
	}
	return s.QueryContext(ctx, args...)
}

// ReadInOrder runs fn, whose queries must each be able to read their rows
// in the order they ask for through an index: a page's newest rows, an
// export's every row. The first row then comes at once and nothing holds
// the rest. On PostgreSQL they run in a transaction with explicit sorts
// off: without statistics (a new database, until autovacuum first
// analyzes it) the planner takes the account's index for a few rows and
// would read all of them and sort, and with statistics, for an export, it
// would rather scan the table and sort it. On SQLite they run on the
// pool, outside any transaction (a write transaction would hold the lock
// for the whole read), and the query's form (its indexes, or an INDEXED
// BY) must leave SQLite no sort to choose.
func (d *DB) ReadInOrder(ctx context.Context, fn func(OrderedQuerier) error) error {
	if d.Dialect != Postgres {
		return fn(OrderedQuerier{d: d})
	}
	return d.beginTx(ctx, txBegin{noSort: true}, func(tx *sql.Tx) error {
		return fn(OrderedQuerier{d: d, tx: tx})
	})
}
