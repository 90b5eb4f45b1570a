package store_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// insertMark is a write transaction that leaves a row named mark.
func insertMark(ctx context.Context, mark string) func(*sql.Tx) error {
	return func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO action_log (action_type, created_at) VALUES (?, ?)", mark, store.FormatTime(fixedNow))
		return err
	}
}

func marks(t *testing.T, db *store.DB, mark string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), "SELECT count(*) FROM action_log WHERE action_type = ?", mark).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTxQueuedBehindAWriterOfThisProcessEndsWithItsContext: a write
// transaction waiting for another of the same process waits in the
// process, not in SQLite's busy handler, so its context ends the wait
// (SQLite's handler sleeps on until the busy timeout, whatever the
// context), and the transaction it queued behind commits undisturbed.
func TestTxQueuedBehindAWriterOfThisProcessEndsWithItsContext(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "t.db"), store.Options{})
	ctx := context.Background()
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.Tx(ctx, func(tx *sql.Tx) error {
			close(holding)
			<-release
			return insertMark(ctx, "first")(tx)
		})
	}()
	<-holding
	queued, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err := db.Tx(queued, insertMark(ctx, "queued"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued Tx = %v, want its context's deadline", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the holding Tx: %v", err)
	}
	if n := marks(t, db, "first"); n != 1 {
		t.Errorf("holding Tx rows = %d, want 1", n)
	}
	if n := marks(t, db, "queued"); n != 0 {
		t.Errorf("queued Tx rows = %d, want 0: it gave up", n)
	}
}

// TestTxWhileAnotherProcessHoldsTheWriteLock: a write transaction waits
// for another connection's write lock (another process's, as far as
// SQLite can tell) in short tries of its own: it begins once the lock is
// released, stops when its context ends, and past the busy timeout fails
// with SQLITE_BUSY, transient, as before. Every pooled connection keeps
// the busy timeout afterwards.
func TestTxWhileAnotherProcessHoldsTheWriteLock(t *testing.T) {
	for _, tc := range []struct {
		name    string
		busyMS  string
		timeout time.Duration // of the waiting Tx's context; 0 for none
		release bool          // the holder commits while the Tx waits
		want    func(error) bool
	}{
		{name: "released", busyMS: "10000", release: true, want: func(err error) bool { return err == nil }},
		{name: "context ends", busyMS: "10000", timeout: 100 * time.Millisecond, want: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{name: "busy timeout", busyMS: "150", want: func(err error) bool { return store.IsBusy(err) && store.Transient(err) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			db := open(t, path, store.Options{Pragmas: []string{"busy_timeout(" + tc.busyMS + ")"}})
			ctx := context.Background()
			other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			holder, err := other.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			if _, err := holder.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
				t.Fatal(err)
			}
			if _, err := holder.ExecContext(ctx, "INSERT INTO action_log (action_type, created_at) VALUES ('holder', 'x')"); err != nil {
				t.Fatal(err)
			}
			txCtx := ctx
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				txCtx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			done := make(chan error, 1)
			go func() { done <- db.Tx(txCtx, insertMark(ctx, "waiter")) }()
			var got error
			if tc.release {
				if _, err := holder.ExecContext(ctx, "COMMIT"); err != nil {
					t.Fatal(err)
				}
				got = <-done
			} else {
				got = <-done
				if _, err := holder.ExecContext(ctx, "COMMIT"); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.want(got) {
				t.Fatalf("Tx = %v", got)
			}
			wantRows := 0
			if got == nil {
				wantRows = 1
			}
			if n := marks(t, db, "waiter"); n != wantRows {
				t.Errorf("waiter rows = %d, want %d", n, wantRows)
			}
			if n := marks(t, db, "holder"); n != 1 {
				t.Errorf("holder rows = %d, want 1", n)
			}
			// Every connection of the pool (five) at once.
			var conns []*sql.Conn
			for range 5 {
				c, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
			}
			for i, c := range conns {
				var ms string
				if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&ms); err != nil {
					t.Fatal(err)
				}
				if ms != tc.busyMS {
					t.Errorf("conn %d: busy_timeout = %s ms, want %s", i, ms, tc.busyMS)
				}
				c.Close()
			}
		})
	}
}
