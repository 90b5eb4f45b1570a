package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
)

// build creates the services; with --sandbox it first moves everything
// into the sandbox home so nothing touches a real account's data.
func (c *cli) build(ctx context.Context, cfg *config.Config, opts app.Options) (*app.App, error) {
	if err := c.prepareBuild(cfg, &opts); err != nil {
		return nil, err
	}
	return c.startBuilt(ctx, cfg, opts)
}

// prepareBuild is the part of build that reads and adjusts only cfg and
// opts: after it, cfg says where everything lives and which accounts run.
func (c *cli) prepareBuild(cfg *config.Config, opts *app.Options) error {
	opts.AcceptNewDatabase = c.acceptNewDB
	if c.sandboxState != "" && !c.sandbox {
		return usageError{errors.New("--sandbox-state needs --sandbox")}
	}
	if c.sandbox {
		c.sandboxHome(cfg)
		opts.Sandbox = true
		if opts.SandboxAccess == nil {
			// The emulator models each account's app at its x_api.access.
			opts.SandboxAccess = app.ConfiguredAccess(cfg)
		}
	}
	// An unknown --account is a usage error before anything starts.
	if _, err := cfg.SelectAccount(c.account); err != nil && !c.sandbox {
		return usageError{err}
	}
	return nil
}

// startBuilt is the rest of build: it starts the services.
func (c *cli) startBuilt(ctx context.Context, cfg *config.Config, opts app.Options) (*app.App, error) {
	a, err := app.New(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	// Every command acts for one account: its services, its queue, its
	// audit trail. Closing it closes them all.
	v, err := a.ForAccount(c.account)
	if err != nil {
		a.Close()
		return nil, usageError{err}
	}
	return v, nil
}

// sandboxHome moves every file into the sandbox home, so nothing a sandbox
// run does touches a real account's data, applies --sandbox-state and adds
// the demo accounts and, when none are configured, the demo queue slots
// the sandbox runs.
func (c *cli) sandboxHome(cfg *config.Config) {
	cfg.Home = filepath.Join(cfg.Home, "sandbox")
	cfg.Storage.DBPath = ""
	if c.sandboxState != "" {
		cfg.Sandbox.StateFile = c.sandboxState
	}
	app.SandboxQueueSlots(cfg)
	app.SandboxAccounts(cfg)
}

// keepsSandbox marks a command that must not prepare the sandbox: it
// removes it (`sandbox reset`).
const keepsSandbox = "tuitbot/keeps-sandbox"

// prepareSandboxFirst makes every command prepare the sandbox world and its
// tokens before it runs when --sandbox is given, so whichever --sandbox
// command runs first on a fresh home works, also one that only reads what
// the sandbox wrote (`auth status --sandbox`). It runs after cobra's own
// checks (flags, arguments, required flags), so a command line cobra
// refuses prepares nothing. Command groups that only show their help are
// given their RunE later (strictUsage) and prepare nothing either.
func (c *cli) prepareSandboxFirst(root *cobra.Command) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if run := cmd.RunE; run != nil && cmd.Annotations[keepsSandbox] == "" {
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				if err := c.prepareSandbox(cmd.Context()); err != nil {
					return err
				}
				return run(cmd, args)
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// prepareSandbox writes the sandbox world and the demo accounts' tokens
// when --sandbox is given and they are missing. A configuration or flag the
// command cannot use is left for the command itself to report.
func (c *cli) prepareSandbox(ctx context.Context) error {
	if !c.sandbox {
		return nil
	}
	cfg, err := c.loadConfig()
	if err != nil {
		return nil
	}
	// The command reads the same file next: it gets this reading, before
	// sandboxHome changes it, and the logger built on it.
	c.loaded = cfg.Clone()
	log, err := c.logger(c.loaded)
	if err != nil {
		return nil
	}
	c.sandboxHome(cfg)
	return app.PrepareSandbox(ctx, cfg, log, c.acceptNewDB)
}

func (c *cli) sandboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Manage the sandbox (the emulator world that --sandbox commands share)",
		Long: "Every --sandbox command works in the sandbox home (~/.tuitbot/sandbox) against one emulator\n" +
			"world, kept in world.json there (or the --sandbox-state file) and saved after every change.",
	}
	var asJSON *bool
	reset := &cobra.Command{
		Use:   "reset",
		Short: "Start the sandbox over: a new demo world, an empty queue and audit trail",
		Long: "Delete what the sandbox remembers: the emulator world, the sandbox database (approval queue,\n" +
			"audit trail, limits) and the emulator's login. The next --sandbox command starts a new demo\n" +
			"world. The MCP bearer token (mcp_token) and the media folder are kept.\n\n" +
			"Reset refuses while any --sandbox command or server runs, naming their process ids: they\n" +
			"would keep writing to the files it removes (a server would even save its old world again).\n" +
			"Stop them, then run reset again. With --sandbox-state FILE it resets that world file.",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{keepsSandbox: "yes"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig()
			if err != nil {
				return err
			}
			c.sandboxHome(cfg)
			removed, err := app.ResetSandbox(cmd.Context(), cfg)
			if *asJSON {
				// A failure answers with the error document alone.
				if err != nil {
					return err
				}
				return writeJSON(c.stdout, SandboxReset{Removed: append([]string{}, removed...)})
			}
			for _, p := range removed {
				fmt.Fprintf(c.stdout, "removed %s\n", p)
			}
			if err != nil {
				return err
			}
			if len(removed) == 0 {
				fmt.Fprintln(c.stdout, "the sandbox is already empty")
				return nil
			}
			fmt.Fprintln(c.stdout, "the next --sandbox command starts a new demo world")
			return nil
		},
	}
	asJSON = jsonFlag(reset, "removed (the files and folders it deleted)")
	cmd.AddCommand(reset)
	return cmd
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
