//go:build e2e

package gateway

import (
	"context"
	"io"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/export"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
)

// TestExportOfAMillionAuditRowsRunsInConstantMemory: a CSV export of
// 1,000,000 audit rows streams from the database; the live heap sampled
// every 100,000 rows stays within a few MiB of where it started (holding
// the rows would take hundreds of MiB).
func TestExportOfAMillionAuditRowsRunsInConstantMemory(t *testing.T) {
	const rows = 1_000_000
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "big.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	first := start.Unix() - rows
	// One statement in one transaction: SQLite generates the rows itself,
	// a second apart, ending now (inside the audit retention the gateway
	// applies when it starts).
	_, err = db.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, result_summary, account_id, created_at, completed_at)
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
		SELECT 'c-' || i, 'x_post_tweet', 'h' || i, '{"text":"=post number ' || i || ', with a comma"}', 'success', 'posted', 'default',
			strftime('%Y-%m-%dT%H:%M:%fZ', ? + i, 'unixepoch'), strftime('%Y-%m-%dT%H:%M:%fZ', ? + i, 'unixepoch') FROM n`, rows, first, first)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("inserted %d audit rows in %s", rows, time.Since(start).Round(time.Millisecond))

	g, err := New(ctx, Options{DB: db, AccountID: "default", Policy: allowPolicy{}, LockDir: filepath.Join(t.TempDir(), "locks"),
		Mode: func() (string, bool) { return policy.ModeAutopilot, false }})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := live()
	var peak uint64
	start = time.Now()
	n, err := export.Write(ctx, io.Discard, export.Request{What: export.Audit, Format: export.CSV}, g.ExportAudit, func(int64) {
		if h := live(); h > peak {
			peak = h
		}
	})
	if err != nil || n != rows {
		t.Fatalf("export = %d rows, %v", n, err)
	}
	t.Logf("exported %d rows in %s; live heap %d KiB at the start, at most %d KiB during", n, time.Since(start).Round(time.Millisecond), base>>10, peak>>10)
	if peak > base+8<<20 {
		t.Errorf("live heap grew from %d KiB to %d KiB during the export; want it bounded (within 8 MiB)", base>>10, peak>>10)
	}
}
