package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// idleLatencies queues n items one after another, each once the previous
// one has arrived, with the dispatcher running idle (polling), and returns
// how long each took from its queueing transaction to its arrival at a
// local webhook receiver.
func idleLatencies(tb testing.TB, n int) []time.Duration {
	w := newWorld(tb)
	arrived := make(chan time.Time, 1)
	rcv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		arrived <- time.Now()
		rw.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	hook, err := NewWebhook("hook", rcv.URL, testSecret, rcv.Client(), time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	d := NewDispatcher(DispatcherOptions{Outbox: w.out, Channels: []Channel{hook}, Items: w.items, Now: time.Now})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		w.queue(int64(i+1), "latency probe")
		select {
		case at := <-arrived:
			out = append(out, at.Sub(start))
		case <-time.After(30 * time.Second):
			tb.Fatalf("item %d never arrived", i+1)
		}
	}
	slices.Sort(out)
	return out
}

// Queued to delivered to a local webhook takes under a second at the
// median with the dispatcher idle.
func TestIdleDeliveryLatency(t *testing.T) {
	lat := idleLatencies(t, 5)
	if p50 := lat[len(lat)/2]; p50 >= time.Second {
		t.Fatalf("p50 %v (all %v), want < 1 s", p50, lat)
	}
}

// BenchmarkQueuedToDelivered reports the p50 and p90 of queued to
// delivered (to a local webhook) with the dispatcher idle.
func BenchmarkQueuedToDelivered(b *testing.B) {
	lat := idleLatencies(b, b.N)
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)*9)/10].Milliseconds()), "p90-ms")
}
