package xapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

const testToken = "tok-SECRET-abc123"

// fakeTokens is a TokenSource with a fixed token and an optional refresh.
type fakeTokens struct {
	mu         sync.Mutex
	token      string
	refreshTo  string
	refreshErr error
	refreshes  int
}

func (f *fakeTokens) AccessToken(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.token, nil
}

func (f *fakeTokens) Refresh(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshes++
	if f.refreshErr != nil {
		return "", f.refreshErr
	}
	f.token = f.refreshTo
	return f.token, nil
}

func (f *fakeTokens) refreshCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refreshes
}

// usageLog collects ledger rows.
type usageLog struct {
	mu   sync.Mutex
	rows []Usage
	err  error
}

func (u *usageLog) RecordXUsage(_ context.Context, row Usage) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.rows = append(u.rows, row)
	return u.err
}

func (u *usageLog) all() []Usage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Usage(nil), u.rows...)
}

// sleeps records every wait instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// fixedClock is a settable clock.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fixedClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// harness is a client wired to an httptest server.
type harness struct {
	srv    *httptest.Server
	c      *Client
	tokens *fakeTokens
	usage  *usageLog
	sleeps *sleeps
	clock  *fixedClock
	hits   *hitCounter
}

type hitCounter struct {
	mu sync.Mutex
	m  map[string]int
}

func (h *hitCounter) add(k string) {
	h.mu.Lock()
	h.m[k]++
	h.mu.Unlock()
}

func (h *hitCounter) get(k string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[k]
}

var testEpoch = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func newHarness(t *testing.T, handler http.HandlerFunc, mod ...func(*Options)) *harness {
	t.Helper()
	h := &harness{
		tokens: &fakeTokens{token: testToken, refreshTo: testToken + "-2"},
		usage:  &usageLog{},
		sleeps: &sleeps{},
		clock:  &fixedClock{t: testEpoch},
		hits:   &hitCounter{m: map[string]int{}},
	}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hits.add(r.Method + " " + r.URL.Path)
		handler(w, r)
	}))
	t.Cleanup(h.srv.Close)
	opts := Options{
		BaseURLs:  map[string]string{HostAPI: h.srv.URL, HostUpload: h.srv.URL, HostUploadLegacy: h.srv.URL},
		Tokens:    h.tokens,
		Usage:     h.usage,
		AccountID: "acct-1",
		Now:       h.clock.now,
		Sleep:     h.sleeps.sleep,
		Jitter:    func(int64) int64 { return 0 },
		Timeout:   5 * time.Second,
	}
	for _, m := range mod {
		m(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.c = c
	return h
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func wantCode(t *testing.T, err error, code apperr.Code) *apperr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %s, got nil", code)
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want *apperr.Error %s, got %T: %v", code, err, err)
	}
	if ae.Code != code {
		t.Fatalf("want code %s, got %s (%s)", code, ae.Code, ae.Message)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Fatalf("token leaked in error: %v", err)
	}
	return ae
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
