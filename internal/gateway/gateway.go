// Package gateway is the one path to a side effect. Every mutation — typed
// tools, universal requests, media, compose, queued replies, approvals and
// the autopilot — calls Do, which runs: validate → duplicate check → policy
// with quota reservation → durable pending audit row → execute → complete.
package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/rollback"
	"github.com/tuitbot/tuitbot/internal/store"
)

// Result is what an executed action returns.
type Result struct {
	Data     any
	Rollback *rollback.Guidance
	// RetryCount is how often the X client retried.
	RetryCount int
	// Unknown marks a result whose effect on X is uncertain even though the
	// call itself returned (a raw write answered with a 5xx); the audit row
	// records unknown and identical repeats are blocked.
	Unknown bool
	// NotApplied is X's refusal of a call whose answer is still returned
	// as data (a universal request answered 4xx): the audit records the
	// call as a failure with this error, its quota is given back, and no
	// later call is answered as a duplicate of it.
	NotApplied error
}

// Action describes how one mutation tool runs from its stored parameters,
// so an approved item replays exactly what was queued.
type Action struct {
	Tool     string
	Category policy.Category
	// Validate checks parameters (lengths, ids) before anything else; it runs
	// again when an approved item is replayed, after any human edit.
	Validate func(params json.RawMessage) error
	// Execute performs the side effect.
	Execute func(ctx context.Context, params json.RawMessage) (Result, error)
	// Ready, when set, reports why the call cannot be attempted now (no X
	// credentials). It is asked only when the call would execute, before
	// the pending audit row: a call that cannot be attempted leaves no row.
	Ready func(ctx context.Context) error
	// Classify may refine the category from the parameters.
	Classify func(params json.RawMessage) policy.Category
	// Equivalent names the typed tool a universal request does the work
	// of, so that policy applies that tool's rules and limits as well as
	// the universal tool's own (see policy.Request.Equivalent); the
	// category is that tool's, as registered. An empty name marks a write
	// no typed tool covers; policy then asks for approval unless a rule
	// names the universal tool explicitly. Nil means the action is its own
	// and only identity.
	Equivalent func(params json.RawMessage) (tool string)
	// Unlisted, when set, reports a universal write to a route the
	// endpoint table does not list: with no equivalent either, it goes to
	// a person whatever the rules say (policy.Request.UnlistedWrite).
	Unlisted func(params json.RawMessage) bool
	// Parts, when set, lists what the call posts as effects of other tools
	// (a thread's posts), so that limits on those tools count them (see
	// policy.Request.Parts).
	Parts func(params json.RawMessage) []policy.Part
	// Cost estimates the X spend in USD, for the budget limit.
	Cost func(params json.RawMessage) float64
	// Target, when set, names the post the call acts on (the post replied
	// to, quoted, liked, deleted...). It is kept in its own indexed column
	// of the audit and approval rows, so "did we already answer this post"
	// is an exact lookup (RepliedTo) rather than a search of the JSON.
	Target func(params json.RawMessage) string
	// Summary renders an audit-safe view of the parameters (no secrets, no
	// header values). Nil means the canonical parameters themselves.
	Summary func(params json.RawMessage) any
	// EditableText names the parameter a human may edit before approving.
	EditableText string
	// Editable names the other parameters a human may replace before
	// approving (a post's options); see EditFields.
	Editable []string
	// Fingerprint may supply the idempotency material when not every stored
	// parameter changes the effect (header values of a universal request).
	Fingerprint func(params json.RawMessage) ([]byte, error)
	// Intent, when set, says what the call does on X in the words of the
	// typed tool with that effect: effect names the tool and material is
	// its parameters, as JSON (a universal POST /2/tweets is x_post_tweet
	// with its text; a thread of one post is that post). Every spelling of
	// one effect gives the same intent, and so the same intent key (see
	// IntentKey). ok false means the call has no such intent (a write no
	// typed tool covers): it is then only identical to itself.
	Intent func(params json.RawMessage) (effect string, material json.RawMessage, ok bool)
	// Request, when set, renders the request as sent, kept whole on the
	// audit row (the summary is truncated) so a human can verify an unknown
	// outcome. It must hold no secrets.
	Request func(params json.RawMessage) []byte
	// Verify, when set, reads X to find out whether the call's effect is
	// there (a post with exactly this text in the account's own recent
	// timeline). found true resolves an unknown outcome as happened, with
	// data as its result. It never concludes that a call did not happen.
	Verify func(ctx context.Context, params json.RawMessage) (data any, found bool, err error)
	// Precheck, when set, reads X before a call is decided, once the call
	// is known to repeat no earlier one (a repeat gets the earlier answer
	// without it): an error refuses the call with nothing recorded or
	// charged. A non-zero until is when the chance to make the call ends
	// (an edit's window); an approval item for the call expires then when
	// that is sooner than ApprovalTTL. The replay of an approved item does
	// not run it: its Execute checks X again itself.
	Precheck func(ctx context.Context, params json.RawMessage) (until time.Time, err error)
}

// Policy is the decision service the gateway consults.
type Policy interface {
	// Reserve decides req and, when it is allowed, takes its charge from
	// every applicable limit inside tx: the write transaction that also
	// checks for an earlier identical call and records the pending audit
	// row. Deciding and charging under one write lock is what keeps
	// concurrent callers, in this process or another, from together
	// passing a cap.
	Reserve(ctx context.Context, tx *sql.Tx, req policy.Request) (policy.Decision, policy.Reservation, error)
	// Release returns the charge of an allowed call that provably did not
	// take effect (it failed before sending, or X refused it).
	Release(ctx context.Context, r policy.Reservation) error
}

// Mode reports the operating mode and effective approval mode at call time.
type Mode func() (mode string, approvalMode bool)

// Options configure a Gateway.
type Options struct {
	DB        *store.DB
	Policy    Policy
	Mode      Mode
	AccountID string
	Now       func() time.Time
	Logger    *slog.Logger
	// MemoryWindow and DBWindow are the duplicate windows (30 s and 5 min).
	MemoryWindow, DBWindow time.Duration
	// KeyWindow is how long a caller's idempotency_key is remembered.
	KeyWindow time.Duration
	// ApprovalTTL is how long a queued item stays pending.
	ApprovalTTL time.Duration
	// MaxPendingApprovals bounds the pending items (default 500).
	MaxPendingApprovals int
	// AuditRetention is how long audit rows are kept.
	AuditRetention time.Duration
	// LockDir holds the per-process liveness locks used to tell a crashed
	// process's pending rows from a live one's.
	LockDir string
	// OnDecision, when set, is told the outcome of every call that reached
	// a decision (see the Decision constants), for metrics.
	OnDecision func(outcome string)
	// Notifier, when set, records notices about queued items in the
	// transaction that changes them (see Notifier).
	Notifier Notifier
	// Platform, when set, judges every call against what X lets the
	// account's app do (see Platform): a refusal is recorded and returned
	// before the policy, the approval queue or X sees the call.
	Platform Platform
	// IntentBase, when set, is where X's Web Intents live
	// (x_api.intent_base_url): a refused reply, like, follow or quote
	// post then becomes a hand-off to a person (see HandOff).
	IntentBase func() string
	// HandOffWindow is how long an open hand-off is looked for on X
	// before it is not_done (default 24 h).
	HandOffWindow time.Duration
	// HandOffCheckEvery is how often a periodic check looks on X for one
	// open hand-off (default 5 min).
	HandOffCheckEvery time.Duration
	// Username, when set, gives the handle of a user id as far as tuitbot
	// knows it ("" when it does not; it must not read X, since a refusal
	// costs nothing), for the link of a follow handed to a person: X's
	// follow intent takes a handle.
	Username func(ctx context.Context, userID string) (string, error)
}

// Gateway runs mutations.
type Gateway struct {
	opts     Options
	actions  map[string]*Action
	memo     *memo
	instance string
	release  func()
	stmts    *stmtCache
	backlog  backlog
	// qPrior and qPriorByIntent are qPriorOrQueued and
	// qPriorOrQueuedByIntent in the database's dialect.
	qPrior, qPriorByIntent string
	// qPriorByKey is qPriorByKey in the database's dialect.
	qPriorByKey string
	// qPosted are PostedElsewhere's queries in the database's dialect.
	qPosted postedQueries
	// legacy says until when calls are also looked up by their parameters
	// hash (see legacyRows); set by readyForCalls, which callsReady says
	// has run (callsMu serialises it).
	legacy     legacyRows
	callsMu    sync.Mutex
	callsReady atomic.Bool
	// posted are the other accounts' posts PostedElsewhere read, by audit
	// row (see postedRows).
	posted postedRows
	// windows shares the reads of the window among concurrent calls (see
	// windowReads).
	windows windowReads
}

// New opens the gateway: it takes this process's liveness lock, marks
// pending rows of crashed processes interrupted, and applies audit retention.
func New(ctx context.Context, opts Options) (*Gateway, error) {
	if opts.DB == nil || opts.Policy == nil || opts.Mode == nil {
		return nil, errors.New("gateway: DB, Policy and Mode are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.AccountID == "" {
		opts.AccountID = "default"
	}
	if opts.MemoryWindow <= 0 {
		opts.MemoryWindow = 30 * time.Second
	}
	if opts.DBWindow <= 0 {
		opts.DBWindow = 5 * time.Minute
	}
	if opts.KeyWindow <= 0 {
		opts.KeyWindow = 24 * time.Hour
	}
	if opts.ApprovalTTL <= 0 {
		opts.ApprovalTTL = 24 * time.Hour
	}
	if opts.MaxPendingApprovals <= 0 {
		opts.MaxPendingApprovals = 500
	}
	if opts.AuditRetention <= 0 {
		opts.AuditRetention = 90 * 24 * time.Hour
	}
	g := &Gateway{opts: opts, actions: map[string]*Action{}, memo: newMemo(), instance: newInstance()}
	g.qPrior, g.qPriorByIntent = priorOrQueued(opts.DB.Dialect)
	g.qPriorByKey = inDialect(opts.DB.Dialect, qPriorByKey)
	g.qPosted = postedElsewhereQueries(opts.DB.Dialect, maxPostedElsewhere)
	release, err := g.lockInstance()
	if err != nil {
		return nil, err
	}
	if g.opts.DB.Dialect == store.Postgres {
		unlock, err := g.lockOnServer(ctx)
		if err != nil {
			release()
			return nil, err
		}
		fileRelease := release
		release = func() { unlock(); fileRelease() }
	}
	g.release = release
	g.stmts = newStmtCache(opts.DB)
	if err := g.recover(ctx); err != nil {
		g.Close()
		return nil, err
	}
	if err := g.applyRetention(ctx); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// readyForCalls prepares, once, what calls need and the start does not:
// the hot statements (see stmtCache) and whether rows written before
// intent keys still count (legacyRows). A server's first answers (a health
// check, a read) need neither, so the first call reads them, before its
// transaction; calls that come together wait for the one that does.
func (g *Gateway) readyForCalls(ctx context.Context) error {
	if g.callsReady.Load() {
		return nil
	}
	g.callsMu.Lock()
	defer g.callsMu.Unlock()
	if g.callsReady.Load() {
		return nil
	}
	if err := g.stmts.prepare(ctx); err != nil {
		return apperr.Wrap(apperr.DBError, err, "prepare the gateway's statements: %v", err)
	}
	legacy, err := g.findLegacyRows(ctx)
	if err != nil {
		// Not knowing is no reason to refuse the call (health_check says
		// what is wrong with the database): every call looks such rows
		// up, as it did before they could be skipped.
		g.opts.Logger.Warn("cannot tell whether audit rows older than intent keys still count; every call looks them up", "error", err)
		legacy = legacyRows{forever: true}
	}
	g.legacy = legacy
	g.callsReady.Store(true)
	return nil
}

// Close releases the liveness lock; the prepared statements are the
// database's and close with it.
func (g *Gateway) Close() error {
	// One last try to record what is waiting; a journal with outcomes
	// still unrecorded stays for the next start.
	if g.stmts != nil {
		if n, err := g.flushBacklog(context.Background()); err != nil {
			g.opts.Logger.Error("closing with mutation outcomes unrecorded; the next start recovers them from the journal", "count", n, "error", err)
		}
	}
	g.removeJournal()
	if g.release != nil {
		g.release()
		g.release = nil
	}
	return nil
}

// Register adds an action. Registering a tool twice is a programming error.
func (g *Gateway) Register(a *Action) {
	if _, dup := g.actions[a.Tool]; dup {
		panic("gateway: action registered twice: " + a.Tool)
	}
	g.actions[a.Tool] = a
}

// Action returns the registered action for tool.
func (g *Gateway) Action(tool string) (*Action, bool) {
	a, ok := g.actions[tool]
	return a, ok
}

// Call is one mutation request.
type Call struct {
	Tool           string
	Params         any // marshalled and canonicalised; json.RawMessage is accepted as is
	IdempotencyKey string
	Caller         string // mcp, autopilot, cli, web: who asked
	Loop           string // autopilot loop name
	// Via is the policy decision of the tool the call came through
	// (compose_tweet, propose_and_queue_replies; see Admit): the stricter
	// of it and the call's own decision applies.
	Via *policy.Decision
	// NotBefore, when set, is the earliest the call may reach X: the
	// autopilot's pause between its own posts. A call the policy would send
	// to X sooner is not attempted (no audit row, no charge against a limit)
	// and fails with a *PacedError saying when it may go. Every other answer
	// (queued for approval, denied, a dry run, a duplicate) comes at once:
	// pacing protects X, not the queue.
	NotBefore time.Time
	// approvalID is set when replaying an approved item: only the approval
	// outcome is bypassed; idempotency, limits, denials and audit apply.
	approvalID int64
	// decidedBy is the reviewer who approved the replayed item.
	decidedBy string
}

// PacedError answers a call whose Call.NotBefore had not come when the
// policy would have sent it to X. Nothing was recorded or charged: the
// caller waits until Until and makes the call again.
type PacedError struct{ Until time.Time }

func (e *PacedError) Error() string {
	return "the call may not reach X before " + e.Until.UTC().Format(time.RFC3339)
}

// Kind says what the gateway did with a call.
type Kind string

// The kinds of response.
const (
	Executed  Kind = "executed"
	Routed    Kind = "routed_to_approval"
	DryRun    Kind = "dry_run"
	Duplicate Kind = "duplicate"
)

// Response is the gateway's answer. Data is the seed's envelope data for the
// kind (the executed result, the routed/dry-run/duplicate objects).
type Response struct {
	Kind Kind
	// Result is the action's data when the call executed (Kind Executed).
	Result any
	// Queued, Preview and Duplicate answer the other kinds.
	Queued        *Queued
	Preview       *DryRunPreview
	Duplicate     *DuplicateOf
	CorrelationID string
	Rollback      *rollback.Guidance
	RetryCount    int
	ApprovalID    int64
	// Unknown is set when the call returned but its effect is uncertain.
	Unknown bool
	// AuditIncomplete is set when the call ran but its outcome could not be
	// recorded (a full disk): the audit row stays pending for now and no new
	// mutation is sent until it is recorded.
	AuditIncomplete bool
	// notApplied is set when X refused the call (Result.NotApplied).
	notApplied bool
}

// AuditIncompleteWarning is what the caller is told when AuditIncomplete is
// set.
const AuditIncompleteWarning = "the mutation ran but its outcome could not be recorded in the audit trail (the disk is probably full); " +
	"no new mutation is sent until it is recorded: free disk space beside the database"

// Do runs one mutation through the whole sequence.
func (g *Gateway) Do(ctx context.Context, c Call) (Response, error) {
	resp, err := g.do(ctx, c)
	g.observe(resp, err)
	return resp, err
}

func (g *Gateway) do(ctx context.Context, c Call) (Response, error) {
	act, ok := g.actions[c.Tool]
	if !ok {
		return Response{}, apperr.New(apperr.InternalError, "no gateway action for tool %s", c.Tool)
	}
	params, err := paramsJSON(c.Params)
	if err != nil {
		return Response{}, apperr.Wrap(apperr.InvalidInput, err, "parameters cannot be encoded")
	}
	// 1. Validate.
	if act.Validate != nil {
		if err := act.Validate(params); err != nil {
			return Response{}, err
		}
	}
	if len(c.IdempotencyKey) > 200 {
		return Response{}, apperr.New(apperr.InvalidInput, "idempotency_key: at most 200 characters")
	}
	id, err := identityOf(act, params)
	if err != nil {
		return Response{}, err
	}
	if err := g.readyToSend(ctx); err != nil {
		return Response{}, err
	}
	if err := g.readyForCalls(ctx); err != nil {
		return Response{}, err
	}
	// 2. Duplicate check: identical concurrent calls coalesce in memory; the
	// database covers other processes and restarts. The replay of an
	// approved item never joins an agent's call in memory: that call may be
	// the one answering "routed to approval", which is not an outcome the
	// replay may adopt. The database checks still dedup it. Calls are
	// identical when their intent is (whatever tool spelled it).
	// A paced call is not coalesced either: its answer may be "not yet",
	// which an identical call without pacing must not adopt.
	if c.approvalID != 0 || !c.NotBefore.IsZero() {
		return g.runVerified(ctx, act, c, params, id)
	}
	slot, leader := g.memo.join(id.intent, g.opts.Now(), g.opts.MemoryWindow)
	if !leader {
		return slot.wait(ctx)
	}
	resp, err := g.runVerified(ctx, act, c, params, id)
	slot.finish(resp, err, g.opts.Now())
	return resp, err
}

func hashOf(act *Action, params json.RawMessage) (string, error) {
	material := []byte(params)
	if act.Fingerprint != nil {
		var err error
		if material, err = act.Fingerprint(params); err != nil {
			return "", err
		}
	}
	return Fingerprint(act.Tool, material), nil
}

func paramsJSON(p any) (json.RawMessage, error) {
	switch v := p.(type) {
	case json.RawMessage:
		return Canonical(v)
	case []byte:
		return Canonical(v)
	case nil:
		return json.RawMessage("{}"), nil
	}
	return CanonicalOf(p)
}

func (g *Gateway) run(ctx context.Context, act *Action, c Call, params json.RawMessage, id identity) (Response, error) {
	mode, approval := g.opts.Mode()
	cat := act.Category
	if act.Classify != nil {
		cat = act.Classify(params)
	}
	preq := policy.Request{
		Tool: c.Tool, Category: cat, Mode: mode, ApprovalMode: approval,
		Now: g.opts.Now(), BypassApproval: c.approvalID != 0,
	}
	var equiv string
	if act.Equivalent != nil {
		if ea, ok := g.actions[act.Equivalent(params)]; ok {
			preq.Equivalent = []policy.Identity{{Tool: ea.Tool, Category: ea.Category}}
			equiv = ea.Tool
		} else {
			preq.UnknownWrite = true
			preq.UnlistedWrite = act.Unlisted != nil && act.Unlisted(params)
		}
	}
	if act.Cost != nil {
		preq.CostUSD = act.Cost(params)
	}
	if act.Parts != nil {
		preq.Parts = act.Parts(params)
	}
	route, err := g.checkPlatform(ctx, act, c, params, id, cat, equiv)
	if err != nil {
		return Response{}, err
	}
	until, err := g.precheck(ctx, act, c, params, id)
	if err != nil {
		return Response{}, err
	}
	// 2, 3 and 4. One write transaction checks for an earlier identical
	// call and, only when there is none, takes the policy decision with its
	// quota reservation and records its durable effect: the pending audit
	// row (before any I/O) or the approval item. Two processes can
	// therefore neither both start nor both queue the same call, nor
	// together pass a limit.
	corr := uuid.NewString()
	start := g.opts.Now()
	summary := auditSummary(act, params)
	var (
		early *Response
		dec   policy.Decision
		resv  policy.Reservation
	)
	// SQLite's write transaction excludes every other writer. On
	// PostgreSQL, calls that could be duplicates of each other queue at
	// its start instead: the same caller key, then the same fingerprint (in
	// that order, so two calls never wait on each other crosswise). Caps
	// are held by the counter rows' locks, which the reservation takes; the
	// approval queue's bound by the account's lock.
	err = g.opts.DB.KeyedTx(ctx, g.callScopes(c, id), func(tx *sql.Tx) error {
		q := txQ{g.stmts, tx}
		dup, err := g.checkDuplicateQ(ctx, q, c, id)
		if err != nil || dup != nil {
			early = dup
			return err
		}
		dec, resv, err = g.opts.Policy.Reserve(ctx, tx, preq)
		if err != nil {
			return apperr.Wrap(apperr.PolicyError, err, "policy evaluation failed: %v", err)
		}
		// The tool a call came through (compose_tweet) may be stricter; its
		// own reservation was taken when it was admitted.
		dec = stricter(dec, c.Via, c.approvalID != 0)
		// X's automation rules may let only a person decide the call,
		// whatever the policy allows; an approved replay has been decided.
		dec = stricter(dec, route, c.approvalID != 0)
		switch dec.Outcome {
		case policy.Allow, policy.Deny, policy.DryRun, policy.RequireApproval:
		default:
			return apperr.New(apperr.PolicyError, "unknown policy outcome %q", dec.Outcome)
		}
		// A call that may not reach X yet leaves no audit row and no
		// charge either: returning the error rolls both back.
		if dec.Outcome == policy.Allow && g.opts.Now().Before(c.NotBefore) {
			return &PacedError{Until: c.NotBefore}
		}
		// A call that cannot be attempted (no X credentials) leaves no
		// audit row and no charge: returning the error rolls both back. The
		// check may refresh the token, which is rare enough to hold the
		// write lock for.
		if dec.Outcome == policy.Allow && act.Ready != nil {
			if err := act.Ready(ctx); err != nil {
				return err
			}
		}
		decision := g.decisionRow(c, cat, equiv, dec)
		if dec.Outcome == policy.Allow {
			return g.insertPending(ctx, q, c, params, id, corr, summary, equiv, start, decision)
		}
		g.logDecision(ctx, q, decision)
		if dec.Outcome == policy.RequireApproval {
			item, err := g.enqueue(ctx, q, c, params, id, equiv, dec, until)
			if err != nil {
				return err
			}
			early = &Response{Kind: Routed, ApprovalID: item, Queued: &Queued{RoutedToApproval: true, ApprovalQueueID: item,
				Reason: dec.Reason, MatchedRuleID: dec.RuleID}}
		}
		return nil
	})
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return Response{}, ae
		}
		var paced *PacedError
		if errors.As(err, &paced) {
			return Response{}, paced
		}
		return Response{}, apperr.Wrap(apperr.DBError, err, "record the mutation: %v", err)
	}
	if early != nil {
		return *early, nil
	}
	switch dec.Outcome {
	case policy.Deny:
		return Response{}, denied(c.Tool, dec)
	case policy.DryRun:
		return Response{Kind: DryRun, Preview: &DryRunPreview{DryRun: true, WouldExecute: c.Tool, Params: string(params), MatchedRuleID: dec.RuleID}}, nil
	}
	// 5. Execute. A panic in an executor must not leave the row pending for
	// this live process forever: record it as unknown.
	// The rows the execution adds to other ledgers (X usage, posts) are
	// written with the completion, in its transaction.
	ectx, rows := store.WithDeferred(ctx)
	res, execErr := g.execute(ectx, act, params)
	// 6. Complete.
	elapsed := g.opts.Now().Sub(start)
	status, auditErr := statusOf(execErr), execErr
	switch {
	case status != statusSuccess:
	case res.Unknown:
		status = statusUnknown
	case res.NotApplied != nil:
		status, auditErr = statusFailure, res.NotApplied
	}
	// The audit row is written before anything else; if the disk cannot
	// take it the caller is told and nothing new is sent until it is
	// recorded.
	o := g.outcomeOf(corr, status, res, auditErr, elapsed)
	o.Rows = rows.Take()
	incomplete := !g.settle(ctx, o)
	// The reservation taken with the decision stays charged when the call
	// ran or may have run (success, unknown, a thread broken halfway); a
	// clean failure gives it back.
	if status == statusFailure && apperr.CodeOf(auditErr) != apperr.ThreadPartial {
		if err := g.opts.Policy.Release(context.WithoutCancel(ctx), resv); err != nil {
			g.opts.Logger.Error("policy reservation not released", "correlation_id", corr, "error", err)
		}
	}
	if execErr != nil {
		e := apperr.As(execErr)
		e.With("correlation_id", corr)
		if incomplete {
			e.With("audit_incomplete", true)
		}
		// A partial effect (a thread broken halfway) still has undo guidance.
		return Response{CorrelationID: corr, RetryCount: res.RetryCount, Rollback: res.Rollback, AuditIncomplete: incomplete}, e
	}
	return Response{Kind: Executed, Result: res.Data, CorrelationID: corr, Rollback: res.Rollback, RetryCount: res.RetryCount,
		Unknown: res.Unknown, AuditIncomplete: incomplete, notApplied: res.NotApplied != nil}, nil
}

// precheck runs act's Precheck for a call that repeats no earlier one. The
// duplicate checks run first in a transaction that is always rolled back,
// so a retried call gets its first answer even when X would now refuse it
// (an edited post can be edited only in its newest version); the checks
// run again, for real, with the decision.
func (g *Gateway) precheck(ctx context.Context, act *Action, c Call, params json.RawMessage, id identity) (time.Time, error) {
	if act.Precheck == nil || c.approvalID != 0 {
		return time.Time{}, nil
	}
	var answered bool
	err := g.opts.DB.KeyedTx(ctx, nil, func(tx *sql.Tx) error {
		dup, err := g.checkDuplicateQ(ctx, txQ{g.stmts, tx}, c, id)
		answered = dup != nil || err != nil
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		return time.Time{}, apperr.Wrap(apperr.DBError, err, "read audit: %v", err)
	}
	if answered {
		return time.Time{}, nil // answered, or refused, by the checks with the decision
	}
	return act.Precheck(ctx, params)
}

// errRollback ends a transaction that only read.
var errRollback = errors.New("rolled back")

func (g *Gateway) execute(ctx context.Context, act *Action, params json.RawMessage) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = apperr.New(apperr.XOutcomeUnknown, "the action failed unexpectedly (%v); its effect on X is unknown", r)
		}
	}()
	return act.Execute(ctx, params)
}

// Audit statuses.
const (
	statusPending     = "pending"
	statusSuccess     = "success"
	statusFailure     = "failure"
	statusUnknown     = "unknown"
	statusInterrupted = "interrupted"
	statusDuplicate   = "duplicate"
)

// NotSent marks err as the failure of an attempt that provably sent
// nothing to X (a media download that never finished): the call is a
// failure, whatever cancellation or deadline caused it, so its charge is
// given back and a repeat is allowed. Only an attempt that may have
// reached X can have an unknown outcome.
func NotSent(err error) error {
	if err == nil {
		return nil
	}
	return notSentError{err}
}

type notSentError struct{ err error }

func (e notSentError) Error() string { return e.err.Error() }
func (e notSentError) Unwrap() error { return e.err }

func statusOf(err error) string {
	if err == nil {
		return statusSuccess
	}
	if errors.As(err, new(notSentError)) {
		return statusFailure
	}
	switch apperr.CodeOf(err) {
	case apperr.XOutcomeUnknown:
		return statusUnknown
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return statusUnknown
	}
	return statusFailure
}

// memo coalesces identical in-flight calls and remembers recent answers.
type memo struct {
	mu    sync.Mutex
	slots map[string]*slot
	// swept is when expired slots were last dropped; sweeping on every call
	// would make each call cost O(remembered calls).
	swept time.Time
	// onWait, when set (tests only), is told each time a caller starts
	// waiting for an identical in-flight call, so a concurrency test can
	// know that every caller has piled up instead of guessing with a sleep.
	onWait func()
}

type slot struct {
	done    chan struct{}
	resp    Response
	err     error
	expires time.Time
	m       *memo
	key     string
	window  time.Duration
}

func newMemo() *memo { return &memo{slots: map[string]*slot{}} }

// join returns the slot for key and whether the caller must run the call.
func (m *memo) join(key string, now time.Time, window time.Duration) (*slot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.swept) >= window/4 || now.Before(m.swept) {
		for k, s := range m.slots {
			if expired(s, now) {
				delete(m.slots, k)
			}
		}
		m.swept = now
	}
	if s, ok := m.slots[key]; ok && !expired(s, now) {
		return s, false
	}
	s := &slot{done: make(chan struct{}), m: m, key: key, window: window}
	m.slots[key] = s
	return s, true
}

func expired(s *slot, now time.Time) bool {
	return !s.expires.IsZero() && now.After(s.expires)
}

func (s *slot) finish(resp Response, err error, now time.Time) {
	s.m.mu.Lock()
	s.resp, s.err = resp, err
	if remember(resp, err) {
		s.expires = now.Add(s.window)
	} else if s.m.slots[s.key] == s {
		delete(s.m.slots, s.key)
	}
	s.m.mu.Unlock()
	close(s.done)
}

// remember reports whether an answer is kept for the memory window after
// the call ends. Only what this process just executed successfully is.
// Everything else is re-derived from the database on the next call,
// because a cached copy would be wrong there: a routed answer would be
// handed to the approved replay, a duplicate answer would outlive the
// original's database window, and an unknown outcome must be answered
// from its audit row, which blocks until it is resolved (and may be
// resolved by reading X).
func remember(resp Response, err error) bool {
	return err == nil && resp.Kind == Executed && !resp.Unknown && !resp.notApplied
}

// blocksRepeat reports errors after which an identical repeat must not run:
// the outcome on X is unknown.
func blocksRepeat(err error) bool {
	return apperr.CodeOf(err) == apperr.XOutcomeUnknown
}

func (s *slot) wait(ctx context.Context) (Response, error) {
	if s.m.onWait != nil {
		s.m.onWait()
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	return duplicateOf(s.resp, s.err)
}

// duplicateOf turns the leader's answer into what a follower receives.
func duplicateOf(resp Response, err error) (Response, error) {
	if err != nil || resp.Unknown {
		if err == nil || blocksRepeat(err) {
			return Response{}, apperr.New(apperr.OutcomeUnverified,
				"an identical call (correlation id %s) just ended with an unknown outcome and stays blocked until it is resolved: verify on X (for example read the timeline), then a human runs `tuitbot audit resolve %s --happened` or `--did-not-happen`",
				resp.CorrelationID, resp.CorrelationID).With("original_correlation_id", resp.CorrelationID)
		}
		return Response{}, err
	}
	switch {
	case resp.notApplied:
		// X refused the call: the same answer stands for an identical one,
		// which is no duplicate of a success.
		return resp, nil
	case resp.Kind == Executed, resp.Kind == Duplicate:
		orig, cached := resp.CorrelationID, resp.Result
		if resp.Duplicate != nil {
			cached = resp.Duplicate.CachedResult
		}
		return Response{Kind: Duplicate, CorrelationID: orig, Duplicate: duplicateOfCall(orig, cached)}, nil
	}
	// Routed and dry-run answers are the same for an identical call.
	return resp, nil
}

func duplicateOfCall(orig string, cached any) *DuplicateOf {
	return &DuplicateOf{Duplicate: true, OriginalCorrelationID: orig, CachedResult: cached,
		Message: fmt.Sprintf("An identical mutation already succeeded (correlation id %s); returning its cached result instead of executing again.", orig)}
}

// callScopes are the write-lock scopes under which a call of this account
// is checked for an earlier identical one and recorded: identical by
// intent, so two spellings of one effect queue for each other.
func (g *Gateway) callScopes(c Call, id identity) []string {
	scope := store.AccountScope(g.opts.AccountID)
	call := scope + ":intent:" + id.intent
	if c.IdempotencyKey != "" {
		return []string{scope + ":key:" + c.IdempotencyKey, call}
	}
	return []string{call}
}
