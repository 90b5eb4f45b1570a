package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/web"
)

func (c *cli) mcpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Run the MCP server or print its manifest",
	}
	var (
		profile, transport, listen, tokenFile string
		tools, exclude, toolsets              []string
		mf                                    metricsFlags
		withWeb, dynamic                      bool
	)
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Run the MCP server (stdio by default; --transport http for Streamable HTTP)",
		Long: "Run the MCP server. Only the transport writes to stdout; logs go to stderr.\n" +
			"With --transport http the server requires a bearer token from ~/.tuitbot/mcp_token\n" +
			"(~/.tuitbot/sandbox/mcp_token with --sandbox; created 0600 on first use) or --token-file,\n" +
			"and rejects foreign Origins. Clients send it as the header `Authorization: Bearer TOKEN`.\n" +
			"Connections, sessions and message size are capped by the [mcp] keys\n" +
			"http_max_connections, max_sessions, session_idle_timeout_seconds and\n" +
			"max_message_bytes (the last on stdio too); see `tuitbot config show`.\n\n" +
			"--toolsets, --tools and --exclude-tools choose what is listed inside the profile (the profile\n" +
			"stays the permission boundary); --toolsets default is the small selection `mcp install` writes.\n" +
			"Without a selection the whole profile is listed. Over HTTP a client may narrow its own session\n" +
			"with the headers X-MCP-Toolsets, X-MCP-Tools and X-MCP-Exclude-Tools (comma-separated).\n" +
			"With dynamic toolsets a session starts at the selection (default when none) plus list_toolsets,\n" +
			"find_tools and enable_toolset, and enables toolsets on demand; mcp.dynamic_toolsets = auto (the\n" +
			"default) turns it on for clients that subscribe to notifications/tools/list_changed.\n\n" +
			"With --web (HTTP transport only) the review page of `tuitbot web` is served under /ui on the\n" +
			"same port, with its own login: the first line on stdout is a one-time login URL.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := c.loadConfig()
			if err != nil {
				return err
			}
			log, err := c.logger(cfg)
			if err != nil {
				return err
			}
			log = slog.New(stopIsNotAnError{log.Handler()})
			if profile == "" {
				profile = cfg.MCP.Profile
			}
			p, err := mcpserver.ParseProfile(profile)
			if err != nil {
				return usageError{err}
			}
			// Each list is checked before they are merged, so the message
			// names where a wrong name came from: a flag is a usage error, a
			// key of the configuration an error in it.
			if err := mcpserver.CheckToolsets("--toolsets", toolsets); err != nil {
				return usageError{err}
			}
			if err := mcpserver.CheckToolsets("mcp.toolsets", cfg.MCP.Toolsets); err != nil {
				return err
			}
			// The registry's rows are built once, for these checks and the
			// server: building them is a tenth of a spawned server's work
			// before its first answer.
			reg := mcpserver.Registry()
			if err := knownTools(reg, "--tools", tools); err != nil {
				return usageError{err}
			}
			if err := knownTools(reg, "--exclude-tools", exclude); err != nil {
				return usageError{err}
			}
			if err := knownTools(reg, "mcp.tools", cfg.MCP.Tools); err != nil {
				return err
			}
			if err := knownTools(reg, "mcp.exclude_tools", cfg.MCP.ExcludeTools); err != nil {
				return err
			}
			switch transport {
			case "stdio":
			case "http":
				if _, err := listenHost(listen); err != nil {
					return err
				}
			default:
				return usageError{fmt.Errorf("--transport %q: allowed values: stdio, http", transport)}
			}
			if len(tools) == 0 && len(toolsets) == 0 {
				tools, toolsets = cfg.MCP.Tools, cfg.MCP.Toolsets
			}
			dyn, err := mcpserver.ParseDynamic(cfg.MCP.DynamicToolsets)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("dynamic-toolsets") {
				dyn = mcpserver.DynamicOff
				if dynamic {
					dyn = mcpserver.DynamicOn
				}
			}
			exclude = append(exclude, cfg.MCP.ExcludeTools...)
			if err := checkToolSelection(reg, p, tools, exclude); err != nil {
				return usageError{err}
			}
			if err := checkToolsets(reg, p, toolsets, tools, exclude); err != nil {
				return usageError{err}
			}
			// A server that can mutate never runs without its database: it
			// exits with the reason instead of answering db_error forever,
			// unless the database is only unavailable for now (see
			// startingServer): then it answers db_error until it is back.
			if withWeb && transport != "http" {
				return usageError{errors.New("--web serves the review page beside the HTTP transport: add --transport http")}
			}
			needDB := p.Mutating() || c.sandbox || withWeb
			appOpts := app.Options{Logger: log, SkipDB: !needDB, RequireDB: needDB}
			mopts := mcpserver.Options{Registry: reg, Profile: p, Toolsets: toolsets, Tools: tools, ExcludeTools: exclude, Dynamic: dyn}
			if transport == "stdio" {
				return c.serveStdioWhileStarting(ctx, cfg, appOpts, mopts, log, mf, tokenFile)
			}
			return c.serveHTTPWhileStarting(ctx, cfg, appOpts, mopts, log, mf, tokenFile, listen, withWeb)
		},
	}
	serve.Flags().BoolVar(&withWeb, "web", false, "with --transport http: serve the review page of 'tuitbot web' under /ui on the same port")
	serve.Flags().StringVar(&profile, "profile", "", "tool profile: workflow (alias full), readonly, api-readonly (default from config: workflow)")
	serve.Flags().StringVar(&transport, "transport", "stdio", "stdio or http")
	serve.Flags().StringVar(&listen, "listen", "127.0.0.1:8765", "host:port for --transport http (loopback unless you say otherwise)")
	serve.Flags().StringVar(&tokenFile, "token-file", "", "file holding the HTTP bearer token (default ~/.tuitbot/mcp_token; ~/.tuitbot/sandbox/mcp_token with --sandbox)")
	serve.Flags().StringSliceVar(&toolsets, "toolsets", nil, "only list these toolsets (comma-separated): default, all, or "+strings.Join(mcpserver.ToolsetNames()[:len(mcpserver.ToolsetNames())-2], ", "))
	serve.Flags().BoolVar(&dynamic, "dynamic-toolsets", false, "start every session at the selection plus list_toolsets, find_tools and enable_toolset (default from config: auto, on for clients that subscribe to tools/list_changed)")
	serve.Flags().StringSliceVar(&tools, "tools", nil, "only register these tools (comma-separated)")
	serve.Flags().StringSliceVar(&exclude, "exclude-tools", nil, "never register these tools; exclusions win")
	serve.Flags().StringVar(&mf.listen, "metrics-listen", "", "with stdio: serve Prometheus /metrics and /healthz on this loopback host:port")
	serve.Flags().BoolVar(&mf.public, "metrics-public", false, "serve /metrics without the bearer token (loopback addresses only)")

	var mprofile string
	manifest := &cobra.Command{
		Use:   "manifest",
		Short: "Print the JSON tool manifest of a profile",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := mcpserver.ParseProfile(mprofile)
			if err != nil {
				return usageError{err}
			}
			m, err := mcpserver.BuildManifest(mcpserver.Options{Profile: p, Version: app.Version})
			if err != nil {
				return err
			}
			b, err := json.MarshalIndent(m, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintln(c.stdout, string(b))
			return nil
		},
	}
	manifest.Flags().StringVar(&mprofile, "profile", "workflow", "profile: workflow (alias full), readonly, api-readonly")
	// The manifest is JSON either way; --json says so for scripts that
	// pass it to every command.
	manifest.Flags().Bool("json", true, "print JSON (always on)")
	cmd.AddCommand(serve, manifest)
	return cmd
}

// webPrefix is where `mcp serve --transport http --web` serves the review
// page.
const webPrefix = "/ui"

// mcpWeb builds the review page served beside the MCP endpoint.
func (c *cli) mcpWeb(ctx context.Context, a *app.App) (*web.Server, error) {
	d, err := webDeps(a)
	if err != nil {
		return nil, err
	}
	if err := c.seedDemo(ctx, a, d); err != nil {
		return nil, err
	}
	return web.New(d, web.Options{Prefix: webPrefix})
}

// httpToken loads the HTTP transport's bearer token (creating the default
// file on first use) and refuses --metrics-listen, which is for stdio.
func (c *cli) httpToken(cfg *config.Config, tokenFile string, mf metricsFlags) (tok, path string, err error) {
	path = tokenFile
	create := false
	if path == "" {
		path = filepath.Join(cfg.Home, "mcp_token")
		create = true
	}
	if tok, err = mcpserver.LoadOrCreateToken(path, create); err != nil {
		return "", "", err
	}
	c.secrets.Add(tok)
	if mf.listen != "" {
		return "", "", usageError{errors.New("--metrics-listen is for stdio; the HTTP transport serves /metrics on --listen")}
	}
	return tok, path, nil
}

// httpOptions are the HTTP transport's options from the configuration and
// flags; the caller adds health, metrics, the ready hook and mounts.
func httpOptions(cfg *config.Config, listen, tok, path string, log *slog.Logger, mf metricsFlags) mcpserver.HTTPOptions {
	return mcpserver.HTTPOptions{
		Listen: listen, Token: tok, TokenFile: path, Logger: log,
		MaxConnections:     cfg.MCP.HTTPMaxConnections,
		MaxSessions:        cfg.MCP.MaxSessions,
		SessionIdleTimeout: time.Duration(cfg.MCP.SessionIdleTimeoutSeconds) * time.Second,
		MaxMessageBytes:    cfg.MCP.MaxMessageBytes,
		MetricsPublic:      mf.public,
	}
}
