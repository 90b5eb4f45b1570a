package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// txNotifier writes each notice as an action_log row through the
// transaction it is given, so a test can see whether the notice shares the
// fate of the change; fail makes it refuse.
type txNotifier struct {
	mu      sync.Mutex
	notices []Notice
	fail    error
}

func (n *txNotifier) Notice(ctx context.Context, tx TxExec, nt Notice) error {
	n.mu.Lock()
	fail := n.fail
	n.mu.Unlock()
	if fail != nil {
		return fail
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO action_log (account_id, action_type, message, created_at) VALUES (?, ?, ?, ?)`,
		nt.Account, "notice", nt.Kind, nt.Item.CreatedAt); err != nil {
		return err
	}
	n.mu.Lock()
	n.notices = append(n.notices, nt)
	n.mu.Unlock()
	return nil
}

func (n *txNotifier) kinds() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, nt := range n.notices {
		out = append(out, nt.Kind)
	}
	return out
}

func (n *txNotifier) setFail(err error) {
	n.mu.Lock()
	n.fail = err
	n.mu.Unlock()
}

func (e *env) noticeRows() int {
	e.t.Helper()
	var c int
	if err := e.db.QueryRowContext(e.ctx, `SELECT count(*) FROM action_log WHERE action_type = 'notice'`).Scan(&c); err != nil {
		e.t.Fatal(err)
	}
	return c
}

func newNoticeEnv(t *testing.T) (*env, *txNotifier) {
	t.Helper()
	e := newEnv(t)
	n := &txNotifier{}
	e.opts.Notifier = n
	e.g = e.open()
	e.pol.set(approvalThenAllow)
	return e, n
}

// Queueing an item records its notice in the same transaction: the notice
// describes the item exactly, and a notifier that fails leaves no item.
func TestNoticeIsWrittenWithTheApprovalItem(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e, n := newNoticeEnv(t)
		id := e.queue(`{"text":"hello"}`)
		if got := n.kinds(); len(got) != 1 || got[0] != NoticeCreated {
			t.Fatalf("notices = %v, want one %s", got, NoticeCreated)
		}
		nt := n.notices[0]
		if nt.Item.ID != id || nt.Item.Tool != fakeTool || string(nt.Item.Params) != `{"text":"hello"}` || nt.Account != "default" ||
			nt.Item.MatchedRuleID != "user:review_posts" || nt.Item.ExpiresAt == "" || nt.ParamsHash == "" {
			t.Fatalf("notice %+v", nt)
		}
		if e.noticeRows() != 1 {
			t.Fatalf("notice rows = %d", e.noticeRows())
		}

		n.setFail(errors.New("outbox unavailable"))
		_, err := e.do(e.g, json.RawMessage(`{"text":"second"}`), "")
		if apperr.CodeOf(err) != apperr.DBError {
			t.Fatalf("queue with a failing notifier: %v, want db_error", err)
		}
		if c := e.countRows("approval_queue"); c != 1 {
			t.Fatalf("approval items = %d after the notifier failed, want 1 (the failed one rolled back)", c)
		}
	})
}

// An edit records approval.edited with the new fingerprint in the edit's
// transaction; a decision records approval.decided in the claim's.
func TestNoticeOnEditAndDecision(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e, n := newNoticeEnv(t)
		id := e.queue(`{"text":"draft"}`)
		created := n.notices[0].ParamsHash
		if _, err := e.g.Edit(e.ctx, id, "better"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.g.Reject(e.ctx, id, "alice", "no"); err != nil {
			t.Fatal(err)
		}
		if got := n.kinds(); len(got) != 3 || got[1] != NoticeEdited || got[2] != NoticeDecided {
			t.Fatalf("notices = %v", got)
		}
		ed := n.notices[1]
		if ed.ParamsHash == created || ed.ParamsHash == "" || string(ed.Item.Params) != `{"text":"better"}` {
			t.Fatalf("edited notice %+v (created hash %s)", ed, created)
		}
		dec := n.notices[2]
		if dec.Item.Status != ApprovalRejected || dec.Item.ReviewedBy != "alice" {
			t.Fatalf("decided notice %+v", dec.Item)
		}
		// A failing notifier undoes the edit.
		id2 := e.queue(`{"text":"two"}`)
		n.setFail(errors.New("outbox unavailable"))
		if _, err := e.g.Edit(e.ctx, id2, "changed"); err == nil {
			t.Fatal("edit succeeded although its notice failed")
		}
		if p := e.storedParams(id2); p != `{"text":"two"}` {
			t.Fatalf("params after a failed edit = %s", p)
		}
	})
}

// A decide hook runs in the claim's transaction: its refusal leaves the
// item pending and comes back as its own error; its write commits with the
// decision.
func TestDecideHookSharesTheClaimTransaction(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e, _ := newNoticeEnv(t)
		id := e.queue(`{"text":"hook"}`)
		refusal := apperr.New(apperr.ApprovalNotPending, "this link was already used")
		_, _, err := e.g.ApproveWith(e.ctx, id, Decision{Reviewer: "link:phone", Hook: func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO action_log (account_id, action_type, created_at) VALUES ('default', 'hook', 'x')`); err != nil {
				return err
			}
			return refusal
		}})
		if err == nil || apperr.As(err).Message != refusal.Message {
			t.Fatalf("approve with a refusing hook: %v", err)
		}
		it, err := e.g.Item(e.ctx, id)
		if err != nil || it.Status != ApprovalPending || e.act.count() != 0 {
			t.Fatalf("after a refused hook: item %+v err %v executed %d", it, err, e.act.count())
		}
		hookRows := func() int {
			var c int
			if err := e.db.QueryRowContext(e.ctx, `SELECT count(*) FROM action_log WHERE action_type = 'hook'`).Scan(&c); err != nil {
				t.Fatal(err)
			}
			return c
		}
		if hookRows() != 0 {
			t.Fatal("the refusing hook's write was kept")
		}
		it, _, err = e.g.ApproveWith(e.ctx, id, Decision{Reviewer: "link:phone", Hook: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO action_log (account_id, action_type, created_at) VALUES ('default', 'hook', 'x')`)
			return err
		}})
		if err != nil || it.Status != ApprovalExecuted || it.ReviewedBy != "link:phone" || hookRows() != 1 || e.act.count() != 1 {
			t.Fatalf("approve with a hook: item %+v err %v hook rows %d executed %d", it, err, hookRows(), e.act.count())
		}
	})
}
