package xapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func TestRedirectIsNeverFollowed(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if r.Header.Get("Authorization") != "" {
			t.Errorf("bearer token reached the redirect target")
		}
		writeJSON(w, 200, `{"data":{"id":"1","text":"stolen"}}`)
	}))
	defer other.Close()
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/2/tweets/1", http.StatusFound)
	})
	ctx := context.Background()

	_, _, err := h.c.GetTweet(ctx, "1")
	e := wantCode(t, err, apperr.XAPIError)
	if !strings.Contains(e.Message, "redirect") {
		t.Fatalf("message = %q", e.Message)
	}
	_, _, err = h.c.PostTweet(ctx, PostParams{Text: "x"})
	wantCode(t, err, apperr.XOutcomeUnknown)

	res, err := h.c.Raw(ctx, RawRequest{Method: "GET", Path: "/2/tweets/1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusFound || res.Header.Get("Location") == "" || res.OutcomeUnknown {
		t.Fatalf("raw redirect = %d %v (outcome unknown %t)", res.Status, res.Header, res.OutcomeUnknown)
	}
	// A redirected raw POST is as uncertain as PostTweet's.
	res, err = h.c.Raw(ctx, RawRequest{Method: "POST", Path: "/2/tweets", Body: []byte(`{"text":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusFound || !res.OutcomeUnknown {
		t.Fatalf("raw POST redirect = %d, outcome unknown %t; want 302 and unknown", res.Status, res.OutcomeUnknown)
	}
	if elsewhere.Load() != 0 {
		t.Fatalf("redirect target was contacted %d times", elsewhere.Load())
	}
}

func TestRedirectPolicyIsForcedOnCallerClient(t *testing.T) {
	follow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/2/tweets/2" {
			writeJSON(w, 200, `{"data":{"id":"2","text":"target"}}`)
			return
		}
		http.Redirect(w, r, "/2/tweets/2", http.StatusMovedPermanently)
	}, func(o *Options) { o.HTTPClient = follow })
	res, err := h.c.Raw(context.Background(), RawRequest{Method: "GET", Path: "/2/tweets/1"})
	if err != nil || res.Status != http.StatusMovedPermanently || h.hits.get("GET /2/tweets/2") != 0 {
		t.Fatalf("redirect followed: %+v %v", res, err)
	}
}

func TestBodyCap(t *testing.T) {
	big := `{"data":{"id":"1","text":"` + strings.Repeat("a", 4096) + `"}}`
	cases := []struct {
		name    string
		chunked bool
	}{{"content-length", false}, {"chunked", true}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if tc.chunked {
					w.(http.Flusher).Flush()
				}
				_, _ = w.Write([]byte(big))
			}, func(o *Options) { o.MaxBodyBytes = 1024 })
			ctx := context.Background()
			_, _, err := h.c.GetTweet(ctx, "1")
			e := wantCode(t, err, apperr.XAPIError)
			if !strings.Contains(e.Message, "1024") {
				t.Fatalf("message = %q", e.Message)
			}
			if n := h.hits.get("GET /2/tweets/1"); n != 1 {
				t.Fatalf("oversized answer retried: %d hits", n)
			}
			_, err = h.c.Raw(ctx, RawRequest{Method: "GET", Path: "/2/tweets/1"})
			wantCode(t, err, apperr.XAPIError)
			_, _, err = h.c.PostTweet(ctx, PostParams{Text: "x"})
			wantCode(t, err, apperr.XOutcomeUnknown)
		})
	}
	// Exactly at the cap is fine.
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, big) },
		func(o *Options) { o.MaxBodyBytes = int64(len(big)) })
	if _, _, err := h.c.GetTweet(context.Background(), "1"); err != nil {
		t.Fatalf("body at the cap: %v", err)
	}
}

func TestPerRequestTimeout(t *testing.T) {
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}, func(o *Options) { o.Timeout = 100 * time.Millisecond; o.MaxAttempts = 1 })
	start := time.Now()
	_, _, err := h.c.GetTweet(context.Background(), "1")
	e := wantCode(t, err, apperr.XNetworkError)
	if !strings.Contains(e.Message, "timed out") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout error = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("timeout not applied: %v", el)
	}
}

func TestTokenNeverInErrorsOrHeaders(t *testing.T) {
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth != "Bearer "+testToken {
			writeJSON(w, 400, `{"title":"bad auth header"}`)
			return
		}
		// A hostile or buggy server echoing the token everywhere.
		w.Header().Set("X-Echo", auth)
		w.Header().Set("Set-Cookie", "sid="+testToken)
		switch r.URL.Path {
		case "/2/users/me":
			writeJSON(w, 403, `{"title":"Forbidden","detail":"token `+testToken+` lacks scope","type":"about:blank"}`)
		default:
			writeJSON(w, 500, `{"errors":[{"message":"`+testToken+`","code":131}]}`)
		}
	})
	ctx := context.Background()
	_, _, err := h.c.Me(ctx)
	e := wantCode(t, err, apperr.XForbidden)
	if !strings.Contains(e.Message, "[redacted]") {
		t.Fatalf("message = %q", e.Message)
	}
	_, err = h.c.GetTweets(ctx, []string{"1"})
	wantCode(t, err, apperr.XAPIError)
	res, err := h.c.Raw(ctx, RawRequest{Method: "GET", Path: "/2/tweets/1"})
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range res.Header {
		for _, v := range vs {
			if strings.Contains(v, testToken) {
				t.Fatalf("token returned in header %s", k)
			}
		}
	}
	if res.Header.Get("Set-Cookie") != "" {
		t.Fatalf("Set-Cookie returned to raw caller")
	}
}

func TestUnauthorizedRefreshesOnceAndRetriesOnce(t *testing.T) {
	t.Run("refresh fixes it", func(t *testing.T) {
		h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+testToken+"-2" {
				writeJSON(w, 401, `{"title":"Unauthorized","type":"about:blank","status":401,"detail":"Unauthorized"}`)
				return
			}
			writeJSON(w, 201, `{"data":{"id":"5","text":"ok"}}`)
		})
		tw, info, err := h.c.PostTweet(context.Background(), PostParams{Text: "x"})
		if err != nil || tw.ID != "5" {
			t.Fatalf("PostTweet after refresh = %v, %v", tw, err)
		}
		if h.tokens.refreshCount() != 1 || h.hits.get("POST /2/tweets") != 2 || info.RetryCount != 1 {
			t.Fatalf("refreshes=%d hits=%d retries=%d", h.tokens.refreshCount(), h.hits.get("POST /2/tweets"), info.RetryCount)
		}
	})
	t.Run("still 401 after refresh", func(t *testing.T) {
		h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 401, `{"title":"Unauthorized","type":"about:blank","status":401,"detail":"Unauthorized"}`)
		})
		_, _, err := h.c.GetTweet(context.Background(), "1")
		e := wantCode(t, err, apperr.XAuthExpired)
		if !strings.Contains(e.Message, "tuitbot auth") {
			t.Fatalf("message = %q", e.Message)
		}
		if h.tokens.refreshCount() != 1 || h.hits.get("GET /2/tweets/1") != 2 {
			t.Fatalf("refreshes=%d hits=%d, want 1 and 2", h.tokens.refreshCount(), h.hits.get("GET /2/tweets/1"))
		}
		res, err := h.c.Raw(context.Background(), RawRequest{Method: "GET", Path: "/2/tweets/1"})
		if err != nil || res.Status != 401 {
			t.Fatalf("raw 401 = %+v, %v", res, err)
		}
	})
	t.Run("refresh fails", func(t *testing.T) {
		h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 401, `{"title":"Unauthorized"}`)
		})
		h.tokens.refreshErr = errors.New("refresh token revoked")
		_, _, err := h.c.GetTweet(context.Background(), "1")
		e := wantCode(t, err, apperr.XAuthExpired)
		if !strings.Contains(e.Message, "tuitbot auth") || h.hits.get("GET /2/tweets/1") != 1 {
			t.Fatalf("message=%q hits=%d", e.Message, h.hits.get("GET /2/tweets/1"))
		}
		res, err := h.c.Raw(context.Background(), RawRequest{Method: "GET", Path: "/2/tweets/1"})
		if err != nil || res.Status != 401 {
			t.Fatalf("raw with failed refresh = %+v, %v", res, err)
		}
	})
}

type errTokens struct{ err error }

func (e errTokens) AccessToken(context.Context) (string, error) { return "", e.err }
func (e errTokens) Refresh(context.Context) (string, error)     { return "", e.err }

func TestNotConfigured(t *testing.T) {
	cases := []struct {
		name   string
		tokens TokenSource
		code   apperr.Code
	}{
		{"no token source", nil, apperr.XNotConfigured},
		{"empty token", &fakeTokens{token: ""}, apperr.XNotConfigured},
		{"plain error", errTokens{errors.New("no tokens.json")}, apperr.XNotConfigured},
		{"coded error kept", errTokens{apperr.New(apperr.XAuthExpired, "expired")}, apperr.XAuthExpired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
			defer srv.Close()
			c, err := New(Options{BaseURLs: map[string]string{HostAPI: srv.URL}, Tokens: tc.tokens})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c.Me(context.Background())
			e := wantCode(t, err, tc.code)
			if tc.code == apperr.XNotConfigured && (!strings.Contains(e.Detail(), "tuitbot auth") || !strings.Contains(e.Detail(), "--sandbox")) {
				t.Fatalf("message and hints = %q", e.Detail())
			}
			if hits.Load() != 0 {
				t.Fatalf("request sent without a token")
			}
		})
	}
}

func TestNewValidatesOptions(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"unknown host", Options{BaseURLs: map[string]string{"evil.example": "https://evil.example"}}, "unknown logical host"},
		{"bad scheme", Options{BaseURLs: map[string]string{HostAPI: "ftp://x"}}, "scheme"},
		{"no host", Options{BaseURLs: map[string]string{HostAPI: "https://"}}, "host is empty"},
		{"userinfo", Options{BaseURLs: map[string]string{HostAPI: "https://u:p@x"}}, "credentials"},
		{"query", Options{BaseURLs: map[string]string{HostAPI: "https://x/?a=1"}}, "query"},
		{"negative timeout", Options{Timeout: -1}, "negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts)
			e := wantCode(t, err, apperr.ConfigError)
			if !strings.Contains(e.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", e.Error(), tc.want)
			}
		})
	}
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.timeout != DefaultTimeout || c.maxBody != DefaultMaxBodyBytes || c.maxAttempts != DefaultMaxAttempts ||
		c.baseBackoff != DefaultBaseBackoff || c.maxRateWait != DefaultMaxRateLimitWait {
		t.Fatalf("defaults not applied: %+v", c)
	}
	if c.bases[HostAPI].String() != "https://api.x.com" || c.bases[HostUploadLegacy].String() != "https://upload.twitter.com" {
		t.Fatalf("default bases = %v", c.bases)
	}
}

func TestBaseURLPathPrefix(t *testing.T) {
	var path atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.Path)
		writeJSON(w, 200, `{"data":{"id":"1","text":"t"}}`)
	}))
	defer srv.Close()
	c, err := New(Options{BaseURLs: map[string]string{HostAPI: srv.URL + "/x-proxy/"}, Tokens: &fakeTokens{token: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.GetTweet(context.Background(), "1"); err != nil {
		t.Fatal(err)
	}
	if got := path.Load(); got != "/x-proxy/2/tweets/1" {
		t.Fatalf("path = %v", got)
	}
}
