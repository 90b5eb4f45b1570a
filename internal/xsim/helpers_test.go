package xsim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
)

// testEpoch anchors every test world so results are reproducible.
var testEpoch = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// env is a started emulator with a fully scoped token for the demo user.
type env struct {
	t     *testing.T
	s     *Server
	clock *clock.Fake
	base  string
	token string
	me    string
	hc    *http.Client
	// Lookups into the starting world, cached: World() copies everything.
	cacheTweet string
}

func newEnv(t *testing.T, mutate ...func(*Options)) *env {
	t.Helper()
	clk := clock.NewFake(testEpoch)
	opts := DefaultOptions()
	opts.Now = clk.Now
	opts.Seed = 42
	opts.World = DemoWorldAt(42, testEpoch)
	for _, m := range mutate {
		m(&opts)
	}
	// Every test keeps its world in a state file, and ends by checking that
	// the file and its log hold the world as the server has it: a change
	// that the log missed fails the test that made it.
	checkLog := opts.StateFile == ""
	if checkLog {
		opts.StateFile = filepath.Join(t.TempDir(), "world.json")
	}
	s := New(opts)
	base, err := s.Start(context.Background(), "")
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if checkLog {
		// Cleanups run last first: this one before the Close above.
		t.Cleanup(func() { wantFilesHold(t, s, opts.StateFile) })
	}
	tok, _, _ := s.IssueToken("", s.AllScopes())
	return &env{t: t, s: s, clock: clk, base: base, token: tok, me: s.DemoUserID(),
		hc: &http.Client{Timeout: 10 * time.Second}}
}

type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r resp) data() map[string]any {
	d, _ := r.body["data"].(map[string]any)
	return d
}

func (r resp) list() []any {
	d, _ := r.body["data"].([]any)
	return d
}

func (r resp) meta() map[string]any {
	d, _ := r.body["meta"].(map[string]any)
	return d
}

// do sends a request with the env token (token "" sends none).
func (e *env) doTok(method, path, token string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	case []byte:
		rd, ct = bytes.NewReader(b), "application/json"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd, ct = bytes.NewReader(raw), "application/json"
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return e.send(req)
}

func (e *env) send(req *http.Request) resp {
	e.t.Helper()
	res, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			e.t.Fatalf("%s %s: body is not JSON: %v: %s", req.Method, req.URL.Path, err, raw)
		}
	}
	return r
}

func (e *env) do(method, path string, body any) resp {
	e.t.Helper()
	return e.doTok(method, path, e.token, body)
}

func (e *env) get(path string) resp {
	e.t.Helper()
	return e.do("GET", path, nil)
}

func wantStatus(t *testing.T, r resp, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status = %d, want %d; body %s", r.status, want, r.raw)
	}
}

func wantProblem(t *testing.T, r resp, status int, typ string) {
	t.Helper()
	wantStatus(t, r, status)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("content-type = %q, want application/problem+json", ct)
	}
	if got, _ := r.body["type"].(string); got != typ {
		t.Fatalf("problem type = %q, want %q; body %s", got, typ, r.raw)
	}
	for _, k := range []string{"title", "detail"} {
		if s, _ := r.body[k].(string); s == "" {
			t.Fatalf("problem without %s: %s", k, r.raw)
		}
	}
	if st, _ := r.body["status"].(float64); int(st) != status {
		t.Fatalf("problem status = %v, want %d", r.body["status"], status)
	}
}

func (e *env) post(text string) string {
	e.t.Helper()
	r := e.do("POST", "/2/tweets", map[string]any{"text": text})
	wantStatus(e.t, r, http.StatusCreated)
	return r.data()["id"].(string)
}

func (e *env) counter(name string) int64 {
	return e.s.Counters()[name]
}

// someTweet returns a live post by another account.
func (e *env) someTweet() string {
	e.t.Helper()
	if e.cacheTweet != "" {
		e.s.mu.Lock()
		live := e.s.st.tweets[e.cacheTweet] != nil
		e.s.mu.Unlock()
		if live {
			return e.cacheTweet
		}
	}
	w := e.s.World()
	for i := len(w.Tweets) - 1; i >= 0; i-- {
		t := w.Tweets[i]
		if t.AuthorID != e.me && t.RetweetOf == "" {
			e.cacheTweet = t.ID
			return t.ID
		}
	}
	e.t.Fatal("no tweet in world")
	return ""
}

func (e *env) userID(name string) string {
	e.t.Helper()
	id := e.s.UserIDByUsername(name)
	if id == "" {
		e.t.Fatalf("no user %s", name)
	}
	return id
}

// wantFilesHold fails the test unless the state file at path, with its log,
// loads as the world s serves (unless s is closed, when the world may have
// moved on without the files).
func wantFilesHold(t *testing.T, s *Server, path string) {
	t.Helper()
	select {
	case <-s.closed:
		return
	default:
	}
	live := s.World()
	w, err := LoadWorld(path)
	if err != nil {
		t.Fatalf("load the state file and its log: %v", err)
	}
	wantSameWorld(t, "the state file and its log", live, w)
}

// wantSameWorld fails the test unless got, as a server would hold it,
// is the world want, part by part.
func wantSameWorld(t *testing.T, what string, want, got *World) {
	t.Helper()
	norm := func(w *World) map[string]json.RawMessage {
		w = New(Options{World: w}).World()
		w.SavedAt, w.Journal = time.Time{}, ""
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var parts map[string]json.RawMessage
		if err := json.Unmarshal(b, &parts); err != nil {
			t.Fatal(err)
		}
		return parts
	}
	a, b := norm(want), norm(got)
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			t.Errorf("%s: %s differs from the live world:\n got  %.600s\n want %.600s", what, k, b[k], v)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: has %s, which the live world has not", what, k)
		}
	}
}
