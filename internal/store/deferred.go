package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
)

// Deferred collects the rows that belong to a unit of work another part
// commits: the gateway completes each executed call in one transaction,
// and the rows the call's execution adds to ledgers it does not own (the X
// usage ledger, the posts ledger) are written in that transaction, so that
// a call is never completed without them nor they written without it, and
// a call costs no write transaction of its own for them.
type Deferred struct {
	mu   sync.Mutex
	rows []DeferredRow
	// taken says the unit of work was committed or is being committed: a
	// row deferred later (by work that outlived the call) is written by
	// its caller, never lost.
	taken bool
}

// DeferredRow is one statement Deferred holds: a query of the package that
// owns its table, and its arguments (strings, integers, floats or nil).
type DeferredRow struct {
	Query string
	Args  []any
}

type deferredKey struct{}

// WithDeferred returns a context whose Defer calls collect into the
// returned Deferred.
func WithDeferred(ctx context.Context) (context.Context, *Deferred) {
	d := &Deferred{}
	return context.WithValue(ctx, deferredKey{}, d), d
}

// Defer adds query to the unit of work ctx carries and reports whether it
// did; when ctx carries none, the caller writes the row itself. An
// argument of another type than a string, an integer, a float or nil is
// refused with an error, since the row may have to be journaled.
func Defer(ctx context.Context, query string, args ...any) (bool, error) {
	d, _ := ctx.Value(deferredKey{}).(*Deferred)
	if d == nil {
		return false, nil
	}
	norm := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil, string, int64, float64:
			norm[i] = v
		case int:
			norm[i] = int64(v)
		default:
			return false, fmt.Errorf("defer %q: argument %d has type %T; want a string, an integer, a float or nil", query, i+1, a)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.taken {
		return false, nil
	}
	d.rows = append(d.rows, DeferredRow{Query: query, Args: norm})
	return true, nil
}

// Take returns the rows collected and ends the collection: Defer then
// leaves later rows to their callers.
func (d *Deferred) Take() []DeferredRow {
	d.mu.Lock()
	defer d.mu.Unlock()
	rows := d.rows
	d.rows, d.taken = nil, true
	return rows
}

// PrepareDeferred prepares the queries of rows on the pool (see
// Prepared). Run it before the transaction that writes them: preparing
// inside it would need a second connection while the transaction holds
// the write lock, and with the pool taken by writers waiting for that lock
// it would wait until the busy timeout.
func (d *DB) PrepareDeferred(ctx context.Context, rows []DeferredRow) error {
	for _, r := range rows {
		if _, err := d.Prepared(context.WithoutCancel(ctx), r.Query); err != nil {
			return err
		}
	}
	return nil
}

// WriteDeferred writes rows in tx through the statements PrepareDeferred
// prepared.
func (d *DB) WriteDeferred(ctx context.Context, tx *sql.Tx, rows []DeferredRow) error {
	for _, r := range rows {
		s, err := d.Prepared(context.WithoutCancel(ctx), r.Query)
		if err != nil {
			return err
		}
		if _, err := tx.StmtContext(ctx, s).ExecContext(ctx, r.Args...); err != nil {
			return fmt.Errorf("write deferred row: %w", err)
		}
	}
	return nil
}

// deferredArg is one argument of a journaled row, tagged with its type so
// that it reads back as it was written.
type deferredArg struct {
	S *string  `json:"s,omitempty"`
	I *int64   `json:"i,omitempty"`
	F *float64 `json:"f,omitempty"`
}

type deferredJSON struct {
	Query string        `json:"query"`
	Args  []deferredArg `json:"args"`
}

// MarshalJSON keeps each argument's type.
func (r DeferredRow) MarshalJSON() ([]byte, error) {
	out := deferredJSON{Query: r.Query, Args: make([]deferredArg, len(r.Args))}
	for i, a := range r.Args {
		switch v := a.(type) {
		case string:
			out.Args[i].S = &v
		case int64:
			out.Args[i].I = &v
		case float64:
			out.Args[i].F = &v
		case nil:
		default:
			return nil, fmt.Errorf("deferred row %q: argument %d has type %T", r.Query, i+1, a)
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *DeferredRow) UnmarshalJSON(b []byte) error {
	var in deferredJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	r.Query, r.Args = in.Query, make([]any, len(in.Args))
	for i, a := range in.Args {
		switch {
		case a.S != nil:
			r.Args[i] = *a.S
		case a.I != nil:
			r.Args[i] = *a.I
		case a.F != nil:
			r.Args[i] = *a.F
		}
	}
	return nil
}
