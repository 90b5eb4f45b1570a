package mcpserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// TestHTTPMounts: a mounted site answers its prefix and the paths below
// it without the bearer token (it authenticates on its own); every other
// path, even one that merely starts with the same letters, is still the
// MCP endpoint behind the token.
func TestHTTPMounts(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "site:"+r.URL.Path) })
	ts := httptest.NewServer(mcpserver.HTTPHandler(srv, mcpserver.HTTPOptions{Token: testToken, Mounts: map[string]http.Handler{"/ui": site}}))
	t.Cleanup(ts.Close)
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/ui", http.StatusOK, "site:/ui"},
		{"/ui/approvals", http.StatusOK, "site:/ui/approvals"},
		{"/uix", http.StatusUnauthorized, ""},
		{"/", http.StatusUnauthorized, ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := http.Get(ts.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || (tc.body != "" && string(b) != tc.body) {
				t.Fatalf("GET %s: %d %q, want %d %q", tc.path, resp.StatusCode, b, tc.code, tc.body)
			}
		})
	}
}
