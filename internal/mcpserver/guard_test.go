package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// TestBearerCheckIsTheSDKs: the bearer token is checked by the SDK's
// auth.RequireBearerToken, so a request that passes carries the SDK's
// verified token information (which the SDK's streamable handler binds
// each session to), and a refused one keeps this server's answer: 401,
// a Bearer challenge, the token file named, the connection closed.
func TestBearerCheckIsTheSDKs(t *testing.T) {
	const token = "guard-token-0123456789"
	var seen *auth.TokenInfo
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = auth.TokenInfoFromContext(r.Context())
		w.WriteHeader(http.StatusTeapot)
	}), token, "/home/me/.tuitbot/mcp_token")

	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusTeapot || seen == nil || seen.UserID == "" {
		t.Fatalf("with the token: status %d, token info %+v; want the request through with the SDK's token info", rec.Code, seen)
	}

	for _, authz := range []string{"", "Bearer wrong", "bearer " + token, "Bearer  " + token, "Basic " + token} {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") ||
			rec.Header().Get("Connection") != "close" || !strings.Contains(rec.Body.String(), "/home/me/.tuitbot/mcp_token") {
			t.Errorf("Authorization %q: %d %v %q; want 401 with a Bearer challenge, Connection: close and the token file named", authz, rec.Code, rec.Header(), rec.Body.String())
		}
	}
}
