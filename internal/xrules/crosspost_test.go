package xrules

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// TestNearSame: what normalisation makes one text (case, width,
// whitespace, punctuation, emoji, links) and where near-same ends.
func TestNearSame(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"Ship it today.", "ship it today", true},
		{"New release!! 🚀 https://a.example/x?utm=1", "new   release https://b.example/y", true},
		{"ＮＥＷ release", "new release", true},
		{"Version 1.2 of the CLI is out, with faster startup", "Version 1.3 of the CLI is out, with faster startup", true},
		{"Version 1.2 of the CLI is out, with faster startup", "Version 1.2 of the CLI is out, with a new config file", false},
		{"gm", "gn", false},
		{"Hi @alice, our new release", "Hi @bob, our new release", false},
		{"https://a.example/x", "https://a.example/x", true},
		{"https://a.example/x", "https://b.example/y", false},
		{"🚀", "hello", false},
	} {
		if got, _ := NearSame(tc.a, tc.b); got != tc.want {
			t.Errorf("NearSame(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	// The band keeps a long post cheap and still exact.
	long := strings.Repeat("a quick brown fox jumps over the lazy dog ", 600)
	if same, alike := NearSame(long, long+" again"); !same || alike < NearSameSimilarity {
		t.Errorf("a long post and itself plus a word: %v %v", same, alike)
	}
	if d, ok := editsWithin([]rune("kitten"), []rune("sitting"), 3); !ok || d != 3 {
		t.Errorf("kitten/sitting: %d %v, want 3", d, ok)
	}
	if _, ok := editsWithin([]rune("kitten"), []rune("sitting"), 2); ok {
		t.Error("kitten/sitting within 2")
	}
}

// TestCrossAccountDuplicates: a post, reply, quote or thread part whose
// text another account of the home posted within the window is refused,
// whoever wrote it; a DM or a repost is no post of text; no window, no
// check.
func TestCrossAccountDuplicates(t *testing.T) {
	others := []Posted{{Account: "brand_b", Text: "Our new release is out today, try it!", CorrelationID: "c-1", Status: "success", At: "2026-11-28T10:00:00Z"}}
	var asked time.Duration
	c := Checker{Automation: Automation{
		CrossAccountWindow: func() time.Duration { return 24 * time.Hour },
		PostedElsewhere: func(_ context.Context, w time.Duration) ([]Posted, error) {
			asked = w
			return others, nil
		},
	}}
	for _, tc := range []struct {
		name string
		call Call
		want bool
	}{
		{"a post", Call{Effect: "x_post_tweet", Text: "our new release is out today. Try it", Caller: "mcp"}, true},
		{"a post typed in the CLI", Call{Effect: "x_post_tweet", Text: "Our new release is out today, try it!", Caller: "cli"}, true},
		{"a reply", Call{Effect: "x_reply_to_tweet", TweetID: "5", Text: "Our new release is out today, try it!!", Caller: "cli"}, true},
		{"a quote", Call{Effect: "x_quote_tweet", TweetID: "5", Text: "Our new release is out today, try it", Caller: "cli"}, true},
		{"a thread part", Call{Effect: "x_post_thread", Thread: []string{"First", "Our new release is out today - try it!"}, Caller: "cli"}, true},
		{"another text", Call{Effect: "x_post_tweet", Text: "Notes from the meetup", Caller: "cli"}, false},
		{"a DM", Call{Effect: "x_send_dm", TargetUser: "7", Text: "Our new release is out today, try it!", Caller: "cli"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Check(context.Background(), tc.call)
			if !tc.want {
				if err != nil {
					t.Fatalf("%v, want nil", err)
				}
				return
			}
			if apperr.CodeOf(err) != apperr.CrossAccountDup {
				t.Fatalf("%v, want %s", err, apperr.CrossAccountDup)
			}
			e := apperr.As(err)
			if e.Extra["rule"] != RuleCrossAccountDuplicate || e.Extra["other_account"] != "brand_b" || e.Extra["duplicate_of"] != "c-1" ||
				!strings.Contains(err.Error(), "cross_account_duplicate_hours") || len(e.Hints) == 0 {
				t.Fatalf("refusal %v %+v", err, e.Extra)
			}
			if asked != 24*time.Hour {
				t.Fatalf("asked for %v of posts, want 24h", asked)
			}
		})
	}
	c.Automation.CrossAccountWindow = func() time.Duration { return 0 }
	if err := c.Check(context.Background(), Call{Effect: "x_post_tweet", Text: "Our new release is out today, try it!"}); err != nil {
		t.Fatalf("no window: %v", err)
	}
}
