package main

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/store"
)

// startingServer is `mcp serve`'s MCP server, answering on either
// transport while its services start beside it (see mcpserver.Starting).
// While the database is unavailable for a reason that passes (a server
// that cannot be reached, a dropped connection, another process holding
// SQLite's lock) the server keeps serving, every tool call answered
// db_error, and the start is tried again until it succeeds. When the
// services cannot start for any other reason, serving ends with it.
type startingServer struct {
	srv      *mcp.Server
	selected []*mcpserver.Tool
	starting *mcpserver.Starting
	started  *startingApp
	// serving ends when the services cannot start; the transport serves
	// on it.
	serving     context.Context
	stopServing context.CancelFunc
	// stopRetrying ends the waits between start attempts once the server
	// has stopped serving.
	stopRetrying context.CancelFunc
	// app is the started services, nil until then.
	app atomic.Pointer[app.App]
	// wasUnavailable is set once a start has failed on a transient
	// database error, so that the start that succeeds says so.
	wasUnavailable atomic.Bool
}

// newStartingServer builds the server on cfg alone; its services start
// when the server's Begin is called (by the first request that needs
// them, or by the caller). afterStart, when set, runs on the started
// services before the server gets them, and its error ends the server as a
// failed start does; afterAnswer, when set, once the answer that waited
// for the start is written.
func (c *cli) newStartingServer(ctx context.Context, cfg *config.Config, opts app.Options, mo mcpserver.Options, log *slog.Logger, afterStart func(*app.App) error, afterAnswer func()) (*startingServer, error) {
	s := &startingServer{}
	s.serving, s.stopServing = context.WithCancel(ctx)
	retrying, stopRetrying := context.WithCancel(ctx)
	s.stopRetrying = stopRetrying
	// A step of the start that fails transiently is tried again inside
	// app.New, and a whole start by startRetrying; the calls meanwhile
	// hear db_error from the step's second failure on. The first retry
	// comes at once and cures a connection dropped once, which no caller
	// then sees; SQLite's busy lock has already been waited for through
	// the busy timeout, so it is told at once.
	unavailable := func(err error, try int) {
		if try < 2 && !store.IsBusy(err) {
			return
		}
		s.wasUnavailable.Store(true)
		s.starting.Unavailable(dbUnavailable(err))
	}
	opts.RetryingAfter = unavailable
	// A client that has left waits for no start: the step in progress
	// ends, and is not tried again.
	opts.RetryUntil = retrying
	// The database work no call waits for waits for the first answer.
	opts.HoldBackground = true
	s.started = newStartingApp(func() (*app.App, error) {
		a, err := c.startRetrying(ctx, retrying, cfg, opts, unavailable, log)
		if err != nil {
			return nil, err
		}
		// Notifications go out from the server's own process; nothing
		// is sent from inside a tool call.
		if err := a.StartNotifications(ctx); err != nil {
			a.Close()
			return nil, err
		}
		if afterStart != nil {
			if err := afterStart(a); err != nil {
				a.Close()
				return nil, err
			}
		}
		return a, nil
	}, func(a *app.App, err error) {
		if err != nil {
			s.starting.Fail(err)
			s.stopServing()
			return
		}
		s.app.Store(a)
		// Starting leaves megabytes of garbage (the configuration, the
		// emulator's world, the schema checks); hand its pages back soon
		// rather than whenever the scavenger gets to them, but after the
		// answer to the call that waited for the start: the forced
		// collection stops the world and takes a core for milliseconds.
		// The held work (the database's statistics, a quick_check a health
		// check asked for, the first hand-off check) waits for that answer
		// too. Asked before Ready,
		// so that the answer is not written first.
		s.starting.AfterAnswer(func() {
			if afterAnswer != nil {
				afterAnswer()
			}
			debug.FreeOSMemory()
			a.ReleaseBackground()
		}, startServicesAfter)
		s.starting.Ready(a.MCPDeps())
		if s.wasUnavailable.Load() {
			log.Info("database available again; the services have started")
		}
	})
	// Everything that reads cfg is done before the services start: New
	// adjusts it (the sandbox points OAuth at its emulator).
	var err error
	s.srv, s.selected, s.starting, err = app.StartingMCPServer(cfg, c.account, log, mo, s.started.begin)
	if err != nil {
		s.stopServing()
		stopRetrying()
		return nil, err
	}
	return s, nil
}

// finish is the end of serving, which returned err: it waits for the
// services (a client that leaves while they start does not cut their
// start short: a half-run migration or emulator start helps no one),
// closes them, and returns what to report. A client that leaves before
// they have started still learns whether they could (a database
// refused, say).
func (s *startingServer) finish(ctx context.Context, err error) error {
	s.stopRetrying()
	s.stopServing()
	s.starting.Begin()
	a, startErr := s.started.wait()
	if startErr != nil {
		if ctx.Err() != nil {
			return err // stopped by a signal while starting
		}
		if err != nil && store.Transient(startErr) {
			// Serving failed (the address is taken, say) while the start
			// was still being tried again: that failure is the news.
			return err
		}
		return startErr
	}
	a.Close()
	return err
}

// healthy is /healthz while the services start: degraded until they
// have, and while the database is unavailable; then the services' own
// answer.
func (s *startingServer) healthy(ctx context.Context) bool {
	if s.starting.Wait(ctx) != nil {
		return false
	}
	a := s.app.Load()
	return a != nil && a.Healthy(ctx)
}

// metrics serves the services' /metrics once they have started; before,
// there is nothing to count yet.
func (s *startingServer) metrics() http.Handler {
	var h atomic.Pointer[http.Handler]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := h.Load(); p != nil {
			(*p).ServeHTTP(w, r)
			return
		}
		a := s.app.Load()
		if a == nil {
			http.Error(w, "the server's services have not started yet", http.StatusServiceUnavailable)
			return
		}
		m := a.Metrics.Handler()
		h.CompareAndSwap(nil, &m)
		m.ServeHTTP(w, r)
	})
}

// dbUnavailable is what a tool call answers while the services cannot
// start for a transient database error.
func dbUnavailable(err error) error {
	return apperr.Wrap(apperr.DBError, err, "the database is unavailable; the server keeps trying to start: %v", err)
}

// Waits between attempts to start the services while the database is
// unavailable: the first is short, for a connection dropped once; each
// later one twice the last, up to the longest.
const (
	firstStartRetry   = 100 * time.Millisecond
	longestStartRetry = 30 * time.Second
)

// startRetrying starts the services, and while that fails on a transient
// database error (store.Transient: the server cannot be reached, a
// connection dropped, SQLite's lock held by another process) it keeps the
// server serving, every tool call answered db_error, and tries again
// until the services start or retrying ends. unavailable hears of each
// failure that is tried again, and on which try.
func (c *cli) startRetrying(ctx, retrying context.Context, cfg *config.Config, opts app.Options, unavailable func(error, int), log *slog.Logger) (*app.App, error) {
	wait := firstStartRetry
	for try := 1; ; try++ {
		a, err := c.startBuilt(ctx, cfg, opts)
		if err == nil || !store.Transient(err) {
			return a, err
		}
		unavailable(err, try)
		log.Warn("database unavailable; tool calls answer db_error until it is back", "retry_in", wait, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-retrying.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		wait = min(2*wait, longestStartRetry)
	}
}

// startingApp is the services of a server that answers before they run.
type startingApp struct {
	start func() (*app.App, error)
	then  func(*app.App, error)
	done  chan struct{}
	a     *app.App
	err   error
}

func newStartingApp(start func() (*app.App, error), then func(*app.App, error)) *startingApp {
	return &startingApp{start: start, then: then, done: make(chan struct{})}
}

// begin starts the services in the background; call it once.
func (s *startingApp) begin() {
	go func() {
		defer close(s.done)
		s.a, s.err = s.start()
		s.then(s.a, s.err)
	}()
}

// wait returns the started services, once begin has run.
func (s *startingApp) wait() (*app.App, error) {
	<-s.done
	return s.a, s.err
}
