package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/envelope"
)

// probeIn exercises decoding of every kind of field a tool input has.
type probeIn struct {
	Text  string   `json:"text" jsonschema:"some text"`
	Count int      `json:"count,omitempty" jsonschema:"a count"`
	Tags  []string `json:"tags,omitempty" jsonschema:"labels"`
	Mode  string   `json:"mode,omitempty" jsonschema:"panic, fail or partial"`
}

func probeTool() *Tool {
	return def(Spec{
		Name: "probe", Title: "Probe", Description: "Test tool.", Category: "test",
		Profiles: []Profile{Workflow}, Hints: readLocal,
	}, func(_ context.Context, _ *Call, in probeIn) (Result, error) {
		switch in.Mode {
		case "panic":
			panic("probe exploded")
		case "fail":
			return Result{}, apperr.New(apperr.XRateLimited, "slow down").With("retry_after_ms", 1000)
		case "partial":
			return Result{}, &apperr.Error{Code: apperr.ThreadPartial, Message: "broke", Data: map[string]any{"posted": 1}}
		case "plain":
			return Result{}, errors.New("plain failure")
		}
		return Result{Data: in, Meta: envelope.Meta{CorrelationID: "corr-1", Notes: []string{"n"}}}, nil
	})
}

// probeDeps are the services of a server without a database, X or LLM:
// all the handler wrapper itself reads is the configuration and the clock.
func probeDeps(t testing.TB) *Deps {
	t.Helper()
	cfg := config.Default()
	cfg.Home = t.TempDir()
	return &Deps{Cfg: &cfg, Log: slog.New(slog.DiscardHandler), Now: time.Now}
}

func resolvedOf(t testing.TB, tool *Tool) func() (*jsonschema.Resolved, error) {
	t.Helper()
	s, err := tool.InputSchema()
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return func() (*jsonschema.Resolved, error) { return r, nil }
}

// probeSession serves the probe tool through the same handler wrapper the
// registry tools use.
func probeSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	a := probeDeps(t)
	tool := probeTool()
	schema, err := tool.InputSchema()
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: tool.Name, Description: tool.Description, InputSchema: schema, Annotations: tool.Annotations()},
		handler(a, tool, resolvedOf(t, tool), &Surface{Profile: Workflow, Tools: []*Tool{tool}}))
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func probeCall(t *testing.T, cs *mcp.ClientSession, args any) (envelope.Envelope, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "probe", Arguments: args})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	var env envelope.Envelope
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		t.Fatal(err)
	}
	if res.IsError != !env.Success {
		t.Errorf("isError %t, success %t", res.IsError, env.Success)
	}
	return env, res
}

func TestHandlerTypedInput(t *testing.T) {
	cs := probeSession(t)
	env, _ := probeCall(t, cs, map[string]any{"text": "hi", "count": 3, "tags": []string{"a"}})
	if !env.Success {
		t.Fatalf("good call failed: %+v", env.Error)
	}
	got, _ := json.Marshal(env.Data)
	if string(got) != `{"count":3,"tags":["a"],"text":"hi"}` {
		t.Errorf("data = %s", got)
	}
	if env.Meta.CorrelationID != "corr-1" || len(env.Meta.Notes) != 1 || env.Meta.ToolVersion != envelope.ToolVersion || env.Meta.ApprovalMode == nil {
		t.Errorf("meta not merged: %+v", env.Meta)
	}

	tests := []struct {
		name  string
		args  any
		field string
	}{
		{"string for int", map[string]any{"text": "x", "count": "three"}, "count"},
		{"float for int", map[string]any{"text": "x", "count": 1.5}, "count"},
		{"int for string", map[string]any{"text": 7}, "text"},
		{"object in list", map[string]any{"text": "x", "tags": []any{map[string]any{}}}, "tags"},
		{"missing required", map[string]any{}, "text"},
		{"unknown field", map[string]any{"text": "x", "colour": "red"}, "colour"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, _ := probeCall(t, cs, tc.args)
			if env.Success || env.Error.Code != apperr.InvalidInput {
				t.Fatalf("got %+v, want invalid_input", env.Error)
			}
			if !strings.Contains(env.Error.Message, tc.field) {
				t.Errorf("message %q does not name %q", env.Error.Message, tc.field)
			}
		})
	}
}

func TestHandlerErrorsAndPanics(t *testing.T) {
	cs := probeSession(t)
	env, _ := probeCall(t, cs, map[string]any{"text": "x", "mode": "fail"})
	if env.Success || env.Error.Code != apperr.XRateLimited || !env.Error.Retryable || env.Error.Extra["retry_after_ms"] != float64(1000) {
		t.Errorf("coded failure: %+v", env.Error)
	}
	env, _ = probeCall(t, cs, map[string]any{"text": "x", "mode": "partial"})
	if env.Success || env.Data == nil {
		t.Errorf("partial data lost: %+v", env)
	}
	env, _ = probeCall(t, cs, map[string]any{"text": "x", "mode": "plain"})
	if env.Success || env.Error.Code != apperr.InternalError {
		t.Errorf("plain error: %+v", env.Error)
	}
	// A panicking handler is an internal_error envelope, not a dead server.
	env, _ = probeCall(t, cs, map[string]any{"text": "x", "mode": "panic"})
	if env.Success || env.Error.Code != apperr.InternalError {
		t.Fatalf("panic: %+v", env.Error)
	}
	if strings.Contains(env.Error.Message, "exploded") {
		t.Errorf("panic value leaked to the caller: %q", env.Error.Message)
	}
	if env.Meta == nil || env.Meta.ToolVersion != envelope.ToolVersion {
		t.Errorf("panic envelope without meta: %+v", env.Meta)
	}
	if env, _ := probeCall(t, cs, map[string]any{"text": "after"}); !env.Success {
		t.Error("server did not survive a panicking handler")
	}
}

// FuzzInvoke feeds arbitrary bytes as tool arguments through validation and
// strict decoding. Nothing panics, and every failure is invalid_input.
func FuzzInvoke(f *testing.F) {
	for _, s := range []string{`{"text":"a"}`, `{"text":"a","count":2,"tags":["x","y"]}`, `{}`, `null`, `"s"`, `[]`,
		`{"text":"a"} {"text":"b"}`, `{"text":"a","text":"b"}`, `{"text":1e999}`, `{"count":9223372036854775808,"text":""}`,
		`{"text":"\ud800"}`, `{"tags":null,"text":""}`, `{"__proto__":{}}`, `{"text":"a","mode":"panic"}`} {
		f.Add([]byte(s))
	}
	a := probeDeps(f)
	tool := probeTool()
	resolved := resolvedOf(f, tool)
	call := &Call{Deps: a, Surface: &Surface{Profile: Workflow, Tools: []*Tool{tool}}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if strings.Contains(string(raw), "panic") {
			return // the probe panics on purpose; the handler test covers that
		}
		res, err := invoke(context.Background(), call, tool, resolved, raw)
		if err != nil {
			if c := apperr.CodeOf(err); c != apperr.InvalidInput {
				t.Fatalf("code %s for %q: %v", c, raw, err)
			}
			return
		}
		if _, ok := res.Data.(probeIn); !ok {
			t.Fatalf("accepted %q but data is %T", raw, res.Data)
		}
		// Only well-formed JSON (or nothing) may be accepted.
		if len(strings.TrimSpace(string(raw))) > 0 && !json.Valid(raw) {
			t.Fatalf("accepted malformed JSON %q", raw)
		}
	})
}

// FuzzOriginGuard checks that the HTTP guard only lets through requests
// whose Origin (if any) is a loopback http(s) origin and whose bearer
// token is exactly right.
func FuzzOriginGuard(f *testing.F) {
	const token = "fuzz-token-0123456789"
	for _, o := range []string{"", "http://127.0.0.1:1", "https://evil.example", "http://localhost", "http://[::1]", "null",
		"http://127.0.0.1.evil.example", "http://evil.example@127.0.0.1", "HTTP://LOCALHOST", "http://127.1", "http://0x7f000001",
		"http://[::ffff:127.0.0.1]", "ws://127.0.0.1", "http://localhost.", "http://%6c%6f%63%61%6c%68%6f%73%74"} {
		f.Add(o, "Bearer "+token)
		f.Add(o, "Bearer x")
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := guard(ok, token, "")
	f.Fuzz(func(t *testing.T, origin, auth string) {
		if strings.ContainsAny(origin+auth, "\r\n\x00") {
			return // not representable as a header value
		}
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		passed := rec.Code == http.StatusTeapot
		if !passed {
			return
		}
		if auth != "Bearer "+token {
			t.Fatalf("passed with Authorization %q", auth)
		}
		if origin == "" {
			return
		}
		u, err := url.Parse(origin)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			t.Fatalf("passed with unparsable or non-http origin %q", origin)
		}
		host := u.Hostname()
		if host == "localhost" {
			return
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			t.Fatalf("passed with non-loopback origin %q (host %q)", origin, host)
		}
	})
}

func TestLeadingID(t *testing.T) {
	tests := []struct {
		prefix, want string
	}{
		{`{"jsonrpc":"2.0","id":42,"method":"ping","params":{"x":"aaa`, "42"},
		{`{"jsonrpc":"2.0","id":"abc","method":"pi`, `"abc"`},
		{`{"jsonrpc":"2.0","id":4`, ""},
		{`{"jsonrpc":"2.0","id":42 `, ""},
		{`{"jsonrpc":"2.0","id":"ab`, ""},
		{`{"jsonrpc":"2.0","method":"ping","params":{"x":"aaa`, ""},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, ""},
		{`[{"id":1}]`, ""},
		{`not json`, ""},
	}
	for _, tc := range tests {
		if got := string(leadingID([]byte(tc.prefix))); got != tc.want {
			t.Errorf("leadingID(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

// TestPlainRequestIsDecodedOnce guards the stdio guard's cost per message:
// a request spelled as JSON-RPC spells it is checked without a second run
// of the SDK's decoder, whose fresh 32 KiB buffer per message every call
// would otherwise pay in allocation and garbage collection.
func TestPlainRequestIsDecodedOnce(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health_check","arguments":{}}}`)
	if _, _, code, text, ok := checkMessage(line); !ok {
		t.Fatalf("checkMessage refused a plain request: %d %s", code, text)
	}
	const runs = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		checkMessage(line)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 8<<10 {
		t.Errorf("checking one plain request allocates %d bytes; want at most 8 KiB", per)
	}
}
