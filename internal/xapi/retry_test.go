package xapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// fault kinds the matrix server can produce on the route under test.
const (
	f500       = "5xx"
	f429Near   = "429 near reset"
	f429Far    = "429 far reset"
	fReset     = "connection reset"
	fTimeout   = "timeout"
	fMalformed = "malformed JSON"
)

// matrixServer fails the first `times` requests to target with kind and
// answers every other request successfully.
func matrixServer(target, kind string, times int64, now func() time.Time) http.HandlerFunc {
	var n atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		key := r.Method + " " + r.URL.Path
		if key == target && n.Add(1) <= times {
			switch kind {
			case f500:
				writeJSON(w, 503, `{"title":"Service Unavailable","detail":"Service is temporarily unavailable.","type":"about:blank","status":503}`)
			case f429Near, f429Far:
				reset := now().Add(5 * time.Second)
				if kind == f429Far {
					reset = now().Add(10 * time.Minute)
				}
				w.Header().Set("x-rate-limit-limit", "100")
				w.Header().Set("x-rate-limit-remaining", "0")
				w.Header().Set("x-rate-limit-reset", strconv.FormatInt(reset.Unix(), 10))
				writeJSON(w, 429, `{"title":"Too Many Requests","detail":"Too Many Requests","type":"about:blank","status":429}`)
			case fReset:
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close()
				}
			case fTimeout:
				select {
				case <-r.Context().Done():
				case <-time.After(2 * time.Second):
				}
			case fMalformed:
				writeJSON(w, 200, `{"data":{"id":"1","te`)
			}
			return
		}
		switch key {
		case "GET /2/users/me":
			writeJSON(w, 200, `{"data":{"id":"42","name":"Me","username":"me"}}`)
		case "GET /2/tweets/1":
			writeJSON(w, 200, `{"data":{"id":"1","text":"t"}}`)
		case "DELETE /2/tweets/1":
			writeJSON(w, 200, `{"data":{"deleted":true}}`)
		case "POST /2/users/42/likes":
			writeJSON(w, 200, `{"data":{"liked":true}}`)
		case "POST /2/tweets":
			writeJSON(w, 201, `{"data":{"id":"9","text":"t"}}`)
		case "PUT /2/tweets/1/hidden":
			writeJSON(w, 200, `{"data":{"hidden":true}}`)
		default:
			writeJSON(w, 404, `{"title":"Not Found Error"}`)
		}
	}
}

// matrixCall is one client entry point under test.
type matrixCall struct {
	name   string
	target string
	create bool
	raw    bool
	run    func(ctx context.Context, c *Client) (status int, retries int, err error)
}

func matrixCalls() []matrixCall {
	return []matrixCall{
		{"GetTweet", "GET /2/tweets/1", false, false, func(ctx context.Context, c *Client) (int, int, error) {
			_, info, err := c.GetTweet(ctx, "1")
			return 0, info.RetryCount, err
		}},
		{"DeleteTweet", "DELETE /2/tweets/1", false, false, func(ctx context.Context, c *Client) (int, int, error) {
			_, info, err := c.DeleteTweet(ctx, "1")
			return 0, info.RetryCount, err
		}},
		{"Like", "POST /2/users/42/likes", false, false, func(ctx context.Context, c *Client) (int, int, error) {
			_, info, err := c.Like(ctx, "1")
			return 0, info.RetryCount, err
		}},
		{"PostTweet", "POST /2/tweets", true, false, func(ctx context.Context, c *Client) (int, int, error) {
			_, info, err := c.PostTweet(ctx, PostParams{Text: "hello"})
			return 0, info.RetryCount, err
		}},
		{"Raw GET", "GET /2/tweets/1", false, true, func(ctx context.Context, c *Client) (int, int, error) {
			r, err := c.Raw(ctx, RawRequest{Method: "GET", Path: "/2/tweets/1"})
			if err != nil {
				return 0, 0, err
			}
			return r.Status, r.RetryCount, nil
		}},
		{"Raw PUT", "PUT /2/tweets/1/hidden", false, true, func(ctx context.Context, c *Client) (int, int, error) {
			r, err := c.Raw(ctx, RawRequest{Method: "PUT", Path: "/2/tweets/1/hidden", Body: []byte(`{"hidden":true}`)})
			if err != nil {
				return 0, 0, err
			}
			return r.Status, r.RetryCount, nil
		}},
		{"Raw POST", "POST /2/tweets", true, true, func(ctx context.Context, c *Client) (int, int, error) {
			r, err := c.Raw(ctx, RawRequest{Method: "POST", Path: "/2/tweets", Body: []byte(`{"text":"hi"}`)})
			if err != nil {
				return 0, 0, err
			}
			return r.Status, r.RetryCount, nil
		}},
	}
}

// expectation of one matrix cell.
type cell struct {
	hits   int
	code   apperr.Code // typed error code, "" for success
	status int         // raw status when no error
}

// expect encodes the retry policy: what each class does on each fault when
// the fault is permanent (times = 99).
func expect(kind string, mc matrixCall) cell {
	switch kind {
	case f500:
		switch {
		case mc.create && mc.raw:
			return cell{hits: 1, status: 503}
		case mc.create:
			return cell{hits: 1, code: apperr.XOutcomeUnknown}
		case mc.raw:
			return cell{hits: 3, status: 503}
		default:
			return cell{hits: 3, code: apperr.XAPIError}
		}
	case f429Near:
		if mc.raw {
			return cell{hits: 3, status: 429}
		}
		return cell{hits: 3, code: apperr.XRateLimited}
	case f429Far:
		if mc.raw {
			return cell{hits: 1, status: 429}
		}
		return cell{hits: 1, code: apperr.XRateLimited}
	case fReset, fTimeout:
		if mc.create {
			return cell{hits: 1, code: apperr.XOutcomeUnknown}
		}
		return cell{hits: 3, code: apperr.XNetworkError}
	case fMalformed:
		switch {
		case mc.raw:
			return cell{hits: 1, status: 200}
		case mc.create:
			return cell{hits: 1, code: apperr.XOutcomeUnknown}
		default:
			return cell{hits: 3, code: apperr.XNetworkError}
		}
	}
	panic("unknown fault " + kind)
}

func noKeepAlive(o *Options) {
	// Fresh connections keep the standard transport from replaying requests
	// on its own, so hit counts measure the client's policy alone.
	o.HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

func TestRetryMatrixPermanentFaults(t *testing.T) {
	for _, kind := range []string{f500, f429Near, f429Far, fReset, fTimeout, fMalformed} {
		for _, mc := range matrixCalls() {
			t.Run(kind+"/"+mc.name, func(t *testing.T) {
				var h *harness
				clock := &fixedClock{t: testEpoch}
				h = newHarness(t, matrixServer(mc.target, kind, 99, clock.now), noKeepAlive, func(o *Options) {
					o.Now = clock.now
					if kind == fTimeout {
						o.Timeout = 150 * time.Millisecond
					}
				})
				if _, err := h.c.MyUserID(context.Background()); err != nil {
					t.Fatal(err)
				}
				want := expect(kind, mc)
				status, _, err := mc.run(context.Background(), h.c)
				if want.code != "" {
					e := wantCode(t, err, want.code)
					if kind == f429Far && e.Extra["retry_after_ms"] != int64(600000) {
						t.Fatalf("retry_after_ms = %v", e.Extra["retry_after_ms"])
					}
				} else {
					if err != nil {
						t.Fatalf("raw call failed: %v", err)
					}
					if status != want.status {
						t.Fatalf("status = %d, want %d", status, want.status)
					}
				}
				if got := h.hits.get(mc.target); got != want.hits {
					t.Fatalf("%s hit %d times, want %d", mc.target, got, want.hits)
				}
				if kind == f429Near {
					for _, d := range h.sleeps.all() {
						if d != 5*time.Second {
							t.Fatalf("429 wait = %v, want the 5s until x-rate-limit-reset", d)
						}
					}
				}
				rows := 0
				for _, u := range h.usage.all() {
					if u.Endpoint == endpointKey(mc.target[:len(mc.target)-len(pathOf(mc.target))-1], pathOf(mc.target)) {
						rows++
					}
				}
				if rows != want.hits {
					t.Fatalf("ledger rows for %s = %d, want one per attempt (%d)", mc.target, rows, want.hits)
				}
			})
		}
	}
}

func pathOf(target string) string {
	for i := range target {
		if target[i] == ' ' {
			return target[i+1:]
		}
	}
	return target
}

func TestRetryRecoversAfterTransientFault(t *testing.T) {
	for _, kind := range []string{f500, f429Near, fReset, fMalformed} {
		for _, mc := range matrixCalls() {
			t.Run(kind+"/"+mc.name, func(t *testing.T) {
				clock := &fixedClock{t: testEpoch}
				h := newHarness(t, matrixServer(mc.target, kind, 1, clock.now), noKeepAlive, func(o *Options) { o.Now = clock.now })
				if _, err := h.c.MyUserID(context.Background()); err != nil {
					t.Fatal(err)
				}
				status, retries, err := mc.run(context.Background(), h.c)
				retried := !mc.create || kind == f429Near
				if mc.raw && (kind == fMalformed || (kind == f500 && mc.create)) {
					retried = false
				}
				if !retried {
					if got := h.hits.get(mc.target); got != 1 {
						t.Fatalf("hits = %d, want 1 (no retry)", got)
					}
					return
				}
				if err != nil {
					t.Fatalf("want recovery, got %v", err)
				}
				if mc.raw && status/100 != 2 {
					t.Fatalf("raw status = %d", status)
				}
				if retries != 1 || h.hits.get(mc.target) != 2 {
					t.Fatalf("retries = %d hits = %d, want 1 and 2", retries, h.hits.get(mc.target))
				}
			})
		}
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	c, err := New(Options{BaseBackoff: time.Second, Jitter: func(n int64) int64 { return n - 1 }, Tokens: &fakeTokens{token: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	prev := time.Duration(0)
	for attempt := 1; attempt <= 8; attempt++ {
		d := c.backoff(attempt)
		if d < prev {
			t.Fatalf("backoff shrank at attempt %d: %v < %v", attempt, d, prev)
		}
		if d > MaxBackoff {
			t.Fatalf("backoff %v exceeds cap", d)
		}
		prev = d
	}
	if c.backoff(1) != time.Second {
		t.Fatalf("first backoff with max jitter = %v, want 1s", c.backoff(1))
	}
	lo, _ := New(Options{BaseBackoff: time.Second, Jitter: func(int64) int64 { return 0 }, Tokens: &fakeTokens{token: "t"}})
	if lo.backoff(1) != 500*time.Millisecond {
		t.Fatalf("min jitter backoff = %v, want half the step", lo.backoff(1))
	}
}

func TestConnectionRefusedIsRetriedEvenForPosts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	usage := &usageLog{}
	sl := &sleeps{}
	c, err := New(Options{
		BaseURLs: map[string]string{HostAPI: "http://" + addr},
		Tokens:   &fakeTokens{token: testToken},
		Usage:    usage,
		Sleep:    sl.sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.PostTweet(context.Background(), PostParams{Text: "never sent"})
	e := wantCode(t, err, apperr.XNetworkError)
	if e.Extra["retry_count"] != 2 {
		t.Fatalf("retry_count = %v, want 2 (a refused connection proves X saw nothing)", e.Extra["retry_count"])
	}
	rows := usage.all()
	if len(rows) != 3 {
		t.Fatalf("ledger rows = %d, want 3", len(rows))
	}
	for _, r := range rows {
		if r.Status != 0 || r.CostUSD != 0 || r.ErrorCode != string(apperr.XNetworkError) {
			t.Fatalf("refused attempt row = %+v", r)
		}
	}
	if len(sl.all()) != 2 {
		t.Fatalf("backoff sleeps = %d, want 2", len(sl.all()))
	}
}

func TestCallerCancellationStopsRetries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 503, `{"title":"Service Unavailable"}`)
	}, func(o *Options) {
		o.Sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	})
	_, _, err := h.c.GetTweet(ctx, "1")
	wantCode(t, err, apperr.XNetworkError)
	if n := h.hits.get("GET /2/tweets/1"); n != 1 {
		t.Fatalf("hits after cancel = %d, want 1", n)
	}
}
