package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// prepared keeps statements prepared for the life of a DB, one per query
// text, whoever asks: every account's gateway runs the same queries, and
// each statement prepared again would hold another compiled copy on every
// connection that runs it.
type prepared struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
	// inOrder holds the queries StreamInOrder ran (with sorts off on
	// PostgreSQL).
	inOrder map[string]bool
}

// Prepared returns the statement for query, prepared on first use and
// closed with the DB. It is safe for concurrent use, like the statement.
// ctx bounds only the first preparation.
func (d *DB) Prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	d.stmts.mu.Lock()
	defer d.stmts.mu.Unlock()
	if s, ok := d.stmts.m[query]; ok {
		return s, nil
	}
	s, err := d.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare statement: %w", err)
	}
	if d.stmts.m == nil {
		d.stmts.m = map[string]*sql.Stmt{}
	}
	d.stmts.m[query] = s
	return s, nil
}

// Statements is how many statements Prepared keeps.
func (d *DB) Statements() int {
	d.stmts.mu.Lock()
	defer d.stmts.mu.Unlock()
	return len(d.stmts.m)
}

// closeStatements closes what Prepared kept.
func (d *DB) closeStatements() {
	d.stmts.mu.Lock()
	defer d.stmts.mu.Unlock()
	for q, s := range d.stmts.m {
		_ = s.Close()
		delete(d.stmts.m, q)
	}
}

// PreparedQuery is a query Prepared keeps, and whether StreamInOrder ran
// it (on PostgreSQL with explicit sorts off).
type PreparedQuery struct {
	Text    string
	InOrder bool
}

// PreparedQueries lists the queries Prepared keeps: every query the
// gateway's hot path, the review pages and the exports have run. A plan
// test reads them, so a query added to those paths is checked without
// being listed anywhere.
func (d *DB) PreparedQueries() []PreparedQuery {
	d.stmts.mu.Lock()
	defer d.stmts.mu.Unlock()
	out := make([]PreparedQuery, 0, len(d.stmts.m))
	for q := range d.stmts.m {
		out = append(out, PreparedQuery{Text: q, InOrder: d.stmts.inOrder[q]})
	}
	slices.SortFunc(out, func(a, b PreparedQuery) int { return strings.Compare(a.Text, b.Text) })
	return out
}
