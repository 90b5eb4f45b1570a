package xauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
)

// fakeX is a small stand-in for X's OAuth 2.0 endpoints: an authorize
// endpoint that consents at once, and a token endpoint with real S256
// verification, single-use codes and single-use refresh tokens.
type fakeX struct {
	t            *testing.T
	srv          *httptest.Server
	clientID     string
	clientSecret string // when set, Basic auth is required

	mu       sync.Mutex
	codes    map[string]grantReq // code -> request it was issued for
	refresh  map[string]bool     // refresh token -> spent
	access   map[string]bool
	lastAuth string // "basic" or "body"

	exchanges    atomic.Int64 // authorization_code calls
	refreshUses  atomic.Int64 // refresh_token calls that presented a valid token
	refreshCalls atomic.Int64 // all refresh_token calls
	refreshFails atomic.Int64
	// refreshGate, when set (under mu), holds refresh_token calls; see
	// holdRefreshes.
	refreshGate   *refreshGate
	expiresIn     int
	omitRefresh   bool   // issue no refresh token
	refreshStatus int    // when non-zero, every refresh answers this status
	echoInError   bool   // put the presented refresh token into error_description
	scopeOverride string // scope string returned by the token endpoint
}

type grantReq struct {
	challenge string
	redirect  string
	scope     string
}

func newFakeX(t *testing.T) *fakeX {
	t.Helper()
	f := &fakeX{
		t:         t,
		clientID:  "test-client",
		codes:     map[string]grantReq{},
		refresh:   map[string]bool{},
		access:    map[string]bool{},
		expiresIn: 7200,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /i/oauth2/authorize", f.authorize)
	mux.HandleFunc("POST /2/oauth2/token", f.token)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// refreshGate holds refresh calls on the token endpoint: each one reports
// on arrived and waits until release is closed.
type refreshGate struct {
	arrived chan struct{}
	release chan struct{}
}

// holdRefreshes makes every later refresh_token call wait until the
// returned release is called (at the latest when the test ends). arrived
// receives one value per call as it starts waiting, so a test knows a
// refresh is in flight and can line up contenders before letting it finish.
func (f *fakeX) holdRefreshes(t *testing.T) (arrived <-chan struct{}, release func()) {
	t.Helper()
	g := &refreshGate{arrived: make(chan struct{}, 64), release: make(chan struct{})}
	f.mu.Lock()
	f.refreshGate = g
	f.mu.Unlock()
	release = sync.OnceFunc(func() { close(g.release) })
	// Registered after the server's Close, so it runs first.
	t.Cleanup(release)
	return g.arrived, release
}

func (f *fakeX) authURL() string  { return f.srv.URL + "/i/oauth2/authorize" }
func (f *fakeX) tokenURL() string { return f.srv.URL + "/2/oauth2/token" }

func (f *fakeX) options(path string) Options {
	return Options{
		ClientID:     f.clientID,
		ClientSecret: f.clientSecret,
		AuthURL:      f.authURL(),
		TokenURL:     f.tokenURL(),
		TokenPath:    path,
	}
}

func randToken(prefix string) string {
	b := make([]byte, 18)
	rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// issue seeds a valid token pair, as a previous login would have.
func (f *fakeX) issue() (access, refresh string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	access, refresh = randToken("at-"), randToken("rt-")
	f.access[access] = true
	f.refresh[refresh] = false
	return access, refresh
}

func (f *fakeX) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	bad := func(msg string) { http.Error(w, msg, http.StatusBadRequest) }
	switch {
	case q.Get("response_type") != "code":
		bad("response_type must be code")
		return
	case q.Get("client_id") != f.clientID:
		bad("unknown client_id")
		return
	case q.Get("code_challenge_method") != "S256":
		bad("code_challenge_method must be S256")
		return
	case q.Get("code_challenge") == "":
		bad("code_challenge missing")
		return
	case q.Get("state") == "":
		bad("state missing")
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme != "http" || redirect.Host == "" {
		bad("redirect_uri invalid")
		return
	}
	code := randToken("code-")
	f.mu.Lock()
	f.codes[code] = grantReq{challenge: q.Get("code_challenge"), redirect: redirect.String(), scope: q.Get("scope")}
	f.mu.Unlock()
	rq := redirect.Query()
	rq.Set("code", code)
	rq.Set("state", q.Get("state"))
	redirect.RawQuery = rq.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (f *fakeX) oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func (f *fakeX) clientOK(r *http.Request) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, secret, ok := r.BasicAuth(); ok {
		f.lastAuth = "basic"
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		return f.clientSecret != "" && id == f.clientID && secret == f.clientSecret
	}
	f.lastAuth = "body"
	return f.clientSecret == "" && r.PostForm.Get("client_id") == f.clientID && r.PostForm.Get("client_secret") == ""
}

func (f *fakeX) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		f.oauthError(w, 400, "invalid_request", "bad form")
		return
	}
	if !f.clientOK(r) {
		f.oauthError(w, 401, "unauthorized_client", "Missing valid authorization header")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		f.exchanges.Add(1)
		code := r.PostForm.Get("code")
		f.mu.Lock()
		g, ok := f.codes[code]
		delete(f.codes, code) // single use, even when the verifier is wrong
		f.mu.Unlock()
		if !ok {
			f.oauthError(w, 400, "invalid_request", "Value passed for the authorization code was invalid.")
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			f.oauthError(w, 400, "invalid_request", "Value passed for the code verifier did not match the code challenge.")
			return
		}
		if r.PostForm.Get("redirect_uri") != g.redirect {
			f.oauthError(w, 400, "invalid_request", "redirect_uri mismatch")
			return
		}
		f.writeTokens(w, g.scope)
	case "refresh_token":
		f.refreshCalls.Add(1)
		f.mu.Lock()
		g := f.refreshGate
		f.mu.Unlock()
		if g != nil {
			g.arrived <- struct{}{}
			select {
			case <-g.release:
			case <-r.Context().Done():
				return
			}
		}
		rt := r.PostForm.Get("refresh_token")
		if f.refreshStatus != 0 {
			f.refreshFails.Add(1)
			desc := "refresh failed"
			if f.echoInError {
				desc = "bad token " + rt
			}
			f.oauthError(w, f.refreshStatus, "invalid_request", desc)
			return
		}
		f.mu.Lock()
		spent, known := f.refresh[rt]
		if known && !spent {
			f.refresh[rt] = true
		}
		f.mu.Unlock()
		if !known || spent {
			f.refreshFails.Add(1)
			desc := "Value passed for the token was invalid."
			if f.echoInError {
				desc += " " + rt
			}
			f.oauthError(w, 400, "invalid_request", desc)
			return
		}
		f.refreshUses.Add(1)
		f.writeTokens(w, "")
	default:
		f.oauthError(w, 400, "unsupported_grant_type", "grant_type")
	}
}

func (f *fakeX) writeTokens(w http.ResponseWriter, scope string) {
	access, refresh := randToken("at-"), randToken("rt-")
	f.mu.Lock()
	f.access[access] = true
	if !f.omitRefresh {
		f.refresh[refresh] = false
	}
	f.mu.Unlock()
	body := map[string]any{
		"token_type":   "bearer",
		"access_token": access,
		"expires_in":   f.expiresIn,
	}
	if f.scopeOverride != "" {
		scope = f.scopeOverride
	}
	if scope != "" {
		body["scope"] = scope
	}
	if !f.omitRefresh {
		body["refresh_token"] = refresh
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(body)
}

// validAccess reports whether the fake issued this access token.
func (f *fakeX) validAccess(tok string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.access[tok]
}

func (f *fakeX) authMethod() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastAuth
}

func newFakeClock() *clock.Fake {
	return clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
