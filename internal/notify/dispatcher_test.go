package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// The webhook receiver verifies each delivery with the Standard Webhooks
// reference library and gets the body the format names.
func TestWebhookDeliveryIsSignedTheStandardWay(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		w := newWorld(t)
		rcv := newReceiver(t)
		w.queue(7, "hello <world> @everyone")
		d := w.dispatcher(DispatcherOptions{}, w.webhook(rcv))
		if n := w.runOnce(d); n != 1 {
			t.Fatalf("settled %d rows, want 1", n)
		}
		got := rcv.requests()
		if len(got) != 1 {
			t.Fatalf("receiver got %d requests", len(got))
		}
		wh, err := standardwebhooks.NewWebhook(testSecret)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(got[0].Body, got[0].Header); err != nil {
			t.Fatalf("the reference library refuses the signature: %v\nheaders %v", err, got[0].Header)
		}
		// A byte changed breaks it.
		tampered := append([]byte(nil), got[0].Body...)
		tampered[len(tampered)-2] ^= 1
		if wh.Verify(tampered, got[0].Header) == nil {
			t.Fatal("a tampered body verified")
		}
		var body struct {
			Type      string         `json:"type"`
			Timestamp string         `json:"timestamp"`
			Data      map[string]any `json:"data"`
		}
		if err := json.Unmarshal(got[0].Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.Type != EventCreated || body.Timestamp != "2026-03-02T10:00:00Z" {
			t.Fatalf("type %q timestamp %q", body.Type, body.Timestamp)
		}
		want := map[string]any{"account": "default", "item_id": 7.0, "tool": "x_post_tweet", "text": "hello <world> @everyone",
			"params_hash": "hhello <world> @everyone", "rule": "user:review", "caller": "mcp", "created_at": "2026-03-02T10:00:00.000Z",
			"expires_at": "2026-03-03T10:00:00.000Z", "status": "pending",
			"action": "Post", "effect": "Posts this text from your account.", "posts": []any{"hello <world> @everyone"}}
		if !reflect.DeepEqual(body.Data, want) {
			t.Fatalf("data = %v\nwant   %v", body.Data, want)
		}
		if id := got[0].Header.Get("webhook-id"); id == "" || got[0].Path != "/in" {
			t.Fatalf("webhook-id %q path %q", id, got[0].Path)
		}
		if s := w.statuses(); !reflect.DeepEqual(s, []string{StatusDelivered}) {
			t.Fatalf("statuses %v", s)
		}
		// Delivered rows are not sent again.
		if n := w.runOnce(d); n != 0 || len(rcv.requests()) != 1 {
			t.Fatalf("second pass settled %d, receiver got %d", n, len(rcv.requests()))
		}
	})
}

// An item decided or edited before its notice went out is not announced.
func TestDispatcherDropsEventsOfDecidedOrEditedItems(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		w := newWorld(t)
		rcv := newReceiver(t)
		w.queue(1, "decided")
		w.queue(2, "edited")
		w.queue(3, "still pending")
		w.items.set(1, func(it *gateway.ApprovalItem) { it.Status = gateway.ApprovalRejected })
		w.items.set(2, func(it *gateway.ApprovalItem) { it.Params = json.RawMessage(`{"text":"new words"}`) })
		w.runOnce(w.dispatcher(DispatcherOptions{}, w.webhook(rcv)))
		if s := w.statuses(); !reflect.DeepEqual(s, []string{StatusDropped, StatusDropped, StatusDelivered}) {
			t.Fatalf("statuses %v", s)
		}
		rows := w.rows()
		if !strings.Contains(rows[0].LastError, "rejected") || !strings.Contains(rows[1].LastError, "edited") {
			t.Fatalf("drop reasons %q / %q", rows[0].LastError, rows[1].LastError)
		}
		if got := rcv.requests(); len(got) != 1 || !strings.Contains(string(got[0].Body), "still pending") {
			t.Fatalf("receiver got %d requests", len(got))
		}
	})
}

// A 4xx other than 408 and 429 is a bad configuration: failed at once. The
// others are retried with backoff, after Retry-After when it asks longer.
func TestDeliveryFailuresAreClassified(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		header    http.Header
		want      string
		waitAtMin time.Duration
		waitAtMax time.Duration
	}{
		{"bad request", 400, nil, StatusFailed, 0, 0},
		{"unauthorized", 401, nil, StatusFailed, 0, 0},
		{"gone", 410, nil, StatusFailed, 0, 0},
		{"redirect", 302, http.Header{"Location": {"https://elsewhere.example/"}}, StatusFailed, 0, 0},
		{"timeout", 408, nil, StatusPending, 4 * time.Second, 6 * time.Second},
		{"server error", 503, nil, StatusPending, 4 * time.Second, 6 * time.Second},
		{"rate limited", 429, http.Header{"Retry-After": {"120"}}, StatusPending, 120 * time.Second, 120 * time.Second},
		{"retry-after date", 503, http.Header{"Retry-After": {t0.Add(10 * time.Minute).Format(http.TimeFormat)}}, StatusPending, 10 * time.Minute, 10 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			rcv := newReceiver(t)
			rcv.setAnswer(func(int) (int, http.Header) { return tc.status, tc.header })
			w.queue(1, "x")
			wh := w.webhook(rcv)
			wh.now = w.clk.Now
			w.runOnce(w.dispatcher(DispatcherOptions{}, wh))
			r := w.rows()[0]
			if r.Status != tc.want || r.Attempts != 1 || r.LastError == "" {
				t.Fatalf("row %+v, want status %s after one attempt with an error", r, tc.want)
			}
			if tc.want == StatusPending {
				next, _ := store.ParseTime(r.NextAttempt)
				if wait := next.Sub(t0); wait < tc.waitAtMin || wait > tc.waitAtMax {
					t.Fatalf("next attempt in %v, want %v..%v", wait, tc.waitAtMin, tc.waitAtMax)
				}
			}
		})
	}
}

// Retries back off and give up after MaxAttempts; a recovered receiver
// gets the message once.
func TestRetriesBackOffThenFail(t *testing.T) {
	w := newWorld(t)
	rcv := newReceiver(t)
	rcv.setAnswer(func(int) (int, http.Header) { return 500, nil })
	w.queue(1, "x")
	d := w.dispatcher(DispatcherOptions{MaxAttempts: 4}, w.webhook(rcv))
	var waits []time.Duration
	for i := 0; i < 4; i++ {
		before := w.clk.Now()
		w.runOnce(d)
		r := w.rows()[0]
		if r.Status == StatusFailed {
			break
		}
		next, _ := store.ParseTime(r.NextAttempt)
		waits = append(waits, next.Sub(before))
		// Not due yet: nothing is sent.
		if n := w.runOnce(d); n != 0 {
			t.Fatalf("a row was sent before its retry time")
		}
		w.clk.AdvanceTo(next)
	}
	if r := w.rows()[0]; r.Status != StatusFailed || r.Attempts != 4 {
		t.Fatalf("row %+v, want failed after 4 attempts", r)
	}
	if len(waits) != 3 || !(waits[0] < waits[1] && waits[1] < waits[2]) {
		t.Fatalf("waits %v, want three growing waits", waits)
	}
	if err := w.out.Retry(w.ctx, w.rows()[0].ID); err != nil {
		t.Fatal(err)
	}
	rcv.setAnswer(nil)
	w.runOnce(d)
	if r := w.rows()[0]; r.Status != StatusDelivered {
		t.Fatalf("after retry by hand: %+v", r)
	}
}

// Several dispatchers, each on its own database handle as separate
// processes or hosts are, deliver every row exactly once.
func TestExactlyOneDeliveryAcrossDispatchers(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		w := newWorld(t)
		rcv := newReceiver(t)
		const items = 40
		for i := int64(1); i <= items; i++ {
			w.queue(i, "item")
		}
		// A PostgreSQL test server needs no password, so the path opens it.
		target := w.db.Path
		var ds []*Dispatcher
		for i := 0; i < 4; i++ {
			db, err := store.Open(w.ctx, target, store.Options{Now: w.clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			out := NewOutbox(db, nil, w.clk.Now)
			ds = append(ds, NewDispatcher(DispatcherOptions{Outbox: out, Channels: []Channel{w.webhook(rcv)}, Items: w.items, Now: w.clk.Now}))
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, d := range ds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for {
					n, err := d.RunOnce(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					if n == 0 {
						return
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		seen := map[string]int{}
		for _, r := range rcv.requests() {
			seen[r.Header.Get("webhook-id")]++
		}
		if len(seen) != items {
			t.Fatalf("%d distinct messages delivered, want %d", len(seen), items)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("message %s delivered %d times", id, n)
			}
		}
		for _, s := range w.statuses() {
			if s != StatusDelivered {
				t.Fatalf("statuses %v", w.statuses())
			}
		}
	})
}

// A process that claimed rows and died leaves them to whoever claims after
// the lease runs out; before that nobody else sends them.
func TestLeaseOfADeadProcessRunsOut(t *testing.T) {
	w := newWorld(t)
	rcv := newReceiver(t)
	w.queue(1, "x")
	claimed, err := w.out.claim(w.ctx, "dead-process", w.clk.Now(), w.clk.Now().Add(2*time.Minute), 10, "1 = 1")
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	d := w.dispatcher(DispatcherOptions{}, w.webhook(rcv))
	if n := w.runOnce(d); n != 0 || len(rcv.requests()) != 0 {
		t.Fatal("a leased row was sent by another dispatcher")
	}
	w.clk.Advance(2*time.Minute + time.Second)
	if n := w.runOnce(d); n != 1 || len(rcv.requests()) != 1 {
		t.Fatalf("after the lease: settled %d, sent %d", n, len(rcv.requests()))
	}
	// The dead process's late settle changes nothing.
	if err := w.out.failed(w.ctx, "dead-process", []int64{claimed[0].ID}, "late"); err != nil {
		t.Fatal(err)
	}
	if s := w.statuses(); s[0] != StatusDelivered {
		t.Fatalf("status %v after a stale settle", s)
	}
}

// Items queued close after a channel's last message wait for the window
// and then go out as one digest.
func TestDigestWithinTheBatchWindow(t *testing.T) {
	w := newWorld(t)
	rcv := newReceiver(t)
	d := w.dispatcher(DispatcherOptions{BatchWindow: time.Minute}, w.webhook(rcv))
	w.queue(1, "first")
	w.runOnce(d)
	w.clk.Advance(10 * time.Second)
	w.queue(2, "second")
	w.queue(3, "third")
	w.runOnce(d)
	if len(rcv.requests()) != 1 {
		t.Fatalf("sent %d messages within the window, want only the first", len(rcv.requests()))
	}
	w.clk.Advance(50 * time.Second)
	w.runOnce(d)
	got := rcv.requests()
	if len(got) != 2 {
		t.Fatalf("sent %d messages, want the first and one digest", len(got))
	}
	var body struct {
		Data struct {
			Items []map[string]any `json:"items"`
		} `json:"data"`
	}
	if err := json.Unmarshal(got[1].Body, &body); err != nil || len(body.Data.Items) != 2 {
		t.Fatalf("digest %s: %v", got[1].Body, err)
	}
	rows := w.rows()
	if rows[1].BatchID != rows[1].ID || rows[2].BatchID != rows[1].ID {
		t.Fatalf("digest rows not tied to their message: %+v", rows)
	}
}

// notify.max_per_hour caps a channel; what it held back goes out as one
// "N more pending" message when the hour allows.
func TestHourlyCapThenOneSummary(t *testing.T) {
	w := newWorld(t)
	rcv := newReceiver(t)
	d := w.dispatcher(DispatcherOptions{MaxPerHour: 2}, w.webhook(rcv))
	for i := int64(1); i <= 5; i++ {
		w.queue(i, "item")
	}
	w.runOnce(d)
	if len(rcv.requests()) != 2 {
		t.Fatalf("sent %d in the first hour, want 2", len(rcv.requests()))
	}
	w.clk.Advance(30 * time.Minute)
	w.runOnce(d)
	if len(rcv.requests()) != 2 {
		t.Fatalf("sent %d before the hour ended", len(rcv.requests()))
	}
	w.clk.Advance(31 * time.Minute)
	w.runOnce(d)
	got := rcv.requests()
	if len(got) != 3 {
		t.Fatalf("sent %d, want the cap's 2 and one summary", len(got))
	}
	var body struct {
		Data struct {
			Items []any `json:"items"`
			More  int   `json:"more"`
		} `json:"data"`
	}
	if err := json.Unmarshal(got[2].Body, &body); err != nil || body.Data.More != 3 || len(body.Data.Items) != 3 {
		t.Fatalf("summary %s", got[2].Body)
	}
}

// A row for a channel this process does not have fails with the reason.
func TestUnknownChannelFails(t *testing.T) {
	w := newWorld(t)
	w.queue(1, "x")
	w.runOnce(w.dispatcher(DispatcherOptions{}))
	if r := w.rows()[0]; r.Status != StatusFailed || !strings.Contains(r.LastError, "not configured") {
		t.Fatalf("row %+v", r)
	}
}

// hangChannel never answers until its send is cancelled.
type hangChannel struct{ started chan struct{} }

func (h hangChannel) Name() string { return "hang" }
func (h hangChannel) Type() string { return "webhook" }
func (h hangChannel) Send(ctx context.Context, _ Message) (string, error) {
	h.started <- struct{}{}
	<-ctx.Done()
	return "", ctx.Err()
}

// A channel that hangs until its timeout does not hold up another channel.
func TestHungChannelDoesNotDelayOthers(t *testing.T) {
	w := newWorld(t, Route{Channel: "hang", Events: []string{EventCreated}}, Route{Channel: "hook", Events: []string{EventCreated}})
	rcv := newReceiver(t)
	delivered := make(chan struct{}, 1)
	rcv.setAnswer(func(int) (int, http.Header) { delivered <- struct{}{}; return 200, nil })
	hang := hangChannel{started: make(chan struct{}, 1)}
	w.queue(1, "x")
	d := NewDispatcher(DispatcherOptions{Outbox: w.out, Channels: []Channel{hang, w.webhook(rcv)}, Items: w.items, Now: time.Now,
		SendTimeout: time.Minute, PollEvery: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-hang.started
	select {
	case <-delivered:
	case <-time.After(10 * time.Second):
		t.Fatal("the live channel waited for the hung one")
	}
}
