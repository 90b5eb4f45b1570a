package gateway

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// precheckEnv registers an action whose Precheck answers until and err and
// counts its runs.
func precheckEnv(t *testing.T, until func() time.Time, err error) (*env, *Gateway, *atomic.Int32) {
	t.Helper()
	e := newEnv(t)
	g, gerr := New(e.ctx, e.opts)
	if gerr != nil {
		t.Fatal(gerr)
	}
	t.Cleanup(func() { g.Close() })
	a := e.act.action()
	var runs atomic.Int32
	a.Precheck = func(context.Context, json.RawMessage) (time.Time, error) {
		runs.Add(1)
		return until(), err
	}
	g.Register(a)
	return e, g, &runs
}

// TestApprovalExpiresWithThePrecheckDeadline: an item queued for a call
// whose chance ends sooner than the approval TTL (an edit's window) expires
// then, and can no longer be approved; a later deadline leaves the TTL.
func TestApprovalExpiresWithThePrecheckDeadline(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		var until time.Time
		e, g, _ := precheckEnv(t, func() time.Time { return until }, nil)
		e.pol.set(approvalThenAllow)
		until = e.clock.Now().Add(20 * time.Minute)
		r, err := e.do(g, map[string]any{"text": "an edit"}, "")
		if err != nil || r.Kind != Routed {
			t.Fatalf("%q %v", r.Kind, err)
		}
		it, err := g.Item(e.ctx, r.ApprovalID)
		if err != nil {
			t.Fatal(err)
		}
		if want := ts(until); it.ExpiresAt != want {
			t.Fatalf("expires_at %s, want the deadline %s", it.ExpiresAt, want)
		}
		until = e.clock.Now().Add(48 * time.Hour)
		r2, err := e.do(g, map[string]any{"text": "another edit"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if it2, _ := g.Item(e.ctx, r2.ApprovalID); it2.ExpiresAt != ts(e.clock.Now().Add(24*time.Hour)) {
			t.Fatalf("a deadline past the TTL: expires_at %s", it2.ExpiresAt)
		}
		e.clock.Advance(20*time.Minute + time.Second)
		if _, _, err := g.Approve(e.ctx, r.ApprovalID, "test", ""); apperr.CodeOf(err) != apperr.ApprovalNotPending {
			t.Fatalf("approve after the deadline: %v", err)
		}
		if n, _ := g.PendingCount(e.ctx); n != 1 {
			t.Fatalf("%d items pending, want only the one within its TTL", n)
		}
		if e.act.count() != 0 {
			t.Fatal("an expired item ran")
		}
	})
}

// TestPrecheckRefusesBeforeAnything: a refusing Precheck leaves no audit
// row, no item and no charge; a repeat of a call that already ran gets its
// first answer without the Precheck (X would now refuse it).
func TestPrecheckRefusesBeforeAnything(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		refuse := apperr.New(apperr.EditWindowClosed, "tweet_id: closed")
		var fail atomic.Bool
		e := newEnv(t)
		g, err := New(e.ctx, e.opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		a := e.act.action()
		var runs atomic.Int32
		a.Precheck = func(context.Context, json.RawMessage) (time.Time, error) {
			runs.Add(1)
			if fail.Load() {
				return time.Time{}, refuse
			}
			return time.Time{}, nil
		}
		g.Register(a)

		first, err := e.do(g, map[string]any{"text": "edit once"}, "key-1")
		if err != nil || first.Kind != Executed {
			t.Fatalf("%q %v", first.Kind, err)
		}
		fail.Store(true)
		// Past the in-memory window: the database's checks answer.
		e.clock.Advance(31 * time.Second)
		again, err := e.do(g, map[string]any{"text": "edit once"}, "key-1")
		if err != nil || again.Kind != Duplicate {
			t.Fatalf("retried call: %+v %v", again, err)
		}
		if runs.Load() != 1 {
			t.Fatalf("the precheck ran %d times, want once (not for the repeat)", runs.Load())
		}
		if _, err := e.do(g, map[string]any{"text": "edit twice"}, ""); apperr.CodeOf(err) != apperr.EditWindowClosed {
			t.Fatalf("refused call: %v", err)
		}
		if e.act.count() != 1 || len(e.audit()) != 2 || e.countRows("approval_queue") != 0 || e.pol.consumedCount() != 1 {
			t.Fatalf("after a refusal: %d runs, %d audit rows, %d items, %d charges",
				e.act.count(), len(e.audit()), e.countRows("approval_queue"), e.pol.consumedCount())
		}
	})
}
