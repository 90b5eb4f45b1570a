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

// TestAuditResolve: exactly one of --happened and --did-not-happen is
// required, and the resolution is recorded with who made it.
func TestAuditResolve(t *testing.T) {
	h := newHome(t)
	ctx := context.Background()
	db, err := store.Open(ctx, h.path("tuitbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const corr = "5f0e9a52-1c2b-4d3e-8f40-123456789abc"
	if _, err := db.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, created_at, completed_at)
		VALUES (?, 'x_post_tweet', 'h', '{"text":"maybe"}', 'unknown', ?, ?)`, corr, store.FormatTime(time.Now()), store.FormatTime(time.Now())); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, args := range [][]string{
		{"audit", "resolve", corr},
		{"audit", "resolve", corr, "--happened", "--did-not-happen"},
	} {
		if r := h.fails(t, args...); r.code != 2 || !strings.Contains(r.stderr, "--happened") {
			t.Fatalf("tuitbot %v: want a usage error naming the flags:\n%s", args, r)
		}
	}
	r := h.ok(t, "audit", "resolve", corr, "--did-not-happen")
	mustContain(t, "resolve", r.stdout, "did_not_happen", "by cli")
	r = h.ok(t, "audit", "show", corr)
	mustContain(t, "show", r.stdout, `"resolution": "did_not_happen"`, `"resolved_by": "cli"`, `"resolved_at"`)
	if r := h.fails(t, "audit", "resolve", corr, "--happened"); !strings.Contains(r.stderr, "already resolved") {
		t.Fatalf("second resolution:\n%s", r)
	}
}
