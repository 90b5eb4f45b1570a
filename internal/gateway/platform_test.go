package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// platformRules refuses while refuse is set, and records what it saw.
type platformRules struct {
	mu     sync.Mutex
	refuse error
	seen   []xrules.Call
}

func (p *platformRules) Check(_ context.Context, c xrules.Call) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, c)
	return p.refuse
}

func (p *platformRules) set(err error) {
	p.mu.Lock()
	p.refuse = err
	p.mu.Unlock()
}

// TestPlatformRefusesBeforeEverything: a call the platform rules refuse
// reaches neither the policy (no decision, no charge) nor the approval
// queue nor the action; it leaves one failed audit row with the refusal's
// code and message, already complete, and a denied action log line. An
// error that is no refusal (X unreachable while finding out) is returned
// with nothing recorded. An item approved before the rules changed is
// judged again when it executes.
func TestPlatformRefusesBeforeEverything(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		rules := &platformRules{}
		e.opts.Platform = rules
		g := e.open()
		e.pol.set(approvalThenAllow)

		queued, err := e.do(g, map[string]any{"text": "queued first"}, "")
		if err != nil || queued.Kind != Routed {
			t.Fatalf("queue: %q %v", queued.Kind, err)
		}

		refusal := apperr.New(apperr.XFeatureUnavailable, "x_like_tweet: not on pay-per-use").WithHints(apperr.Hint{Do: "do it on x.com by hand: https://x.com/intent/like?tweet_id=5"})
		rules.set(refusal)
		checks := len(e.pol.requests())
		_, err = e.do(g, map[string]any{"text": "refused"}, "key-r")
		wantCode(t, err, apperr.XFeatureUnavailable)
		if n := len(e.pol.requests()); n != checks {
			t.Fatalf("the policy was asked %d times after the refusal", n-checks)
		}
		if e.act.count() != 0 || e.countRows("approval_queue") != 1 {
			t.Fatalf("%d runs, %d items after the refusal", e.act.count(), e.countRows("approval_queue"))
		}
		rows := e.audit()
		if len(rows) != 1 || rows[0].status != statusFailure || rows[0].errCode != string(apperr.XFeatureUnavailable) || !rows[0].completed || rows[0].key != "key-r" {
			t.Fatalf("audit after the refusal: %+v", rows)
		}
		var msg string
		if err := e.db.QueryRowContext(e.ctx, `SELECT error_message FROM mutation_audit`).Scan(&msg); err != nil || msg != refusal.Error() {
			t.Fatalf("audit message %q (%v), want %q", msg, err, refusal.Error())
		}
		var denied int
		if err := e.db.QueryRowContext(e.ctx, `SELECT count(*) FROM action_log WHERE status = 'denied' AND metadata LIKE '%x_platform%'`).Scan(&denied); err != nil || denied != 1 {
			t.Fatalf("%d denied action log lines (%v), want 1", denied, err)
		}

		// The item queued before the change is judged again on approval.
		_, _, err = g.Approve(e.ctx, queued.ApprovalID, "alice", "")
		wantCode(t, err, apperr.XFeatureUnavailable)
		if e.act.count() != 0 || e.pol.consumedCount() != 0 {
			t.Fatalf("approved item ran %d times, %d charges", e.act.count(), e.pol.consumedCount())
		}
		var decidedBy, code string
		if err := e.db.QueryRowContext(e.ctx, `SELECT COALESCE(decided_by,''), COALESCE(error_code,'') FROM mutation_audit WHERE approval_id = ?`,
			queued.ApprovalID).Scan(&decidedBy, &code); err != nil || decidedBy != "alice" || code != string(apperr.XFeatureUnavailable) {
			t.Fatalf("the refused replay's row: decided_by %q, code %q (%v)", decidedBy, code, err)
		}

		// Not knowing is no refusal: nothing is recorded.
		rules.set(apperr.New(apperr.XNetworkError, "X unreachable"))
		before := len(e.audit())
		_, err = e.do(g, map[string]any{"text": "unknown"}, "")
		wantCode(t, err, apperr.XNetworkError)
		if len(e.audit()) != before {
			t.Fatal("a failure to find out was recorded as a refusal")
		}

		rules.set(nil)
		e.pol.set(nil)
		if r, err := e.do(g, map[string]any{"text": "allowed"}, ""); err != nil || r.Kind != Executed {
			t.Fatalf("allowed call: %q %v", r.Kind, err)
		}
		if last := rules.seen[len(rules.seen)-1]; last.Effect != fakeTool || last.Text != "allowed" {
			t.Fatalf("the rules saw %+v", last)
		}
	})
}

// TestPlatformKnowsWhatWasRepliedTo: the platform rules learn whether the
// account already replied to a post by the API (one automated reply per
// interaction), not counting the same call again (its retry answers as a
// duplicate) nor a reply X refused.
func TestPlatformKnowsWhatWasRepliedTo(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		rules := &platformRules{}
		e.opts.Platform = rules
		g := e.open()
		fail := false
		g.Register(targetAction("x_reply_to_tweet", "in_reply_to_id", func(context.Context, json.RawMessage) (Result, error) {
			if fail {
				return Result{}, apperr.New(apperr.XAPIError, "refused")
			}
			return Result{Data: map[string]any{"id": "9"}}, nil
		}))
		seen := func(text, to, key string) bool {
			t.Helper()
			_, _ = g.Do(e.ctx, Call{Tool: "x_reply_to_tweet", IdempotencyKey: key, Params: map[string]any{"in_reply_to_id": to, "text": text}})
			rules.mu.Lock()
			defer rules.mu.Unlock()
			last := rules.seen[len(rules.seen)-1]
			if last.TweetID != to || last.Effect != "x_reply_to_tweet" {
				t.Fatalf("the rules saw %+v", last)
			}
			return last.Replied
		}
		if seen("first", "111", "k1") {
			t.Fatal("a first reply was judged a second one")
		}
		for _, tc := range []struct {
			name, text, to, key string
			want                bool
		}{
			{"the same call again", "first", "111", "", false},
			{"the same key again", "first", "111", "k1", false},
			{"another reply to the same post", "second", "111", "", true},
			{"a reply to another post", "other", "222", "", false},
		} {
			if got := seen(tc.text, tc.to, tc.key); got != tc.want {
				t.Errorf("%s: replied = %v, want %v", tc.name, got, tc.want)
			}
		}
		fail = true
		seen("refused by X", "333", "")
		fail = false
		if seen("after the refusal", "333", "") {
			t.Error("a reply X refused counted as a reply")
		}
	})
}
