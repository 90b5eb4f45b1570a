package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestQueueShowAndNext: queue show lists the slots with what holds them,
// queue next prints the free ones after a time, each for the account
// --account names.
func TestQueueShowAndNext(t *testing.T) {
	h := newHome(t)
	cfg := "[queue]\nslots = [\"daily 09:00\"]\nmin_gap_minutes = 0\n\n[accounts.brand_b.queue]\nslots = []\n"
	if err := os.WriteFile(h.path("config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	const from = "2030-01-07T00:00:00Z"
	mustContain(t, "empty queue", h.ok(t, "queue", "show", "--from", from, "--days", "2").stdout,
		"2030-01-07T09:00:00Z  Monday     free", "2030-01-08T09:00:00Z  Tuesday    free")
	ctx := context.Background()
	db, err := store.Open(ctx, h.path("tuitbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO drafts (account_id, content, status, scheduled_for, queue_slot, created_at, updated_at)
		VALUES ('default', 'x', 'scheduled', '2030-01-07T09:00:00.000Z', '2030-01-07T09:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	mustContain(t, "taken slot", h.ok(t, "queue", "show", "--from", from, "--days", "1").stdout, "2030-01-07T09:00:00Z  Monday     taken (draft 1)")
	if got := h.ok(t, "queue", "next", "--after", from, "--count", "2").stdout; got != "2030-01-08T09:00:00Z\n2030-01-09T09:00:00Z\n" {
		t.Errorf("queue next = %q", got)
	}
	var js struct {
		Slots    []string `json:"slots"`
		Timezone string   `json:"timezone"`
	}
	if err := json.Unmarshal([]byte(h.ok(t, "queue", "next", "--after", from, "--json").stdout), &js); err != nil || len(js.Slots) != 1 || js.Timezone != "UTC" {
		t.Errorf("queue next --json = %+v, %v", js, err)
	}

	r := h.fails(t, "queue", "next", "--account", "brand_b")
	if r.code != 1 {
		t.Errorf("a queue with no slots: exit %d, want 1", r.code)
	}
	mustContain(t, "no slots", r.stderr, "queue_not_configured", "queue.slots")
	for _, args := range [][]string{{"queue", "show", "--days", "0"}, {"queue", "next", "--count", "21"}, {"queue", "next", "--after", "tomorrow"}} {
		if r := h.fails(t, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", args, r.code, r)
		}
	}
}
