//go:build e2e

package notify

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// startDispatcherProcess starts this test binary as a dispatcher process
// of its own (runDispatcherProcess) on target, delivering to hookURL, and
// returns once its dispatcher runs (and, on PostgreSQL, listens). It
// stops when tb ends.
func startDispatcherProcess(tb testing.TB, target, hookURL string, listens bool) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envDispatcherDB+"="+target, envDispatcherHook+"="+hookURL)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			tb.Errorf("dispatcher process: %v", err)
		}
	})
	lines := bufio.NewScanner(stdout)
	want := map[string]bool{"ready": true, "listening": listens}
	for want["ready"] || want["listening"] {
		if !lines.Scan() {
			tb.Fatalf("dispatcher process ended before it was ready: %v", lines.Err())
		}
		want[lines.Text()] = false
	}
	go func() {
		for lines.Scan() {
		}
	}()
}

// BenchmarkQueuedToDeliveredElsewhere reports the p50 and p90 of queued
// (by this process) to delivered to a local webhook by a dispatcher in
// another process: on one SQLite file (the other process learns of the
// row only by its poll), and on one PostgreSQL database, as another host
// would (the commit's NOTIFY wakes it); against a plain POST to the same
// receiver measured between them. Run it with -benchtime=Nx.
func BenchmarkQueuedToDeliveredElsewhere(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			if backend == storetest.Postgres {
				pgtest.ServerURL(b)
			}
			w := newWorld(b)
			r := newClockedReceiver(b)
			startDispatcherProcess(b, w.db.Path, r.srv.URL, backend == storetest.Postgres)
			// One item first, so the other process has made its first
			// pass and every measured item waits on what wakes it.
			w.queue(1_000_000, "warm up")
			select {
			case <-r.arrived:
			case <-time.After(30 * time.Second):
				b.Fatal("the warm-up item never arrived")
			}
			b.ResetTimer()
			lat, floor := latencies(b, r, b.N, func(id int64) { w.queue(id, "latency probe") })
			reportLatencies(b, lat, floor)
		})
	}
}
