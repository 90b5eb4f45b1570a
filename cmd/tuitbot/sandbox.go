package main

import (
	"context"
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
	if c.sandbox {
		cfg.Home = filepath.Join(cfg.Home, "sandbox")
		cfg.Storage.DBPath = ""
		if c.sandboxState != "" {
			cfg.Sandbox.StateFile = c.sandboxState
		}
		opts.Sandbox = true
	}
	return app.New(ctx, cfg, opts)
}
