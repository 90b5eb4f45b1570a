package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// clockedReceiver is a local webhook receiver that timestamps each arrival.
type clockedReceiver struct {
	srv     *httptest.Server
	arrived chan time.Time
}

func newClockedReceiver(tb testing.TB) *clockedReceiver {
	tb.Helper()
	r := &clockedReceiver{arrived: make(chan time.Time, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		r.arrived <- time.Now()
		rw.WriteHeader(http.StatusNoContent)
	}))
	tb.Cleanup(r.srv.Close)
	return r
}

// latencies queues n items with queue, one after another, each once the
// previous one has arrived, and returns how long each took from its
// queueing transaction to its arrival at r; and, interleaved with them,
// how long a plain POST from this process to r took to arrive (the
// floor). Both come back sorted.
func latencies(tb testing.TB, r *clockedReceiver, n int, queue func(id int64)) (lat, floor []time.Duration) {
	tb.Helper()
	for i := 0; i < n; i++ {
		start := time.Now()
		queue(int64(i + 1))
		select {
		case at := <-r.arrived:
			lat = append(lat, at.Sub(start))
		case <-time.After(30 * time.Second):
			tb.Fatalf("item %d never arrived", i+1)
		}
		start = time.Now()
		resp, err := r.srv.Client().Post(r.srv.URL, "application/json", strings.NewReader(`{"probe":true}`))
		if err != nil {
			tb.Fatal(err)
		}
		resp.Body.Close()
		floor = append(floor, (<-r.arrived).Sub(start))
	}
	slices.Sort(lat)
	slices.Sort(floor)
	return lat, floor
}

// idleLatencies is latencies with the dispatcher running idle in this
// process.
func idleLatencies(tb testing.TB, n int) (lat, floor []time.Duration) {
	w := newWorld(tb)
	r := newClockedReceiver(tb)
	hook, err := NewWebhook("hook", r.srv.URL, testSecret, r.srv.Client(), time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	d := NewDispatcher(DispatcherOptions{Outbox: w.out, Channels: []Channel{hook}, Items: w.items, Now: time.Now})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	return latencies(tb, r, n, func(id int64) { w.queue(id, "latency probe") })
}

// Queued to delivered to a local webhook takes under a second at the
// median with the dispatcher idle.
func TestIdleDeliveryLatency(t *testing.T) {
	lat, _ := idleLatencies(t, 5)
	if p50 := lat[len(lat)/2]; p50 >= time.Second {
		t.Fatalf("p50 %v (all %v), want < 1 s", p50, lat)
	}
}

// reportLatencies reports the p50 and p90 of lat against those of floor
// (goal: p50 within 10 ms of the send).
func reportLatencies(b *testing.B, lat, floor []time.Duration) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	p50, p90 := lat[len(lat)/2], lat[(len(lat)*9)/10]
	f50, f90 := floor[len(floor)/2], floor[(len(floor)*9)/10]
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p90), "p90-ms")
	b.ReportMetric(ms(f50), "post-p50-ms")
	b.ReportMetric(ms(f90), "post-p90-ms")
	b.ReportMetric(ms(p50-f50), "p50-over-send-ms")
	b.ReportMetric(float64(p50)/float64(f50), "p50-ratio")
}

// BenchmarkQueuedToDelivered reports the p50 and p90 of queued to
// delivered (to a local webhook) with the dispatcher idle, in this
// process, against a plain POST to the same receiver measured between
// them. The other-process and other-host figures are
// BenchmarkQueuedToDeliveredElsewhere's (e2e).
func BenchmarkQueuedToDelivered(b *testing.B) {
	lat, floor := idleLatencies(b, b.N)
	reportLatencies(b, lat, floor)
}
