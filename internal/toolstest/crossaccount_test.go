package toolstest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xrules"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestCrossAccountDuplicates is the rule table of X's "no identical
// cross-posting across accounts": once brand_b posted a text, each
// spelling of a post by the default account with the same or nearly the
// same text (a post, typed or universal; a reply, typed, universal or
// drafted; a quote; a thread's part) is refused with
// cross_account_duplicate before X: no request reaches the emulator, nothing
// is billed, and the audit row carries the code with what a person can do;
// a dry run reports the refusal.
// The same text again on brand_b is its own duplicate, answered as such;
// outside x_api.cross_account_duplicate_hours the text may go out again.
func TestCrossAccountDuplicates(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	e := newEnv(t, envOptions{permissive: true, now: clk.Now, configure: func(c *config.Config) {
		c.Accounts = map[string]map[string]any{"brand_c": {"mcp_policy": map[string]any{"dry_run_mutations": true}}}
	}})
	const posted = "Release 2.4 is out: faster sync, fewer surprises. Try it today!"
	executed(t, e.call("x_post_tweet", map[string]any{"text": posted, "account": "brand_b"}), nil)

	user := strangerOf(t, e.Sim, 0)
	target, err := e.Sim.PostAs(user, "@"+xsim.DemoUsername+" what changed in the new release?", "")
	if err != nil {
		t.Fatal(err)
	}
	raw := func(body string) map[string]any {
		return map[string]any{"path": "/2/tweets", "body": body,
			"headers": []map[string]any{{"key": "Content-Type", "value": "application/json"}}}
	}
	// Near-same: case, punctuation, an emoji, a link and one digit apart.
	near := "release 2.5 is out - faster sync, fewer surprises 🚀 try it today https://example.com/r?utm=x"
	if same, _ := xrules.NearSame(near, posted); !same {
		t.Fatalf("the test's near-same text is not near-same")
	}
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"typed post", "x_post_tweet", map[string]any{"text": near}},
		{"universal post", "x_post", raw(fmt.Sprintf(`{"text":%q}`, near))},
		{"typed reply", "x_reply_to_tweet", map[string]any{"text": near, "in_reply_to_id": target}},
		{"universal reply", "x_post", raw(fmt.Sprintf(`{"text":%q,"reply":{"in_reply_to_tweet_id":%q}}`, near, target))},
		{"typed quote", "x_quote_tweet", map[string]any{"text": near, "quoted_tweet_id": target}},
		{"thread part", "x_post_thread", map[string]any{"tweets": []string{"A thread about our week.", near}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, billed := e.counters(), e.Sim.Billing()
			r := e.call(tc.tool, tc.args).fails(t, apperr.CrossAccountDup).mentions(t, "brand_b", "nothing was sent to X", "x_retweet")
			e.requireDelta(before, nil)
			// No request at all, not even a read: the rule reads the audit.
			after := e.Sim.Billing()
			for ep, n := range after.Requests {
				if n != billed.Requests[ep] {
					t.Errorf("%s requested %d more times", ep, n-billed.Requests[ep])
				}
			}
			if after.Micros != billed.Micros {
				t.Errorf("billed %d micro-dollars, want 0", after.Micros-billed.Micros)
			}
			corr, _ := r.extra("correlation_id").(string)
			a := e.audit(corr)
			if a.Status != "failure" || a.ErrorCode != string(apperr.CrossAccountDup) || a.ErrorMessage == nil ||
				!strings.Contains(*a.ErrorMessage, "brand_b") {
				t.Errorf("audit row %+v, want a failure with %s naming brand_b", a, apperr.CrossAccountDup)
			}
		})
	}

	t.Run("drafted reply", func(t *testing.T) {
		cands := discover(t, e)
		before := e.counters()
		var out struct {
			Results []workflow.ProposeOutcome `json:"results"`
		}
		e.call("propose_and_queue_replies", map[string]any{"items": []map[string]any{
			{"candidate_id": cands[0].TweetID, "pre_drafted_text": near}}}).ok(t, &out)
		if got := out.Results[0]; got.ErrorCode != string(apperr.CrossAccountDup) {
			t.Fatalf("drafted reply: %+v, want %s", got, apperr.CrossAccountDup)
		}
		e.requireDelta(before, nil)
	})

	t.Run("the same text on one account is not this rule's", func(t *testing.T) {
		var dup struct {
			Duplicate bool `json:"duplicate"`
		}
		e.call("x_post_tweet", map[string]any{"text": posted, "account": "brand_b"}).ok(t, &dup)
		if !dup.Duplicate {
			t.Fatal("brand_b's own text again was not answered as its duplicate")
		}
	})

	t.Run("another text goes out", func(t *testing.T) {
		executed(t, e.call("x_post_tweet", map[string]any{"text": "Notes from Thursday's meetup on release engineering."}), nil)
	})

	t.Run("dry run", func(t *testing.T) {
		// brand_c runs every mutation dry.
		e.call("x_post_tweet", map[string]any{"text": near, "account": "brand_c"}).fails(t, apperr.CrossAccountDup)
		var d struct {
			DryRun bool `json:"dry_run"`
		}
		e.call("x_post_tweet", map[string]any{"text": "Something else entirely, for the dry run.", "account": "brand_c"}).ok(t, &d)
		if !d.DryRun {
			t.Fatal("the setting did not make it a dry run")
		}
	})

	t.Run("outside the window", func(t *testing.T) {
		clk.Advance(25 * time.Hour)
		e.Cfg.XAPI.CrossAccountDupH = 48
		e.call("x_post_tweet", map[string]any{"text": near}).fails(t, apperr.CrossAccountDup).mentions(t, "cross_account_duplicate_hours is 48")
		e.Cfg.XAPI.CrossAccountDupH = 24
		executed(t, e.call("x_post_tweet", map[string]any{"text": near}), nil)
	})
}
