package xapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func TestRawRoutesLogicalHostsThroughOptionsOnly(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	mk := func(name string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name] = r.URL.RequestURI()
			mu.Unlock()
			writeJSON(w, 200, `{"ok":true}`)
		}))
	}
	api, up, legacy := mk("api"), mk("upload"), mk("legacy")
	defer api.Close()
	defer up.Close()
	defer legacy.Close()
	c, err := New(Options{
		BaseURLs: map[string]string{"API.X.COM": api.URL, HostUpload: up.URL, HostUploadLegacy: legacy.URL},
		Tokens:   &fakeTokens{token: testToken},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct{ host, server string }{
		{"", "api"}, {"api.x.com", "api"}, {"Upload.X.com", "upload"}, {"upload.twitter.com", "legacy"},
	}
	for _, tc := range cases {
		res, err := c.Raw(ctx, RawRequest{Method: "GET", Host: tc.host, Path: "/1.1/thing.json", Query: url.Values{"a": {"1 2"}}})
		if err != nil || res.Status != 200 {
			t.Fatalf("%q: %+v %v", tc.host, res, err)
		}
		mu.Lock()
		got := seen[tc.server]
		delete(seen, tc.server)
		mu.Unlock()
		if got != "/1.1/thing.json?a=1+2" {
			t.Fatalf("%q reached %s with %q", tc.host, tc.server, got)
		}
	}
	for _, bad := range []string{"evil.example", "127.0.0.1", "api.x.com.evil.example", "ads-api.x.com", "api.x.com:8443"} {
		_, err := c.Raw(ctx, RawRequest{Method: "GET", Host: bad, Path: "/2/tweets"})
		e := wantCode(t, err, apperr.XRequestBlocked)
		if !strings.HasPrefix(e.Message, "host") {
			t.Fatalf("message %q does not name host", e.Message)
		}
	}
}

func TestRawRefusesUnsafeInput(t *testing.T) {
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `{}`) })
	ctx := context.Background()
	cases := []struct {
		name  string
		req   RawRequest
		field string
	}{
		{"authorization header", RawRequest{Method: "GET", Path: "/2/tweets", Header: http.Header{"authorization": {"Bearer other"}}}, "header"},
		{"host header", RawRequest{Method: "GET", Path: "/2/tweets", Header: http.Header{"Host": {"evil"}}}, "header"},
		{"cookie header", RawRequest{Method: "GET", Path: "/2/tweets", Header: http.Header{"Cookie": {"a=b"}}}, "header"},
		{"idempotency key", RawRequest{Method: "POST", Path: "/2/tweets", Header: http.Header{"Idempotency-Key": {"k"}}}, "header"},
		{"header injection", RawRequest{Method: "GET", Path: "/2/tweets", Header: http.Header{"X-A": {"v\r\nAuthorization: x"}}}, "header"},
		{"bad header name", RawRequest{Method: "GET", Path: "/2/tweets", Header: http.Header{"X A": {"v"}}}, "header"},
		{"method", RawRequest{Method: "PATCH", Path: "/2/tweets"}, "method"},
		{"no slash", RawRequest{Method: "GET", Path: "2/tweets"}, "path"},
		{"empty path", RawRequest{Method: "GET", Path: ""}, "path"},
		{"scheme-relative", RawRequest{Method: "GET", Path: "//evil.example/x"}, "path"},
		{"traversal", RawRequest{Method: "GET", Path: "/2/../oauth2/token"}, "path"},
		{"encoded traversal", RawRequest{Method: "GET", Path: "/2/%2e%2e/x"}, "path"},
		{"query in path", RawRequest{Method: "GET", Path: "/2/tweets?ids=1"}, "path"},
		{"fragment", RawRequest{Method: "GET", Path: "/2/tweets#x"}, "path"},
		{"control", RawRequest{Method: "GET", Path: "/2/tw\x00eets"}, "path"},
		{"bad escape", RawRequest{Method: "GET", Path: "/2/%zz"}, "path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.c.Raw(ctx, tc.req)
			e := wantCode(t, err, apperr.XRequestBlocked)
			if !strings.HasPrefix(e.Message, tc.field) {
				t.Fatalf("message %q does not name %s", e.Message, tc.field)
			}
		})
	}
	if len(h.usage.all()) != 0 {
		t.Fatalf("refused requests reached X")
	}
}

func TestRawPassesHeadersBodyAndReturnsEverything(t *testing.T) {
	var got *http.Request
	var body []byte
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("x-rate-limit-remaining", "3")
		w.Header().Set("x-rate-limit-reset", "1773144900")
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(418)
		_, _ = w.Write([]byte("teapot"))
	})
	res, err := h.c.Raw(context.Background(), RawRequest{
		Method: "put", Path: "/2/tweets/1/hidden", Header: http.Header{"X-Custom": {"a", "b"}}, Body: []byte(`{"hidden":true}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 418 || string(res.Body) != "teapot" || res.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("response = %+v", res)
	}
	if res.RateLimit == nil || res.RateLimit.Remaining != 3 || res.Endpoint != "PUT /2/tweets/:tweet_id/hidden" {
		t.Fatalf("rate limit = %+v endpoint %q", res.RateLimit, res.Endpoint)
	}
	if got.Method != "PUT" || strings.Join(got.Header.Values("X-Custom"), ",") != "a,b" ||
		got.Header.Get("Content-Type") != "application/json" || got.Header.Get("Authorization") != "Bearer "+testToken {
		t.Fatalf("request headers = %v", got.Header)
	}
	if string(body) != `{"hidden":true}` {
		t.Fatalf("body = %s", body)
	}
}

func TestRawPercentEncodedPathIsSentAsIs(t *testing.T) {
	var uri string
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		uri = r.RequestURI
		writeJSON(w, 200, `{}`)
	})
	if _, err := h.c.Raw(context.Background(), RawRequest{Method: "GET", Path: "/2/users/by/username/a%40b"}); err != nil {
		t.Fatal(err)
	}
	if uri != "/2/users/by/username/a%40b" {
		t.Fatalf("request URI = %q", uri)
	}
}

func TestPathTemplate(t *testing.T) {
	cases := map[string]string{
		"/2/tweets":                                      "/2/tweets",
		"/2/tweets/123":                                  "/2/tweets/:id",
		"/2/tweets/search/recent":                        "/2/tweets/search/recent",
		"/2/users/me":                                    "/2/users/me",
		"/2/users/42/mentions":                           "/2/users/:id/mentions",
		"/2/users/by/username/jack":                      "/2/users/by/username/:username",
		"/2/users/42/following/9":                        "/2/users/:source_user_id/following/:target_user_id",
		"/2/users/42/likes/7/":                           "/2/users/:id/likes/:tweet_id",
		"/2/media/upload/123/append":                     "/2/media/upload/:id/append",
		"/2/lists/123/members/456":                       "/2/lists/:id/members/:user_id",
		"/2/lists/123/followers/456":                     "/2/lists/:id/followers/:id",
		"/1.1/statuses/show.json":                        "/1.1/statuses/show.json",
		"/2/users/42/timelines/reverse_chronological":    "/2/users/:id/timelines/reverse_chronological",
		"/2/tweets/9/liking_users":                       "/2/tweets/:id/liking_users",
		"/":                                              "/",
		"/2/dm_conversations/with/123/messages?x=y#frag": "/2/dm_conversations/with/:participant_id/messages",
		"/2/dm_conversations/123/messages?x=y#frag":      "/2/dm_conversations/:dm_conversation_id/messages",
		"/2/dm_conversations/":                           "/2/dm_conversations",
		"/2/dm_conversations/123/dm_events":              "/2/dm_conversations/:id/dm_events",
	}
	for in, want := range cases {
		if got := pathTemplate(in); got != want {
			t.Errorf("pathTemplate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRawServerErrorMarksPostOutcomeUnknown(t *testing.T) {
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 502, `{"title":"Bad Gateway"}`)
	})
	ctx := context.Background()
	post, err := h.c.Raw(ctx, RawRequest{Method: "POST", Path: "/2/tweets", Body: []byte(`{"text":"x"}`)})
	if err != nil || post.Status != 502 || !post.OutcomeUnknown || post.RetryCount != 0 {
		t.Fatalf("raw POST 502 = %+v, %v", post, err)
	}
	del, err := h.c.Raw(ctx, RawRequest{Method: "DELETE", Path: "/2/tweets/1"})
	if err != nil || del.Status != 502 || del.OutcomeUnknown || del.RetryCount != 2 {
		t.Fatalf("raw DELETE 502 = %+v, %v", del, err)
	}
}
