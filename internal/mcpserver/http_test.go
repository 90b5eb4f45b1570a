package mcpserver_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

const testToken = "0123456789abcdef0123456789abcdef"

// bearer adds the token (and optionally an Origin) to every request.
type bearer struct {
	token, origin string
	base          http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	if b.origin != "" {
		r.Header.Set("Origin", b.origin)
	}
	return b.base.RoundTrip(r)
}

func httpServer(t *testing.T) *httptest.Server {
	t.Helper()
	a := newApp(t, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcpserver.HTTPHandler(srv, mcpserver.HTTPOptions{Token: testToken}))
	t.Cleanup(ts.Close)
	return ts
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func post(t *testing.T, url string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	return res.StatusCode, res.Header, string(b)
}

func TestHTTPAuthAndOrigin(t *testing.T) {
	ts := httpServer(t)
	tests := []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("f", len(testToken))}, http.StatusUnauthorized},
		{"token prefix", map[string]string{"Authorization": "Bearer " + testToken[:10]}, http.StatusUnauthorized},
		{"token without scheme", map[string]string{"Authorization": testToken}, http.StatusUnauthorized},
		{"basic scheme", map[string]string{"Authorization": "Basic " + testToken}, http.StatusUnauthorized},
		{"foreign origin with token", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "https://evil.example"}, http.StatusForbidden},
		{"foreign origin without token", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"loopback-looking foreign origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://127.0.0.1.evil.example"}, http.StatusForbidden},
		{"localhost subdomain origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://localhost.evil.example:8080"}, http.StatusForbidden},
		{"null origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "null"}, http.StatusForbidden},
		{"file origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "file://"}, http.StatusForbidden},
		{"token ok", map[string]string{"Authorization": "Bearer " + testToken}, http.StatusOK},
		{"loopback origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://127.0.0.1:5173"}, http.StatusOK},
		{"localhost origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://localhost:3000"}, http.StatusOK},
		{"ipv6 loopback origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://[::1]:3000"}, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, hdr, body := post(t, ts.URL, tc.header)
			if code != tc.want {
				t.Fatalf("status %d, want %d (%.200s)", code, tc.want, body)
			}
			if code == http.StatusUnauthorized && !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", hdr.Get("WWW-Authenticate"))
			}
			if code != http.StatusOK && strings.Contains(body, testToken) {
				t.Error("the token appears in an error body")
			}
		})
	}
}

func TestHTTPClientRoundTrip(t *testing.T) {
	ts := httpServer(t)
	for _, origin := range []string{"", "http://127.0.0.1:9999", "http://localhost"} {
		t.Run("origin="+origin, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			hc := &http.Client{Transport: bearer{token: testToken, origin: origin, base: http.DefaultTransport}}
			client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("health_check: %v", err)
			}
			env := checkResult(t, "health_check", res)
			if !*env.Success {
				t.Errorf("health_check over HTTP failed: %+v", env.Error)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) == 0 {
				t.Errorf("tools/list over HTTP: %v, %d tools", err, len(tools.Tools))
			}
		})
	}
}

func TestHTTPClientWithoutTokenFails(t *testing.T) {
	ts := httpServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil)
	if err == nil {
		cs.Close()
		t.Fatal("client connected without a token")
	}
}

func TestServeHTTP(t *testing.T) {
	a := newApp(t, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.ServeHTTP(ctx, srv, mcpserver.HTTPOptions{Listen: "127.0.0.1:0", Token: testToken, Ready: func(addr string) { ready <- addr }})
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("ServeHTTP: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeHTTP never became ready")
	}
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Errorf("bound %s, want 127.0.0.1", addr)
	}
	if code, _, _ := post(t, "http://"+addr+"/", nil); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code, _, _ := post(t, "http://"+addr+"/", map[string]string{"Authorization": "Bearer " + testToken}); code != http.StatusOK {
		t.Errorf("with token: %d", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeHTTP after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("ServeHTTP did not stop after cancel")
	}

	// Misconfigurations are refused up front.
	for _, o := range []mcpserver.HTTPOptions{
		{Listen: "127.0.0.1:0"},                    // no token
		{Listen: "no-port", Token: testToken},      // bad address
		{Listen: "256.0.0.1:80", Token: testToken}, // cannot bind
	} {
		if err := mcpserver.ServeHTTP(context.Background(), srv, o); err == nil {
			t.Errorf("ServeHTTP(%+v) succeeded", o)
		}
	}
}

func TestLoadOrCreateToken(t *testing.T) {
	t.Run("creates 0600", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sub", "mcp_token")
		tok, err := mcpserver.LoadOrCreateToken(path, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) < 32 {
			t.Errorf("token %d characters; want at least 32", len(tok))
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("token file mode %o, want 600", st.Mode().Perm())
		}
		again, err := mcpserver.LoadOrCreateToken(path, true)
		if err != nil || again != tok {
			t.Errorf("second load = %q, %v; want the same token", again, err)
		}
		other, err := mcpserver.LoadOrCreateToken(filepath.Join(t.TempDir(), "t"), true)
		if err != nil || other == tok {
			t.Errorf("two created tokens are equal or failed: %v", err)
		}
	})
	t.Run("refuses 0644 with the fix", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mcp_token")
		if err := os.WriteFile(path, []byte(testToken+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := mcpserver.LoadOrCreateToken(path, true)
		if err == nil {
			t.Fatal("a world-readable token file was accepted")
		}
		if !strings.Contains(err.Error(), "chmod 600 "+path) {
			t.Errorf("error %q does not give the chmod fix", err)
		}
		if strings.Contains(err.Error(), testToken) {
			t.Error("the error reveals the token")
		}
	})
	t.Run("refuses short token", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mcp_token")
		if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := mcpserver.LoadOrCreateToken(path, true)
		if err == nil || !strings.Contains(err.Error(), "shorter") {
			t.Errorf("short token: %v", err)
		}
		if err != nil && strings.Contains(err.Error(), "short\n") {
			t.Error("the error reveals the token")
		}
	})
	t.Run("trims whitespace", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mcp_token")
		if err := os.WriteFile(path, []byte("  "+testToken+"\r\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := mcpserver.LoadOrCreateToken(path, false)
		if err != nil || tok != testToken {
			t.Errorf("LoadOrCreateToken = %q, %v", tok, err)
		}
	})
	t.Run("missing without create", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "given_token")
		if _, err := mcpserver.LoadOrCreateToken(path, false); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("missing --token-file: %v", err)
		}
		if _, err := os.Stat(path); err == nil {
			t.Error("a token file was created although create was false")
		}
	})
}
