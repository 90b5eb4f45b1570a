package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// syncBuffer collects a child's stderr safely while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// grew, once waitFor has made it, gets a value after writes.
	grew chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if s.grew != nil {
		select {
		case s.grew <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	return n, err
}

// waitFor waits until the output matches re and returns the match with its
// submatches; nil when d passes first. It wakes on writes, never polls.
func (s *syncBuffer) waitFor(re *regexp.Regexp, d time.Duration) []string {
	s.mu.Lock()
	if s.grew == nil {
		s.grew = make(chan struct{}, 1)
	}
	grew := s.grew
	s.mu.Unlock()
	timeout := time.After(d)
	for {
		if m := re.FindStringSubmatch(s.String()); m != nil {
			return m
		}
		select {
		case <-grew:
		case <-timeout:
			return nil
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type toolEnvelope struct {
	Success bool `json:"success"`
	Error   *struct {
		Code apperr.Code `json:"code"`
	} `json:"error"`
	Meta map[string]any `json:"meta"`
}

func decodeResult(t *testing.T, res *mcp.CallToolResult) toolEnvelope {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content items", len(res.Content))
	}
	var env toolEnvelope
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		t.Fatal(err)
	}
	if res.IsError != !env.Success {
		t.Errorf("isError %t but success %t", res.IsError, env.Success)
	}
	return env
}

func TestServeStdioWithSDKClient(t *testing.T) {
	h := newHome(t)
	for _, profile := range []string{"workflow", "readonly", "api-readonly"} {
		t.Run(profile, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.Command(binPath, "mcp", "serve", "--profile", profile)
			cmd.Env = h.env
			stderr := &syncBuffer{}
			cmd.Stderr = stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
			if err != nil {
				t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr)
			}
			if got := cs.InitializeResult().ServerInfo.Name; got != "tuitbot" {
				t.Errorf("server name %q", got)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) == 0 {
				t.Fatalf("tools/list: %v (%d tools)", err, len(tools.Tools))
			}
			hasHealth := false
			for _, tool := range tools.Tools {
				hasHealth = hasHealth || tool.Name == "health_check"
				if profile != "workflow" && (tool.Annotations == nil || !tool.Annotations.ReadOnlyHint) {
					t.Errorf("%s profile lists non-read-only %s", profile, tool.Name)
				}
			}
			if !hasHealth {
				t.Fatal("health_check not listed")
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("health_check: %v", err)
			}
			if env := decodeResult(t, res); !env.Success {
				t.Errorf("health_check failed: %+v", env.Error)
			}
			if err := cs.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
				t.Errorf("server did not exit when stdin closed")
			} else if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("server exit %d after stdin closed\nstderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr.String(), "mcp server starting") {
				t.Errorf("no start log on stderr:\n%s", stderr)
			}
		})
	}
}

// stdioProc is `tuitbot mcp serve` driven through raw pipes.
type stdioProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *syncBuffer
}

func startStdio(t *testing.T, h *home, args ...string) *stdioProc {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"mcp", "serve"}, args...)...)
	cmd.Env = h.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &stdioProc{cmd: cmd, stdin: stdin, lines: make(chan string, 64), stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

func (p *stdioProc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("write to server: %v\nstderr:\n%s", err, p.stderr)
	}
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// next reads the next stdout line, which must be a JSON-RPC message.
func (p *stdioProc) next(t *testing.T, what string) rpcReply {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatalf("%s: server closed stdout\nstderr:\n%s", what, p.stderr)
		}
		var r rpcReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: stdout line is not JSON-RPC (%v): %q", what, err, line)
		}
		return r
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: no reply within 15s\nstderr:\n%s", what, p.stderr)
	}
	return rpcReply{}
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func (p *stdioProc) initialize(t *testing.T) {
	t.Helper()
	p.send(t, initLine)
	if r := p.next(t, "initialize"); r.Error != nil || r.Result == nil {
		t.Fatalf("initialize: %+v", r)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
}

// started initializes the server and waits for its services (database,
// emulator, gateway): a stdio server answers initialize before they run.
func (p *stdioProc) started(t *testing.T) {
	t.Helper()
	p.initialize(t)
	p.healthCheck(t, 900)
}

func (p *stdioProc) healthCheck(t *testing.T, id int) {
	t.Helper()
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"health_check","arguments":{}}}`, id))
	r := p.next(t, "health_check")
	if string(r.ID) != fmt.Sprint(id) || r.Error != nil {
		t.Fatalf("health_check reply %+v", r)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if env := decodeResult(t, &res); !env.Success {
		t.Fatalf("health_check failed: %+v", env.Error)
	}
}

func TestServeStdioSurvivesMalformedLine(t *testing.T) {
	p := startStdio(t, newHome(t), "--profile", "readonly")
	p.initialize(t)
	p.healthCheck(t, 2)
	for i, bad := range []string{
		`this is not json`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health_check","arguments":{bad}}`,
		`{"jsonrpc":"2.0","id":`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	} {
		p.send(t, bad)
		r := p.next(t, "malformed line")
		if r.Error == nil {
			t.Errorf("malformed line %q answered without an error: %+v", bad, r)
		} else if r.Error.Code != -32700 && r.Error.Code != -32600 {
			t.Errorf("malformed line error code %d, want -32700 (parse error)", r.Error.Code)
		}
		p.healthCheck(t, 10+i)
	}
}

func TestServeStdioStdoutIsOnlyProtocol(t *testing.T) {
	// Debug logging must still go to stderr only.
	p := startStdio(t, newHome(t), "--profile", "workflow", "--log-level", "debug")
	p.initialize(t)
	p.healthCheck(t, 2)
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`)
	if r := p.next(t, "tools/list"); r.Error != nil {
		t.Fatalf("tools/list: %+v", r.Error)
	}
	p.stdin.Close()
	// Every remaining stdout line must be JSON too.
	deadline := time.After(15 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				if err := p.cmd.Wait(); err != nil {
					t.Errorf("server exit after stdin EOF: %v\nstderr:\n%s", err, p.stderr)
				}
				return
			}
			if !json.Valid([]byte(line)) {
				t.Errorf("non-protocol stdout line %q", line)
			}
		case <-deadline:
			t.Fatal("server did not exit after stdin closed")
		}
	}
}

func TestServeStdioSIGTERM(t *testing.T) {
	p := startStdio(t, newHome(t), "--profile", "workflow")
	p.initialize(t)
	p.healthCheck(t, 2)
	waitSignalExit(t, p.cmd, p.stderr)
}

// waitSignalExit sends SIGTERM and wants a clean exit within a few seconds.
func waitSignalExit(t *testing.T, cmd *exec.Cmd, stderr fmt.Stringer) {
	t.Helper()
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\nstderr:\n%s", err, stderr)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("SIGTERM exit took %v", d)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no exit within 10s of SIGTERM\nstderr:\n%s", stderr)
	}
}

// startServer starts a server process with env, collecting its output, and
// kills it when the test ends if it is still running.
func startServer(t *testing.T, cmd *exec.Cmd, env []string) *syncBuffer {
	t.Helper()
	cmd.Env = env
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return out
}

type authTransport struct {
	token string
	base  http.RoundTripper
}

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+a.token)
	return a.base.RoundTrip(r)
}

func TestServeHTTP(t *testing.T) {
	h := newHome(t)
	const token = "cli-http-token-0123456789abcdef"
	tokenFile := h.path("token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "mcp", "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--token-file", tokenFile, "--profile", "readonly")
	stderr := startServer(t, cmd, h.env)
	addr := waitListening(t, stderr)
	url := "http://" + addr + "/"

	post := func(hdr map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initLine))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if c := post(nil); c != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", c)
	}
	if c := post(map[string]string{"Authorization": "Bearer wrong-token-wrong-token"}); c != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", c)
	}
	if c := post(map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}); c != http.StatusForbidden {
		t.Errorf("foreign origin: %d, want 403", c)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: authTransport{token: token, base: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "cli-http", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nserver:\n%s", err, stderr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("health_check: %v", err)
	}
	if env := decodeResult(t, res); !env.Success {
		t.Errorf("health_check failed: %+v", env.Error)
	}
	cs.Close()
	if strings.Contains(stderr.String(), token) {
		t.Error("the server logged the bearer token")
	}
	waitSignalExit(t, cmd, stderr)
}

func TestServeHTTPCreatesDefaultToken(t *testing.T) {
	h := newHome(t)
	cmd := exec.Command(binPath, "mcp", "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--profile", "readonly")
	stderr := startServer(t, cmd, h.env)
	waitListening(t, stderr)
	st, err := os.Stat(h.path("mcp_token"))
	if err != nil {
		t.Fatalf("no default token file: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %o, want 600", st.Mode().Perm())
	}
	tok, _ := os.ReadFile(h.path("mcp_token"))
	if strings.Contains(stderr.String(), strings.TrimSpace(string(tok))) {
		t.Error("the generated token was logged")
	}
	waitSignalExit(t, cmd, stderr)

	// A token file others can read stops the server with the fix.
	if err := os.Chmod(h.path("mcp_token"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.fails(t, "mcp", "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--profile", "readonly")
	mustContain(t, "world-readable token", r.stderr, "chmod 600")
}

// listeningLine is the log line an HTTP server writes once it accepts
// connections.
var listeningLine = regexp.MustCompile(`msg=listening url=http://(\S+)/`)

// waitListening waits for the server's "listening" log line and returns the
// address it bound (the tests listen on port 0).
func waitListening(t *testing.T, out *syncBuffer) string {
	t.Helper()
	m := out.waitFor(listeningLine, 20*time.Second)
	if m == nil {
		t.Fatalf("server never reported listening\nstderr:\n%s", out)
	}
	return m[1]
}
