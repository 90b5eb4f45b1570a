package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/redact"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/version"
)

// cli carries the global flags and the process streams to every command.
type cli struct {
	configPath   string
	logLevel     string
	logFormat    string
	logFile      string
	logOut       io.Writer
	secrets      redact.Secrets
	sandbox      bool
	sandboxState string
	acceptNewDB  bool
	account      string
	stdout       io.Writer
	stderr       io.Writer
	stdin        io.Reader
	// loaded is the configuration prepareSandbox read just before the
	// command runs, handed to the command's first loadConfig so that a
	// --sandbox start decodes the file once.
	loaded *config.Config
	// secretsOf is the configuration whose credentials secrets holds
	// already: the command's logger, built on the configuration
	// prepareSandbox handed over, need not walk it again.
	secretsOf *config.Config
}

// usageError marks errors caused by how the command was called.
type usageError struct{ error }

// degradedError marks a check that found the installation working but
// impaired (`tuitbot doctor`): exit 3, so scripts can tell it from failure.
type degradedError struct{ error }

// exitCode maps an error to the documented exit status: 1 error, 2 usage,
// 3 degraded.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var de degradedError
	if errors.As(err, &de) {
		return 3
	}
	return 1
}

// newRoot builds the whole command tree.
func newRoot(stdout, stderr io.Writer, stdin io.Reader) *cobra.Command {
	return newRootFor(nil, stdout, stderr, stdin)
}

// newRootFor builds the tree args need: when args start with the name of
// one of the root's commands, the root has only that one (what it prints,
// accepts and refuses does not read its siblings); otherwise, for help,
// completion, a mistyped name or global flags first, every command.
// Building all of them was a twentieth of a spawned MCP server's work
// before its first answer.
func newRootFor(args []string, stdout, stderr io.Writer, stdin io.Reader) *cobra.Command {
	c := &cli{stdout: stdout, stderr: stderr, stdin: stdin}
	root := &cobra.Command{
		Use:   "tuitbot",
		Short: "Let AI agents work an X account safely",
		Long: "tuitbot is an MCP server and CLI that lets AI agents read X, draft posts and make changes.\n" +
			"Every change passes one gateway that enforces policy, routes risky actions to a human\n" +
			"approval queue, deduplicates retries and records an audit trail.\n\n" +
			"Try it without an X account:  tuitbot mcp serve --sandbox",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(stdin)
	root.PersistentFlags().StringVarP(&c.configPath, "config", "c", "", "config file (default $TUITBOT_HOME/config.toml or ~/.tuitbot/config.toml)")
	root.PersistentFlags().StringVar(&c.logLevel, "log-level", "", "log level: debug, info, warn, error (default from config, info)")
	root.PersistentFlags().StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	root.PersistentFlags().StringVar(&c.logFile, "log-file", "", "append logs to this file (created 0600) instead of stderr")
	root.PersistentFlags().BoolVar(&c.sandbox, "sandbox", false, "use the built-in X API emulator and a separate sandbox home instead of a real X account")
	root.PersistentFlags().StringVar(&c.sandboxState, "sandbox-state", "", "with --sandbox: the file that holds the emulator world (default world.json in the sandbox home)")
	root.PersistentFlags().BoolVar(&c.acceptNewDB, strings.TrimPrefix(store.AcceptNewDatabaseFlag, "--"), false,
		"use a new or different database although this home has history (tokens, database identity, home.id), and bind a database copied from another home to this one; this home's earlier posts, approvals and limits are then forgotten")
	root.PersistentFlags().StringVar(&c.account, "account", "", "the X account to act for: default or an [accounts.NAME] section (default: default_account, else default)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmds := c.commands()
	if len(args) > 0 {
		if build, ok := cmds.byName(args[0]); ok {
			cmds = rootCommands{{args[0], build}}
		}
	}
	for _, cmd := range cmds {
		root.AddCommand(cmd.build())
	}
	c.extend(root)
	c.prepareSandboxFirst(root)
	strictUsage(root)
	return root
}

// rootCommands are the root's commands, each by the name it is called
// by (TestRootCommandNames holds each name to its command's).
type rootCommands []struct {
	name  string
	build func() *cobra.Command
}

func (cs rootCommands) byName(name string) (func() *cobra.Command, bool) {
	for _, cmd := range cs {
		if cmd.name == name {
			return cmd.build, true
		}
	}
	return nil, false
}

func (c *cli) commands() rootCommands {
	return rootCommands{
		{"version", c.versionCmd},
		{"config", c.configCmd},
		{"doctor", c.doctorCmd},
		{"mcp", c.mcpCmd},
		{"docs", c.docsCmd},
		{"auth", c.authCmd},
		{"approve", c.approveCmd},
		{"audit", c.auditCmd},
		{"queue", c.queueCmd},
		{"export", c.exportCmd},
		{"recurring", c.recurringCmd},
		{"evergreen", c.evergreenCmd},
		{"xsim", c.xsimCmd},
		{"sandbox", c.sandboxCmd},
		{"run", c.runCmd},
		{"tick", c.tickCmd},
		{"status", c.statusCmd},
		{"analytics", c.analyticsCmd},
		{"web", c.webCmd},
		{"db", c.dbCmd},
		{"notify", c.notifyCmd},
		{"optouts", c.optoutsCmd},
	}
}

// loadConfig reads the configuration the global flags select.
func (c *cli) loadConfig() (*config.Config, error) {
	if cfg := c.loaded; cfg != nil {
		c.loaded = nil
		return cfg, nil
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: c.configPath})
	if err != nil {
		return nil, configError(err)
	}
	return cfg, nil
}

// configError gives a configuration that cannot be loaded or fails its
// checks the code docs/errors.md documents for it, config_error, unless
// it already has a code of its own.
func configError(err error) error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	// The message is the cause's whole text; the cause is not kept as
	// well, or the text would show twice.
	return &apperr.Error{Code: apperr.ConfigError, Message: err.Error()}
}

func (c *cli) logger(cfg *config.Config) (*slog.Logger, error) {
	level := c.logLevel
	if level == "" && cfg != nil {
		level = cfg.Logging.Level
	}
	var l slog.Level
	switch strings.ToLower(level) {
	case "", "info":
		l = slog.LevelInfo
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return nil, usageError{fmt.Errorf("--log-level %q: allowed values: debug, info, warn, error", level)}
	}
	w, err := c.logSink()
	if err != nil {
		return nil, err
	}
	h, err := c.logHandler(w, l, cfg)
	if err != nil {
		return nil, err
	}
	return slog.New(h), nil
}

func (c *cli) versionCmd() *cobra.Command {
	var asJSON *bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := version.Get()
			return c.answer(*asJSON, v, func(w io.Writer) { fmt.Fprintln(w, v.String()) })
		},
	}
	asJSON = jsonFlag(cmd, "version, commit, date, modified, go_version, platform")
	return cmd
}
