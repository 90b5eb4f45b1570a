package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/xauth"
)

// TestSandboxStartKeepsWorkingLogins: a sandbox start mints a login only
// for an account whose token file does not hold one that still works, so
// a home started over and over (one MCP session after another) keeps its
// token files, its world does not grow by a grant pair per account at
// every start, and a start with nothing to mint writes no world at all;
// a login that no longer works is replaced.
func TestSandboxStartKeepsWorkingLogins(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	world := func() []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(home, "world.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// start runs a sandbox process; running sees it before it closes.
	start := func(running func()) {
		t.Helper()
		a, err := app.New(ctx, testConfig(t, home), app.Options{Sandbox: true, RequireDB: true, SkipX: true})
		if err != nil {
			t.Fatalf("app.New: %v", err)
		}
		running()
		if err := a.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	start(func() {})
	cfg := testConfig(t, home)
	app.SandboxAccounts(cfg)
	files := cfg.TokenFiles()
	if len(files) < 3 {
		t.Fatalf("token files %v: want one per demo account", files)
	}
	read := func() (map[string][]byte, int) {
		t.Helper()
		out := map[string][]byte{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = b
		}
		return out, grants(t, home)
	}
	tokens, n := read()

	closed := world()
	start(func() {
		if !bytes.Equal(world(), closed) {
			t.Error("a start with every login working rewrote the world")
		}
	})
	again, m := read()
	for _, f := range files {
		if !bytes.Equal(again[f], tokens[f]) {
			t.Errorf("a second start rewrote %s, whose login still worked", filepath.Base(f))
		}
	}
	if m != n {
		t.Errorf("a second start grew the world from %d to %d grants", n, m)
	}

	// A login the world no longer knows is replaced, for that account only.
	tok, err := xauth.LoadToken(files[0])
	if err != nil {
		t.Fatal(err)
	}
	tok.RefreshToken = "forgotten"
	if err := xauth.SaveToken(ctx, files[0], tok); err != nil {
		t.Fatal(err)
	}
	start(func() {})
	after, _ := read()
	if got, err := xauth.LoadToken(files[0]); err != nil || got.RefreshToken == "forgotten" {
		t.Errorf("a login the world does not know was kept: %v", err)
	}
	for _, f := range files[1:] {
		if !bytes.Equal(after[f], tokens[f]) {
			t.Errorf("replacing one account's login rewrote %s too", filepath.Base(f))
		}
	}
}

// grants counts the OAuth grants of the sandbox world in home.
func grants(t *testing.T, home string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "world.json"))
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Grants []json.RawMessage `json:"grants"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return len(w.Grants)
}
