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

// idleLatencies queues n items one after another, each once the previous
// one has arrived, with the dispatcher running idle, and returns how long
// each took from its queueing transaction to its arrival at a local
// webhook receiver; and, interleaved with them, how long a plain POST
// from this process to the same receiver took to arrive (the floor).
func idleLatencies(tb testing.TB, n int) (lat, floor []time.Duration) {
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
	for i := 0; i < n; i++ {
		start := time.Now()
		w.queue(int64(i+1), "latency probe")
		select {
		case at := <-arrived:
			lat = append(lat, at.Sub(start))
		case <-time.After(30 * time.Second):
			tb.Fatalf("item %d never arrived", i+1)
		}
		start = time.Now()
		resp, err := rcv.Client().Post(rcv.URL, "application/json", strings.NewReader(`{"probe":true}`))
		if err != nil {
			tb.Fatal(err)
		}
		resp.Body.Close()
		floor = append(floor, (<-arrived).Sub(start))
	}
	slices.Sort(lat)
	slices.Sort(floor)
	return lat, floor
}

// Queued to delivered to a local webhook takes under a second at the
// median with the dispatcher idle.
func TestIdleDeliveryLatency(t *testing.T) {
	lat, _ := idleLatencies(t, 5)
	if p50 := lat[len(lat)/2]; p50 >= time.Second {
		t.Fatalf("p50 %v (all %v), want < 1 s", p50, lat)
	}
}

// BenchmarkQueuedToDelivered reports the p50 and p90 of queued to
// delivered (to a local webhook) with the dispatcher idle, in this
// process, against a plain POST to the same receiver measured between
// them (goal: p50 within 10 ms of the send).
func BenchmarkQueuedToDelivered(b *testing.B) {
	lat, floor := idleLatencies(b, b.N)
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
