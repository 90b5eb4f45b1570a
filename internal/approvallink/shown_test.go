package approvallink

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// editingQueue is the gateway's queue with another reviewer's edit landing
// between the link's check and its decision: the window in which a link
// used to decide content it never showed.
type editingQueue struct {
	gwQueue
	edit func()
}

func (q editingQueue) Decide(ctx context.Context, account string, id int64, approve bool, d gateway.Decision) (*gateway.ApprovalItem, error) {
	q.edit()
	return q.gwQueue.Decide(ctx, account, id, approve, d)
}

func (e *env) postedTexts() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.posted)
}

// An edit landing after a link was checked and before it decides: the
// link decides nothing, says the post was edited, and the item keeps the
// edit, pending. Approve and reject alike, on both backends.
func TestLinkDecidesOnlyWhatItShowed(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, approve := range []bool{true, false} {
			t.Run(fmt.Sprintf("approve=%t", approve), func(t *testing.T) {
				e := newEnv(t)
				it := e.queue("T0 as the phone showed it")
				links, err := e.svc.Links(e.ctx, "default", it, "phone")
				if err != nil {
					t.Fatal(err)
				}
				e.svc.o.Queue = editingQueue{gwQueue{e.g}, func() {
					if _, err := e.g.Edit(e.ctx, it.ID, "T1 from the web"); err != nil {
						t.Errorf("edit: %v", err)
					}
				}}
				tok, csrf := tokenOf(t, links.Approve), links.ApproveCSRF
				if !approve {
					tok, csrf = tokenOf(t, links.Reject), links.RejectCSRF
				}
				_, err = e.svc.Act(e.ctx, tok, csrf, "")
				refusal(t, err, http.StatusGone, "edited")
				if p := e.postedTexts(); len(p) != 0 {
					t.Fatalf("posted %q; want nothing", p)
				}
				got, err := e.g.Item(e.ctx, it.ID)
				if err != nil || got.Status != gateway.ApprovalPending || got.ReviewedBy != "" || !strings.Contains(string(got.Params), "T1") {
					t.Fatalf("item after a refused link = %+v, %v; want pending with the edit", got, err)
				}
			})
		}
	})
}

// The phone taps Approve on T0 while a second reviewer edits the item to
// T1, started together, many times on both backends. Whatever wins, X gets
// only the text the link showed, the item records what X got, and the
// link never answers "approved" for a post that was not sent.
func TestLinkApproveRacingAnEdit(t *testing.T) {
	const trials = 50
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		var approved, refused, edits int
		var wrong []string // every trial whose outcome broke the promise
		for i := range trials {
			t0, t1 := fmt.Sprintf("T0 %d", i), fmt.Sprintf("T1 %d", i)
			it := e.queue(t0)
			links, err := e.svc.Links(e.ctx, "default", it, "phone")
			if err != nil {
				t.Fatal(err)
			}
			before := len(e.postedTexts())
			start := make(chan struct{})
			actErr, editErr := make(chan error, 1), make(chan error, 1)
			var decided *gateway.ApprovalItem
			go func() {
				<-start
				var err error
				decided, err = e.svc.Act(context.Background(), tokenOf(t, links.Approve), links.ApproveCSRF, "")
				actErr <- err
			}()
			go func() {
				<-start
				_, err := e.g.Edit(context.Background(), it.ID, t1)
				editErr <- err
			}()
			close(start)
			aerr, eerr := <-actErr, <-editErr
			if eerr == nil {
				edits++
			}
			posted := e.postedTexts()[before:]
			final, err := e.g.Item(e.ctx, it.ID)
			if err != nil {
				t.Fatal(err)
			}
			var r *Refusal
			switch {
			case aerr == nil:
				approved++
				if !slices.Equal(posted, []string{t0}) || decided.Status != gateway.ApprovalExecuted {
					wrong = append(wrong, fmt.Sprintf("trial %d: the link answered approved (%s); X got %q, want exactly [%q]", i, decided.Status, posted, t0))
				} else if !strings.Contains(string(final.Params), t0) {
					wrong = append(wrong, fmt.Sprintf("trial %d: X got %q but the item records %s", i, t0, final.Params))
				}
			case errors.As(aerr, &r) && r.Status == http.StatusGone:
				refused++
				if len(posted) != 0 {
					wrong = append(wrong, fmt.Sprintf("trial %d: the link was refused (%v) yet X got %q", i, aerr, posted))
				} else if final.Status != gateway.ApprovalPending || !strings.Contains(string(final.Params), t1) {
					wrong = append(wrong, fmt.Sprintf("trial %d: refused link left item %+v; want pending with the edit", i, final))
				} else if _, err := e.g.Reject(e.ctx, it.ID, "cleanup", ""); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("trial %d: link answered %v", i, aerr)
			}
		}
		t.Logf("%d trials: %d approved as shown, %d refused as edited, %d edits landed", trials, approved, refused, edits)
		if len(wrong) > 0 {
			t.Errorf("%d of %d trials decided other content than the link showed:\n%s", len(wrong), trials, strings.Join(wrong, "\n"))
		}
	})
}
