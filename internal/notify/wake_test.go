package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestWrittenRowWakesTheDispatcher: a dispatcher whose poll would not come
// for an hour delivers a notice as soon as its row is committed: one this
// process wrote, and one another process wrote: on PostgreSQL the
// commit's NOTIFY tells it, on SQLite its watch of the newest row.
func TestWrittenRowWakesTheDispatcher(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, c := range []string{"this process", "another process"} {
			t.Run(c, func(t *testing.T) {
				w := newWorld(t)
				writer := w
				if c == "another process" {
					other, err := store.Open(w.ctx, w.db.Path, store.Options{Now: w.clk.Now})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { other.Close() })
					writer = &world{t: t, ctx: w.ctx, db: other, clk: w.clk, out: NewOutbox(other, nil, w.clk.Now), items: w.items}
					writer.out.routes = w.out.routes
				}
				arrived := make(chan struct{}, 4)
				rcv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
					arrived <- struct{}{}
					rw.WriteHeader(http.StatusNoContent)
				}))
				defer rcv.Close()
				hook, err := NewWebhook("hook", rcv.URL, testSecret, rcv.Client(), time.Now)
				if err != nil {
					t.Fatal(err)
				}
				listening := make(chan struct{}, 1)
				d := w.dispatcher(DispatcherOptions{PollEvery: time.Hour, Listening: func() { listening <- struct{}{} }}, hook)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { d.Run(ctx); close(done) }()
				defer func() { cancel(); <-done }()
				select {
				case <-listening:
				case <-time.After(20 * time.Second):
					t.Fatal("the dispatcher never listened for other processes' rows")
				}
				// The first item may go out with the dispatcher's first
				// pass; once it has, only a wake can send the second.
				for i := int64(1); i <= 2; i++ {
					writer.queue(i, "wake probe")
					select {
					case <-arrived:
					case <-time.After(20 * time.Second):
						t.Fatalf("item %d was not delivered before the next poll", i)
					}
				}
			})
		}
	})
}
