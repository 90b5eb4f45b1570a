package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// serveHTTP runs ServeHTTP with opts (the test token is filled in) and
// returns the base URL and the server, stopping both when the test ends.
func serveHTTP(t *testing.T, opts mcpserver.HTTPOptions) (string, *mcp.Server) {
	t.Helper()
	a := newApp(t, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	opts.Listen, opts.Token = "127.0.0.1:0", testToken
	opts.Ready = func(addr string) { ready <- addr }
	go func() { done <- mcpserver.ServeHTTP(ctx, srv, opts) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case addr := <-ready:
		return "http://" + addr + "/", srv
	case err := <-done:
		t.Fatalf("ServeHTTP: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeHTTP never became ready")
	}
	return "", nil
}

// connectHTTP initializes an SDK client session with the token.
func connectHTTP(ctx context.Context, t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{token: testToken, base: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "limits-test", Version: "1"}, nil)
	// Default retries: a client whose session the server closed learns it
	// from the 404 its standalone stream gets on reconnecting.
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// rawRequest writes one HTTP/1.1 request on a fresh connection and returns
// the connection with its reader positioned after the response headers.
func rawRequest(t *testing.T, addr, req string) (net.Conn, *http.Response) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		t.Fatalf("read body: %v", err)
	}
	res.Body.Close()
	return &bufferedConn{Conn: c, r: br}, res
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// closedByServer reports whether the server closes c within d.
func closedByServer(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	var buf [1]byte
	_, err := c.Read(buf[:])
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func httpRequest(host, header, body string) string {
	return "POST / HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\n" + header +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

func TestHTTPRefusalsCloseTheConnection(t *testing.T) {
	url, _ := serveHTTP(t, mcpserver.HTTPOptions{MaxMessageBytes: 4096})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`
	tests := []struct {
		name   string
		header string
		body   string
		want   int
	}{
		{"no token", "", initBody, http.StatusUnauthorized},
		{"wrong token", "Authorization: Bearer " + strings.Repeat("f", len(testToken)) + "\r\n", initBody, http.StatusUnauthorized},
		{"foreign origin", "Authorization: Bearer " + testToken + "\r\nOrigin: https://evil.example\r\n", initBody, http.StatusForbidden},
		{"too large", "Authorization: Bearer " + testToken + "\r\n", big, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, res := rawRequest(t, addr, httpRequest(addr, tc.header, tc.body))
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.want)
			}
			if !res.Close {
				t.Errorf("%d without Connection: close (%v)", res.StatusCode, res.Header)
			}
			if !closedByServer(c, 5*time.Second) {
				t.Errorf("the server kept the connection open after %d", res.StatusCode)
			}
		})
	}
}

func TestHTTPMessageLimit(t *testing.T) {
	const limit = 64 << 10
	url, _ := serveHTTP(t, mcpserver.HTTPOptions{MaxMessageBytes: limit})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	auth := "Authorization: Bearer " + testToken + "\r\n"
	big := `{"jsonrpc":"2.0","id":42,"method":"ping","params":{"x":"` + strings.Repeat("a", limit) + `"}}`

	t.Run("declared length", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Only the start of the body is sent: the server must answer from
		// the declared length without waiting for the rest.
		hdr := "POST / HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
			auth + "Content-Length: " + strconv.Itoa(4<<20) + "\r\n\r\n"
		if _, err := io.WriteString(c, hdr+big[:100]); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		checkTooLarge(t, res, limit, "42")
	})
	t.Run("chunked", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, url, io.MultiReader(strings.NewReader(big))) // no length: chunked
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		checkTooLarge(t, res, limit, "42")
	})
	t.Run("sdk client keeps its session", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs := connectHTTP(ctx, t, url)
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{"pad": strings.Repeat("x", 2*limit)}})
		if err == nil || !strings.Contains(err.Error(), strconv.Itoa(limit)+"-byte limit") {
			t.Fatalf("over-limit call: %v, want an error stating the limit", err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("the session did not survive an over-limit call: %v", err)
		}
		if env := checkResult(t, "health_check", res); !*env.Success {
			t.Errorf("health_check after an over-limit call: %+v", env.Error)
		}
	})
}

func checkTooLarge(t *testing.T, res *http.Response, limit int, wantID string) {
	t.Helper()
	defer res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", res.StatusCode)
	}
	var r wireReply
	if err := json.NewDecoder(io.LimitReader(res.Body, 4096)).Decode(&r); err != nil || r.Error == nil || r.JSONRPC != "2.0" {
		t.Fatalf("413 body is not a JSON-RPC error: %v %+v", err, r)
	}
	if string(r.ID) != wantID {
		t.Errorf("error id %s, want %s", r.ID, wantID)
	}
	if !strings.Contains(r.Error.Message, strconv.Itoa(limit)+"-byte limit") {
		t.Errorf("error %q does not state the limit", r.Error.Message)
	}
}

func TestHTTPSessionLimitClosesLeastRecentlyUsed(t *testing.T) {
	url, srv := serveHTTP(t, mcpserver.HTTPOptions{MaxSessions: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ping := func(cs *mcp.ClientSession) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}})
		return err
	}
	a := connectHTTP(ctx, t, url)
	b := connectHTTP(ctx, t, url)
	if err := ping(a); err != nil { // a is now more recently used than b
		t.Fatal(err)
	}
	c := connectHTTP(ctx, t, url)
	// The LRU closes b's session while c initializes.
	if ids := waitOthersEnded(ctx, t, srv, a.ID(), c.ID()); len(ids) != 2 {
		t.Errorf("sessions %v after a third client, want a's and c's", ids)
	}
	if err := ping(b); !errors.Is(err, mcp.ErrSessionMissing) {
		t.Errorf("least recently used session: %v, want the session-missing error (HTTP 404)", err)
	}
	for name, cs := range map[string]*mcp.ClientSession{"a": a, "c": c} {
		if err := ping(cs); err != nil {
			t.Errorf("session %s was closed: %v", name, err)
		}
	}
	// The client whose session was closed initializes again.
	again := connectHTTP(ctx, t, url)
	if err := ping(again); err != nil {
		t.Errorf("re-initialized session: %v", err)
	}
}

func TestHTTPSessionIdleTimeout(t *testing.T) {
	url, srv := serveHTTP(t, mcpserver.HTTPOptions{SessionIdleTimeout: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connectHTTP(ctx, t, url)
	if ids := waitOthersEnded(ctx, t, srv); len(ids) != 0 {
		t.Errorf("sessions %v left after the idle timeout", ids)
	}
	// The SDK drops the session from the server's table a moment before
	// its HTTP handler forgets the session id; a call in that moment finds
	// the closed connection and ends without a response. Any later call
	// must get the 404 that tells a client to start over.
	for attempt := 1; ; attempt++ {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}})
		if errors.Is(err, mcp.ErrSessionMissing) {
			return
		}
		if err == nil || !strings.Contains(err.Error(), "terminated without response") || attempt == 20 || ctx.Err() != nil {
			t.Fatalf("call %d on an expired session: %v, want the session-missing error (HTTP 404)", attempt, err)
		}
	}
}

// waitOthersEnded waits until every session of srv but those in keep has
// ended and returns the ids of the sessions left. Besides the sessions a
// test expects the server to close, each client connect leaves a
// short-lived uninitialized session that the SDK closes just after
// answering. The SDK removes a session from its table before the session's
// Wait returns.
func waitOthersEnded(ctx context.Context, t *testing.T, srv *mcp.Server, keep ...string) []string {
	t.Helper()
	for ss := range srv.Sessions() {
		if slices.Contains(keep, ss.ID()) {
			continue
		}
		ended := make(chan struct{})
		go func() {
			_ = ss.Wait()
			close(ended)
		}()
		select {
		case <-ended:
		case <-ctx.Done():
			t.Fatalf("session %s was never closed", ss.ID())
		}
	}
	var ids []string
	for ss := range srv.Sessions() {
		ids = append(ids, ss.ID())
	}
	return ids
}

// TestHTTPConnectionCap bounds the listener in-process: someone holds far
// more silent and unauthenticated connections than the cap, and a client
// with the token still initializes within seconds.
func TestHTTPConnectionCap(t *testing.T) {
	const limit = 8
	url, _ := serveHTTP(t, mcpserver.HTTPOptions{MaxConnections: limit})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	var unauth []net.Conn
	for range 2 * limit {
		c, _ := rawRequest(t, addr, httpRequest(addr, "", initBody))
		unauth = append(unauth, c)
	}
	var silent []net.Conn
	for range 5 * limit {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		silent = append(silent, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cs := connectHTTP(ctx, t, url)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("health_check while connections are held: %v", err)
	}
	for i, c := range unauth {
		if !closedByServer(c, 2*time.Second) {
			t.Errorf("unauthenticated connection %d was kept open after its 401", i)
		}
	}
	// All but the cap's worth of silent connections are closed at once to
	// make room; the rest go when their header timeout passes.
	open := 0
	for _, c := range silent {
		if !closedByServer(c, 100*time.Millisecond) {
			open++
		}
	}
	if open > limit {
		t.Errorf("%d silent connections still open, want at most %d", open, limit)
	}
}
