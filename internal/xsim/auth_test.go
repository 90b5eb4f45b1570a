package xsim

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testRedirect = "http://127.0.0.1:8080/callback"

func pkcePair(seed string) (verifier, challenge string) {
	verifier = strings.Repeat(seed, 64/len(seed)+1)[:64]
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorize runs the consent step and returns the redirect's query.
func (e *env) authorize(t *testing.T, q url.Values) (int, url.Values) {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Get(e.base + "/i/oauth2/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusFound {
		return res.StatusCode, nil
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(loc.String(), testRedirect) {
		t.Fatalf("redirected to %s", loc)
	}
	return res.StatusCode, loc.Query()
}

func authQuery(challenge string) url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {DefaultClientID},
		"redirect_uri":          {testRedirect},
		"scope":                 {"tweet.read users.read tweet.write offline.access"},
		"state":                 {"st4te"},
		"code_challenge":        {challenge},
		"code_challenge_method": {"S256"},
	}
}

func (e *env) tokenCall(t *testing.T, form url.Values) resp {
	t.Helper()
	req, err := http.NewRequest("POST", e.base+"/2/oauth2/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.send(req)
}

func TestOAuthPKCEFlow(t *testing.T) {
	e := newEnv(t)
	verifier, challenge := pkcePair("abcdefgh")
	status, q := e.authorize(t, authQuery(challenge))
	if status != http.StatusFound || q.Get("state") != "st4te" || q.Get("code") == "" {
		t.Fatalf("authorize: %d %v", status, q)
	}
	code := q.Get("code")
	exchange := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect},
		"code_verifier": {verifier}, "client_id": {DefaultClientID}}
	r := e.tokenCall(t, exchange)
	wantStatus(t, r, 200)
	access, _ := r.body["access_token"].(string)
	refresh, _ := r.body["refresh_token"].(string)
	if access == "" || refresh == "" || r.body["token_type"] != "bearer" || r.body["expires_in"].(float64) != 7200 {
		t.Fatalf("token response = %s", r.raw)
	}
	if r.body["scope"] != "offline.access tweet.read tweet.write users.read" {
		t.Fatalf("scope = %v", r.body["scope"])
	}
	me := e.doTok("GET", "/2/users/me", access, nil)
	wantStatus(t, me, 200)
	if me.data()["id"] != e.me {
		t.Fatal("token is not for the demo user")
	}
	// The code is single-use.
	r = e.tokenCall(t, exchange)
	wantStatus(t, r, 400)
	if r.body["error"] != "invalid_request" {
		t.Fatalf("reused code: %s", r.raw)
	}
}

func TestOAuthWrongVerifierFails(t *testing.T) {
	e := newEnv(t)
	_, challenge := pkcePair("abcdefgh")
	wrong, _ := pkcePair("zyxwvuts")
	_, q := e.authorize(t, authQuery(challenge))
	r := e.tokenCall(t, url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")},
		"redirect_uri": {testRedirect}, "code_verifier": {wrong}, "client_id": {DefaultClientID}})
	wantStatus(t, r, 400)
	if r.body["error"] != "invalid_request" || !strings.Contains(r.body["error_description"].(string), "verifier") {
		t.Fatalf("wrong verifier: %s", r.raw)
	}
}

func TestOAuthExchangeErrors(t *testing.T) {
	e := newEnv(t)
	verifier, challenge := pkcePair("abcdefgh")
	fresh := func() string {
		_, q := e.authorize(t, authQuery(challenge))
		return q.Get("code")
	}
	cases := []struct {
		name   string
		form   func() url.Values
		status int
	}{
		{"unknown client", func() url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "code": {fresh()}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}, "client_id": {"other"}}
		}, 401},
		{"redirect mismatch", func() url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "code": {fresh()}, "redirect_uri": {"http://127.0.0.1:9/x"}, "code_verifier": {verifier}, "client_id": {DefaultClientID}}
		}, 400},
		{"missing verifier", func() url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "code": {fresh()}, "redirect_uri": {testRedirect}, "client_id": {DefaultClientID}}
		}, 400},
		{"bogus code", func() url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}, "client_id": {DefaultClientID}}
		}, 400},
		{"bad grant", func() url.Values {
			return url.Values{"grant_type": {"password"}, "client_id": {DefaultClientID}}
		}, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, e.tokenCall(t, tc.form()), tc.status)
		})
	}
	// Codes expire after 30 seconds.
	code := fresh()
	e.clock.Advance(31 * time.Second)
	r := e.tokenCall(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect}, "code_verifier": {verifier}, "client_id": {DefaultClientID}})
	wantStatus(t, r, 400)
}

func TestAuthorizeValidation(t *testing.T) {
	e := newEnv(t)
	_, challenge := pkcePair("abcdefgh")
	mutate := func(k, v string) url.Values {
		q := authQuery(challenge)
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q
	}
	// Errors before the redirect URI is trusted answer 400 without redirecting.
	for _, q := range []url.Values{mutate("client_id", "evil"), mutate("redirect_uri", "https://evil.example/cb"), mutate("redirect_uri", "")} {
		if status, _ := e.authorize(t, q); status != http.StatusBadRequest {
			t.Errorf("%v: status %d", q, status)
		}
	}
	// Later errors redirect back with error=...
	for _, tc := range []struct {
		q    url.Values
		want string
	}{
		{mutate("response_type", "token"), "unsupported_response_type"},
		{mutate("code_challenge_method", "plain"), "invalid_request"},
		{mutate("code_challenge", "short"), "invalid_request"},
		{mutate("scope", "tweet.read bogus.scope"), "invalid_scope"},
		{mutate("scope", ""), "invalid_scope"},
		{mutate("state", ""), "invalid_request"},
	} {
		status, q := e.authorize(t, tc.q)
		if status != http.StatusFound || q.Get("error") != tc.want || q.Get("code") != "" {
			t.Errorf("%v: %d %v", tc.q, status, q)
		}
	}
}

func TestRefreshTokenSingleUse(t *testing.T) {
	e := newEnv(t)
	_, refresh, ttl := e.s.IssueToken("", []string{"tweet.read", "users.read", "offline.access"})
	if refresh == "" || ttl != DefaultTokenTTL {
		t.Fatalf("refresh %q ttl %v", refresh, ttl)
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {DefaultClientID}}
	r := e.tokenCall(t, form)
	wantStatus(t, r, 200)
	next, _ := r.body["refresh_token"].(string)
	if next == "" || next == refresh {
		t.Fatalf("rotation: %s", r.raw)
	}
	wantStatus(t, e.doTok("GET", "/2/users/me", r.body["access_token"].(string), nil), 200)
	// Reusing the spent refresh token fails with X's invalid_request body.
	r = e.tokenCall(t, form)
	wantStatus(t, r, 400)
	if r.body["error"] != "invalid_request" || r.body["error_description"] != "Value passed for the token was invalid." {
		t.Fatalf("reuse: %s", r.raw)
	}
	// Without offline.access there is no refresh token.
	if _, rt, _ := e.s.IssueToken("", []string{"tweet.read"}); rt != "" {
		t.Fatal("refresh token without offline.access")
	}
}

func TestRevoke(t *testing.T) {
	e := newEnv(t)
	access, refresh, _ := e.s.IssueToken("", e.s.AllScopes())
	req, _ := http.NewRequest("POST", e.base+"/2/oauth2/revoke", strings.NewReader(url.Values{"token": {access}, "client_id": {DefaultClientID}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r := e.send(req)
	wantStatus(t, r, 200)
	if r.body["revoked"] != true {
		t.Fatalf("revoke: %s", r.raw)
	}
	wantProblem(t, e.doTok("GET", "/2/users/me", access, nil), 401, typeBlank)
	// The paired refresh token dies too.
	wantStatus(t, e.tokenCall(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {DefaultClientID}}), 400)
}

func TestUnauthorized(t *testing.T) {
	e := newEnv(t)
	for name, tok := range map[string]string{"missing": "", "invalid": "not-a-token"} {
		t.Run(name, func(t *testing.T) {
			r := e.doTok("GET", "/2/users/me", tok, nil)
			wantProblem(t, r, 401, typeBlank)
			if r.body["title"] != "Unauthorized" {
				t.Fatalf("body = %s", r.raw)
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		tok, _, _ := e.s.IssueToken("", e.s.AllScopes())
		e.clock.Advance(DefaultTokenTTL)
		wantProblem(t, e.doTok("GET", "/2/users/me", tok, nil), 401, typeBlank)
	})
	t.Run("basic scheme", func(t *testing.T) {
		req, _ := http.NewRequest("GET", e.base+"/2/users/me", nil)
		req.Header.Set("Authorization", "Basic "+e.token)
		wantProblem(t, e.send(req), 401, typeBlank)
	})
}

func TestMissingScope(t *testing.T) {
	e := newEnv(t)
	tok, _, _ := e.s.IssueToken("", []string{"tweet.read", "users.read"})
	cases := []struct{ method, path, scope string }{
		{"POST", "/2/tweets", "tweet.write"},
		{"POST", "/2/users/" + e.me + "/likes", "like.write"},
		{"GET", "/2/users/" + e.me + "/followers", "follows.read"},
		{"GET", "/2/users/" + e.me + "/bookmarks", "bookmark.read"},
		{"POST", "/2/media/upload/initialize", "media.write"},
	}
	for _, tc := range cases {
		r := e.doTok(tc.method, tc.path, tok, map[string]any{"text": "x"})
		wantProblem(t, r, 403, typeBlank)
		if d := r.body["detail"].(string); !strings.Contains(d, tc.scope) || !strings.Contains(d, "scope") {
			t.Errorf("%s %s: detail %q does not name %s", tc.method, tc.path, d, tc.scope)
		}
	}
	if e.counter(CountTweetsCreated) != 0 {
		t.Fatal("write applied without scope")
	}
}

func TestRateLimitWindowAndHeaders(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.RateLimitOverrides = map[string]RateLimit{"GET /2/users/me": {Limit: 3, Window: 15 * time.Minute}}
	})
	reset := ""
	for i := 0; i < 3; i++ {
		r := e.get("/2/users/me")
		wantStatus(t, r, 200)
		if r.header.Get("x-rate-limit-limit") != "3" || r.header.Get("x-rate-limit-remaining") != strconv.Itoa(2-i) {
			t.Fatalf("call %d headers: %v", i, r.header)
		}
		reset = r.header.Get("x-rate-limit-reset")
	}
	if want := strconv.FormatInt(testEpoch.Add(15*time.Minute).Unix(), 10); reset != want {
		t.Fatalf("reset = %s, want %s", reset, want)
	}
	r := e.get("/2/users/me")
	wantProblem(t, r, 429, typeBlank)
	if r.header.Get("x-rate-limit-remaining") != "0" || r.header.Get("x-rate-limit-reset") != reset {
		t.Fatalf("429 headers: %v", r.header)
	}
	// Other endpoints and other users have their own windows.
	wantStatus(t, e.get("/2/users/"+e.me), 200)
	other, _, _ := e.s.IssueToken(e.userID("gopher_gabe"), e.s.AllScopes())
	wantStatus(t, e.doTok("GET", "/2/users/me", other, nil), 200)
	e.clock.Advance(15 * time.Minute)
	r = e.get("/2/users/me")
	wantStatus(t, r, 200)
	if r.header.Get("x-rate-limit-remaining") != "2" {
		t.Fatalf("window did not reset: %v", r.header)
	}
}

func TestRateLimitPostTweets24h(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/2/tweets", map[string]any{"text": "daily headers"})
	wantStatus(t, r, 201)
	for _, h := range []string{"x-rate-limit-limit", "x-user-limit-24hour-limit", "x-user-limit-24hour-remaining",
		"x-user-limit-24hour-reset", "x-app-limit-24hour-limit", "x-app-limit-24hour-remaining", "x-app-limit-24hour-reset"} {
		if r.header.Get(h) == "" {
			t.Errorf("missing %s", h)
		}
	}
	if r.header.Get("x-rate-limit-limit") != "100" || r.header.Get("x-rate-limit-remaining") != "99" {
		t.Fatalf("headers: %v", r.header)
	}
}

func TestRateLimitExhaustedWrite(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.RateLimitOverrides = map[string]RateLimit{"POST /2/tweets": {Limit: 2, Window: 15 * time.Minute}}
	})
	e.post("one")
	e.post("two")
	wantProblem(t, e.do("POST", "/2/tweets", map[string]any{"text": "three"}), 429, typeBlank)
	if e.counter(CountTweetsCreated) != 2 {
		t.Fatal("rate-limited write applied")
	}
}

func TestRateLimitsOffStillSendsHeaders(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.RateLimits = false
		o.RateLimitOverrides = map[string]RateLimit{"GET /2/users/me": {Limit: 1, Window: 15 * time.Minute}}
	})
	for i := 0; i < 3; i++ {
		r := e.get("/2/users/me")
		wantStatus(t, r, 200)
		if r.header.Get("x-rate-limit-limit") != "1" {
			t.Fatalf("headers: %v", r.header)
		}
	}
}
