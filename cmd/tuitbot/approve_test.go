package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// seedPending puts n pending approval items straight into the home's
// database, as n routed calls would have.
func seedPending(t *testing.T, h *home, n int) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, h.path("tuitbot.db"), store.Options{})
	if err != nil {
		t.Fatalf("open the home's database: %v", err)
	}
	defer db.Close()
	now := time.Now().UTC()
	for i := 1; i <= n; i++ {
		params := fmt.Sprintf(`{"text":"queued post %d"}`, i)
		if _, err := db.ExecContext(ctx, `INSERT INTO approval_queue (account_id, tool_name, params_json, original_params, params_hash,
			reason, status, created_at, expires_at) VALUES ('default', 'x_post_tweet', ?, ?, ?, 'posts need review', 'pending', ?, ?)`,
			params, params, fmt.Sprintf("hash-%d", i), store.FormatTime(now), store.FormatTime(now.Add(time.Hour))); err != nil {
			t.Fatalf("seed item %d: %v", i, err)
		}
	}
}

// TestApproveListPagesThroughTheWholeQueue: a queue longer than any single
// page is listed in full, page by page, oldest first.
func TestApproveListPagesThroughTheWholeQueue(t *testing.T) {
	h := newHome(t)
	const n = 520
	seedPending(t, h, n)
	itemID := regexp.MustCompile(`(?m)^#(\d+) `)
	seen := map[string]bool{}
	offset := 0
	for page := 0; ; page++ {
		if page > n/200+1 {
			t.Fatalf("still paging after %d pages", page)
		}
		r := h.ok(t, "approve", "list", "--limit", "200", "--offset", fmt.Sprint(offset))
		ids := itemID.FindAllStringSubmatch(r.stdout, -1)
		for _, m := range ids {
			if seen[m[1]] {
				t.Fatalf("item #%s listed twice", m[1])
			}
			seen[m[1]] = true
		}
		mustContain(t, "page footer", r.stdout, fmt.Sprintf("of %d pending", n))
		if !strings.Contains(r.stdout, "next page:") {
			break
		}
		offset += len(ids)
	}
	for _, id := range []string{"1", "500", "501", fmt.Sprint(n)} {
		if !seen[id] {
			t.Fatalf("item #%s was never listed (%d of %d seen)", id, len(seen), n)
		}
	}
	if len(seen) != n {
		t.Fatalf("listed %d items, want %d", len(seen), n)
	}
	h.fails(t, "approve", "list", "--limit", "0")
}
