package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

func TestMain(m *testing.M) {
	if code, ran := runDispatcherProcess(); ran {
		os.Exit(code)
	}
	os.Exit(pgtest.Main(m))
}

// testSecret is a Standard Webhooks secret (whsec_ + base64 of 32 bytes).
const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// fakeItems is the approval queue as the dispatcher reads it.
type fakeItems struct {
	mu    sync.Mutex
	items map[int64]*gateway.ApprovalItem
}

func (f *fakeItems) Item(_ context.Context, _ string, id int64) (*gateway.ApprovalItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	it, ok := f.items[id]
	if !ok {
		return nil, apperr.New(apperr.NotFound, "no approval item %d", id)
	}
	c := *it
	return &c, nil
}

func (f *fakeItems) put(it gateway.ApprovalItem) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.items == nil {
		f.items = map[int64]*gateway.ApprovalItem{}
	}
	f.items[it.ID] = &it
}

func (f *fakeItems) set(id int64, fn func(*gateway.ApprovalItem)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f.items[id])
}

// world is an outbox on a real database with a fake clock, the queue it
// notices and the channels it delivers to.
type world struct {
	t     testing.TB
	ctx   context.Context
	db    *store.DB
	clk   *clock.Fake
	out   *Outbox
	items *fakeItems
}

func newWorld(t testing.TB, routes ...Route) *world {
	t.Helper()
	clk := clock.NewFake(t0)
	db := storetest.Open(t, store.Options{Now: clk.Now})
	if len(routes) == 0 {
		routes = []Route{{Channel: "hook", Events: []string{EventCreated, EventEdited, EventExpiring, EventUnknown}}}
	}
	return &world{t: t, ctx: context.Background(), db: db, clk: clk, out: NewOutbox(db, routes, clk.Now), items: &fakeItems{}}
}

// queue records approval.created for a new pending item, as the gateway's
// transaction does.
func (w *world) queue(id int64, text string) gateway.ApprovalItem {
	w.t.Helper()
	params, _ := json.Marshal(map[string]string{"text": text})
	it := gateway.ApprovalItem{ID: id, Tool: "x_post_tweet", Params: params, OriginalParams: params, MatchedRuleID: "user:review",
		Reason: "posts need review", Caller: "mcp", Status: gateway.ApprovalPending,
		CreatedAt: store.FormatTime(w.clk.Now()), ExpiresAt: store.FormatTime(w.clk.Now().Add(24 * time.Hour))}
	w.items.put(it)
	err := w.db.Tx(w.ctx, func(tx *sql.Tx) error {
		return w.out.Notice(w.ctx, tx, gateway.Notice{Kind: gateway.NoticeCreated, Account: "default", Item: it, ParamsHash: "h" + text})
	})
	if err != nil {
		w.t.Fatalf("record notice: %v", err)
	}
	return it
}

func (w *world) dispatcher(o DispatcherOptions, chans ...Channel) *Dispatcher {
	o.Outbox, o.Channels, o.Items, o.Now = w.out, chans, w.items, w.clk.Now
	return NewDispatcher(o)
}

// rows lists every outbox row, oldest first.
func (w *world) rows() []Row {
	w.t.Helper()
	rows, err := w.out.List(w.ctx, Filter{Limit: 500})
	if err != nil {
		w.t.Fatal(err)
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	return rows
}

func (w *world) statuses() []string {
	var out []string
	for _, r := range w.rows() {
		out = append(out, r.Status)
	}
	return out
}

func (w *world) runOnce(d *Dispatcher) int {
	w.t.Helper()
	n, err := d.RunOnce(w.ctx)
	if err != nil {
		w.t.Fatalf("RunOnce: %v", err)
	}
	return n
}

// receiver is a local HTTP server that records what it is sent and
// answers with the status answer gives (200 when nil).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int) (int, http.Header)
}

type received struct {
	Header http.Header
	Body   []byte
	Path   string
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{Header: req.Header.Clone(), Body: b, Path: req.URL.RequestURI()})
		n := len(r.got)
		answer := r.answer
		r.mu.Unlock()
		status, h := http.StatusOK, http.Header(nil)
		if answer != nil {
			status, h = answer(n)
		}
		for k, v := range h {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func (r *receiver) setAnswer(f func(n int) (int, http.Header)) {
	r.mu.Lock()
	r.answer = f
	r.mu.Unlock()
}

func (w *world) webhook(r *receiver) *Webhook {
	w.t.Helper()
	h, err := NewWebhook("hook", r.srv.URL+"/in", testSecret, r.srv.Client(), time.Now)
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}
