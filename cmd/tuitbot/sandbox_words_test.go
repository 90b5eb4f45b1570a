package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
)

// TestSandboxSaysWhereXIs: with --sandbox, `config show` and `status`
// name the sandbox emulator rather than api.x.com, and status calls the
// spend simulated.
func TestSandboxSaysWhereXIs(t *testing.T) {
	h := newHome(t)
	// The shipped X addresses, as a newcomer's home has them.
	var env []string
	for _, e := range h.env {
		if !strings.HasPrefix(e, "TUITBOT_X_API__") || strings.Contains(e, "TIMEOUT") || strings.Contains(e, "ATTEMPTS") {
			env = append(env, e)
		}
	}
	h.env = env
	st := h.ok(t, "--sandbox", "status")
	mustContain(t, "status --sandbox", st.stdout, "simulated X spend today", "sandbox emulator at http://127.0.0.1:")
	if strings.Contains(st.stdout, "\nX spend today") {
		t.Errorf("status --sandbox shows X spend as real:\n%s", st.stdout)
	}
	show := h.ok(t, "--sandbox", "config", "show")
	mustContain(t, "config show --sandbox", show.stdout, `api_base_url = "sandbox emulator`)
	if strings.Contains(show.stdout, "https://api.x.com") || strings.Contains(show.stdout, "https://upload.x.com") {
		t.Errorf("config show --sandbox lists x.com addresses:\n%s", show.stdout)
	}
	if plain := h.ok(t, "config", "show"); !strings.Contains(plain.stdout, `api_base_url = "https://api.x.com"`) {
		t.Errorf("config show without --sandbox does not list api.x.com:\n%s", plain.stdout)
	}
}

// TestReviewPageSettingsNameTheEmulator: the review page of a sandbox is
// handed the settings with the emulator's address where X's would be,
// and that address to say so on every page.
func TestReviewPageSettingsNameTheEmulator(t *testing.T) {
	cfg := config.Default()
	cfg.Home = filepath.Join(t.TempDir(), "sandbox")
	a, err := app.New(context.Background(), &cfg, app.Options{Sandbox: true, RequireDB: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	d, err := webDeps(a)
	if err != nil {
		t.Fatal(err)
	}
	if d.SandboxURL != a.Sim.URL || !strings.Contains(d.Settings, "sandbox emulator at "+a.Sim.URL) || strings.Contains(d.Settings, "https://api.x.com") {
		t.Errorf("the sandbox's settings do not name its emulator (%q):\n%s", d.SandboxURL, d.Settings)
	}
}
