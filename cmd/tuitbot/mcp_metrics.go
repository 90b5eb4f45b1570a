package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// metricsFlags are `mcp serve`'s observability flags.
type metricsFlags struct {
	listen string // --metrics-listen, stdio only
	public bool   // --metrics-public
}

// serveStdioWhileStarting runs the stdio transport before the services
// have started: initialize and tools/list, which need none of them, are
// answered at once, and every other request waits for them (see
// mcpserver.Starting). They start once the answer to tools/list has been
// written, or a request needs them, or startServicesAfter has passed.
// While the database is unavailable the server answers db_error and tries
// again (see startingServer); when the services cannot start the server
// ends with the reason, as it did before answering anything; no tool has
// run then.
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
	var tok string
	path := tokenFile
	if mf.listen != "" && !mf.public {
		create := false
		if path == "" {
			path, create = filepath.Join(cfg.Home, "mcp_token"), true
		}
		var err error
		if tok, err = mcpserver.LoadOrCreateToken(path, create); err != nil {
			return err
		}
		c.secrets.Add(tok)
	}
	// The start leaves short-lived garbage (the configuration's decoding,
	// the server's tables, the services' start); collecting it before the
	// first call is answered would only delay that answer. Once it is
	// written, the collector runs at the session's setting.
	gc := sessionGCPercent(os.Getenv, debug.SetGCPercent(firstAnswersGCPercent))
	s, err := c.newStartingServer(ctx, cfg, opts, mo, log, nil, func() { debug.SetGCPercent(gc) })
	if err != nil {
		return err
	}
	log.Info("mcp server starting", "profile", mo.Profile, "tools", len(s.selected), "transport", "stdio", "mode", cfg.Mode, "sandbox", c.sandbox)
	if stdinIsTerminal(c.stdin) {
		fmt.Fprintln(c.stderr, stdioTerminalHint(c.sandbox))
	}
	stdio := mcpserver.StdioOptions{MaxMessageBytes: cfg.MCP.MaxMessageBytes, Written: s.starting.Written()}
	anyway := time.AfterFunc(startServicesAfter, s.starting.Begin)
	defer anyway.Stop()
	err = c.serveStdio(s.serving, s.srv, stdio, s.started, log, mf, tok, path)
	return s.finish(ctx, err)
}

// firstAnswersGCPercent lets the heap grow to a few times its start-up
// size before the first collection, until the first call that waited for
// the services is answered.
const firstAnswersGCPercent = 400

// stdioSessionGCPercent is the collector's setting for a stdio session
// once the call that waited for its services is answered. A session's live heap is small (under
// 2 MB), so at Go's default of 100 the heap grows to the runtime's 4 MB
// floor before each collection, and the pages it touched on the way stay
// resident: more than half of a session's private memory (SQLite's pages,
// schema and statements are under a fifth of it). At 70 the floor is
// 2.8 MB and a session's private memory a megabyte smaller, for a
// collection about twice as often: 7 to 25 % more CPU per call, the
// latency of a call much the same (see BenchmarkGoalRssAnonSession and
// BenchmarkGoalToolCall). GOGC=100 gives the default back.
const stdioSessionGCPercent = 70

// sessionGCPercent is the collector setting a stdio session runs with:
// stdioSessionGCPercent, unless the environment has chosen how the
// collector runs (GOGC, or a memory limit through GOMEMLIMIT): then it is
// inherited, the setting the collector had before the first answers. An
// empty variable chooses nothing, as the runtime reads it.
func sessionGCPercent(getenv func(string) string, inherited int) int {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return inherited
	}
	return stdioSessionGCPercent
}

// startServicesAfter is when a server whose client has neither listed its
// tools nor called one starts its services anyway: the notification
// dispatcher runs in them.
const startServicesAfter = 200 * time.Millisecond

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
