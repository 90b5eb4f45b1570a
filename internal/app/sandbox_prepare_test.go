package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/store"
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
