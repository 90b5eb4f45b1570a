//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// outcome is what one call under one fault must produce.
type outcome struct {
	code    apperr.Code // "" for success
	applied bool        // the post exists on X afterwards
	audit   string      // the audit row's status
	retried bool        // meta.retry_count >= 1
}

type faultCase struct {
	name     string
	fault    xsim.Fault
	post     outcome
	bookmark outcome
}

// faultCases are the emulator's misbehaviours and the gateway's required
// answer for a post (never retried unless X provably did nothing) and for
// a bookmark (X-idempotent, so retried).
func faultCases() []faultCase {
	unknown := func(applied bool) outcome {
		return outcome{code: apperr.XOutcomeUnknown, applied: applied, audit: "unknown"}
	}
	retriedMark := outcome{audit: "success", retried: true}
	limited := outcome{code: apperr.XRateLimited, audit: "failure"}

	return []faultCase{
		// X's window resets in 15 minutes, beyond the client's wait cap:
		// the caller gets x_rate_limited (retryable) and nothing ran.
		{"429", xsim.Fault{RateLimitNext: 1}, limited, limited},
		{"truncated body", xsim.Fault{TruncateNext: 1}, unknown(true), retriedMark},
		{"503 before applying", xsim.Fault{ErrorNext: 1}, unknown(false), retriedMark},
		{"connection reset", xsim.Fault{ResetNext: 1}, unknown(false), retriedMark},
		{"timeout", xsim.Fault{TimeoutNext: 1}, unknown(false), retriedMark},
		{"malformed JSON", xsim.Fault{MalformedNext: 1}, unknown(true), retriedMark},
		{"apply then 503", xsim.Fault{ApplyThenFailNext: 1}, unknown(true), retriedMark},
		{"apply then reset", xsim.Fault{ApplyThenFailNext: 1, ApplyThenReset: true}, unknown(true), retriedMark},
	}
}

// TestFaultsNeverDoublePost runs distinct posts and bookmarks with a fault
// on every fifth call (20%), cycling through every fault kind for both.
// (Bookmarks rather than likes: an agent's like waits for a person.)
func TestFaultsNeverDoublePost(t *testing.T) {
	s := startSim(t, nil)
	cfg := permissive(t.TempDir())
	cfg.XAPI.TimeoutSeconds = 1
	pointAt(t, &cfg, s)
	h := newHarness(t, &cfg, app.Options{})
	cs := h.connect()
	cases := faultCases()
	const calls = 80
	me := s.DemoUserID()
	markedBefore := map[string]bool{}
	for _, l := range s.World().Bookmarks {
		if l.From == me {
			markedBefore[l.To] = true
		}
	}
	var targets []string
	for _, id := range s.foreignTweets(t, calls) {
		if !markedBefore[id] && len(targets) < calls/2 {
			targets = append(targets, id)
		}
	}
	if len(targets) < calls/2 {
		t.Fatalf("only %d foreign posts the demo user has not bookmarked", len(targets))
	}

	type record struct {
		text, tweet string
		fault       string
		want        outcome
		got         env
	}
	var posts, marks []record
	faulted := 0
	for i := 0; i < calls; i++ {
		isPost := i%2 == 0
		want := outcome{applied: isPost, audit: "success"}
		fname := ""
		if i%5 == 2 {
			fc := cases[(faulted/2)%len(cases)]
			faulted++
			fname = fc.name
			if isPost {
				want = fc.post
				s.SetFault("POST /2/tweets", fc.fault)
			} else {
				want = fc.bookmark
				s.SetFault("POST /2/users/:id/bookmarks", fc.fault)
			}
		}
		if isPost {
			text := fmt.Sprintf("fault workload post %d", i)
			e := mustCall(t, h.ctx, cs, "x_post_tweet", map[string]any{"text": text})
			posts = append(posts, record{text: text, fault: fname, want: want, got: e})
		} else {
			tw := targets[i/2]
			e := mustCall(t, h.ctx, cs, "x_bookmark_tweet", map[string]any{"tweet_id": tw})
			marks = append(marks, record{tweet: tw, fault: fname, want: want, got: e})
		}
		s.ClearFaults()
	}
	if faulted != calls/5 || faulted < 2*len(cases) {
		t.Fatalf("%d faulted calls", faulted)
	}

	audit := auditStatus(t, h.ctx, h.a.DB.DB)
	check := func(kind string, r record) {
		t.Helper()
		label := fmt.Sprintf("%s (fault %q)", kind, r.fault)
		if r.want.code == "" {
			if !r.got.Success {
				t.Fatalf("%s: want success, got %s", label, r.got.raw)
			}
		} else if r.got.code() != r.want.code {
			t.Fatalf("%s: want %s, got %s", label, r.want.code, r.got.raw)
		}
		corr := r.got.Meta.CorrelationID
		if corr == "" || audit[corr] != r.want.audit {
			t.Fatalf("%s: audit row %q is %q, want %q", label, corr, audit[corr], r.want.audit)
		}
		if rc := r.got.Meta.RetryCount; r.want.retried && (rc == nil || *rc < 1) {
			t.Fatalf("%s: want a retry, meta %+v", label, r.got.Meta)
		}
	}
	byText := s.postsByText()
	for _, r := range posts {
		check("post", r)
		want := 0
		if r.want.applied {
			want = 1
		}
		if byText[r.text] != want {
			t.Fatalf("post %q (fault %q): %d on X, want %d", r.text, r.fault, byText[r.text], want)
		}
	}
	marked := map[string]bool{}
	for _, l := range s.World().Bookmarks {
		if l.From == me {
			marked[l.To] = true
		}
	}
	for _, r := range marks {
		check("bookmark", r)
		if marked[r.tweet] != (r.want.code == "") {
			t.Fatalf("bookmark of %s (fault %q): bookmarked %v", r.tweet, r.fault, marked[r.tweet])
		}
	}

	// The agent retries every post. An unknown outcome blocks the repeat
	// unless tuitbot finds the post in the account's timeline, which
	// resolves it as a duplicate of the attempt; a clean failure may run
	// now that X behaves; a success is a duplicate.
	for _, r := range posts {
		e := mustCall(t, h.ctx, cs, "x_post_tweet", map[string]any{"text": r.text})
		switch r.want.code {
		case apperr.XOutcomeUnknown:
			if r.want.applied {
				if d := e.data(t); !e.Success || d["duplicate"] != true || d["original_correlation_id"] != r.got.Meta.CorrelationID {
					t.Fatalf("retry of %q after %q (on X): %s", r.text, r.fault, e.raw)
				}
			} else if e.code() != apperr.OutcomeUnverified {
				t.Fatalf("retry of %q after %q: %s", r.text, r.fault, e.raw)
			}
		case apperr.XRateLimited:
			if !e.Success || e.data(t)["duplicate"] == true {
				t.Fatalf("retry of %q after %q: %s", r.text, r.fault, e.raw)
			}
		default:
			d := e.data(t)
			if !e.Success || d["duplicate"] != true || d["original_correlation_id"] != r.got.Meta.CorrelationID {
				t.Fatalf("retry of %q: %s", r.text, e.raw)
			}
		}
	}
	created := 0
	byText = s.postsByText()
	for _, r := range posts {
		switch n := byText[r.text]; {
		case n > 1:
			t.Fatalf("%q (fault %q) was posted %d times", r.text, r.fault, n)
		case n == 1:
			created++
		case r.want.code != apperr.XOutcomeUnknown:
			t.Fatalf("%q (fault %q) is not on X after a successful retry", r.text, r.fault)
		}
	}
	if got := s.Counters()["tweets_created"]; got != int64(created) {
		t.Fatalf("emulator created %d posts for %d distinct workload texts on X", got, created)
	}
	for corr, st := range auditStatus(t, h.ctx, h.a.DB.DB) {
		if st == "pending" {
			t.Fatalf("audit row %s is still pending", corr)
		}
	}
	t.Logf("%d calls, %d with faults; %d posts on X", calls, faulted, created)
}
