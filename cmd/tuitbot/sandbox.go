package main

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
)

func (c *cli) addSandboxFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.sandboxState, "sandbox-state", "", "with --sandbox: keep the emulator world in this file between runs")
}

// build creates the services; with --sandbox it first moves everything
// into the sandbox home so nothing touches a real account's data.
func (c *cli) build(ctx context.Context, cfg *config.Config, opts app.Options) (*app.App, error) {
	opts.AcceptNewDatabase = c.acceptNewDB
	if c.sandbox {
		c.sandboxHome(cfg)
		if c.sandboxState != "" {
			cfg.Sandbox.StateFile = c.sandboxState
		}
		opts.Sandbox = true
	}
	return app.New(ctx, cfg, opts)
}

// sandboxHome moves every file into the sandbox home, so nothing a sandbox
// run does touches a real account's data.
func (c *cli) sandboxHome(cfg *config.Config) {
	cfg.Home = filepath.Join(cfg.Home, "sandbox")
	cfg.Storage.DBPath = ""
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
