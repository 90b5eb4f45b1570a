package xapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestLedgerPrices2026: X's prices of 2026-04-16 as the ledger records
// them, each attempt billed once: a reply (X lets a self-serve app reply
// only when summoned) costs $0.010 with a link or without; a post with a
// link still $0.200; a read of the authenticated user's own resources
// $0.001 per resource (Owned Reads, typed or universal), the objects it
// expands included, and the same read of another user's the ordinary
// price. Before the authenticated user is
// known, its reads are billed at the higher ordinary price. A reply to the
// account's own post (a thread) is a post, billed as one.
func TestLedgerPrices2026(t *testing.T) {
	two := `{"data":[{"id":"501","text":"a"},{"id":"502","text":"b"}],"meta":{"result_count":2}}`
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/2/users/me":
			writeJSON(w, 200, `{"data":{"id":"42","name":"Me","username":"me"}}`)
		case r.Method == "POST" && r.URL.Path == "/2/tweets":
			writeJSON(w, 201, `{"data":{"id":"77","text":"x"}}`)
		case strings.HasSuffix(r.URL.Path, "/followed_lists"):
			writeJSON(w, 200, `{"data":[{"id":"701","name":"L","owner_id":"602"}],"includes":{"users":[{"id":"602","name":"O","username":"o"}]},"meta":{"result_count":1}}`)
		case strings.HasSuffix(r.URL.Path, "/following") || strings.HasSuffix(r.URL.Path, "/pinned_lists"):
			writeJSON(w, 200, `{"data":[{"id":"601","name":"A","username":"a"}],"meta":{"result_count":1}}`)
		default:
			writeJSON(w, 200, two)
		}
	})
	ctx := context.Background()
	// Unknown yet: the mentions of 42 are billed as ordinary post reads.
	if _, err := h.c.Mentions(ctx, "42", ListParams{}); err != nil {
		t.Fatal(err)
	}
	h.c.ledger = newLedger() // the same posts again, billed anew
	if _, _, err := h.c.Me(ctx); err != nil {
		t.Fatal(err)
	}
	for _, call := range []func() error{
		func() error {
			_, _, err := h.c.PostTweet(ctx, PostParams{Text: "thanks! more at https://example.com", ReplyTo: "900"})
			return err
		},
		func() error { _, _, err := h.c.PostTweet(ctx, PostParams{Text: "a thought"}); return err },
		func() error { _, _, err := h.c.PostTweet(ctx, PostParams{Text: "see https://example.com"}); return err },
		func() error { _, err := h.c.Mentions(ctx, "42", ListParams{}); return err },
		func() error { h.c.ledger = newLedger(); _, err := h.c.UserTweets(ctx, "9", ListParams{}); return err },
		func() error { h.c.ledger = newLedger(); _, err := h.c.LikedTweets(ctx, "42", ListParams{}); return err },
		func() error { _, err := h.c.Following(ctx, "42", ListParams{}); return err },
		func() error {
			_, err := h.c.Raw(ctx, RawRequest{Method: "GET", Host: HostAPI, Path: "/2/users/42/pinned_lists"})
			return err
		},
		// An owned read bills the owners it expands at its own price too.
		func() error {
			_, err := h.c.Raw(ctx, RawRequest{Method: "GET", Host: HostAPI, Path: "/2/users/42/followed_lists", Query: url.Values{"expansions": {"owner_id"}}})
			return err
		},
		// The same read of another user's: the List and its owner at their
		// ordinary prices.
		func() error {
			h.c.ledger = newLedger()
			_, err := h.c.Raw(ctx, RawRequest{Method: "GET", Host: HostAPI, Path: "/2/users/9/followed_lists", Query: url.Values{"expansions": {"owner_id"}}})
			return err
		},
		// The next post of a thread replies to the post just made (77, the
		// account's own): a post with a link, not a summoned reply.
		func() error {
			_, _, err := h.c.PostTweet(ctx, PostParams{Text: "part 2: https://example.com", ReplyTo: "77"})
			return err
		},
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	want := []struct {
		endpoint string
		cost     float64
	}{
		{"GET /2/users/:id/mentions", 2 * PricePostRead},
		{"GET /2/users/me", PriceUserRead},
		{"POST /2/tweets", 0.010},
		{"POST /2/tweets", 0.015},
		{"POST /2/tweets", 0.200},
		{"GET /2/users/:id/mentions", 2 * 0.001},
		{"GET /2/users/:id/tweets", 2 * 0.005},
		{"GET /2/users/:id/liked_tweets", 2 * 0.001},
		{"GET /2/users/:id/following", 0.001},
		{"GET /2/users/:id/pinned_lists", 0.001},
		{"GET /2/users/:id/followed_lists", 2 * 0.001},
		{"GET /2/users/:id/followed_lists", PriceListRead + PriceUserRead},
		{"POST /2/tweets", 0.200},
	}
	rows := h.usage.all()
	if len(rows) != len(want) {
		t.Fatalf("%d ledger rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		if rows[i].Endpoint != w.endpoint || !near(rows[i].CostUSD, w.cost) {
			t.Errorf("row %d: %s $%.4f, want %s $%.4f", i, rows[i].Endpoint, rows[i].CostUSD, w.endpoint, w.cost)
		}
	}
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"estimate of a reply with a link", EstimatePost("more at https://example.com", true), 0.010},
		{"estimate of a post with a link", EstimatePost("more at https://example.com", false), 0.200},
		{"estimate of a raw reply with a link", EstimateWrite("POST", "/2/tweets", []byte(`{"text":"https://example.com","reply":{"in_reply_to_tweet_id":"9"}}`)), 0.010},
	} {
		if !near(tc.got, tc.want) {
			t.Errorf("%s: $%.4f, want $%.4f", tc.name, tc.got, tc.want)
		}
	}
}
