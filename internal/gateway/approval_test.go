package gateway

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// queue routes params to approval and returns the queue id.
func (e *env) queue(params string) int64 {
	e.t.Helper()
	r, err := e.do(e.g, json.RawMessage(params), "")
	if err != nil || r.Kind != Routed || r.ApprovalID == 0 {
		e.t.Fatalf("queue %s: kind %q id %d err %v", params, r.Kind, r.ApprovalID, err)
	}
	return r.ApprovalID
}

func (e *env) storedParams(id int64) string {
	e.t.Helper()
	var p string
	if err := e.db.QueryRowContext(e.ctx, `SELECT params_json FROM approval_queue WHERE id = ?`, id).Scan(&p); err != nil {
		e.t.Fatalf("read approval %d: %v", id, err)
	}
	return p
}

func TestApproveReplaysExactlyTheStoredParams(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		// Unicode, HTML characters, a number literal and nesting: all must come
		// back byte for byte.
		id := e.queue(`{"text":"héllo <b>&","z":{"b":[1.50,2e3],"a":null},"media":["1","2"]}`)
		stored := e.storedParams(id)
		e.clock.Advance(time.Minute)
		it, resp, err := e.g.Approve(e.ctx, id, "alice", "looks good")
		if err != nil {
			t.Fatalf("approve: %v", err)
		}
		if e.act.count() != 1 || string(e.act.last()) != stored {
			t.Fatalf("Execute got %s, stored %s", e.act.last(), stored)
		}
		if resp.Kind != Executed || it.Status != ApprovalExecuted || it.CorrelationID != resp.CorrelationID || it.ReviewedBy != "alice" || it.ReviewNotes != "looks good" {
			t.Fatalf("item %+v resp %+v", it, resp)
		}
		reqs := e.pol.requests()
		if last := reqs[len(reqs)-1]; !last.BypassApproval {
			t.Fatalf("the replay did not tell the policy it was approved: %+v", last)
		}
		rows := e.audit()
		if len(rows) != 1 || rows[0].caller != "mcp" || rows[0].approvalID != id || rows[0].status != statusSuccess {
			t.Fatalf("audit %+v", rows)
		}
		var result map[string]json.RawMessage
		if err := json.Unmarshal(it.Result, &result); err != nil {
			t.Fatalf("item result %s: %v", it.Result, err)
		}
		if echo, err := Canonical(result["echo"]); err != nil || string(echo) != stored {
			t.Fatalf("item result %s, want the echo of %s", it.Result, stored)
		}
	})
}

// A human approving right after the agent queued the call (within the
// in-memory duplicate window) must run it, not get the queued answer back.
func TestApproveRightAfterQueueingExecutes(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		id := e.queue(`{"text":"quick"}`)
		it, resp, err := e.g.Approve(e.ctx, id, "alice", "")
		if err != nil {
			t.Fatalf("approve: %v", err)
		}
		if resp.Kind != Executed || it.Status != ApprovalExecuted || e.act.count() != 1 {
			t.Fatalf("approve within the memory window: kind %q status %q executed %d", resp.Kind, it.Status, e.act.count())
		}
		// The agent's identical retry now gets the executed result.
		r := e.mustDo(json.RawMessage(`{"text":"quick"}`), "")
		if r.Kind != Duplicate || r.CorrelationID != resp.CorrelationID || e.act.count() != 1 {
			t.Fatalf("retry after approval: kind %q executed %d", r.Kind, e.act.count())
		}
	})
}

func TestEditChangesTextAndIsValidated(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		id := e.queue(`{"text":"draft","n":1}`)
		orig := e.storedParams(id)

		_, err := e.g.Edit(e.ctx, id, "this edit is much too long for the rule")
		if apperr.CodeOf(err) != apperr.TweetTooLong {
			t.Fatalf("invalid edit: %v", err)
		}
		if e.storedParams(id) != orig {
			t.Fatal("an invalid edit changed the stored params")
		}

		it, err := e.g.Edit(e.ctx, id, "final")
		if err != nil {
			t.Fatalf("edit: %v", err)
		}
		want, wantHash := canon(t, `{"n":1,"text":"final"}`)
		if string(it.Params) != want || string(it.OriginalParams) != orig || !it.Edited {
			t.Fatalf("edited item params %s original %s edited %v", it.Params, it.OriginalParams, it.Edited)
		}
		var hash string
		if err := e.db.QueryRowContext(e.ctx, `SELECT params_hash FROM approval_queue WHERE id = ?`, id).Scan(&hash); err != nil || hash != wantHash {
			t.Fatalf("edited hash %q, want %q (%v)", hash, wantHash, err)
		}
		if _, _, err := e.g.Approve(e.ctx, id, "bob", ""); err != nil {
			t.Fatalf("approve: %v", err)
		}
		if string(e.act.last()) != want {
			t.Fatalf("Execute got %s, want the edited %s", e.act.last(), want)
		}
		if _, err := e.g.Edit(e.ctx, id, "late"); apperr.CodeOf(err) != apperr.ApprovalNotPending {
			t.Fatalf("editing a decided item: %v", err)
		}

		// A tool without editable text refuses edits.
		e.g.Register(&Action{Tool: "fake_like", Category: policy.CatEngage, Execute: e.act.execute})
		r, err := e.g.Do(e.ctx, Call{Tool: "fake_like", Params: map[string]any{"tweet_id": "1"}})
		if err != nil || r.Kind != Routed {
			t.Fatalf("queue like: %v", err)
		}
		if _, err := e.g.Edit(e.ctx, r.ApprovalID, "x"); apperr.CodeOf(err) != apperr.ValidationError {
			t.Fatalf("editing a like: %v", err)
		}
	})
}

func TestRejectExpireAndDoubleApprove(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		t.Run("reject", func(t *testing.T) {
			e := newEnv(t)
			e.pol.set(approvalThenAllow)
			id := e.queue(`{"text":"no"}`)
			it, err := e.g.Reject(e.ctx, id, "alice", "off-brand")
			if err != nil || it.Status != ApprovalRejected || it.ReviewNotes != "off-brand" {
				t.Fatalf("reject: %+v %v", it, err)
			}
			_, _, err = e.g.Approve(e.ctx, id, "bob", "")
			wantCode(t, err, apperr.ApprovalNotPending)
			if _, err := e.g.Reject(e.ctx, id, "bob", ""); apperr.CodeOf(err) != apperr.ApprovalNotPending {
				t.Fatalf("second reject: %v", err)
			}
			if e.act.count() != 0 {
				t.Fatal("a rejected item ran")
			}
		})
		t.Run("expire", func(t *testing.T) {
			e := newEnv(t)
			e.pol.set(approvalThenAllow)
			id := e.queue(`{"text":"old"}`)
			if n, _ := e.g.PendingCount(e.ctx); n != 1 {
				t.Fatalf("pending %d", n)
			}
			e.clock.Advance(24*time.Hour + time.Second)
			if n, _ := e.g.PendingCount(e.ctx); n != 0 {
				t.Fatalf("pending after expiry %d", n)
			}
			it, err := e.g.Item(e.ctx, id)
			if err != nil || it.Status != ApprovalExpired {
				t.Fatalf("expired item: %+v %v", it, err)
			}
			_, _, err = e.g.Approve(e.ctx, id, "bob", "")
			wantCode(t, err, apperr.ApprovalNotPending)
			// Once expired, the identical call can be queued afresh.
			if id2 := e.queue(`{"text":"old"}`); id2 == id {
				t.Fatal("an expired item was reused")
			}
			if e.act.count() != 0 {
				t.Fatal("an expired item ran")
			}
		})
		t.Run("double approve", func(t *testing.T) {
			e := newEnv(t)
			e.pol.set(approvalThenAllow)
			id := e.queue(`{"text":"twice"}`)
			if _, _, err := e.g.Approve(e.ctx, id, "alice", ""); err != nil {
				t.Fatal(err)
			}
			_, _, err := e.g.Approve(e.ctx, id, "alice", "")
			wantCode(t, err, apperr.ApprovalNotPending)
			if e.act.count() != 1 {
				t.Fatalf("executed %d", e.act.count())
			}
		})
		t.Run("concurrent approvals", func(t *testing.T) {
			e := newEnv(t)
			e.pol.set(approvalThenAllow)
			id := e.queue(`{"text":"race"}`)
			other := e.open()
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				g := e.g
				if i%2 == 1 {
					g = other
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _, errs[i] = g.Approve(e.ctx, id, "reviewer", "")
				}()
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch apperr.CodeOf(err) {
				case "":
					ok++
				case apperr.ApprovalNotPending:
				default:
					t.Fatalf("approve: %v", err)
				}
			}
			if ok != 1 || e.act.count() != 1 {
				t.Fatalf("%d approvals succeeded, executed %d", ok, e.act.count())
			}
		})
		t.Run("unknown item", func(t *testing.T) {
			e := newEnv(t)
			_, _, err := e.g.Approve(e.ctx, 999, "alice", "")
			wantCode(t, err, apperr.NotFound)
		})
	})
}

func TestApprovalReplayIsStillSubjectToDenyAndDedup(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		t.Run("deny", func(t *testing.T) {
			e := newEnv(t)
			e.pol.set(approvalThenAllow)
			id := e.queue(`{"text":"limited"}`)
			e.pol.set(func(policy.Request) policy.Decision {
				return policy.Decision{Outcome: policy.Deny, Code: apperr.PolicyRateLimited, RuleID: "compat:max_mutations_per_hour",
					Reason: "limit", ResetAt: time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC)}
			})
			it, _, err := e.g.Approve(e.ctx, id, "alice", "")
			ae := wantCode(t, err, apperr.PolicyRateLimited)
			if ae.Extra["rate_limit_reset"] == nil {
				t.Fatalf("denied replay lacks rate_limit_reset: %v", ae.Extra)
			}
			if it == nil || it.Status != ApprovalFailed || it.ErrorCode != string(apperr.PolicyRateLimited) {
				t.Fatalf("item after denied replay: %+v", it)
			}
			if e.act.count() != 0 {
				t.Fatal("a denied replay ran")
			}
		})
		t.Run("dry run", func(t *testing.T) {
			e := newEnv(t)
			e.pol.set(approvalThenAllow)
			id := e.queue(`{"text":"dry"}`)
			e.pol.set(decision(policy.DryRun, "compat:dry_run_mutations"))
			it, resp, err := e.g.Approve(e.ctx, id, "alice", "")
			if err != nil || resp.Kind != DryRun || it.Status != ApprovalFailed || e.act.count() != 0 {
				t.Fatalf("dry-run replay: kind %q item %+v err %v executed %d", resp.Kind, it, err, e.act.count())
			}
		})
		t.Run("dedup", func(t *testing.T) {
			e := newEnv(t)
			e.pol.set(approvalThenAllow)
			a := e.queue(`{"text":"same"}`)
			b := e.queue(`{"text":"other"}`)
			// A reviewer edits b into the same call as a.
			if _, err := e.g.Edit(e.ctx, b, "same"); err != nil {
				t.Fatal(err)
			}
			_, first, err := e.g.Approve(e.ctx, a, "alice", "")
			if err != nil || first.Kind != Executed {
				t.Fatalf("approve a: %v", err)
			}
			for _, wait := range []time.Duration{0, time.Minute} {
				if wait > 0 {
					// Again through the database rather than memory: queue and
					// edit a third item into the same call.
					e.clock.Advance(wait)
					b = e.queue(`{"text":"third"}`)
					if _, err := e.g.Edit(e.ctx, b, "same"); err != nil {
						t.Fatal(err)
					}
				}
				it, resp, err := e.g.Approve(e.ctx, b, "bob", "")
				if err != nil {
					t.Fatalf("approve duplicate: %v", err)
				}
				if resp.Kind != Duplicate || resp.CorrelationID != first.CorrelationID || it.CorrelationID != first.CorrelationID {
					t.Fatalf("after %v: replay kind %q corr %q, want duplicate of %q", wait, resp.Kind, resp.CorrelationID, first.CorrelationID)
				}
			}
			if e.act.count() != 1 {
				t.Fatalf("executed %d times, want 1", e.act.count())
			}
		})
	})
}

func TestConcurrentIdenticalCallsQueueOneItem(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		other := e.open() // another process on the same database
		const n = 40
		ids := make([]int64, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			g := e.g
			if i%2 == 1 {
				g = other
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"queue me"}`)})
				ids[i], errs[i] = r.ApprovalID, err
			}()
		}
		wg.Wait()
		for i := range ids {
			if errs[i] != nil || ids[i] != ids[0] || ids[0] == 0 {
				t.Fatalf("call %d: queue id %d (first %d) err %v", i, ids[i], ids[0], errs[i])
			}
		}
		if n := e.countRows("approval_queue"); n != 1 {
			t.Fatalf("%d approval items for one call", n)
		}
	})
}

func TestInterruptedApprovalReplayIsMarkedFailedAtStart(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		id := e.queue(`{"text":"crashed"}`)
		// A reviewer's process claimed the item and wrote the replay's pending
		// row, then died.
		if _, err := e.db.ExecContext(e.ctx, `UPDATE approval_queue SET status = 'approved' WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
		corr := e.insertRow("dead-reviewer", statusPending, `{"text":"crashed"}`, e.clock.Now())
		if _, err := e.db.ExecContext(e.ctx, `UPDATE mutation_audit SET approval_id = ? WHERE correlation_id = ?`, id, corr); err != nil {
			t.Fatal(err)
		}
		other := e.queue(`{"text":"still waiting"}`)
		e.open()
		it, err := e.g.Item(e.ctx, id)
		if err != nil || it.Status != ApprovalFailed || it.ErrorCode != string(apperr.XOutcomeUnknown) || it.CorrelationID != corr {
			t.Fatalf("interrupted replay item: %+v %v", it, err)
		}
		if it, _ := e.g.Item(e.ctx, other); it.Status != ApprovalPending {
			t.Fatalf("an unrelated pending item became %s", it.Status)
		}
		if e.act.count() != 0 {
			t.Fatal("recovery executed something")
		}
	})
}

// TestApprovalQueueIsBounded: past max_pending_approvals a routed call
// fails with the non-retryable approval_queue_full and queues nothing; an
// identical repeat of a queued call still gets its item, and a decision
// frees a place.
func TestApprovalQueueIsBounded(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.opts.MaxPendingApprovals = 3
		g := e.open()
		e.pol.set(approvalThenAllow)
		var ids []int64
		for i := range 3 {
			r, err := e.do(g, map[string]any{"text": fmt.Sprintf("queued %d", i)}, "")
			if err != nil || r.Kind != Routed {
				t.Fatalf("call %d: %q %v", i, r.Kind, err)
			}
			ids = append(ids, r.ApprovalID)
		}
		_, err := e.do(g, map[string]any{"text": "one too many"}, "")
		ae := wantCode(t, err, apperr.ApprovalQueueFull)
		if ae.Retryable() || !strings.Contains(ae.Message, "max_pending_approvals") {
			t.Fatalf("queue full error: retryable %v, message %q", ae.Retryable(), ae.Message)
		}
		if n := e.countRows("approval_queue"); n != 3 {
			t.Fatalf("%d items queued, want 3", n)
		}
		r, err := e.do(g, map[string]any{"text": "queued 0"}, "")
		if err != nil || r.ApprovalID != ids[0] {
			t.Fatalf("repeat of a queued call: id %d err %v, want item %d", r.ApprovalID, err, ids[0])
		}
		if _, err := g.Reject(e.ctx, ids[1], "test", ""); err != nil {
			t.Fatal(err)
		}
		if r, err := e.do(g, map[string]any{"text": "one too many"}, ""); err != nil || r.Kind != Routed {
			t.Fatalf("after a rejection: %q %v", r.Kind, err)
		}
	})
}

// TestDecisionTimes: how long each decided item waited, from queued to
// approved or rejected; items still pending or left to expire are not
// decisions, and items decided before since are left out.
func TestDecisionTimes(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		start := e.clock.Now()
		old := e.queue(`{"text":"old"}`)
		e.clock.Advance(time.Minute)
		if _, err := e.g.Reject(e.ctx, old, "alice", ""); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Hour)
		since := e.clock.Now()
		a := e.queue(`{"text":"in 5 min"}`)
		b := e.queue(`{"text":"in 2 h"}`)
		e.queue(`{"text":"waits"}`)
		e.clock.Advance(5 * time.Minute)
		if _, _, err := e.g.Approve(e.ctx, a, "alice", ""); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(115 * time.Minute)
		if _, err := e.g.Reject(e.ctx, b, "bob", ""); err != nil {
			t.Fatal(err)
		}
		got, err := e.g.DecisionTimes(e.ctx, since, 100)
		if err != nil {
			t.Fatal(err)
		}
		if want := []time.Duration{5 * time.Minute, 2 * time.Hour}; !reflect.DeepEqual(got, want) {
			t.Fatalf("DecisionTimes since %s = %v, want %v", since.Sub(start), got, want)
		}
		if got, _ := e.g.DecisionTimes(e.ctx, start, 1); len(got) != 1 || got[0] != time.Minute {
			t.Fatalf("the oldest decision, limit 1: %v", got)
		}
	})
}
