package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
)

// TestBlockedToolsWorkOnTheirOwn: blocking a tool the default
// require_approval_for names is valid; only a list the user wrote
// conflicts.
func TestBlockedToolsWorkOnTheirOwn(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		wantErr string
	}{
		{"blocked beside the default list", "[mcp_policy]\nblocked_tools = [\"x_post_tweet\"]\n", ""},
		{"blocked beside an explicit list", "[mcp_policy]\nblocked_tools = [\"x_post_tweet\"]\nrequire_approval_for = [\"post_tweet\"]\n",
			`tool "x_post_tweet" is in both blocked_tools and require_approval_for`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string {
				if k == "TUITBOT_HOME" {
					return home
				}
				return ""
			}
			cfg, _, err := config.Load(config.LoadOptions{Getenv: getenv, Environ: func() []string { return nil }})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			err = app.ValidateAll(cfg)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ValidateAll: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("ValidateAll = %v, want an error containing %q", err, tt.wantErr)
			}
			if tt.wantErr != "" {
				return
			}
			eng, err := app.NewPolicyEngine(cfg)
			if err != nil {
				t.Fatalf("NewPolicyEngine: %v", err)
			}
			for _, r := range eng.Rules() {
				if r.ID == "compat:approval:x_post_tweet" {
					t.Error("the blocked tool is still in the approval list")
				}
			}
		})
	}
}
