package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// testConfig loads a configuration over a fresh temporary TUITBOT_HOME. Every
// X endpoint points at a closed loopback port so nothing can leave the
// machine even if a tool tried.
func testConfig(t testing.TB, extra map[string]string) *config.Config {
	t.Helper()
	env := map[string]string{
		"TUITBOT_HOME":                          t.TempDir(),
		"TUITBOT_X_API__API_BASE_URL":           "http://127.0.0.1:1",
		"TUITBOT_X_API__UPLOAD_BASE_URL":        "http://127.0.0.1:1",
		"TUITBOT_X_API__LEGACY_UPLOAD_BASE_URL": "http://127.0.0.1:1",
		"TUITBOT_X_API__AUTHORIZE_URL":          "http://127.0.0.1:1/authorize",
		"TUITBOT_X_API__TOKEN_URL":              "http://127.0.0.1:1/token",
		"TUITBOT_X_API__TIMEOUT_SECONDS":        "2",
		"TUITBOT_X_API__MAX_ATTEMPTS":           "1",
	}
	for k, v := range extra {
		env[k] = v
	}
	cfg, _, err := config.Load(config.LoadOptions{
		Getenv: func(k string) string { return env[k] },
		Environ: func() []string {
			var out []string
			for k, v := range env {
				out = append(out, k+"="+v)
			}
			return out
		},
	})
	if err != nil {
		t.Fatalf("config.Load: %v", err)
	}
	return cfg
}

// newApp builds the services over a temporary home.
func newApp(t testing.TB, extra map[string]string) *app.App {
	t.Helper()
	a, err := app.New(context.Background(), testConfig(t, extra), app.Options{})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// wireLog records the raw JSON-RPC messages the client reads, so tests can
// assert what was actually on the wire rather than what the SDK re-encodes.
type wireLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *wireLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// results returns the "result" objects of every response the client read.
func (w *wireLog) results(t *testing.T) []map[string]json.RawMessage {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []map[string]json.RawMessage
	for _, line := range strings.Split(w.buf.String(), "\n") {
		raw, ok := strings.CutPrefix(line, "read: ")
		if !ok {
			continue
		}
		var msg struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(raw), &msg); err != nil {
			t.Fatalf("wire line is not JSON: %v: %.200s", err, raw)
		}
		if msg.Result != nil {
			out = append(out, msg.Result)
		}
	}
	return out
}

type session struct {
	*mcp.ClientSession
	wire *wireLog
}

// connect serves a over an in-memory transport with the given options and
// returns a connected go-sdk client.
func connect(t *testing.T, a *app.App, o mcpserver.Options) *session {
	t.Helper()
	ctx := context.Background()
	srv, _, err := a.MCPServer(o)
	if err != nil {
		t.Fatalf("mcpserver.New: %v", err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	wire := &wireLog{}
	client := mcp.NewClient(&mcp.Implementation{Name: "tuitbot-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.LoggingTransport{Transport: ct, Writer: wire}, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return &session{ClientSession: cs, wire: wire}
}

func (s *session) listTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	var out []*mcp.Tool
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		out = append(out, tool)
	}
	return out
}

// envelopeOf is the decoded envelope of a call result.
type envelopeOf struct {
	Success *bool           `json:"success"`
	Data    json.RawMessage `json:"data"`
	Error   *struct {
		Code      apperr.Code `json:"code"`
		Message   string      `json:"message"`
		Retryable *bool       `json:"retryable"`
	} `json:"error"`
	Meta *struct {
		ToolVersion  string `json:"tool_version"`
		ElapsedMS    *int64 `json:"elapsed_ms"`
		Mode         string `json:"mode"`
		ApprovalMode *bool  `json:"approval_mode"`
	} `json:"meta"`
}

// call invokes a tool and checks the envelope contract every result must
// keep: one text content holding the envelope, the same envelope as
// structuredContent, isError exactly when success is false, and a known
// error code with the table's retryable flag.
func (s *session) call(t *testing.T, name string, args any) envelopeOf {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return checkResult(t, name, res)
}

func checkResult(t *testing.T, name string, res *mcp.CallToolResult) envelopeOf {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items, want 1", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T, want text", name, res.Content[0])
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("%s: structuredContent: %v", name, err)
	}
	var fromText, fromStructured any
	if err := json.Unmarshal([]byte(text.Text), &fromText); err != nil {
		t.Fatalf("%s: text content is not JSON: %v: %.300s", name, err, text.Text)
	}
	if err := json.Unmarshal(structured, &fromStructured); err != nil {
		t.Fatalf("%s: structuredContent is not JSON: %v", name, err)
	}
	if !jsonEqual(fromText, fromStructured) {
		t.Errorf("%s: text and structuredContent differ:\n%.500s\n%.500s", name, text.Text, structured)
	}
	var env envelopeOf
	if err := json.Unmarshal([]byte(text.Text), &env); err != nil {
		t.Fatalf("%s: envelope: %v", name, err)
	}
	if env.Success == nil {
		t.Fatalf("%s: envelope has no success: %.300s", name, text.Text)
	}
	if res.IsError != !*env.Success {
		t.Errorf("%s: isError=%t but success=%t", name, res.IsError, *env.Success)
	}
	if env.Meta == nil || env.Meta.ToolVersion != "1.0" || env.Meta.ElapsedMS == nil || env.Meta.ApprovalMode == nil || env.Meta.Mode == "" {
		t.Errorf("%s: meta incomplete: %.300s", name, text.Text)
	}
	if *env.Success {
		if env.Error != nil {
			t.Errorf("%s: success envelope carries an error", name)
		}
	} else {
		if env.Error == nil || env.Error.Code == "" || env.Error.Message == "" || env.Error.Retryable == nil {
			t.Fatalf("%s: failure envelope without code/message/retryable: %.300s", name, text.Text)
		}
		info := apperr.Lookup(env.Error.Code)
		if info.Meaning == "unknown code" {
			t.Errorf("%s: error code %q is not in the apperr table", name, env.Error.Code)
		}
		if *env.Error.Retryable != info.Retryable {
			t.Errorf("%s: retryable=%t for %s, table says %t", name, *env.Error.Retryable, env.Error.Code, info.Retryable)
		}
	}
	return env
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// registryByName indexes the registry.
func registryByName() map[string]*mcpserver.Tool {
	out := map[string]*mcpserver.Tool{}
	for _, t := range mcpserver.Registry() {
		out[t.Name] = t
	}
	return out
}

func defaultConfig() config.Config { return config.Default() }

// expectedTools is what a profile should expose under cfg.
func expectedTools(p mcpserver.Profile, cfg *config.Config) []string {
	var out []string
	for _, t := range mcpserver.Registry() {
		if t.In(p) && !t.OnDemand && (t.Enabled == nil || t.Enabled(cfg)) {
			out = append(out, t.Name)
		}
	}
	slices.Sort(out)
	return out
}

func toolNames(tools []*mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	slices.Sort(out)
	return out
}

// rawConn drives a server over a pipe with hand-written JSON-RPC lines, for
// inputs the go-sdk client would never send.
type rawConn struct {
	w    io.WriteCloser
	rd   *bufio.Reader
	next int
}

func rawServe(t *testing.T, a *app.App, o mcpserver.Options) *rawConn {
	t.Helper()
	srv, _, err := a.MCPServer(o)
	if err != nil {
		t.Fatal(err)
	}
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Run(ctx, &mcp.IOTransport{Reader: serverR, Writer: serverW})
	}()
	t.Cleanup(func() {
		cancel()
		clientW.Close()
		clientR.Close()
		<-done
	})
	rc := &rawConn{w: clientW, rd: bufio.NewReaderSize(clientR, 1<<20), next: 100}
	rc.roundTrip(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	rc.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	return rc
}

func (c *rawConn) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
}

type rawReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// roundTrip writes one line and reads one reply line, failing after a
// timeout instead of hanging the test.
func (c *rawConn) roundTrip(t *testing.T, line string) rawReply {
	t.Helper()
	c.send(t, line)
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := c.rd.ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("no reply to %.120s: %v", line, r.err)
		}
		var rep rawReply
		if err := json.Unmarshal([]byte(r.s), &rep); err != nil {
			t.Fatalf("reply is not JSON: %v: %.200s", err, r.s)
		}
		return rep
	case <-time.After(10 * time.Second):
		t.Fatalf("no reply within 10s to %.120s", line)
	}
	return rawReply{}
}

// callRaw sends tools/call with the given raw arguments JSON.
func (c *rawConn) callRaw(t *testing.T, tool, args string) rawReply {
	t.Helper()
	c.next++
	params := fmt.Sprintf(`{"name":%q}`, tool)
	if args != "" {
		params = fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args)
	}
	return c.roundTrip(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, c.next, params))
}

// envelope decodes a raw tools/call reply's envelope through the same checks
// the client path uses.
func (r rawReply) envelope(t *testing.T, name string) envelopeOf {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("%s: protocol error %d %s", name, r.Error.Code, r.Error.Message)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("%s: result: %v", name, err)
	}
	return checkResult(t, name, &res)
}
