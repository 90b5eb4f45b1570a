package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

func opsServer(t *testing.T, o mcpserver.HTTPOptions) *httptest.Server {
	t.Helper()
	a := newApp(t, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	o.Token = testToken
	ts := httptest.NewServer(mcpserver.HTTPHandler(srv, o))
	t.Cleanup(ts.Close)
	return ts
}

func fetch(t *testing.T, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestHealthz(t *testing.T) {
	var healthy atomic.Bool
	ts := opsServer(t, mcpserver.HTTPOptions{Healthy: func(context.Context) bool { return healthy.Load() }})
	tests := []struct {
		name     string
		healthy  bool
		method   string
		wantCode int
		wantBody string
	}{
		{"ok without a token", true, http.MethodGet, 200, "ok\n"},
		{"degraded says nothing more", false, http.MethodGet, 503, "degraded\n"},
		{"head", true, http.MethodHead, 200, ""},
		{"post refused", true, http.MethodPost, 405, "method not allowed\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			healthy.Store(tc.healthy)
			code, body := fetch(t, tc.method, ts.URL+mcpserver.HealthPath, "")
			if code != tc.wantCode || body != tc.wantBody {
				t.Errorf("%s /healthz = %d %q, want %d %q", tc.method, code, body, tc.wantCode, tc.wantBody)
			}
		})
	}
}

func TestMetricsEndpointAuth(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "tuitbot_up 1\n") })
	tests := []struct {
		name     string
		public   bool
		token    string
		wantCode int
	}{
		{"token required", false, "", http.StatusUnauthorized},
		{"wrong token", false, "wrong-token-wrong-token-wrong", http.StatusUnauthorized},
		{"right token", false, testToken, http.StatusOK},
		{"public", true, "", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := opsServer(t, mcpserver.HTTPOptions{Metrics: metrics, MetricsPublic: tc.public})
			code, body := fetch(t, http.MethodGet, ts.URL+mcpserver.MetricsPath, tc.token)
			if code != tc.wantCode {
				t.Fatalf("/metrics = %d, want %d", code, tc.wantCode)
			}
			if code == http.StatusOK && body != "tuitbot_up 1\n" {
				t.Errorf("/metrics body %q", body)
			}
		})
	}
}

func TestServeMetricsLoopbackOnly(t *testing.T) {
	h := http.NotFoundHandler()
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:9464", "[::]:0", "example.com:9464"} {
		err := mcpserver.ServeMetrics(context.Background(), mcpserver.MetricsOptions{Listen: addr, Handler: h, Token: testToken})
		if err == nil || !strings.Contains(err.Error(), "loopback only") {
			t.Errorf("ServeMetrics(%s) = %v, want a loopback-only refusal", addr, err)
		}
	}
	// The HTTP transport refuses to serve metrics without the token off
	// loopback.
	err := mcpserver.ServeHTTP(context.Background(), nil, mcpserver.HTTPOptions{Listen: "0.0.0.0:0", Token: testToken, Metrics: h, MetricsPublic: true})
	if err == nil || !strings.Contains(err.Error(), "--metrics-public") {
		t.Errorf("ServeHTTP public metrics off loopback = %v, want a refusal", err)
	}
}

func TestServeMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.ServeMetrics(ctx, mcpserver.MetricsOptions{
			Listen: "127.0.0.1:0", Token: testToken,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "m 1\n") }),
			Ready:   func(addr string) { ready <- addr },
		})
	}()
	addr := <-ready
	if code, _ := fetch(t, http.MethodGet, "http://"+addr+mcpserver.MetricsPath, ""); code != http.StatusUnauthorized {
		t.Errorf("metrics without token: %d, want 401", code)
	}
	if code, body := fetch(t, http.MethodGet, "http://"+addr+mcpserver.MetricsPath, testToken); code != 200 || body != "m 1\n" {
		t.Errorf("metrics with token: %d %q", code, body)
	}
	if code, body := fetch(t, http.MethodGet, "http://"+addr+mcpserver.HealthPath, ""); code != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ServeMetrics after cancel: %v", err)
	}
}
