package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/store"
)

// metricsFlags are `mcp serve`'s observability flags.
type metricsFlags struct {
	listen string // --metrics-listen, stdio only
	public bool   // --metrics-public
}

// serveStdioWhileStarting runs the stdio transport before the services
// have started: initialize and tools/list, which need none of them, are
// answered at once, and every other request waits for them (see
// mcpserver.Starting). They start once tools/list is answered, or a
// request needs them, or startServicesAfter has passed. When they cannot
// start the server ends with the reason, as it did before answering
// anything; no tool has run then.
func (c *cli) serveStdioWhileStarting(ctx context.Context, cfg *config.Config, opts app.Options, mo mcpserver.Options, log *slog.Logger, mf metricsFlags, tokenFile string) error {
	if mf.listen == "" && mf.public {
		return usageError{errors.New("--metrics-public needs --metrics-listen (or --transport http)")}
	}
	if err := c.prepareBuild(cfg, &opts); err != nil {
		return err
	}
	if _, err := cfg.SelectAccount(c.account); err != nil {
		return usageError{err}
	}
	// The first answers leave a few megabytes of short-lived garbage
	// (the SDK decodes each tool's schema on registration); collecting it
	// before they are sent would only delay them. The collector is back to
	// its setting once the services start.
	gc := debug.SetGCPercent(firstAnswersGCPercent)
	serving, stopServing := context.WithCancel(ctx)
	defer stopServing()
	var starting *mcpserver.Starting
	// retrying ends the waits between start attempts once the server has
	// stopped serving.
	retrying, stopRetrying := context.WithCancel(ctx)
	defer stopRetrying()
	started := newStartingApp(func() (*app.App, error) {
		debug.SetGCPercent(gc)
		a, err := c.startRetrying(ctx, retrying, cfg, opts, starting, log)
		if err != nil {
			return nil, err
		}
		// Notifications go out from the server's own process; nothing
		// is sent from inside a tool call.
		if err := a.StartNotifications(ctx); err != nil {
			a.Close()
			return nil, err
		}
		return a, nil
	}, func(a *app.App, err error) {
		if err != nil {
			starting.Fail(err)
			stopServing()
			return
		}
		starting.Ready(a.MCPDeps())
		// Starting leaves megabytes of garbage (the configuration, the
		// emulator's world, the schema checks); hand its pages back now
		// rather than whenever the scavenger gets to them.
		debug.FreeOSMemory()
	})
	// Everything that reads cfg is done before the services start: New
	// adjusts it (the sandbox points OAuth at its emulator).
	srv, selected, starting, err := app.StartingMCPServer(cfg, c.account, log, mo, started.begin)
	if err != nil {
		return err
	}
	log.Info("mcp server starting", "profile", mo.Profile, "tools", len(selected), "transport", "stdio", "mode", cfg.Mode, "sandbox", c.sandbox)
	if stdinIsTerminal(c.stdin) {
		fmt.Fprintln(c.stderr, stdioTerminalHint(c.sandbox))
	}
	stdio := mcpserver.StdioOptions{MaxMessageBytes: cfg.MCP.MaxMessageBytes}
	var tok string
	path := tokenFile
	if mf.listen != "" && !mf.public {
		create := false
		if path == "" {
			path, create = filepath.Join(cfg.Home, "mcp_token"), true
		}
		if tok, err = mcpserver.LoadOrCreateToken(path, create); err != nil {
			return err
		}
		c.secrets.Add(tok)
	}
	anyway := time.AfterFunc(startServicesAfter, starting.Begin)
	defer anyway.Stop()
	err = c.serveStdio(serving, srv, stdio, started, log, mf, tok, path)
	stopRetrying()
	// A client that leaves before the services have started still learns
	// whether they could (a database refused, say), and one that leaves
	// while they start does not cut their start short: a half-run
	// migration or emulator start helps no one.
	starting.Begin()
	a, startErr := started.wait()
	if startErr != nil {
		if ctx.Err() != nil {
			return err // stopped by a signal while starting
		}
		return startErr
	}
	defer a.Close()
	return err
}

// Waits between attempts to start the services while the database cannot
// be reached: the first is short, for a connection dropped once; each
// later one twice the last, up to the longest.
const (
	firstStartRetry   = 100 * time.Millisecond
	longestStartRetry = 30 * time.Second
)

// startRetrying starts the services, and while that fails on a transient
// database error (store.Transient: the server cannot be reached) it keeps
// the server serving, every tool call answered db_error, and tries again
// until the services start or retrying ends.
func (c *cli) startRetrying(ctx, retrying context.Context, cfg *config.Config, opts app.Options, starting *mcpserver.Starting, log *slog.Logger) (*app.App, error) {
	wait := firstStartRetry
	for try := 1; ; try++ {
		a, err := c.startBuilt(ctx, cfg, opts)
		if err == nil && try > 1 {
			log.Info("database reachable again; the services have started", "tries", try)
		}
		if err == nil || !store.Transient(err) {
			return a, err
		}
		starting.Unavailable(apperr.Wrap(apperr.DBError, err, "the database cannot be reached; the server keeps trying to start: %v", err))
		log.Warn("database unreachable; tool calls answer db_error until it is back", "retry_in", wait, "error", err)
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

// firstAnswersGCPercent lets the heap grow to a few times its start-up
// size before the first collection, until the services start.
const firstAnswersGCPercent = 400

// startServicesAfter is when a server whose client has neither listed its
// tools nor called one starts its services anyway: the notification
// dispatcher runs in them.
const startServicesAfter = 200 * time.Millisecond

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

// serveStdio runs the stdio transport and, with --metrics-listen, a
// loopback listener for /metrics and /healthz beside it, from when the
// services are up. The listener lives exactly as long as the stdio
// session.
func (c *cli) serveStdio(ctx context.Context, srv *mcp.Server, stdio mcpserver.StdioOptions, started *startingApp, log *slog.Logger, mf metricsFlags, tok, tokenFile string) error {
	if mf.listen == "" {
		return mcpserver.ServeStdio(ctx, srv, stdio)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		a, err := started.wait()
		if err != nil {
			errc <- nil // the start's error is the one reported
			return
		}
		errc <- mcpserver.ServeMetrics(ctx, mcpserver.MetricsOptions{
			Listen: mf.listen, Handler: a.Metrics.Handler(), Token: tok, TokenFile: tokenFile, Public: mf.public,
			Healthy: a.Healthy, Logger: log,
			Ready: func(addr string) { log.Info("metrics listening", "url", "http://"+addr+mcpserver.MetricsPath) },
		})
	}()
	err := mcpserver.ServeStdio(ctx, srv, stdio)
	cancel()
	if merr := <-errc; merr != nil && err == nil {
		err = merr
	}
	return err
}
