package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// A decision holds only for the content the reviewer was shown: the hash
// of the item before an edit decides nothing and says the item changed;
// the current hash, or none, decides the content as it is.
func TestDecisionIsACompareAndSetOnTheShownContent(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, tt := range []struct {
			name     string
			approve  bool
			shown    func(before, now string) string
			wantCode apperr.Code
		}{
			{"approve what was shown before the edit", true, func(before, _ string) string { return before }, apperr.ApprovalChanged},
			{"reject what was shown before the edit", false, func(before, _ string) string { return before }, apperr.ApprovalChanged},
			{"approve a hash of nothing it ever had", true, func(string, string) string { return strings.Repeat("0", 64) }, apperr.ApprovalChanged},
			{"approve what is shown now", true, func(_, now string) string { return now }, ""},
			{"reject what is shown now", false, func(_, now string) string { return now }, ""},
			{"approve with nothing shown", true, func(string, string) string { return "" }, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				e := newEnv(t)
				e.pol.set(approvalThenAllow)
				id := e.queue(`{"text":"T0"}`)
				before, err := e.g.Item(e.ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if before.ContentHash != ContentHash(fakeTool, json.RawMessage(`{"text":"T0"}`)) {
					t.Fatalf("content_hash %q is not the hash of the stored call", before.ContentHash)
				}
				now, err := e.g.Edit(e.ctx, id, "T1")
				if err != nil {
					t.Fatal(err)
				}
				if now.ContentHash == before.ContentHash {
					t.Fatal("an edit kept the content hash")
				}
				d := Decision{Reviewer: "web", Shown: tt.shown(before.ContentHash, now.ContentHash)}
				if tt.approve {
					_, _, err = e.g.ApproveWith(e.ctx, id, d)
				} else {
					_, err = e.g.RejectWith(e.ctx, id, d)
				}
				if apperr.CodeOf(err) != tt.wantCode {
					t.Fatalf("decision: %v; want code %q", err, tt.wantCode)
				}
				it, _ := e.g.Item(e.ctx, id)
				if tt.wantCode != "" {
					if !strings.Contains(err.Error(), "changed since you saw it") {
						t.Errorf("refusal %q does not say the item changed since it was seen", err)
					}
					if it.Status != ApprovalPending || it.ReviewedBy != "" || e.act.count() != 0 {
						t.Fatalf("a refused decision changed the item (%+v) or ran it %d times", it, e.act.count())
					}
					return
				}
				if tt.approve && (e.act.count() != 1 || string(e.act.last()) != `{"text":"T1"}` || it.Status != ApprovalExecuted) {
					t.Fatalf("approved: ran %d times with %s, item %s", e.act.count(), e.act.last(), it.Status)
				}
				if !tt.approve && (e.act.count() != 0 || it.Status != ApprovalRejected) {
					t.Fatalf("rejected: ran %d times, item %s", e.act.count(), it.Status)
				}
			})
		}
	})
}

// An approval of T0 racing an edit to T1, started together, many times:
// what runs is always what the reviewer was shown, and the item records
// what ran; a lost race is an approval_changed answer with nothing run.
func TestApproveRacingAnEditRunsOnlyTheShownContent(t *testing.T) {
	const trials = 50
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(approvalThenAllow)
		other := e.open()
		var wrong []string
		var approved, changed int
		for i := range trials {
			t0 := fmt.Sprintf(`{"text":"T0 %d"}`, i)
			id := e.queue(t0)
			shown, err := e.g.Item(e.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			ran := e.act.count()
			start := make(chan struct{})
			appErr, editErr := make(chan error, 1), make(chan error, 1)
			go func() {
				<-start
				_, _, err := e.g.ApproveWith(context.Background(), id, Decision{Reviewer: "link:phone", Shown: shown.ContentHash})
				appErr <- err
			}()
			go func() {
				<-start
				_, err := other.Edit(context.Background(), id, fmt.Sprintf("T1 %d", i))
				editErr <- err
			}()
			close(start)
			aerr := <-appErr
			<-editErr
			final, err := e.g.Item(e.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			e.act.mu.Lock()
			runs := slices.Clone(e.act.calls[ran:])
			e.act.mu.Unlock()
			switch apperr.CodeOf(aerr) {
			case "":
				approved++
				if len(runs) != 1 || string(runs[0]) != t0 || string(final.Params) != t0 {
					wrong = append(wrong, fmt.Sprintf("trial %d: approved %s; ran %s, item records %s", i, t0, runs, final.Params))
				}
			case apperr.ApprovalChanged:
				changed++
				if len(runs) != 0 || final.Status != ApprovalPending {
					wrong = append(wrong, fmt.Sprintf("trial %d: refused as changed, yet ran %s (item %s)", i, runs, final.Status))
				} else if _, err := e.g.Reject(e.ctx, id, "cleanup", ""); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("trial %d: approve answered %v", i, aerr)
			}
		}
		t.Logf("%d trials: %d approved as shown, %d refused as changed", trials, approved, changed)
		if len(wrong) > 0 {
			t.Errorf("%d of %d trials ran other content than was shown:\n%s", len(wrong), trials, strings.Join(wrong, "\n"))
		}
	})
}
