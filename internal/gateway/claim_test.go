package gateway

import (
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// An item claimed for approval by a process that died before its replay
// wrote anything goes back to the queue: nothing reached X, so the human can
// simply approve again. A live claimant's item is left alone.
func TestDeadClaimReturnsToQueue(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		id := e.queue(`{"text":"claimed then crashed"}`)

		// A "process" that claims the item and dies before replaying it.
		dead, err := New(e.ctx, e.opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dead.claim(e.ctx, id, ApprovalApproved, "bob", ""); err != nil {
			t.Fatalf("claim: %v", err)
		}

		// While it lives, a new process must not take the item back.
		e.open()
		if it, err := e.g.Item(e.ctx, id); err != nil || it.Status != ApprovalApproved {
			t.Fatalf("item of a live claimant: %+v, %v", it, err)
		}

		dead.Close()
		e.open()
		it, err := e.g.Item(e.ctx, id)
		if err != nil || it.Status != ApprovalPending || it.ReviewedBy != "" {
			t.Fatalf("item of a dead claimant = %+v, %v; want pending again", it, err)
		}
		e.clock.Advance(time.Minute)
		if _, _, err := e.g.Approve(e.ctx, id, "alice", ""); err != nil {
			t.Fatalf("approve again: %v", err)
		}
		if e.act.count() != 1 {
			t.Fatalf("executed %d times, want exactly once", e.act.count())
		}
	})
}
