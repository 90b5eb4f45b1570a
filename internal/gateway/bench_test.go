package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strconv"
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

// benchCallers is how many callers the concurrent benchmarks run at once.
const benchCallers = 32

// benchDB opens a new database of backend for a benchmark.
func benchDB(b *testing.B, backend string) *store.DB {
	b.Helper()
	target := filepath.Join(b.TempDir(), "bench.db")
	if backend == storetest.Postgres {
		target = pgtest.NewDatabase(b, "")
	}
	db, err := store.Open(context.Background(), target, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// parallel runs op from benchCallers goroutines, each call with a number
// of its own.
func parallel(b *testing.B, op func(i int64)) {
	b.Helper()
	b.ReportAllocs()
	b.SetParallelism((benchCallers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			op(next.Add(1))
		}
	})
}

// BenchmarkConcurrentMutations compares, per backend and in one run, the
// gateway's throughput for allowed calls from benchCallers concurrent
// callers (gateway) with its floor: the same callers each running the two
// write transactions a call needs at least, the pending row and its
// completion (floor). The ratio of their ns/op is the gateway's share of
// the database's write throughput.
func BenchmarkConcurrentMutations(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend+"/gateway", func(b *testing.B) {
			ctx := context.Background()
			db := benchDB(b, backend)
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
			parallel(b, func(i int64) {
				params := json.RawMessage(`{"tweet_id":"` + strconv.FormatInt(i, 10) + `"}`)
				if _, err := g.Do(ctx, Call{Tool: "noop", Params: params}); err != nil {
					b.Error(err)
				}
			})
		})
		b.Run(backend+"/floor", func(b *testing.B) {
			ctx := context.Background()
			db := benchDB(b, backend)
			now := store.FormatTime(time.Now())
			parallel(b, func(i int64) {
				corr := uuid.NewString()
				err := db.Tx(ctx, func(tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, owner, created_at)
						VALUES (?, 'noop', ?, '{}', 'pending', 'bench', ?)`, corr, strconv.FormatInt(i, 10), now)
					return err
				})
				if err == nil {
					err = db.Tx(ctx, func(tx *sql.Tx) error {
						_, err := tx.ExecContext(ctx, `UPDATE mutation_audit SET status = 'success', result_json = '{"ok":true}', completed_at = ?
							WHERE correlation_id = ?`, now, corr)
						return err
					})
				}
				if err != nil {
					b.Error(err)
				}
			})
		})
	}
}
