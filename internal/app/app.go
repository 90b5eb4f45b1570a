// Package app is the composition root: it turns a configuration into the
// running services (database, X client, LLM, gateway) that the CLI commands
// and the MCP server share.
package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/approvallink"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/metrics"
	"github.com/tuitbot/tuitbot/internal/notify"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/postlimit"
	"github.com/tuitbot/tuitbot/internal/safefetch"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/version"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Version is the product version (internal/version owns it: -ldflags at
// release time, the module build information otherwise).
var Version = version.Version()

// App holds the services. A service that failed to start is nil and its
// error is kept, so tools can degrade honestly instead of the process dying.
type App struct {
	Cfg *config.Config
	Log *slog.Logger
	Now func() time.Time

	DB    *store.DB
	DBErr error

	xc   *xapi.Client
	XErr error

	Policy     *policy.Engine
	Counters   *counters.Store
	Gateway    *gateway.Gateway
	GatewayErr error

	// Sim is the in-process X emulator in sandbox mode.
	Sim *Sandbox

	// Metrics is this app's own Prometheus registry and instruments.
	Metrics *metrics.Metrics

	llm    llm.Provider
	LLMErr error
	probe  probeCache
	xProbe probeCache
	// postLimit is how long the account's posts may be.
	postLimit *postlimit.Resolver

	sleep func(ctx context.Context, d time.Duration) error
	// mediaFetch is Options.MediaFetch.
	mediaFetch func(*safefetch.Options)
	closers    []func() error

	integrity integrityRun
	// statistics is the planner's statistics gathering a held start
	// leaves to ReleaseBackground.
	statistics heldStatistics
	// held is the rest of the work a held start leaves to
	// ReleaseBackground (the first hand-off check).
	held heldWork

	pingOnce sync.Once
	ping     *sql.Stmt
	pingErr  error

	// Account is the X account these services act for. The App New
	// returns acts for the default account and holds the others
	// (ForAccount): each has its own configuration, token file, X client,
	// policy counters and gateway over the shared database, LLM and
	// sandbox, so nothing an account does is counted for another.
	Account  string
	root     *App
	accounts map[string]*App

	// outbox is the notification outbox the gateways write into (nil: no
	// channel configured); getenv reads the channels' secrets.
	outbox *notify.Outbox
	getenv func(string) string
	// links issues and checks signed approval links (nil: links off).
	links *approvallink.Service
}

// Options tune New for tests and the sandbox.
type Options struct {
	Logger *slog.Logger
	Now    func() time.Time
	// Sandbox starts the built-in X emulator instead of reaching X.
	Sandbox bool
	// SkipDB leaves the database closed (profiles that need none).
	SkipDB bool
	// SkipX leaves the X client unbuilt.
	SkipX bool
	// RequireDB makes New fail when the database or the mutation gateway
	// cannot start, instead of keeping the error for the tools to report:
	// a server that mutates must never run without its audit trail.
	RequireDB bool
	// AcceptNewDatabase lets a home with history start over with a new or
	// different database (--accept-new-database).
	AcceptNewDatabase bool
	// Sleep is how the X client waits (backoff, rate-limit resets); tests
	// and simulated days pass one that advances their clock. Nil sleeps.
	Sleep func(ctx context.Context, d time.Duration) error
	// Getenv reads the secrets the configuration's *_env keys name
	// (default os.Getenv).
	Getenv func(string) string
	// MediaFetch adjusts how media is downloaded from URLs beyond what
	// the configuration says (a resolver, trusted roots, ports); tests use
	// it to reach their own TLS server.
	MediaFetch func(*safefetch.Options)
	// HoldBackground holds back the database work no caller waits for
	// (the planner's statistics at open, the health check's quick_check)
	// until ReleaseBackground: a server calls it once its first answer is
	// out, so that the work takes no CPU from that answer.
	HoldBackground bool
	// SandboxAccess is the access level of each sandbox account's app, by
	// account name, which the sandbox emulator then models (see
	// SandboxAccess).
	SandboxAccess SandboxAccess
	// RetryingAfter, when set, is told of each transient database error
	// (store.Transient) a start-up step failed on, and on which try (1 is
	// the first), before the step is tried again, so that a server
	// answering while New runs can say that the database is unavailable
	// instead of keeping its callers waiting through every try.
	RetryingAfter func(err error, try int)
	// RetryUntil, when set, ends the tries again of a start-up step: once
	// it is done a step that failed transiently is not tried again (a try
	// in progress is not cut short), because no one waits for the start
	// any more.
	RetryUntil context.Context
}

// New builds the services for cfg.
func New(ctx context.Context, cfg *config.Config, opts Options) (*App, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	a := &App{Cfg: cfg, Log: opts.Logger, Now: opts.Now, sleep: opts.Sleep, getenv: opts.Getenv, mediaFetch: opts.MediaFetch}
	a.held.holding = opts.HoldBackground
	if !opts.SkipDB {
		so := StoreOptions(cfg, opts.Now, opts.AcceptNewDatabase)
		so.DeferStatistics = opts.HoldBackground
		db, err := store.Open(ctx, cfg.DatabaseTarget(), so)
		switch {
		case err != nil && opts.RequireDB:
			return nil, fmt.Errorf("cannot open the database: %w", err)
		case err != nil:
			a.DBErr = err
			a.Log.Warn("database unavailable; tools that need it will report db_error", "error", err)
		default:
			a.DB = db
			// Closers run last first: a quick_check in progress stops
			// before the database closes.
			a.closers = append(a.closers, db.Close, a.stopIntegrityRun, a.statistics.stop)
			a.integrity.held = opts.HoldBackground
			if db.BackupPath != "" {
				a.Log.Info("database backed up before migration", "backup", db.BackupPath)
			}
			if db.IdentityNote != "" {
				a.Log.Warn("database identity: "+db.IdentityNote, "database", db.Path, "id", db.ID)
			}
		}
	}
	var bases map[string]string
	var httpClient *http.Client
	if opts.Sandbox {
		sb, err := startSandbox(ctx, a, opts.SandboxAccess)
		if err != nil {
			a.Close()
			return nil, err
		}
		a.Sim = sb
		bases, httpClient = sb.Bases(), sb.HTTPClient()
	}
	a.Metrics = a.newMetrics()
	if err := a.startOutbox(); err != nil {
		a.Close()
		return nil, err
	}
	a.Account = config.DefaultAccountName
	a.startLLM()
	if err := a.startAccount(ctx, opts, bases, httpClient); err != nil {
		return nil, err
	}
	a.accounts = map[string]*App{a.Account: a}
	for _, name := range cfg.AccountNames() {
		if name == a.Account {
			continue
		}
		acfg, err := cfg.ForAccount(name)
		if err != nil {
			a.Close()
			return nil, err
		}
		v := &App{Cfg: acfg, Log: a.Log.With("account", name), Now: a.Now, DB: a.DB, DBErr: a.DBErr, Sim: a.Sim,
			sleep: a.sleep, Account: name, root: a, Metrics: a.Metrics}
		// Each account has its own LLM client only so that its usage is
		// recorded under its own account in the ledger.
		v.startLLM()
		if err := v.startAccount(ctx, opts, bases, httpClient); err != nil {
			return nil, err
		}
		a.accounts[name] = v
	}
	return a, nil
}

// startAccount starts what is the account's own: its X client and, over
// the shared database, its policy counters and gateway.
func (a *App) startAccount(ctx context.Context, opts Options, bases map[string]string, httpClient *http.Client) error {
	if !opts.SkipX {
		a.startX(ctx, bases, httpClient)
	}
	a.postLimit = a.newPostLimit()
	if a.DB != nil {
		if err := retryTransient(ctx, a.Log, opts, "start the mutation gateway", func() error { return a.startGateway(ctx) }); err != nil {
			a.GatewayErr = err
			a.Log.Warn("mutation gateway unavailable", "error", err)
			if apperr.CodeOf(err) == apperr.ConfigError {
				a.Close()
				return err
			}
			if opts.RequireDB {
				a.Close()
				return fmt.Errorf("cannot start the mutation gateway: %w", err)
			}
		}
	}
	return nil
}

// startupTries is how often a start-up step that failed on a transient
// database error (store.Transient: a dropped connection, a server
// restarting) is tried in all, the first retry after startupBackoff and
// each later one after twice the wait before it.
const (
	startupTries   = 5
	startupBackoff = 50 * time.Millisecond
)

// retryTransient runs step until it succeeds, fails otherwise than
// transiently, or has been tried startupTries times: one dropped
// connection while the services start is no reason not to start.
// opts.RetryingAfter hears of each failure that is tried again, and
// opts.RetryUntil ends the tries.
func retryTransient(ctx context.Context, log *slog.Logger, opts Options, what string, step func() error) error {
	until := opts.RetryUntil
	if until == nil {
		until = ctx
	}
	wait := startupBackoff
	for try := 1; ; try++ {
		err := step()
		if err == nil || try == startupTries || !store.Transient(err) || until.Err() != nil {
			return err
		}
		log.Warn("database failed while starting; trying again", "step", what, "try", try, "error", err)
		if opts.RetryingAfter != nil {
			opts.RetryingAfter(err, try)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-until.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
}

// ForAccount returns the services of account name ("" is the account the
// configuration selects: default_account, else default).
func (a *App) ForAccount(name string) (*App, error) {
	r := a.top()
	sel, err := r.Cfg.SelectAccount(name)
	if err != nil {
		return nil, apperr.New(apperr.InvalidInput, "%v", err)
	}
	if v, ok := r.accounts[sel]; ok {
		return v, nil
	}
	if sel == r.Account {
		return r, nil
	}
	return nil, apperr.New(apperr.InvalidInput, "account %q is not running", sel)
}

// Accounts lists the accounts of the home, default first.
func (a *App) Accounts() []string { return a.top().Cfg.AccountNames() }

func (a *App) top() *App {
	if a.root != nil {
		return a.root
	}
	return a
}

// StoreOptions are how every command opens the database: the token file
// counts as history, so a new or empty database in a used home is refused
// unless acceptNew is set, and the database is bound to the home's
// home.id, so one copied from another home is refused too.
func StoreOptions(cfg *config.Config, now func() time.Time, acceptNew bool) store.Options {
	return store.Options{Now: now, HistoryFiles: cfg.TokenFiles(), AcceptNew: acceptNew, HomeIDFile: cfg.HomeIDFile()}
}

// RequireDB returns the database or the reason it is unavailable.
func (a *App) RequireDB() (*store.DB, error) {
	if a.DB != nil {
		return a.DB, nil
	}
	if a.DBErr != nil {
		return nil, a.DBErr
	}
	return nil, errors.New("database not opened")
}

// Close releases every service in reverse order, every account's.
func (a *App) Close() error {
	if a.root != nil {
		return a.root.Close()
	}
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		if err := a.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	a.closers = nil
	return errors.Join(errs...)
}

// OnClose registers a cleanup.
func (a *App) OnClose(f func() error) {
	if a.root != nil {
		a.root.OnClose(f)
		return
	}
	a.closers = append(a.closers, f)
}

// Check is one line of a health report.
type Check struct {
	Name    string `json:"name"`
	Status  string `json:"status"` // ok, degraded, not_configured, error
	Message string `json:"message,omitempty"`
}

// Health checks config, database, token, LLM and X, one line each. The
// database's quick_check runs in the background: the report carries its
// last verdict (ok before the first), so no call waits for it.
func (a *App) Health(ctx context.Context) []Check { return a.health(ctx, false) }

// Doctor is Health that waits for the database's quick_check verdict, for
// a person who asked for a full check.
func (a *App) Doctor(ctx context.Context) []Check { return a.health(ctx, true) }

func (a *App) health(ctx context.Context, waitIntegrity bool) []Check {
	var out []Check
	out = append(out, Check{Name: "config", Status: "ok", Message: fmt.Sprintf("mode=%s approval_mode=%t home=%s",
		a.Cfg.Mode, a.Cfg.EffectiveApprovalMode(), a.Cfg.Home)})
	out = append(out, a.dbCheck(ctx, waitIntegrity))
	out = append(out, a.extraChecks(ctx)...)
	return out
}

func (a *App) dbCheck(ctx context.Context, waitIntegrity bool) Check {
	db, err := a.RequireDB()
	if err != nil {
		return Check{Name: "database", Status: "error", Message: err.Error()}
	}
	// The wait for a quick_check verdict has the run's own bound.
	integrityCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	// Files first: with its -shm gone, SQLite may answer the query below
	// with a bare "disk I/O error", which tells the user nothing about why.
	if err := db.CheckFiles(ctx); err != nil {
		return Check{Name: "database", Status: "error", Message: err.Error()}
	}
	// A prepared SELECT 1 proves a connection can run a query, at a
	// fraction of the cost of Ping's fresh statement on every call.
	a.pingOnce.Do(func() { a.ping, a.pingErr = db.PrepareContext(context.WithoutCancel(ctx), "SELECT 1") })
	if a.pingErr != nil {
		return Check{Name: "database", Status: "error", Message: "query failed: " + a.pingErr.Error()}
	}
	var one int
	if err := a.ping.QueryRowContext(ctx).Scan(&one); err != nil {
		return Check{Name: "database", Status: "error", Message: "query failed: " + err.Error()}
	}
	if c := a.integrityCheck(integrityCtx, db, waitIntegrity); c.Status != "ok" {
		return c
	}
	if a.Gateway != nil {
		if n := a.Gateway.Unrecorded(); n > 0 {
			return Check{Name: "database", Status: "degraded", Message: fmt.Sprintf(
				"%d mutation outcome(s) could not be recorded (the disk is probably full); no mutation is sent until they are: free disk space beside %s", n, db.Path)}
		}
	}
	if err := db.EnsureReserve(); err != nil {
		return Check{Name: "database", Status: "degraded", Message: err.Error() + "; mutations are refused until there is room"}
	}
	// The reserve can still be in place on a disk that filled up around
	// it; the free space tells.
	if err := db.CheckSpace(); err != nil {
		return Check{Name: "database", Status: "degraded", Message: err.Error()}
	}
	return Check{Name: "database", Status: "ok", Message: db.Path}
}

// quickCheckEvery spaces out PRAGMA quick_check: it reads every page, so
// it runs on a schedule (the first health check, then at most this often)
// rather than on every call.
const quickCheckEvery = 10 * time.Minute

// quickCheckTimeout bounds one quick_check run.
const quickCheckTimeout = 10 * time.Second

// integrityRun is the database's quick_check verdict and the run that
// produces the next one. The check reads every page, which on a start is
// most of the CPU the first call would wait for: a health check starts it
// in the background and reports the last verdict, and only a caller that
// asks to wait (doctor) waits for it.
type integrityRun struct {
	mu sync.Mutex
	// held defers a run a health check asks for until ReleaseBackground
	// (Options.HoldBackground); asked records that one was.
	held, asked bool
	at          time.Time // when check was found; zero before the first verdict
	check       Check
	// running is closed when the run in progress ends; nil when none is.
	running chan struct{}
	// stop ends a run in progress; Close calls it.
	stop context.CancelFunc
}

// integrityCheck reports corruption found by quick_check. A verdict is
// kept for quickCheckEvery; when it is due, a run starts in the
// background, and the caller gets the last verdict (ok before the first)
// unless wait is set, when it waits for the run.
func (a *App) integrityCheck(ctx context.Context, db *store.DB, wait bool) Check {
	r := &a.top().integrity
	r.mu.Lock()
	if !r.at.IsZero() && a.Now().Sub(r.at) < quickCheckEvery {
		defer r.mu.Unlock()
		return r.check
	}
	switch {
	case r.running != nil:
	case r.held && !wait:
		r.asked = true
	default:
		r.running = a.startIntegrityRun(r, db)
	}
	running, last := r.running, r.check
	if r.at.IsZero() {
		last = Check{Name: "database", Status: "ok"}
	}
	r.mu.Unlock()
	if !wait {
		return last
	}
	select {
	case <-running:
	case <-ctx.Done():
		return last
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at.IsZero() {
		// The run was too slow or stopped: no verdict yet.
		return last
	}
	return r.check
}

// startIntegrityRun runs quick_check in the background; r.mu is held. The
// run ends with the App: Close stops it and waits for it before the
// database closes.
func (a *App) startIntegrityRun(r *integrityRun, db *store.DB) chan struct{} {
	done := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), quickCheckTimeout)
	r.stop = cancel
	go func() {
		defer close(done)
		defer cancel()
		res, err := db.QuickCheck(ctx)
		var chk Check
		switch {
		case err != nil && ctx.Err() != nil:
			// Too slow or stopped: keep the last verdict, try again on
			// the next health check.
			r.mu.Lock()
			r.running = nil
			r.mu.Unlock()
			return
		case err != nil:
			chk = Check{Name: "database", Status: "error", Message: "quick_check failed: " + err.Error() + "; the database may be corrupt: stop tuitbot and restore a backup"}
		case res != "ok":
			chk = Check{Name: "database", Status: "error", Message: "quick_check found corruption: " + res + "; stop tuitbot and restore a backup"}
		default:
			chk = Check{Name: "database", Status: "ok"}
		}
		r.mu.Lock()
		r.at, r.check, r.running = a.Now(), chk, nil
		r.mu.Unlock()
	}()
	return done
}

// stopIntegrityRun stops a quick_check in progress and waits for it, so
// that the database it reads can close.
// ReleaseBackground runs the work Options.HoldBackground held back: it
// gathers the statistics the database's open left (waiting for them), and
// starts the quick_check a health check asked for meanwhile. Later calls
// do nothing.
func (a *App) ReleaseBackground() {
	r := a.top()
	if r.DB == nil {
		return
	}
	r.statistics.gather(r.DB, r.Log)
	i := &r.integrity
	i.mu.Lock()
	if i.held && i.asked && i.running == nil {
		i.running = r.startIntegrityRun(i, r.DB)
	}
	i.held, i.asked = false, false
	i.mu.Unlock()
	r.held.release()
}

// heldWork is work a held start (Options.HoldBackground) runs at the
// release rather than at once.
type heldWork struct {
	mu sync.Mutex
	// holding is set until the release; closed once the App closes, after
	// which nothing held runs.
	holding, closed bool
	pending         []func(atRelease bool)
}

// whenReleased runs f now, or at the release (atRelease set) while the
// work is held.
func (h *heldWork) whenReleased(f func(atRelease bool)) {
	h.mu.Lock()
	if h.holding {
		h.pending = append(h.pending, f)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	f(false)
}

// release runs the held work, in the order it was held, holding the lock
// meanwhile so that close waits for it.
func (h *heldWork) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding || h.closed {
		return
	}
	h.holding = false
	for _, f := range h.pending {
		f(true)
	}
	h.pending = nil
}

// close drops the work still held; a release in progress ends first.
func (h *heldWork) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed, h.pending = true, nil
}

// heldStatistics gathers the statistics a held open deferred, once, and
// never after the database has closed.
type heldStatistics struct {
	mu           sync.Mutex
	done, closed bool
}

func (h *heldStatistics) gather(db *store.DB, log *slog.Logger) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done || h.closed || !db.StatisticsDeferred {
		return
	}
	h.done = true
	ctx, cancel := context.WithTimeout(context.Background(), quickCheckTimeout)
	defer cancel()
	if err := db.Analyze(ctx); err != nil {
		log.Warn("could not gather the database's statistics", "error", err)
	}
}

// stop waits for a gathering in progress; none starts after it.
func (h *heldStatistics) stop() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	return nil
}

func (a *App) stopIntegrityRun() error {
	r := &a.integrity
	r.mu.Lock()
	// A release after the close starts no run.
	running, stop := r.running, r.stop
	r.asked = false
	r.mu.Unlock()
	if running != nil {
		stop()
		<-running
	}
	return nil
}
