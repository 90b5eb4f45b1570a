package main

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

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

// serveStdio runs the stdio transport and, with --metrics-listen, a
// loopback listener for /metrics and /healthz beside it. The listener lives
// exactly as long as the stdio session.
func (c *cli) serveStdio(ctx context.Context, cfg *config.Config, a *app.App, srv *mcp.Server, log *slog.Logger, mf metricsFlags, tokenFile string) error {
	stdio := mcpserver.StdioOptions{MaxMessageBytes: cfg.MCP.MaxMessageBytes}
	if mf.listen == "" {
		if mf.public {
			return usageError{errors.New("--metrics-public needs --metrics-listen (or --transport http)")}
		}
		return mcpserver.ServeStdio(ctx, srv, stdio)
	}
	var tok string
	path := tokenFile
	if !mf.public {
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- mcpserver.ServeMetrics(ctx, mcpserver.MetricsOptions{
			Listen: mf.listen, Handler: a.Metrics.Handler(), Token: tok, TokenFile: path, Public: mf.public,
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
