package gateway

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tuitbot/tuitbot/internal/store"
)

// The hot-path queries, prepared once per database.
const (
	qPriorByKey = `SELECT COALESCE(intent_key, params_hash), tool_name, status, correlation_id, COALESCE(error_code,''), result_json,
			COALESCE(resolution,''), COALESCE(duplicate_of,'') FROM mutation_audit WHERE account_id = ` + bound + ` AND idempotency_key = ` + bound + ` AND created_at >= ` + bound + `
			ORDER BY id DESC LIMIT 1`
	// qPriorOrQueued finds, in one round trip, the latest identical call in
	// the audit trail and the item of an identical call waiting for
	// approval; a side is NULL when there is none. Identical means the same
	// account and intent key, whichever tool made the call (naming the tool
	// would also let a plan made without statistics pick the audit page's
	// (account, tool) index and read every call of the tool). Each side is
	// looked up twice: by the call's intent key, and by its parameters
	// hash, which is what rows written before intent keys carry as theirs
	// (the migration copied it), so their repeats stay blocked. The caller
	// takes the newer of the two; two single-key lookups read one index
	// entry each, where one lookup of either key would have to sort. An
	// unresolved unknown or interrupted attempt blocks repeats whatever its
	// age: only a resolution lifts it, never the window. A resolved one
	// counts from its resolution, as if it had just completed. It must run
	// after the call's lock is taken, in a statement of its own: on
	// PostgreSQL a statement reads the snapshot it started with. It runs
	// early in the call's transaction (after qPriorByKey only), which on
	// PostgreSQL plans both without sorts, so that every lookup reads its
	// index in order however little the planner knows of the tables; its
	// one row turns sorts back on for the statements after it (see
	// store.KeyedTx and priorOrQueued).
	qPriorOrQueued = `SELECT a.id, a.intent_key, a.tool_name, a.status, a.correlation_id, a.error_code, a.result_json, a.resolution,
		l.id, l.intent_key, l.tool_name, l.status, l.correlation_id, l.error_code, l.result_json, l.resolution, q.id, r.id
		FROM (SELECT ` + sortsOn + ` AS one) AS o
		LEFT JOIN ` + qAuditByIntent + ` AS a ON 1 = 1
		LEFT JOIN ` + qAuditByIntent + ` AS l ON 1 = 1
		LEFT JOIN ` + qQueuedByIntent + ` AS q ON 1 = 1
		LEFT JOIN ` + qQueuedByIntent + ` AS r ON 1 = 1`
	// qPriorOrQueuedByIntent is qPriorOrQueued without the lookups by
	// parameters hash, for a database that holds no row written before
	// intent keys that could still answer a call (see legacyRows): half
	// the lookups, on the statement every mutation runs.
	qPriorOrQueuedByIntent = `SELECT a.id, a.intent_key, a.tool_name, a.status, a.correlation_id, a.error_code, a.result_json, a.resolution, q.id
		FROM (SELECT ` + sortsOn + ` AS one) AS o
		LEFT JOIN ` + qAuditByIntent + ` AS a ON 1 = 1
		LEFT JOIN ` + qQueuedByIntent + ` AS q ON 1 = 1`
	// qAuditByIntent is the latest audit row of account ?, intent key ?,
	// that counts for duplicates at window start ?.
	qAuditByIntent = `(SELECT id, intent_key, tool_name, status, correlation_id, COALESCE(error_code,'') AS error_code, result_json,
			COALESCE(resolution,'') AS resolution
			FROM mutation_audit WHERE account_id = ` + bound + ` AND intent_key = ` + bound + `
			AND ((COALESCE(resolved_at, created_at) >= ` + bound + ` AND status IN ('pending','success','unknown','interrupted','failure'))
				OR (status IN ('unknown','interrupted') AND resolution IS NULL))
			ORDER BY id DESC LIMIT 1)`
	// qQueuedByIntent is the latest item of account ?, intent key ?, that
	// waits for approval at ?.
	qQueuedByIntent = `(SELECT id FROM approval_queue WHERE account_id = ` + bound + ` AND intent_key = ` + bound + `
			AND status = 'pending' AND expires_at > ` + bound + ` ORDER BY id DESC LIMIT 1)`
	qOriginal = `SELECT COALESCE(intent_key, params_hash), tool_name, status, correlation_id, COALESCE(error_code,''), result_json, COALESCE(resolution,'')
		FROM mutation_audit WHERE account_id = ? AND correlation_id = ?`
	qInsertDuplicate = `INSERT INTO mutation_audit (correlation_id, idempotency_key, tool_name, params_hash, intent_key,
			params_summary, status, result_summary, account_id, caller, loop_name, duplicate_of, owner, created_at, completed_at, elapsed_ms,
			action_name, description, target_kind)
			VALUES (?, NULLIF(?,''), ?, ?, ?, '', 'duplicate', ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, '', '')`
	qInsertPending = `INSERT INTO mutation_audit (correlation_id, idempotency_key, tool_name, equivalent_tool, params_hash, intent_key,
			params_summary, status, account_id, caller, loop_name, approval_id, owner, created_at, request_json, target_tweet_id,
			action_name, description, target_kind, decided_by)
			VALUES (?, NULLIF(?,''), ?, NULLIF(?,''), ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, NULLIF(?,''), ?, ?, ?, NULLIF(?,''))`
	qComplete = `UPDATE mutation_audit SET status = ?, result_json = ?, result_summary = ?,
		rollback_action = ?, error_code = ?, error_message = ?, elapsed_ms = ?, completed_at = ?
		WHERE correlation_id = ?`
	qLogDecision = `INSERT INTO action_log (account_id, action_type, status, message, metadata, created_at)
		VALUES (?, 'mcp_policy', ?, ?, ?, ?)`
)

// qInsertPendingLogged writes an allowed call's decision and its pending
// row in one statement, which saves PostgreSQL a round trip on every
// mutation; it is sent with the transaction's COMMIT, which saves another
// (see insertPending). SQLite, with no round trips to save, has no such
// statement.
const qInsertPendingLogged = `WITH decision AS (` + qLogDecision + `) ` + qInsertPending

// sortsOn stands in qPriorOrQueued for the dialect's store.SortsOn.
const sortsOn = "<sorts on>"

// bound stands in the hot queries for a value bound to a column's
// comparison, written in the dialect as argIn says: these statements run
// on every call, and SQLite would plan them again at each run once
// statistics sample the columns.
const bound = "<bound>"

// inDialect is hot query q in dialect d.
func inDialect(d store.Dialect, q string) string {
	return strings.ReplaceAll(strings.Replace(q, sortsOn, store.SortsOn(d), 1), bound, argIn(d))
}

// priorOrQueued is qPriorOrQueued in dialect d, and byIntent
// qPriorOrQueuedByIntent.
func priorOrQueued(d store.Dialect) (all, byIntent string) {
	return inDialect(d, qPriorOrQueued), inDialect(d, qPriorOrQueuedByIntent)
}

func hotQueries(d store.Dialect) []string {
	all, byIntent := priorOrQueued(d)
	return []string{inDialect(d, qPriorByKey), all, byIntent, qOriginal, qInsertDuplicate, qInsertPending, qComplete, qLogDecision}
}

// stmtCache keeps the hot-path statements prepared. SQLite spends most of a
// small query's time parsing it, and the gateway runs the same handful of
// queries for every mutation. They are prepared when the gateway first
// runs a call (prepare, before its transaction), not when it opens: a
// server's first answers (a health check, a read) need none of them, and
// preparing them was a large part of the start those answers waited for.
// They are never prepared from inside a transaction: that would need a
// second pool connection while the transaction holds the write lock, and
// with the pool exhausted by writers waiting for that lock it would
// deadlock until the busy timeout. A query run before they are prepared
// (an outcome recorded as the gateway closes) runs unprepared. The
// statements are the database's (store.DB.Prepared), so the gateways of
// several accounts share them.
type stmtCache struct {
	db *store.DB
	mu sync.Mutex
	m  atomic.Pointer[map[string]*sql.Stmt] // nil until prepare; read-only after
}

func newStmtCache(db *store.DB) *stmtCache { return &stmtCache{db: db} }

// prepare prepares the hot queries once; a failure is tried again by the
// next call. The caller must not be inside a transaction.
func (c *stmtCache) prepare(ctx context.Context) error {
	if c.m.Load() != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m.Load() != nil {
		return nil
	}
	m := map[string]*sql.Stmt{}
	for _, q := range hotQueries(c.db.Dialect) {
		// Prepared without the caller's deadline: the statement outlives
		// the call.
		s, err := c.db.Prepared(context.WithoutCancel(ctx), q)
		if err != nil {
			return fmt.Errorf("gateway: %w", err)
		}
		m[q] = s
	}
	c.m.Store(&m)
	return nil
}

// stmt returns query's prepared statement, once prepare has run.
func (c *stmtCache) stmt(query string) (*sql.Stmt, bool) {
	m := c.m.Load()
	if m == nil {
		return nil, false
	}
	s, ok := (*m)[query]
	return s, ok
}

// queryRead runs a read-only query on the pool through its prepared
// statement, preparing it the first time. The review pages' reads run on
// the pool, never inside a transaction, so preparing one late waits on no
// writer.
func (c *stmtCache) queryRead(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	// Prepared without the caller's deadline: the statement outlives the
	// request.
	s, err := c.db.Prepared(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

// poolQ runs the prepared statement for a query on the connection pool, or
// the plain query when it is not one of the hot queries.
type poolQ struct{ c *stmtCache }

func (q poolQ) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s, ok := q.c.stmt(query); ok {
		return s.QueryRowContext(ctx, args...)
	}
	return q.c.db.QueryRowContext(ctx, query, args...)
}

func (q poolQ) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s, ok := q.c.stmt(query); ok {
		return s.ExecContext(ctx, args...)
	}
	return q.c.db.ExecContext(ctx, query, args...)
}

// txQ runs prepared statements inside a transaction; database/sql prepares
// each at most once on the transaction's own connection and reuses it.
type txQ struct {
	c  *stmtCache
	tx *sql.Tx
}

func (q txQ) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s, ok := q.c.stmt(query); ok {
		return q.tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return q.tx.QueryRowContext(ctx, query, args...)
}

func (q txQ) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s, ok := q.c.stmt(query); ok {
		return q.tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return q.tx.ExecContext(ctx, query, args...)
}
