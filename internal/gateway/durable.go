package gateway

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// outcome is what completing one executed call writes: the audit row's
// final state. (The charge to the limits was reserved with the decision.)
// It stays in memory, and in this process's journal, until the database has
// taken it.
type outcome struct {
	Corr      string  `json:"correlation_id"`
	Status    string  `json:"status"`
	Result    *string `json:"result_json,omitempty"`
	Summary   *string `json:"result_summary,omitempty"`
	Rollback  *string `json:"rollback_action,omitempty"`
	ErrCode   *string `json:"error_code,omitempty"`
	ErrMsg    *string `json:"error_message,omitempty"`
	ElapsedMS int64   `json:"elapsed_ms"`
	At        string  `json:"completed_at"`
	// Rows are what the execution added to other ledgers (the X usage
	// ledger, the posts ledger), written in the transaction that completes
	// the audit row.
	Rows []store.DeferredRow `json:"rows,omitempty"`
	// Completed says the audit row is written.
	Completed bool `json:"completed,omitempty"`
	// Settled marks a journal line saying the outcome was recorded after
	// all.
	Settled bool `json:"settled,omitempty"`
}

// backlog holds the outcomes this process could not record yet. While it is
// not empty no new mutation is sent: a full disk must not turn into posts
// that succeed on X without an audit record or a charge to the caps.
type backlog struct {
	mu    sync.Mutex
	items []*outcome
}

// Unrecorded is how many executed calls' outcomes are not in the database
// yet.
func (g *Gateway) Unrecorded() int {
	g.backlog.mu.Lock()
	defer g.backlog.mu.Unlock()
	return len(g.backlog.items)
}

// settle records o. On a full disk it gives up the reserved spare file
// and tries again. It reports whether the outcome is recorded; when it is
// not, the outcome stays in the backlog (and the journal) until it is.
func (g *Gateway) settle(ctx context.Context, o *outcome) bool {
	ctx = context.WithoutCancel(ctx)
	err := g.writeOutcome(ctx, o)
	if err == nil {
		return true
	}
	released := store.IsFull(err) && g.opts.DB.ReleaseReserve()
	// Journal before retrying: the retry may take all the room just freed.
	if jerr := g.appendJournal(o); jerr != nil {
		g.opts.Logger.Error("mutation outcome not journaled", "correlation_id", o.Corr, "error", jerr)
	}
	if released {
		g.opts.Logger.Warn("disk full: released the reserved space to record a mutation's outcome; no new mutation is sent until space is free again",
			"correlation_id", o.Corr)
		if err = g.writeOutcome(ctx, o); err == nil {
			_ = g.appendJournal(&outcome{Corr: o.Corr, Settled: true})
			return true
		}
	}
	g.opts.Logger.Error("mutation outcome not recorded; no new mutation is sent until it is",
		"correlation_id", o.Corr, "status", o.Status, "error", err)
	g.backlog.mu.Lock()
	g.backlog.items = append(g.backlog.items, o)
	g.backlog.mu.Unlock()
	return false
}

// writeOutcome writes what of o is not written yet.
func (g *Gateway) writeOutcome(ctx context.Context, o *outcome) error {
	if o.Completed {
		return nil
	}
	args := []any{o.Status, o.Result, o.Summary, o.Rollback, o.ErrCode, o.ErrMsg, o.ElapsedMS, o.At, o.Corr}
	var err error
	if len(o.Rows) == 0 {
		_, err = (poolQ{g.stmts}).ExecContext(ctx, qComplete, args...)
	} else if err = g.opts.DB.PrepareDeferred(ctx, o.Rows); err == nil {
		err = g.opts.DB.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := (txQ{g.stmts, tx}).ExecContext(ctx, qComplete, args...); err != nil {
				return err
			}
			return g.opts.DB.WriteDeferred(ctx, tx, o.Rows)
		})
	}
	if err != nil {
		return fmt.Errorf("record the outcome of %s: %w", o.Corr, err)
	}
	o.Completed = true
	return nil
}

// flushBacklog records the outcomes still waiting, oldest first. It
// returns how many are left and why.
func (g *Gateway) flushBacklog(ctx context.Context) (int, error) {
	g.backlog.mu.Lock()
	defer g.backlog.mu.Unlock()
	for len(g.backlog.items) > 0 {
		o := g.backlog.items[0]
		err := g.writeOutcome(ctx, o)
		if err != nil && store.IsFull(err) && g.opts.DB.ReleaseReserve() {
			err = g.writeOutcome(ctx, o)
		}
		if err != nil {
			return len(g.backlog.items), err
		}
		g.backlog.items = g.backlog.items[1:]
		g.opts.Logger.Info("a delayed mutation outcome is recorded", "correlation_id", o.Corr)
		_ = g.appendJournal(&outcome{Corr: o.Corr, Settled: true})
	}
	return 0, nil
}

// readyToSend refuses to send a new mutation while sending could leave an
// effect on X without a record: earlier outcomes are unrecorded, the
// database files were deleted or replaced under this process, or the disk
// has no room reserved for the audit completion.
func (g *Gateway) readyToSend(ctx context.Context) error {
	if n, err := g.flushBacklog(ctx); err != nil {
		return apperr.Wrap(apperr.DBError, err,
			"not sending: %d earlier mutation outcome(s) could not be recorded yet (%v); no new mutation is sent until they are. Free disk space beside the database, then retry; health_check reports degraded meanwhile", n, err).
			With("audit_incomplete", true)
	}
	if err := g.opts.DB.CheckFiles(ctx); err != nil {
		return apperr.Wrap(apperr.DBError, err, "not sending: %v", err)
	}
	if err := g.opts.DB.EnsureReserve(); err != nil {
		return apperr.Wrap(apperr.DBError, err, "not sending: %v", err)
	}
	return nil
}

func (g *Gateway) journalPath(owner string) string {
	return filepath.Join(g.lockDir(), "gateway-"+owner+".journal")
}

// appendJournal adds o to this process's journal and syncs it, so the
// outcome survives the process if the database never takes it.
func (g *Gateway) appendJournal(o *outcome) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(g.journalPath(g.instance), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeJournal drops this process's journal once nothing in it is
// waiting.
func (g *Gateway) removeJournal() {
	if g.Unrecorded() == 0 {
		_ = os.Remove(g.journalPath(g.instance))
	}
}

// recoverJournal applies a stopped process's journal: each of its rows
// still pending becomes interrupted but keeps the outcome the process saw,
// and a call that reached X is charged to the limits.
func (g *Gateway) recoverJournal(ctx context.Context, owner string) error {
	path := g.journalPath(owner)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read journal %s: %w", path, err)
	}
	var entries []*outcome
	settled := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var o outcome
		if json.Unmarshal(sc.Bytes(), &o) != nil || o.Corr == "" {
			continue // a line torn by the crash
		}
		if o.Settled {
			settled[o.Corr] = true
			continue
		}
		entries = append(entries, &o)
	}
	f.Close()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read journal %s: %w", path, err)
	}
	for _, o := range entries {
		if settled[o.Corr] {
			continue
		}
		if !o.Completed {
			msg := fmt.Sprintf("the call ended %s, but the process stopped before that was recorded in the database; the outcome was kept in its journal. Verify on X before repeating", o.Status)
			if o.ErrMsg != nil {
				msg += ": " + *o.ErrMsg
			}
			// The ledger rows are written only with the row they belong
			// to, so a row another process recovered first keeps its own.
			if err := g.opts.DB.PrepareDeferred(ctx, o.Rows); err != nil {
				return fmt.Errorf("recover journal %s: %w", path, err)
			}
			err := g.opts.DB.Tx(ctx, func(tx *sql.Tx) error {
				res, err := tx.ExecContext(ctx, `UPDATE mutation_audit SET status = 'interrupted', result_json = ?, result_summary = ?,
				rollback_action = ?, error_code = ?, error_message = ?, elapsed_ms = ?, completed_at = ?
				WHERE correlation_id = ? AND status = 'pending'`,
					o.Result, o.Summary, o.Rollback, o.ErrCode, msg, o.ElapsedMS, o.At, o.Corr)
				if err != nil {
					return err
				}
				if n, err := res.RowsAffected(); err != nil || n == 0 {
					return err
				}
				return g.opts.DB.WriteDeferred(ctx, tx, o.Rows)
			})
			if err != nil {
				return fmt.Errorf("recover journal %s: %w", path, err)
			}
		}
		g.opts.Logger.Warn("recovered a mutation outcome from a stopped process's journal", "correlation_id", o.Corr, "status", o.Status)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("recover journal %s: %w", path, err)
	}
	return nil
}

// recoverJournals applies the journals of every stopped process.
func (g *Gateway) recoverJournals(ctx context.Context) error {
	paths, err := filepath.Glob(filepath.Join(g.lockDir(), "gateway-*.journal"))
	if err != nil {
		return fmt.Errorf("recover journals: %w", err)
	}
	for _, p := range paths {
		name := filepath.Base(p)
		owner := name[len("gateway-") : len(name)-len(".journal")]
		if g.ownerAlive(owner) {
			continue
		}
		if err := g.recoverJournal(ctx, owner); err != nil {
			return err
		}
	}
	return nil
}
