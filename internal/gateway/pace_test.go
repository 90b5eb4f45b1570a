package gateway

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestNotBeforeHoldsOnlyWhatWouldReachX: a call with NotBefore in the future
// that the policy would send to X is not attempted (no execution, no audit
// row, no charge against a limit) and says when it may go; one the policy
// routes to approval is queued at once, since pacing protects X, not the
// queue. Once the time has come the held call goes through.
func TestNotBeforeHoldsOnlyWhatWouldReachX(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		t.Run("allowed call waits", func(t *testing.T) {
			e := newEnv(t)
			// Two calls an hour: a held call that took a charge would
			// leave room for only one more.
			e.withEngine(policy.Config{EnforceForMutations: true, MaxMutationsPerHour: 2}, policy.ModeAutopilot, false)
			until := e.clock.Now().Add(90 * time.Second)
			_, err := e.g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"first"}`), NotBefore: until})
			var paced *PacedError
			if !errors.As(err, &paced) {
				t.Fatalf("allowed call before NotBefore: %v, want a PacedError", err)
			}
			if !paced.Until.Equal(until) {
				t.Errorf("PacedError.Until = %s, want %s", paced.Until, until)
			}
			if e.act.count() != 0 || len(e.audit()) != 0 || e.countRows("approval_queue") != 0 {
				t.Fatalf("held call left a trace: executed %d, audit rows %d, queued %d", e.act.count(), len(e.audit()), e.countRows("approval_queue"))
			}
			// The identical call at its time is not answered from memory
			// with the held call's error.
			e.clock.AdvanceTo(until)
			resp, err := e.g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"first"}`), NotBefore: until})
			if err != nil || resp.Kind != Executed {
				t.Fatalf("call at NotBefore: kind %q, %v", resp.Kind, err)
			}
			if _, err := e.g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"second"}`)}); err != nil {
				t.Fatalf("second call of the hour: %v (the held call was charged)", err)
			}
			_, err = e.g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"third"}`)})
			wantCode(t, err, apperr.PolicyRateLimited)
			if e.act.count() != 2 {
				t.Errorf("executed %d calls, want 2", e.act.count())
			}
		})
		t.Run("queued call does not wait", func(t *testing.T) {
			e := newEnv(t)
			e.withEngine(policy.Config{EnforceForMutations: true}, policy.ModeAutopilot, true)
			resp, err := e.g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"queued"}`), NotBefore: e.clock.Now().Add(time.Hour)})
			if err != nil || resp.Kind != Routed || resp.ApprovalID == 0 {
				t.Fatalf("routed call before NotBefore: kind %q id %d, %v", resp.Kind, resp.ApprovalID, err)
			}
			if e.act.count() != 0 {
				t.Errorf("executed %d calls", e.act.count())
			}
		})
		t.Run("denied call answers at once", func(t *testing.T) {
			e := newEnv(t)
			e.withEngine(policy.Config{EnforceForMutations: true, BlockedTools: []string{fakeTool}}, policy.ModeAutopilot, false)
			_, err := e.g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"denied"}`), NotBefore: e.clock.Now().Add(time.Hour)})
			wantCode(t, err, apperr.PolicyBlocked)
		})
	})
}
