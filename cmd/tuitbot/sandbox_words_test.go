package main

import (
	"context"
	"encoding/json"
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

// TestSandboxStatusJSON: `status --json` says whether X is the sandbox
// emulator, and where it listens, so a script can tell simulated spend
// from real.
func TestSandboxStatusJSON(t *testing.T) {
	h := newHome(t)
	for _, c := range []struct {
		name    string
		args    []string
		sandbox bool
	}{
		{"sandbox", []string{"--sandbox", "status", "--json"}, true},
		{"real X", []string{"status", "--json"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var st struct {
				Sandbox    *bool    `json:"sandbox"`
				Emulator   *string  `json:"sandbox_emulator_url"`
				SpendToday *float64 `json:"x_spend_today_usd"`
			}
			out := h.ok(t, c.args...).stdout
			if err := json.Unmarshal([]byte(out), &st); err != nil {
				t.Fatalf("status --json: %v\n%s", err, out)
			}
			if st.Sandbox == nil || *st.Sandbox != c.sandbox || st.SpendToday == nil {
				t.Fatalf("status --json has sandbox %v, spend %v; want sandbox %v and the spend:\n%s", st.Sandbox, st.SpendToday, c.sandbox, out)
			}
			switch {
			case c.sandbox && (st.Emulator == nil || !strings.HasPrefix(*st.Emulator, "http://127.0.0.1:")):
				t.Errorf("status --json --sandbox does not say where the emulator listens:\n%s", out)
			case !c.sandbox && st.Emulator != nil:
				t.Errorf("status --json names an emulator without --sandbox:\n%s", out)
			}
		})
	}
}

// TestConfigShowNamesTheRunningEmulator: while a sandbox process runs the
// emulator, `config show --sandbox` gives its address where X's would be.
func TestConfigShowNamesTheRunningEmulator(t *testing.T) {
	h := newHome(t)
	cfg := config.Default()
	cfg.Home = filepath.Join(h.dir, "sandbox")
	a, err := app.New(context.Background(), &cfg, app.Options{Sandbox: true, RequireDB: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	show := h.ok(t, "--sandbox", "config", "show")
	for _, key := range []string{"api_base_url", "upload_base_url", "token_url"} {
		mustContain(t, "config show --sandbox", show.stdout, key+` = "sandbox emulator at `+a.Sim.URL+`"`)
	}
}
