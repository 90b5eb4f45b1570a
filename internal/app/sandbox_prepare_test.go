package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestPrepareSandbox: on a fresh sandbox home PrepareSandbox writes the
// world and every demo account's token after the database and its
// identity, so the next sandbox process opens that database instead of
// refusing it as a replacement; a prepared home is left as it is.
func TestPrepareSandbox(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	cfg := testConfig(t, home)
	if err := app.PrepareSandbox(ctx, cfg, nil, false); err != nil {
		t.Fatal(err)
	}
	files := []string{"world.json", "tokens.json", "tokens/brand_b.json", "tokens/brand_c.json", filepath.Base(store.IdentityPath(cfg.DBFile()))}
	before := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(home, f))
		if err != nil {
			t.Fatalf("not prepared: %v", err)
		}
		before[f] = b
	}
	if err := app.PrepareSandbox(ctx, testConfig(t, home), nil, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if b, _ := os.ReadFile(filepath.Join(home, f)); !bytes.Equal(b, before[f]) {
			t.Errorf("preparing a prepared sandbox rewrote %s", f)
		}
	}
	// The tokens are history now; the database written before them is the
	// one this home knows.
	newApp(t, testConfig(t, home), app.Options{Sandbox: true, RequireDB: true})
}

// TestRestartedSandboxKeepsItsWorldAndTokens: a sandbox that starts on a
// saved world and changes nothing leaves the world and the token files as
// they were, so starting it neither rewrites the world nor makes it grow
// by a token per account each time; a token with less than half its
// lifetime left is replaced.
func TestRestartedSandboxKeepsItsWorldAndTokens(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	start := func() {
		t.Helper()
		a, err := app.New(context.Background(), testConfig(t, home), app.Options{Sandbox: true, RequireDB: true, SkipX: true, Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	read := func() map[string][]byte {
		t.Helper()
		files := map[string][]byte{}
		for _, f := range []string{"world.json", "tokens.json", "tokens/brand_b.json"} {
			b, err := os.ReadFile(filepath.Join(home, f))
			if err != nil {
				t.Fatal(err)
			}
			files[f] = b
		}
		return files
	}
	start()
	first := read()
	now = now.Add(30 * time.Minute)
	start()
	for f, b := range read() {
		if !bytes.Equal(b, first[f]) {
			t.Errorf("a restart that changed nothing rewrote %s", f)
		}
	}
	now = now.Add(xsim.DefaultTokenTTL / 2)
	start()
	for f, b := range read() {
		if bytes.Equal(b, first[f]) {
			t.Errorf("%s is unchanged although its token had less than half its lifetime left", f)
		}
	}
}
