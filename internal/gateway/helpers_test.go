package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

func newClock() *clock.Fake {
	return clock.NewFake(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
}

// fakePolicy answers with decide (allow when nil) and records every request
// and how many allowed calls kept their reservation.
type fakePolicy struct {
	mu       sync.Mutex
	decide   func(policy.Request) policy.Decision
	checks   []policy.Request
	reserved int
	released int
}

func (p *fakePolicy) Reserve(_ context.Context, _ *sql.Tx, req policy.Request) (policy.Decision, policy.Reservation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checks = append(p.checks, req)
	d := policy.Decision{Outcome: policy.Allow}
	if p.decide != nil {
		d = p.decide(req)
	}
	if d.Outcome == policy.Allow {
		p.reserved++
	}
	return d, policy.Reservation{}, nil
}

func (p *fakePolicy) Release(context.Context, policy.Reservation) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released++
	return nil
}

func (p *fakePolicy) set(f func(policy.Request) policy.Decision) {
	p.mu.Lock()
	p.decide = f
	p.mu.Unlock()
}

func (p *fakePolicy) requests() []policy.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]policy.Request(nil), p.checks...)
}

// consumedCount is the number of allowed calls whose quota stayed charged.
func (p *fakePolicy) consumedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reserved - p.released
}

// decision builds a fixed policy answer.
func decision(o policy.Outcome, rule string) func(policy.Request) policy.Decision {
	return func(policy.Request) policy.Decision {
		d := policy.Decision{Outcome: o, RuleID: rule, Reason: "test rule " + rule}
		if o == policy.Deny {
			d.Code = apperr.PolicyUserRule
		}
		return d
	}
}

// approvalThenAllow routes to approval unless the call replays an approved
// item, as the real engine does with BypassApproval.
func approvalThenAllow(req policy.Request) policy.Decision {
	if req.BypassApproval {
		return policy.Decision{Outcome: policy.Allow}
	}
	return policy.Decision{Outcome: policy.RequireApproval, RuleID: "user:review_posts", Reason: "posts need review"}
}

// fakeAction counts executions and keeps the exact bytes each one got.
type fakeAction struct {
	mu    sync.Mutex
	calls []json.RawMessage
	// run, when set, decides the outcome; the default echoes the params.
	run func(ctx context.Context, params json.RawMessage) (Result, error)
}

func (f *fakeAction) execute(ctx context.Context, params json.RawMessage) (Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, append(json.RawMessage(nil), params...))
	run := f.run
	f.mu.Unlock()
	if run != nil {
		return run(ctx, params)
	}
	return Result{Data: map[string]any{"echo": json.RawMessage(params)}}, nil
}

func (f *fakeAction) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeAction) last() json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return nil
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeAction) setRun(run func(ctx context.Context, params json.RawMessage) (Result, error)) {
	f.mu.Lock()
	f.run = run
	f.mu.Unlock()
}

const fakeTool = "fake_post"

// errTextInvalid is what the fake Validate answers for a text it refuses.
var errTextInvalid = apperr.New(apperr.TweetTooLong, "text: too long")

// action wraps f as a registered gateway action with an editable text that
// must be at most 20 bytes.
func (f *fakeAction) action() *Action {
	return &Action{
		Tool: fakeTool, Category: policy.CatWrite, EditableText: "text",
		Validate: func(params json.RawMessage) error {
			var p struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(params, &p); err != nil {
				return apperr.New(apperr.InvalidInput, "parameters: %v", err)
			}
			if p.Text != nil && len(*p.Text) > 20 {
				return errTextInvalid
			}
			return nil
		},
		Execute: f.execute,
	}
}

// migratedDB is a database file with every migration applied, made once in
// TestMain; each test starts from a copy because migrating is by far the
// slowest part of opening a fresh database under the race detector.
var migratedDB string

func TestMain(m *testing.M) {
	if kind := os.Getenv(envBenchWorker); kind != "" {
		if err := benchWorker(kind); err != nil {
			fmt.Fprintln(os.Stderr, "benchmark worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "gateway-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	migratedDB = filepath.Join(dir, "migrated.db")
	db, err := store.Open(context.Background(), migratedDB, store.Options{})
	if err == nil {
		err = db.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "prepare the test database:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := pgtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// newTarget returns a new migrated SQLite file, or a new PostgreSQL
// database when t runs on that backend, for store.Open.
func newTarget(t testing.TB) string {
	t.Helper()
	if storetest.BackendOf(t) == storetest.Postgres {
		return storetest.Target(t)
	}
	path := filepath.Join(t.TempDir(), "tuitbot.db")
	copyMigrated(t, path)
	return path
}

// copyMigrated puts a migrated database at path.
func copyMigrated(t testing.TB, path string) {
	t.Helper()
	b, err := os.ReadFile(migratedDB)
	if err != nil {
		t.Fatalf("read the migrated database: %v", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("copy the migrated database: %v", err)
	}
}

// env is one gateway over a real temporary database of the backend the
// test runs on (storetest.ForEachBackend): a SQLite file, or a PostgreSQL
// database of its own.
type env struct {
	t      *testing.T
	ctx    context.Context
	db     *store.DB
	clock  *clock.Fake
	pol    *fakePolicy
	act    *fakeAction
	g      *Gateway
	opts   Options
	dbPath string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, ctx: context.Background(), clock: newClock(), pol: &fakePolicy{}, act: &fakeAction{}}
	e.dbPath = newTarget(t)
	db, err := store.Open(e.ctx, e.dbPath, store.Options{Now: e.clock.Now})
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	e.db = db
	e.opts = Options{
		DB: db, Policy: e.pol, Now: e.clock.Now, AccountID: "default",
		Mode:    func() (string, bool) { return policy.ModeAutopilot, false },
		LockDir: filepath.Join(dir, "locks"),
	}
	e.g = e.open()
	return e
}

// open starts another gateway on the same database, as a second process
// would, with the fake action registered.
func (e *env) open() *Gateway {
	e.t.Helper()
	g, err := New(e.ctx, e.opts)
	if err != nil {
		e.t.Fatalf("gateway.New: %v", err)
	}
	e.t.Cleanup(func() { g.Close() })
	g.Register(e.act.action())
	return g
}

func (e *env) do(g *Gateway, params any, key string) (Response, error) {
	e.t.Helper()
	return g.Do(e.ctx, Call{Tool: fakeTool, Params: params, IdempotencyKey: key})
}

// mustDo runs a call that must succeed.
func (e *env) mustDo(params any, key string) Response {
	e.t.Helper()
	r, err := e.do(e.g, params, key)
	if err != nil {
		e.t.Fatalf("Do(%v): %v", params, err)
	}
	return r
}

// auditRow is the part of a mutation_audit row the tests look at.
type auditRow struct {
	corr, tool, hash, summary, status, key, caller, owner string
	errCode, result, dupOf                                string
	approvalID                                            int64
	completed                                             bool
}

func (e *env) audit() []auditRow {
	e.t.Helper()
	return readAudit(e.t, e.ctx, e.db.DB)
}

func readAudit(t *testing.T, ctx context.Context, db *sql.DB) []auditRow {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT correlation_id, tool_name, params_hash, params_summary, status,
		COALESCE(idempotency_key,''), caller, owner, COALESCE(error_code,''), COALESCE(result_json,''), COALESCE(duplicate_of,''),
		COALESCE(approval_id,0), completed_at IS NOT NULL FROM mutation_audit ORDER BY id`)
	if err != nil {
		t.Fatalf("read audit: %v", err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		if err := rows.Scan(&r.corr, &r.tool, &r.hash, &r.summary, &r.status, &r.key, &r.caller, &r.owner,
			&r.errCode, &r.result, &r.dupOf, &r.approvalID, &r.completed); err != nil {
			t.Fatalf("scan audit: %v", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read audit: %v", err)
	}
	return out
}

// statuses lists the audit statuses in insertion order.
func (e *env) statuses() []string {
	e.t.Helper()
	var out []string
	for _, r := range e.audit() {
		out = append(out, r.status)
	}
	return out
}

func (e *env) countRows(table string) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRowContext(e.ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		e.t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// wantCode asserts err is an *apperr.Error with code.
func wantCode(t *testing.T, err error, code apperr.Code) *apperr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %s, got nil", code)
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want *apperr.Error %s, got %T: %v", code, err, err)
	}
	if ae.Code != code {
		t.Fatalf("want error code %s, got %s: %v", code, ae.Code, err)
	}
	return ae
}

// dataMap is the data as the caller receives it: its JSON object.
func dataMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("data %s is not a JSON object: %v", b, err)
	}
	return m
}

// canon returns the canonical bytes and fingerprint of params for fakeTool.
func canon(t *testing.T, params string) (string, string) {
	t.Helper()
	c, err := Canonical([]byte(params))
	if err != nil {
		t.Fatalf("canonical %s: %v", params, err)
	}
	return string(c), Fingerprint(fakeTool, c)
}
