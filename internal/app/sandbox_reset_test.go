package app_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestSandboxResetForgetsTheWorldLog: a reset removes the world's change
// log with the world file, wherever the state file is: a log left beside
// a world file named elsewhere would hold the old world's changes.
func TestSandboxResetForgetsTheWorldLog(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state func(home string) string
	}{
		{"in the sandbox home", func(string) string { return "" }},
		{"named elsewhere", func(string) string { return filepath.Join(t.TempDir(), "shared-world.json") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			cfg := testConfig(t, home)
			cfg.Sandbox.StateFile = tc.state(home)
			state, err := app.SandboxStateFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := xsim.SaveWorld(state, xsim.DemoWorld(1)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(xsim.WorldLogPath(state), []byte("a log\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			removed, err := app.ResetSandbox(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{state, xsim.WorldLogPath(state)} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s survived the reset: %v", p, err)
				}
				if !slices.Contains(removed, p) {
					t.Errorf("the reset does not report removing %s: %v", p, removed)
				}
			}
		})
	}
}
