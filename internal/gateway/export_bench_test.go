package gateway

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/export"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
)

// The export benchmark's workers (see benchWorker): each is a process of
// its own, so its peak resident memory is the export's alone.
const (
	workerExport      = "export"       // the gateway's CSV export of the audit trail
	workerExportFloor = "export-floor" // the same rows by a plain query, when the sqlite3 CLI is missing
	// envBenchExportRows sets the audit trail's size (default 100,000;
	// the figures are at 1,000,000).
	envBenchExportRows = "TUITBOT_BENCH_EXPORT_ROWS"
)

// exportFloorQuery is what the floor reads: the export's columns, in id
// order by the table itself (the unary plus keeps any index out of it).
const exportFloorQuery = `SELECT id, correlation_id, created_at, COALESCE(completed_at, '') AS completed_at,
	tool_name, COALESCE(equivalent_tool, '') AS equivalent_tool, status, caller, loop_name, params_summary,
	COALESCE(result_summary, '') AS result_summary, COALESCE(error_code, '') AS error_code, COALESCE(error_message, '') AS error_message,
	COALESCE(elapsed_ms, 0) AS elapsed_ms, COALESCE(approval_id, 0) AS approval_id, COALESCE(duplicate_of, '') AS duplicate_of,
	COALESCE(idempotency_key, '') AS idempotency_key, params_hash, COALESCE(resolution, '') AS resolution
	FROM mutation_audit WHERE +account_id = 'default' ORDER BY id`

// BenchmarkExportVsSQLiteCLI: `tuitbot export --what audit --format csv`
// (the gateway's export through export.Write, in a process of its own)
// against `sqlite3 -csv` of the same rows (or, without the CLI, the same
// query in a plain Go loop), interleaved. It reports each side's rows/s
// and peak RSS, and their ratios (goal: rows/s at least 0.9x the floor's,
// RSS at most 2x), and the ratio of their rows per second of CPU.
func BenchmarkExportVsSQLiteCLI(b *testing.B) {
	rows := 100_000
	if v, err := strconv.Atoi(os.Getenv(envBenchExportRows)); err == nil && v > 0 {
		rows = v
	}
	path := filepath.Join(b.TempDir(), "export.db")
	fillForExport(b, path, rows)
	floor := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envBenchWorker+"="+workerExportFloor, envBenchTarget+"="+path)
		return cmd
	}
	if cli, err := exec.LookPath("sqlite3"); err == nil {
		floor = func() *exec.Cmd { return exec.Command(cli, "-csv", "-header", path, exportFloorQuery) }
	}
	gw := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envBenchWorker+"="+workerExport, envBenchTarget+"="+path, envBenchLocks+"="+filepath.Join(b.TempDir(), "locks"))
		return cmd
	}
	var gRate, fRate, gRSS, fRSS, gAnon, fAnon, gCPU, fCPU []float64
	b.ResetTimer()
	for b.Loop() {
		for _, side := range []struct {
			cmd                  func() *exec.Cmd
			rate, rss, anon, cpu *[]float64
		}{{gw, &gRate, &gRSS, &gAnon, &gCPU}, {floor, &fRate, &fRSS, &fAnon, &fCPU}} {
			cmd := side.cmd()
			out, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			cmd.Stdout = out
			var stderr strings.Builder
			cmd.Stderr = &stderr
			start := time.Now()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			peak := watchPeakRSS(cmd.Process.Pid)
			err = cmd.Wait()
			took := time.Since(start)
			hwm, anon := peak()
			out.Close()
			if err != nil {
				b.Fatalf("%s: %v: %s", cmd.Path, err, stderr.String())
			}
			if hwm == 0 {
				// No /proc: the child's ru_maxrss, which also counts this
				// process's peak (see watchPeakRSS), an upper bound.
				hwm = float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
			}
			*side.rate = append(*side.rate, float64(rows)/took.Seconds())
			*side.rss = append(*side.rss, hwm)
			*side.anon = append(*side.anon, anon)
			*side.cpu = append(*side.cpu, float64(rows)/(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()).Seconds())
		}
	}
	b.StopTimer()
	med := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	// Each iteration's ratios (export over floor, side by side in time),
	// for the spread.
	ratios := func(g, f []float64) []float64 {
		out := make([]float64, len(g))
		for i := range g {
			out[i] = g[i] / f[i]
		}
		return out
	}
	spread := func(name string, xs []float64) {
		b.Logf("%s: median %.3f [%.3f-%.3f] over %d iterations", name, med(xs), slices.Min(xs), slices.Max(xs), len(xs))
	}
	spread("rate-ratio", ratios(gRate, fRate))
	spread("cpu-rate-ratio", ratios(gCPU, fCPU))
	spread("rss-ratio", ratios(gRSS, fRSS))
	spread("anon-ratio", ratios(gAnon, fAnon))
	b.ReportMetric(med(gRate), "rows/s")
	b.ReportMetric(med(fRate), "floor-rows/s")
	b.ReportMetric(med(gRSS), "rss-MiB")
	b.ReportMetric(med(fRSS), "floor-rss-MiB")
	b.ReportMetric(med(gRate)/med(fRate), "rate-ratio")
	b.ReportMetric(med(gRSS)/med(fRSS), "rss-ratio")
	// The private part of the peak (RssAnon, sampled): what the export
	// itself holds, without the pages of its program file that it maps.
	b.ReportMetric(med(gAnon), "anon-MiB")
	b.ReportMetric(med(fAnon), "floor-anon-MiB")
	// Rows per second of CPU (user and system, every thread): on a busy
	// machine a side's wall time is mostly the other processes', its CPU
	// time is its own.
	b.ReportMetric(med(gCPU)/med(fCPU), "cpu-rate-ratio")
}

// watchPeakRSS samples the resident memory of the running process pid
// every few milliseconds; the function it returns stops the sampling and
// gives the peak (VmHWM) and the highest private part seen (RssAnon), in
// MiB (0 without /proc). The child's ru_maxrss will not do: Go starts a
// child by a clone that shares this process's memory until exec, and
// Linux carries the peak of that memory (this benchmark's, tens of MiB)
// into the child's ru_maxrss, so a small child such as the sqlite3 CLI
// would seem as large as this process. VmHWM is of the child's own memory
// only; an export's memory rises in its first rows and then holds, so the
// samples see its peak.
func watchPeakRSS(pid int) func() (hwm, anon float64) {
	status := fmt.Sprintf("/proc/%d/status", pid)
	stop := make(chan struct{})
	done := make(chan [2]float64, 1)
	go func() {
		var peak [2]float64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if b, err := os.ReadFile(status); err == nil {
				for line := range strings.Lines(string(b)) {
					for i, field := range []string{"VmHWM:", "RssAnon:"} {
						if kb, ok := strings.CutPrefix(line, field); ok {
							if v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 64); err == nil {
								peak[i] = max(peak[i], v/1024)
							}
						}
					}
				}
			}
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() (float64, float64) {
		close(stop)
		p := <-done
		return p[0], p[1]
	}
}

// fillForExport makes a migrated SQLite database at path holding rows
// audit rows a second apart, ending now.
func fillForExport(b *testing.B, path string, rows int) {
	b.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	first := time.Now().Unix() - int64(rows)
	_, err = db.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, result_summary, account_id, created_at, completed_at)
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
		SELECT 'c-' || i, CASE i % 4 WHEN 0 THEN 'x_post_tweet' WHEN 1 THEN 'x_like_tweet' WHEN 2 THEN 'x_follow_user' ELSE 'x_reply_to_tweet' END,
			'h' || i, '{"text":"post number ' || i || ', with a comma"}', 'success', 'posted', 'default',
			strftime('%Y-%m-%dT%H:%M:%fZ', ? + i, 'unixepoch'), strftime('%Y-%m-%dT%H:%M:%fZ', ? + i, 'unixepoch') FROM n`, rows, first, first)
	if err != nil {
		b.Fatal(err)
	}
}

// exportWorker runs one side of BenchmarkExportVsSQLiteCLI to stdout.
func exportWorker(ctx context.Context, kind string) error {
	path := os.Getenv(envBenchTarget)
	if kind == workerExportFloor {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			return err
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, exportFloorQuery)
		if err != nil {
			return err
		}
		cols, _ := rows.Columns()
		w := csv.NewWriter(os.Stdout)
		if err := w.Write(cols); err != nil {
			return err
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		rec := make([]string, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			for i, v := range vals {
				rec[i] = fmt.Sprint(v)
			}
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		w.Flush()
		return rows.Err()
	}
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	g, err := New(ctx, Options{DB: db, AccountID: "default", Policy: allowPolicy{}, LockDir: os.Getenv(envBenchLocks),
		Mode: func() (string, bool) { return policy.ModeAutopilot, false }})
	if err != nil {
		return err
	}
	defer g.Close()
	_, err = export.Write(ctx, os.Stdout, export.Request{What: export.Audit, Format: export.CSV}, g.ExportAudit, nil)
	return err
}
