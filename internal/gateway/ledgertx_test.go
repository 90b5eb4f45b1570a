package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// qUsageRow is a row of the X usage ledger as its owner writes it; the
// gateway's tests cannot import that package (it builds on this one).
const qUsageRow = `INSERT INTO x_api_usage (account_id, endpoint, method, status_code, items, cost_usd, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?)`

// deferUsage is an execution that records one X usage row the way the
// ledger does inside a gated call, then returns res.
func deferUsage(t *testing.T, res Result) func(context.Context, json.RawMessage) (Result, error) {
	return func(ctx context.Context, _ json.RawMessage) (Result, error) {
		ok, err := store.Defer(ctx, qUsageRow, "default", "POST /2/tweets", "POST", 201, 1, 0.015, "2026-01-01T00:00:00Z")
		if !ok || err != nil {
			t.Errorf("Defer inside a gated call = %t, %v; want the row deferred", ok, err)
		}
		return res, nil
	}
}

// injectFault makes the completing transaction fail after the audit
// row's update: on SQLite a trigger refuses the ledger row; on PostgreSQL
// a deferred constraint trigger refuses it at COMMIT. It returns the
// statement that lifts the fault.
func injectFault(t *testing.T, e *env) (lift string) {
	t.Helper()
	stmts := []string{`CREATE TRIGGER refuse_usage BEFORE INSERT ON x_api_usage BEGIN SELECT RAISE(ABORT, 'injected fault'); END`}
	lift = `DROP TRIGGER refuse_usage`
	if e.db.Dialect == store.Postgres {
		stmts = []string{
			`CREATE FUNCTION refuse_usage() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`,
			`CREATE CONSTRAINT TRIGGER refuse_usage AFTER INSERT ON x_api_usage DEFERRABLE INITIALLY DEFERRED
				FOR EACH ROW EXECUTE FUNCTION refuse_usage()`,
		}
		lift = `DROP TRIGGER refuse_usage ON x_api_usage`
	}
	for _, s := range stmts {
		if _, err := e.db.ExecContext(e.ctx, s); err != nil {
			t.Fatalf("inject fault: %v", err)
		}
	}
	t.Cleanup(func() {
		_, _ = e.db.ExecContext(context.Background(), lift)
		_, _ = e.db.ExecContext(context.Background(), `DROP FUNCTION IF EXISTS refuse_usage()`)
	})
	return lift
}

// TestLedgerRowsCommitWithTheCompletion: the X usage row an executed call
// records is written in the transaction that completes its audit row, so
// a fault in that transaction leaves neither, and once the fault is gone
// both are written together.
func TestLedgerRowsCommitWithTheCompletion(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.act.setRun(deferUsage(t, Result{Data: map[string]any{"id": "1"}}))
		lift := injectFault(t, e)

		resp, err := e.do(e.g, map[string]any{"text": "faulted"}, "")
		if err != nil || !resp.AuditIncomplete {
			t.Fatalf("call under a fault: %+v, %v; want executed with audit_incomplete", resp, err)
		}
		if got, n := e.statuses(), e.countRows("x_api_usage"); len(got) != 1 || got[0] != statusPending || n != 0 {
			t.Fatalf("after a fault in the completion: statuses %v, %d ledger rows; want the call pending and no ledger row", got, n)
		}

		if _, err := e.db.ExecContext(e.ctx, lift); err != nil {
			t.Fatal(err)
		}
		// The next call records the delayed outcome first, with its row.
		if _, err := e.do(e.g, map[string]any{"text": "after"}, ""); err != nil {
			t.Fatal(err)
		}
		if got, n := e.statuses(), e.countRows("x_api_usage"); len(got) != 2 || got[0] != statusSuccess || got[1] != statusSuccess || n != 2 {
			t.Fatalf("after the fault: statuses %v, %d ledger rows; want both calls succeeded, each with its row", got, n)
		}
	})
}

// TestJournaledLedgerRowsAreRecovered: a completion the database could
// not take (a full disk) is journaled with its ledger rows; the next
// start writes both, with the arguments' types as they were.
func TestJournaledLedgerRowsAreRecovered(t *testing.T) {
	e := fullDiskEnv(t)
	e.act.setRun(deferUsage(t, bigResult("222")))
	resp, err := e.do(e.g, map[string]any{"text": "first"}, "")
	if err != nil || !resp.AuditIncomplete {
		t.Fatalf("call on a full disk: %+v, %v; want executed with audit_incomplete", resp, err)
	}
	if n := e.countRows("x_api_usage"); n != 0 {
		t.Fatalf("%d ledger rows written without the completion, want 0", n)
	}
	e.restart()
	if got := e.statuses(); len(got) != 1 || got[0] != statusInterrupted {
		t.Fatalf("recovered statuses %v, want interrupted", got)
	}
	var status, items int
	var cost float64
	var types string
	if err := e.db.QueryRowContext(e.ctx, `SELECT status_code, items, cost_usd, typeof(status_code) || ',' || typeof(cost_usd) FROM x_api_usage`).
		Scan(&status, &items, &cost, &types); err != nil {
		t.Fatalf("the recovered call's ledger row: %v", err)
	}
	if got := fmt.Sprintf("%d %d %g %s", status, items, cost, types); got != "201 1 0.015 integer,real" {
		t.Errorf("recovered ledger row %q, want %q", got, "201 1 0.015 integer,real")
	}
}

// TestGatedCallWritesTwoTransactions: an executed call that records X
// usage and a post costs two write transactions, the claim and the
// completion, however many ledger rows it adds.
func TestGatedCallWritesTwoTransactions(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.act.setRun(func(ctx context.Context, _ json.RawMessage) (Result, error) {
			for _, q := range []string{qUsageRow, qUsageRow} {
				if ok, err := store.Defer(ctx, q, "default", "POST /2/tweets", "POST", 201, 1, 0.015, "2026-01-01T00:00:00Z"); !ok || err != nil {
					t.Errorf("Defer = %t, %v", ok, err)
				}
			}
			return Result{Data: map[string]any{"id": "1"}}, nil
		})
		e.mustDo(map[string]any{"text": "warm"}, "") // prepares what the first call prepares
		count := storetest.WriteTxCounter(t, e.db)
		for i := range 3 {
			e.mustDo(map[string]any{"text": fmt.Sprintf("post %d", i)}, "")
		}
		if n := count(); n != 6 {
			t.Errorf("3 gated calls committed %d write transactions, want 6 (2 each)", n)
		}
		if n := e.countRows("x_api_usage"); n != 8 {
			t.Errorf("%d ledger rows, want 8", n)
		}
	})
}
