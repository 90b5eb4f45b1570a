package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// testKey is a recognisable key that must never appear in any error.
const testKey = "sk-test-SECRET0123456789abcdef"

var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return fixedNow }

// seen is one request as the fake server received it.
type seen struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any
}

// reply is one scripted answer.
type reply struct {
	status int
	header map[string]string
	body   string
	// block makes the handler wait until the client gives up.
	block bool
}

// fakeServer answers with the scripted replies in order (the last one
// repeats) and records every request.
type fakeServer struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	got     []seen
}

func newFakeServer(t *testing.T, replies ...reply) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			f.t.Errorf("request body is not JSON: %v", err)
		}
	}
	f.mu.Lock()
	i := len(f.got)
	f.got = append(f.got, seen{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	rep := f.replies[min(i, len(f.replies)-1)]
	f.mu.Unlock()
	if rep.block {
		<-r.Context().Done()
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.header["Content-Type"] == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

func (f *fakeServer) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.got...)
}

const openAIOK = `{
  "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [{"index": 0, "finish_reason": "stop",
    "message": {"role": "assistant", "content": "Ship small, ship often.", "refusal": null}}],
  "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}
}`

const anthropicOK = `{
  "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
  "content": [{"type": "text", "text": "Ship small, "}, {"type": "text", "text": "ship often."}],
  "stop_reason": "end_turn", "stop_sequence": null,
  "usage": {"input_tokens": 2000, "output_tokens": 100}
}`

// sleeps records the waits the client asked for without waiting.
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

type recorder struct {
	mu  sync.Mutex
	got []Usage
	err error
}

func (r *recorder) RecordLLMUsage(_ context.Context, u Usage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, u)
	return r.err
}

func (r *recorder) usages() []Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Usage(nil), r.got...)
}

func mustNew(t *testing.T, cfg Config, rec UsageRecorder, opts ...Option) Provider {
	t.Helper()
	p, err := New(cfg, rec, fixedClock, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func wantCode(t *testing.T, err error, code apperr.Code) *apperr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s error, got nil", code)
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want *apperr.Error with %s, got %T: %v", code, err, err)
	}
	if ae.Code != code {
		t.Fatalf("want code %s, got %s: %v", code, ae.Code, err)
	}
	return ae
}

func userMsg(s string) []Message { return []Message{{Role: RoleUser, Content: s}} }

func ptr[T any](v T) *T { return &v }
