package gateway

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// openBenchDB opens a database file with the store's pragmas and migrations.
func openBenchDB(b *testing.B) *store.DB {
	b.Helper()
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// cpuTime is the process's user plus system CPU time. On a shared machine
// wall time swings with the neighbours' load; CPU per operation is the
// steadier figure to compare the two benchmarks by.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs op b.N times and reports CPU ns/op beside the wall-clock ns/op.
func loop(b *testing.B, op func(i int)) {
	b.Helper()
	b.ReportAllocs()
	start := cpuTime(b)
	n := 0
	for i := 0; b.Loop(); i++ {
		op(i)
		n++
	}
	b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(n), "cpu-ns/op")
}

type allowPolicy struct{}

func (allowPolicy) Reserve(context.Context, *sql.Tx, policy.Request) (policy.Decision, policy.Reservation, error) {
	return policy.Decision{Outcome: policy.Allow}, policy.Reservation{}, nil
}
func (allowPolicy) Release(context.Context, policy.Reservation) error { return nil }

// BenchmarkGatewayAllowedMutation is the gateway's own cost for an allowed
// call: everything but the X request.
func BenchmarkGatewayAllowedMutation(b *testing.B) {
	ctx := context.Background()
	db := openBenchDB(b)
	g, err := New(ctx, Options{DB: db, Policy: allowPolicy{}, LockDir: filepath.Join(b.TempDir(), "locks"),
		Mode: func() (string, bool) { return policy.ModeAutopilot, false }})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	g.Register(&Action{Tool: "noop", Category: policy.CatEngage,
		Execute: func(context.Context, json.RawMessage) (Result, error) {
			return Result{Data: map[string]any{"ok": true}}, nil
		}})
	loop(b, func(i int) {
		params := json.RawMessage(`{"tweet_id":"` + strconv.Itoa(i) + `"}`)
		if _, err := g.Do(ctx, Call{Tool: "noop", Params: params}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkTwoSQLiteWrites is the floor the gateway is measured against:
// the durable pending row (an INSERT transaction) and its completion (an
// UPDATE transaction) on the same kind of database.
func BenchmarkTwoSQLiteWrites(b *testing.B) {
	ctx := context.Background()
	db := openBenchDB(b)
	now := store.FormatTime(time.Now())
	loop(b, func(i int) {
		corr := uuid.NewString()
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, owner, created_at)
				VALUES (?, 'noop', ?, '{}', 'pending', 'bench', ?)`, corr, strconv.Itoa(i), now)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		err = db.Tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE mutation_audit SET status = 'success', result_json = '{"ok":true}', completed_at = ?
				WHERE correlation_id = ?`, now, corr)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	})
}

// The concurrent benchmarks run benchCallers callers spread over
// benchProcs processes on one database, as several servers on one host (or
// on several hosts sharing PostgreSQL) would.
const (
	benchCallers = 32
	benchProcs   = 3
)

// Environment of a benchmark worker process (see TestMain).
const (
	envBenchWorker  = "TUITBOT_BENCH_WORKER" // gateway or floor
	envBenchTarget  = "TUITBOT_BENCH_TARGET"
	envBenchCalls   = "TUITBOT_BENCH_CALLS"
	envBenchCallers = "TUITBOT_BENCH_CALLERS"
	envBenchFirst   = "TUITBOT_BENCH_FIRST"
	envBenchLocks   = "TUITBOT_BENCH_LOCKS"
	// envBenchProfile, when set in the benchmark's own environment, names
	// a directory where each worker writes CPU, block and mutex profiles
	// of its timed calls (kind-pid.cpu, .block, .mutex), for go tool pprof.
	envBenchProfile = "TUITBOT_BENCH_PROFILE"
)

// BenchmarkConcurrentMutations compares, per backend and in one run, the
// gateway's throughput for allowed calls (gateway) with its floor: the same
// callers each running the two write transactions a call needs at least,
// the pending row and its completion (floor). benchCallers callers in
// benchProcs processes share one database; ns/op is wall time per call
// from the moment every process is ready, so the ratio of the two is the
// gateway's share of the database's write throughput.
func BenchmarkConcurrentMutations(b *testing.B) {
	for _, backend := range storetest.Backends {
		for _, kind := range []string{"gateway", "floor"} {
			b.Run(backend+"/"+kind, func(b *testing.B) {
				// Creating the database is not a call: on PostgreSQL the
				// first one in a process also starts the server and
				// builds its template, which would land on whichever
				// kind runs first.
				b.StopTimer()
				runWorkers(b, kind, benchTarget(b, backend))
			})
		}
	}
}

// benchTarget is a new migrated database of backend for a benchmark.
func benchTarget(b *testing.B, backend string) string {
	b.Helper()
	if backend == storetest.Postgres {
		return pgtest.NewDatabase(b, "")
	}
	target := filepath.Join(b.TempDir(), "bench.db")
	copyMigrated(b, target)
	return target
}

// benchPairs is how many gateway-floor pairs BenchmarkMutationPairs times.
const benchPairs = 8

// BenchmarkMutationPairs is BenchmarkConcurrentMutations as pairs: each
// pair times b.N calls through the gateway and b.N through the floor one
// right after the other (which goes first alternates), each on its own
// database, so both halves of a ratio see the same machine. It reports
// the median and the lowest of the pairs' ratios (floor time over gateway
// time: the gateway's share of the floor's throughput).
func BenchmarkMutationPairs(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			b.StopTimer()
			targets := map[string]string{"gateway": benchTarget(b, backend), "floor": benchTarget(b, backend)}
			ratios := make([]float64, 0, benchPairs)
			for pair := range benchPairs {
				kinds := []string{"gateway", "floor"}
				if pair%2 == 1 {
					kinds = []string{"floor", "gateway"}
				}
				took := map[string]time.Duration{}
				for _, kind := range kinds {
					took[kind], _ = workerRound(b, kind, targets[kind], b.N, pair*b.N, func() {}, func() {})
				}
				ratios = append(ratios, float64(took["floor"])/float64(took["gateway"]))
			}
			if b.N > 1 { // the one-call run that sizes the benchmark says nothing
				b.Logf("%s pairs, floor/gateway in run order: %.3f", backend, ratios)
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
			b.ReportMetric(ratios[0], "lowest-ratio")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// runWorkers starts benchProcs worker processes of kind on target, lets
// them all go at once when each is ready and times them until the last
// one is done. The b.N calls and benchCallers callers are shared out.
func runWorkers(b *testing.B, kind, target string) {
	b.Helper()
	b.StopTimer()
	_, cpu := workerRound(b, kind, target, b.N, 0, b.StartTimer, b.StopTimer)
	// The callers' CPU, start-up included but not the warm-up's calls: on a
	// machine the database shares, it is the part of the cost the gateway
	// adds on the client side.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "client-cpu-ns/op")
}

// workerRound runs total calls of kind on target in benchProcs worker
// processes, their keys numbered from from (a repeated key would be
// answered as a duplicate), calling start when every worker is ready and
// stop when the last is done, and returns the time between the two and
// the workers' CPU time apart from their warm-up.
func workerRound(b *testing.B, kind, target string, total, from int, start, stop func()) (elapsed, cpu time.Duration) {
	b.Helper()
	locks := filepath.Join(b.TempDir(), "locks")
	type worker struct {
		cmd    *exec.Cmd
		gate   io.WriteCloser
		out    *bufio.Reader
		stderr *strings.Builder
	}
	var ws []worker
	first := from
	for p := range benchProcs {
		calls := total / benchProcs
		if p < total%benchProcs {
			calls++
		}
		callers := benchCallers / benchProcs
		if p < benchCallers%benchProcs {
			callers++
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envBenchWorker+"="+kind, envBenchTarget+"="+target, envBenchLocks+"="+locks,
			envBenchCalls+"="+strconv.Itoa(calls), envBenchCallers+"="+strconv.Itoa(callers), envBenchFirst+"="+strconv.Itoa(first))
		first += calls
		gate, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		w := worker{cmd: cmd, gate: gate, out: bufio.NewReader(out), stderr: &strings.Builder{}}
		cmd.Stderr = w.stderr
		if err := cmd.Start(); err != nil {
			b.Fatalf("start worker: %v", err)
		}
		ws = append(ws, w)
	}
	// expect reads a worker's next line, which must start with want, and
	// returns the rest of it.
	expect := func(w worker, want string) string {
		b.Helper()
		line, err := w.out.ReadString('\n')
		word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		if err != nil || word != want {
			_ = w.cmd.Process.Kill()
			b.Fatalf("worker said %q (%v) instead of %q: %s", line, err, want, w.stderr)
		}
		return rest
	}
	var warmCPU time.Duration
	for _, w := range ws {
		ns, err := strconv.ParseInt(expect(w, "ready"), 10, 64)
		if err != nil {
			_ = w.cmd.Process.Kill()
			b.Fatalf("worker's warm-up CPU: %v", err)
		}
		warmCPU += time.Duration(ns)
	}
	start()
	began := time.Now()
	for _, w := range ws {
		w.gate.Close()
	}
	for _, w := range ws {
		expect(w, "done")
	}
	elapsed = time.Since(began)
	stop()
	for _, w := range ws {
		if err := w.cmd.Wait(); err != nil {
			b.Fatalf("worker: %v: %s", err, w.stderr)
		}
		cpu += w.cmd.ProcessState.UserTime() + w.cmd.ProcessState.SystemTime()
	}
	return elapsed, cpu - warmCPU
}

// benchWorker is a worker process of BenchmarkConcurrentMutations. It
// prepares, says "ready", waits for its standard input to close, makes its
// calls from its callers and says "done".
func benchWorker(kind string) error {
	ctx := context.Background()
	if kind == workerExport || kind == workerExportFloor {
		return exportWorker(ctx, kind)
	}
	num := func(name string) int {
		n, _ := strconv.Atoi(os.Getenv(name))
		return n
	}
	calls, callers, first := num(envBenchCalls), num(envBenchCallers), num(envBenchFirst)
	db, err := store.Open(ctx, os.Getenv(envBenchTarget), store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	// op makes one call; key tells calls apart (the gateway would
	// otherwise answer a repeat as a duplicate).
	var op func(key string) error
	switch kind {
	case "gateway":
		g, err := New(ctx, Options{DB: db, Policy: allowPolicy{}, LockDir: os.Getenv(envBenchLocks),
			Mode: func() (string, bool) { return policy.ModeAutopilot, false }})
		if err != nil {
			return err
		}
		defer g.Close()
		g.Register(&Action{Tool: "noop", Category: policy.CatEngage,
			Execute: func(context.Context, json.RawMessage) (Result, error) {
				return Result{Data: map[string]any{"ok": true}}, nil
			}})
		op = func(key string) error {
			_, err := g.Do(ctx, Call{Tool: "noop", Params: json.RawMessage(`{"tweet_id":"` + key + `"}`)})
			return err
		}
	case "floor":
		now := store.FormatTime(time.Now())
		op = func(key string) error {
			corr := uuid.NewString()
			err := db.Tx(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, owner, created_at)
					VALUES (?, 'noop', ?, '{}', 'pending', 'bench', ?)`, corr, key, now)
				return err
			})
			if err != nil {
				return err
			}
			return db.Tx(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `UPDATE mutation_audit SET status = 'success', result_json = '{"ok":true}', completed_at = ?
					WHERE correlation_id = ?`, now, corr)
				return err
			})
		}
	default:
		return fmt.Errorf("unknown worker kind %q", kind)
	}
	// A server that has been up a while has its pool's connections open
	// and their statements planned; a fresh worker has neither. Both kinds
	// warm up alike, untimed, so the comparison is of calls, not of
	// connection set-up.
	var ru syscall.Rusage
	processCPU := func() time.Duration {
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	before := processCPU()
	if err := concurrently(callers, benchWarmCalls*callers, func(n int) error {
		return op("warm-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(n))
	}); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	fmt.Println("ready", int64(processCPU()-before))
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		return err
	}
	stop, err := startProfiles(kind)
	if err != nil {
		return err
	}
	if err := concurrently(callers, calls, func(n int) error { return op(strconv.Itoa(first + n)) }); err != nil {
		return err
	}
	if err := stop(); err != nil {
		return err
	}
	fmt.Println("done")
	return nil
}

// startProfiles starts the profiles envBenchProfile asks for, if any; stop
// writes them.
func startProfiles(kind string) (stop func() error, err error) {
	dir := os.Getenv(envBenchProfile)
	if dir == "" {
		return func() error { return nil }, nil
	}
	base := filepath.Join(dir, kind+"-"+strconv.Itoa(os.Getpid()))
	cpu, err := os.Create(base + ".cpu")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, err
	}
	runtime.SetBlockProfileRate(1)
	runtime.SetMutexProfileFraction(1)
	return func() error {
		pprof.StopCPUProfile()
		if err := cpu.Close(); err != nil {
			return err
		}
		for _, name := range []string{"block", "mutex"} {
			f, err := os.Create(base + "." + name)
			if err != nil {
				return err
			}
			if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// benchWarmCalls is how many calls each caller of a worker makes before it
// is timed: more than the five custom plans PostgreSQL makes of a prepared
// statement before it settles on a plan, so each connection is past them.
const benchWarmCalls = 8

// concurrently makes calls calls from callers goroutines, numbering them
// from 0, and returns the first error.
func concurrently(callers, calls int, op func(n int) error) error {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		errs = make(chan error, callers)
	)
	for range callers {
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= calls {
					return
				}
				if err := op(n); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
