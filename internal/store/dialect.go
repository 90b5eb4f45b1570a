package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// Dialect is the SQL dialect of an opened database.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// IsPostgresURL reports whether target names a PostgreSQL server
// (storage.database_url) rather than a SQLite file.
func IsPostgresURL(target string) bool {
	t := strings.ToLower(strings.TrimSpace(target))
	return strings.HasPrefix(t, "postgres://") || strings.HasPrefix(t, "postgresql://")
}

// RedactURL returns a database URL fit for messages and logs: the password,
// in the user info or the query, is replaced by "xxxxx".
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable database URL)"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// DialectOf reports the dialect of db, a handle opened by this package.
func DialectOf(db *sql.DB) Dialect {
	if _, ok := db.Driver().(pgDriver); ok {
		return Postgres
	}
	return SQLite
}

// AccountScope is the write-lock scope of an account (see WriteLock); the
// gateway takes narrower scopes below it for each call it decides, and the
// whole account's when queueing for approval, so that the queue's bound
// holds across hosts.
func AccountScope(account string) string { return "account:" + account }

// Execer is what WriteLock needs of a transaction or connection.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// WriteLock serialises write transactions over scope until q's transaction
// ends. On SQLite it does nothing: every write transaction already holds
// the database's single write lock from its first statement (BEGIN
// IMMEDIATE). On PostgreSQL it takes a transaction-scoped advisory lock,
// which the server releases at commit or rollback, or when the session
// dies with its process or host.
func WriteLock(ctx context.Context, d Dialect, q Execer, scope string) error {
	if d != Postgres {
		return nil
	}
	_, err := q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, LockKey(scope))
	return err
}

// LockKey is the PostgreSQL advisory lock key of a lock's name: a write
// lock's scope, a session lock's key. Every advisory lock takes its key
// from here. It is computed here rather than by the server so that a
// transaction can take its locks in the message that begins it
// (LockedTx), where the scope, which may hold a caller's idempotency key,
// could only appear as quoted text.
func LockKey(scope string) int64 {
	h := fnv.New64a()
	h.Write([]byte(scope))
	return int64(h.Sum64())
}

// txBegin is how a transaction that pgConn begins itself starts: the
// advisory locks it takes, and whether its first statement is planned
// without explicit sorts (see KeyedTx).
type txBegin struct {
	keys   []int64
	noSort bool
}

type txBeginKey struct{}

// LockedTx runs fn in a write transaction that holds the write locks of
// scopes (see WriteLock), taken in that order before fn's first statement.
// On PostgreSQL they are taken by the message that begins the transaction,
// which saves a round trip per lock on every call of the gateway; each
// later statement still reads a snapshot taken after the locks were
// granted. On SQLite the transaction's own write lock covers every scope.
func (d *DB) LockedTx(ctx context.Context, scopes []string, fn func(*sql.Tx) error) error {
	return d.beginTx(ctx, txBegin{keys: lockKeys(scopes)}, fn)
}

// KeyedTx is LockedTx for a transaction whose first statements read the
// newest rows of exact keys, each through an index on the key and then the
// row id (WHERE account_id = ? AND intent_key = ? ORDER BY id DESC LIMIT
// 1). Before a PostgreSQL table has statistics (a new database, until
// autovacuum first analyzes it) the planner cannot tell that index from
// any other that starts with the same column: each looks like it holds one
// matching row, and it may pick one that holds every row of the account,
// sorting what it reads. A prepared statement keeps the generic plan made
// then, so every lookup would read the account's whole history. The
// transaction therefore begins with explicit sorts disabled, which leaves
// the planner only the index that gives the rows in order; the last of
// those lookups must select SortsOn so that the statements after it (whose
// plans may need a sort) are planned as usual.
func (d *DB) KeyedTx(ctx context.Context, scopes []string, fn func(*sql.Tx) error) error {
	return d.beginTx(ctx, txBegin{keys: lockKeys(scopes), noSort: true}, fn)
}

// SortsOn is a select-list expression that turns explicit sorts back on
// for the rest of a KeyedTx transaction; on SQLite, which never turned
// them off, it is a constant.
func SortsOn(d Dialect) string {
	if d == Postgres {
		return "set_config('enable_sort', 'on', true)"
	}
	return "1"
}

func (d *DB) beginTx(ctx context.Context, b txBegin, fn func(*sql.Tx) error) error {
	if d.Dialect == Postgres && (len(b.keys) > 0 || b.noSort) {
		ctx = context.WithValue(ctx, txBeginKey{}, b)
	}
	return d.Tx(ctx, fn)
}

func lockKeys(scopes []string) []int64 {
	keys := make([]int64, len(scopes))
	for i, sc := range scopes {
		keys[i] = LockKey(sc)
	}
	return keys
}

// beginQuery is the simple query that begins a transaction as b says:
// sorts off if asked, then the advisory locks of its keys, in order.
func beginQuery(b txBegin) string {
	var q strings.Builder
	q.WriteString("BEGIN")
	if b.noSort {
		q.WriteString("; SET LOCAL enable_sort = off")
	}
	for _, k := range b.keys {
		q.WriteString("; SELECT pg_advisory_xact_lock(")
		q.WriteString(strconv.FormatInt(k, 10))
		q.WriteString(")")
	}
	return q.String()
}

// pgTx is a transaction begun by pgConn itself (with locks).
type pgTx struct {
	ctx  context.Context
	tx   pgx.Tx
	conn *pgConnState
	// last is the statement ExecLast left for the commit to send.
	last *lastExec
}

type lastExec struct {
	query string
	args  []any
}

func (t *pgTx) Commit() error {
	t.conn.tx = nil
	if t.last == nil {
		return t.tx.Commit(t.ctx)
	}
	b := &pgx.Batch{}
	b.Queue(t.last.query, t.last.args...)
	b.Queue("COMMIT")
	br := t.tx.SendBatch(t.ctx, b)
	_, err := br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// The server skipped the COMMIT after the statement's error: the
		// transaction is still open, aborted, and ends here.
		_ = t.tx.Rollback(t.ctx)
		return err
	}
	return nil
}

func (t *pgTx) Rollback() error {
	t.conn.tx = nil
	return t.tx.Rollback(t.ctx)
}

type execLastKey struct{}

// ExecLast runs query as the last statement of tx. In a transaction begun
// by LockedTx or KeyedTx on PostgreSQL it is sent with the COMMIT, which
// saves the gateway a round trip on every mutation: the commit then
// returns its error (and the transaction rolls back), and nothing may run
// in tx after it. Elsewhere it runs at once.
func ExecLast(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	_, err := tx.ExecContext(context.WithValue(ctx, execLastKey{}, true), query, args...)
	return err
}

// deferredResult is the result of a statement left for the commit.
type deferredResult struct{}

func (deferredResult) LastInsertId() (int64, error) {
	return 0, errors.New("store: the statement runs with the commit")
}
func (deferredResult) RowsAffected() (int64, error) {
	return 0, errors.New("store: the statement runs with the commit")
}

// pgDriver wraps the pgx database/sql driver so that the statements written
// with SQLite's placeholders (? and ?N) run unchanged on PostgreSQL: each
// is rewritten to $N once and remembered.
type pgDriver struct{ base driver.Driver }

func (d pgDriver) Open(name string) (driver.Conn, error) {
	c, err := d.base.Open(name)
	if err != nil {
		return nil, err
	}
	return pgConn{c: c.(*stdlib.Conn), st: &pgConnState{}}, nil
}

type pgConnector struct{ base driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return pgConn{c: conn.(*stdlib.Conn), st: &pgConnState{}}, nil
}

func (c pgConnector) Driver() driver.Driver { return pgDriver{c.base.Driver()} }

// pgConn forwards every capability of the pgx connection, rebinding the
// query text on the way.
type pgConn struct {
	c  *stdlib.Conn
	st *pgConnState
}

// pgConnState is what a connection knows of the transaction it began
// itself, if any.
type pgConnState struct{ tx *pgTx }

var (
	_ driver.ConnPrepareContext = pgConn{}
	_ driver.ConnBeginTx        = pgConn{}
	_ driver.ExecerContext      = pgConn{}
	_ driver.QueryerContext     = pgConn{}
	_ driver.Pinger             = pgConn{}
	_ driver.NamedValueChecker  = pgConn{}
	_ driver.SessionResetter    = pgConn{}
)

func (p pgConn) Prepare(query string) (driver.Stmt, error) { return p.c.Prepare(Rebind(query)) }
func (p pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return p.c.PrepareContext(ctx, Rebind(query))
}
func (p pgConn) Close() error { return p.c.Close() }
func (p pgConn) Begin() (driver.Tx, error) {
	return p.c.BeginTx(context.Background(), driver.TxOptions{})
}
func (p pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := ctx.Value(txBeginKey{}).(txBegin)
	if !ok || opts != (driver.TxOptions{}) {
		return p.c.BeginTx(ctx, opts)
	}
	if p.c.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	tx, err := p.c.Conn().BeginTx(ctx, pgx.TxOptions{BeginQuery: beginQuery(b)})
	if err != nil {
		return nil, err
	}
	t := &pgTx{ctx: ctx, tx: tx, conn: p.st}
	p.st.tx = t
	return t, nil
}
func (p pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if t := p.st.tx; t != nil && t.last == nil && ctx.Value(execLastKey{}) != nil {
		vals := make([]any, len(args))
		for i, a := range args {
			if a.Name != "" {
				return nil, fmt.Errorf("store: ExecLast takes positional arguments, not %s", a.Name)
			}
			vals[i] = a.Value
		}
		t.last = &lastExec{query: Rebind(query), args: vals}
		return deferredResult{}, nil
	}
	return p.c.ExecContext(ctx, Rebind(query), args)
}
func (p pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return p.c.QueryContext(ctx, Rebind(query), args)
}
func (p pgConn) Ping(ctx context.Context) error             { return p.c.Ping(ctx) }
func (p pgConn) CheckNamedValue(v *driver.NamedValue) error { return p.c.CheckNamedValue(v) }
func (p pgConn) ResetSession(ctx context.Context) error     { return p.c.ResetSession(ctx) }

var rebindCache sync.Map // query → rebound query

// Rebind rewrites SQLite placeholders to PostgreSQL's: ?N becomes $N, and
// each bare ? becomes $N for N one more than the largest number so far,
// as SQLite numbers them. Placeholders inside quoted strings,
// identifiers and comments are left alone.
func Rebind(q string) string {
	if v, ok := rebindCache.Load(q); ok {
		return v.(string)
	}
	out := rebind(q)
	rebindCache.Store(q, out)
	return out
}

func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for i := 0; i < len(q); i++ {
		ch := q[i]
		switch {
		case ch == '\'' || ch == '"':
			j := i + 1
			for j < len(q) {
				if q[j] == ch {
					if j+1 < len(q) && q[j+1] == ch { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(q))
			b.WriteString(q[i:end])
			i = end - 1
		case ch == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case ch == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			// SQLite's rule: ?N is parameter N, and a bare ? is one more
			// than the largest number used so far.
			if j > i+1 {
				k, _ := strconv.Atoi(q[i+1 : j])
				n = max(n, k)
				b.WriteString("$" + strconv.Itoa(k))
			} else {
				n++
				b.WriteString("$" + strconv.Itoa(n))
			}
			i = j - 1
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// boolAsInt lets a Go bool bind to an integer column as 1 or 0. The schema
// keeps flags in integer columns, as SQLite (which has no boolean type)
// does and as its driver binds bools; real boolean columns (goose's) still
// take bools directly, since this applies only where no plan exists.
func boolAsInt(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if b, ok := value.(bool); ok {
		return &boolIntPlan{}, boolInt(b), true
	}
	return nil, nil, false
}

type boolInt bool

func (b boolInt) Int64Value() (pgtype.Int8, error) {
	n := int64(0)
	if b {
		n = 1
	}
	return pgtype.Int8{Int64: n, Valid: true}, nil
}

type boolIntPlan struct{ next pgtype.EncodePlan }

func (p *boolIntPlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *boolIntPlan) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode(boolInt(value.(bool)), buf)
}

// afterConnect prepares each new PostgreSQL session for tuitbot's
// statements.
func afterConnect(_ context.Context, c *pgx.Conn) error {
	m := c.TypeMap()
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{boolAsInt}, m.TryWrapEncodePlanFuncs...)
	return nil
}
