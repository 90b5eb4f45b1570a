package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestAccountFlagScopesCommands: approve, audit and status act for the
// account --account names, and see nothing of another account's.
func TestAccountFlagScopesCommands(t *testing.T) {
	h := newHome(t)
	if err := os.WriteFile(h.path("config.toml"), []byte("[accounts.brand_b]\nmode = \"composer\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The database is created by a first command, then seeded.
	h.ok(t, "approve", "list")
	ctx := context.Background()
	db, err := store.Open(ctx, h.path("tuitbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, it := range []struct{ account, text string }{{"default", "default's post"}, {"brand_b", "brand b's post"}} {
		params := `{"text":"` + it.text + `"}`
		if _, err := db.ExecContext(ctx, `INSERT INTO approval_queue (account_id, tool_name, params_json, original_params, params_hash,
			reason, status, created_at, expires_at) VALUES (?, 'x_post_tweet', ?, ?, ?, 'posts need review', 'pending', ?, ?)`,
			it.account, params, params, "hash-"+it.account, store.FormatTime(now), store.FormatTime(now.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, account_id, created_at)
		VALUES ('corr-default', 'x_like_tweet', 'h', '{}', 'success', 'default', ?)`, store.FormatTime(now)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	def := h.ok(t, "approve", "list")
	mustContain(t, "default queue", def.stdout, "default's post")
	if strings.Contains(def.stdout, "brand b's post") {
		t.Errorf("the default account's queue lists brand_b's item:\n%s", def.stdout)
	}
	b := h.ok(t, "approve", "list", "--account", "brand_b")
	mustContain(t, "brand_b queue", b.stdout, "brand b's post")
	if strings.Contains(b.stdout, "default's post") {
		t.Errorf("brand_b's queue lists the default account's item:\n%s", b.stdout)
	}
	mustContain(t, "default audit", h.ok(t, "audit", "recent").stdout, "corr-default")
	mustContain(t, "brand_b audit", h.ok(t, "audit", "recent", "--account", "brand_b").stdout, "no mutations recorded")

	r := h.fails(t, "status", "--account", "ghost")
	if r.code != 2 {
		t.Errorf("unknown account: exit %d, want 2 (usage)", r.code)
	}
	mustContain(t, "unknown account error", r.stderr, "ghost", "default, brand_b")
	if r := h.fails(t, "auth", "--account", "ghost"); r.code != 2 {
		t.Errorf("auth --account ghost: exit %d, want 2 (usage)", r.code)
	}
}
