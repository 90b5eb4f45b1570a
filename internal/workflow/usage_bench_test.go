package workflow

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// BenchmarkRecordXUsage is the X usage ledger's cost per X call: one row
// written on a real SQLite file. The write's wall time is mostly the disk
// and this machine's neighbours; cpu-ns/op is the process's own share.
func BenchmarkRecordXUsage(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	u := UsageLedger{DB: db}
	r := xapi.Usage{AccountID: "default", Endpoint: "GET /2/tweets/:id", Method: "GET", Status: 200, Items: 1, CostUSD: 0.005, At: time.Now()}
	start, n := cpuTime(b), 0
	for b.Loop() {
		if err := u.RecordXUsage(ctx, r); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(n), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
