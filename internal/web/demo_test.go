package web

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestDemoWorldOnFreshSandbox: a fresh sandbox home gets a demo world
// through the gateway (pending items, executed mutations with rollback
// guidance, analytics data, a scheduled draft), all labelled demo, and a
// home with history is left alone.
func TestDemoWorldOnFreshSandbox(t *testing.T) {
	s := newSite(t, nil)
	ctx := context.Background()
	acct := *s.srv.accts[0]
	seeded, err := SeedDemo(ctx, acct)
	if err != nil || !seeded {
		t.Fatalf("SeedDemo on a fresh sandbox: seeded %v, %v", seeded, err)
	}
	c, _ := s.client()

	code, body := s.get(c, "/approvals")
	if code != 200 {
		t.Fatalf("approvals: %d", code)
	}
	items := regexp.MustCompile(`<li class="item" id="item-\d+"`).FindAllString(body, -1)
	if len(items) != 2 {
		t.Fatalf("%d pending demo items on the approvals page, want 2 (a post and a reply)", len(items))
	}
	mustHave(t, "approvals page", body, "Demo data: this post waits for your approval", "Demo data: a reply waiting for review",
		"<dd>demo</dd>", `id="target-`, "Reply to @tuitbot_demo")

	code, body = s.get(c, "/audit")
	if code != 200 {
		t.Fatalf("audit: %d", code)
	}
	m := regexp.MustCompile(`href="/audit/([^"?]+)"`).FindAllStringSubmatch(body, -1)
	if len(m) < 2 {
		t.Fatalf("%d audit rows, want the two executed demo posts:\n%s", len(m), body)
	}
	code, body = s.get(c, "/audit/"+m[0][1])
	if code != 200 {
		t.Fatalf("audit detail: %d", code)
	}
	mustHave(t, "audit detail", body, "x_delete_tweet", "Roll back", "Demo data:")

	code, body = s.get(c, "/analytics")
	if code != 200 {
		t.Fatalf("analytics: %d", code)
	}
	// The follower trend has its snapshot and the mutations chart the two
	// executed posts.
	if !strings.Contains(body, "One count so far (") || !strings.Contains(body, `<rect class="bar"`) {
		t.Fatalf("analytics shows no demo data:\n%s", body)
	}

	code, body = s.get(c, "/drafts")
	if code != 200 || !strings.Contains(body, "Demo data: a scheduled post on the calendar") {
		t.Fatalf("drafts: %d, no scheduled demo draft", code)
	}

	// A second start (or a home with history) adds nothing.
	before, _, err := acct.Gateway.PendingFiltered(ctx, gateway.PendingFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := SeedDemo(ctx, acct); err != nil || again {
		t.Fatalf("SeedDemo on a home with history: seeded %v, %v", again, err)
	}
	after, _, _ := acct.Gateway.PendingFiltered(ctx, gateway.PendingFilter{Limit: 10})
	if len(after) != len(before) {
		t.Fatalf("the second SeedDemo changed the queue: %d → %d items", len(before), len(after))
	}
}

func mustHave(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}
