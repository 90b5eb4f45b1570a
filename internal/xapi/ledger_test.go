package xapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestUsageLedgerRowsAndDedup(t *testing.T) {
	fail := true
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /2/users/me":
			writeJSON(w, 200, `{"data":{"id":"42","name":"Me","username":"me"}}`)
		case "GET /2/tweets/search/recent":
			writeJSON(w, 200, `{"data":[{"id":"1","text":"a","author_id":"9"},{"id":"2","text":"b","author_id":"9"}],
				"includes":{"users":[{"id":"9","name":"N","username":"n"}]},"meta":{"result_count":2}}`)
		case "GET /2/tweets":
			writeJSON(w, 200, `{"data":[{"id":"2","text":"b"},{"id":"3","text":"c"}],"meta":{"result_count":2}}`)
		case "POST /2/tweets":
			writeJSON(w, 201, `{"data":{"id":"77","text":"x"}}`)
		case "POST /2/users/42/likes":
			if fail {
				fail = false
				writeJSON(w, 503, `{"title":"Service Unavailable"}`)
				return
			}
			writeJSON(w, 200, `{"data":{"liked":true}}`)
		case "DELETE /2/tweets/77":
			writeJSON(w, 403, `{"title":"Forbidden","detail":"not yours"}`)
		}
	})
	ctx := context.Background()
	if _, _, err := h.c.Me(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.SearchRecent(ctx, SearchParams{Query: "go"}); err != nil {
		t.Fatal(err)
	}
	// Second read the same UTC day: post 2 is free, post 3 is new.
	if _, err := h.c.GetTweets(ctx, []string{"2", "3"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.c.PostTweet(ctx, PostParams{Text: "see https://example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.c.Like(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.c.DeleteTweet(ctx, "77")
	wantCode(t, err, apperr.XForbidden)
	// Next UTC day: everything is billed again.
	h.clock.set(testEpoch.Add(24 * time.Hour))
	if _, err := h.c.GetTweets(ctx, []string{"2", "3"}); err != nil {
		t.Fatal(err)
	}

	rows := h.usage.all()
	want := []struct {
		endpoint string
		status   int
		items    int
		cost     float64
		attempt  int
		code     string
	}{
		{"GET /2/users/me", 200, 1, PriceUserRead, 1, ""},
		{"GET /2/tweets/search/recent", 200, 2, 2*PricePostRead + PriceUserRead, 1, ""},
		{"GET /2/tweets", 200, 2, PricePostRead, 1, ""},
		{"POST /2/tweets", 201, 1, PricePostCreateWithURL, 1, ""},
		{"POST /2/users/:id/likes", 503, 0, PriceInteractionCreate, 1, string(apperr.XAPIError)},
		{"POST /2/users/:id/likes", 200, 1, PriceInteractionCreate, 2, ""},
		{"DELETE /2/tweets/:id", 403, 0, 0, 1, string(apperr.XForbidden)},
		{"GET /2/tweets", 200, 2, 2 * PricePostRead, 1, ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("ledger has %d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Endpoint != w.endpoint || r.Status != w.status || r.Items != w.items || !near(r.CostUSD, w.cost) ||
			r.Attempt != w.attempt || r.ErrorCode != w.code || r.AccountID != "acct-1" || r.Method != r.Endpoint[:len(r.Method)] {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
}

type failingRecorder struct{}

func (failingRecorder) RecordXUsage(context.Context, Usage) error { return errors.New("disk full") }

func TestLedgerFailureDoesNotFailTheCall(t *testing.T) {
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 201, `{"data":{"id":"5","text":"x"}}`)
	}, func(o *Options) { o.Usage = failingRecorder{} })
	if _, _, err := h.c.PostTweet(context.Background(), PostParams{Text: "x"}); err != nil {
		t.Fatalf("a ledger failure must not turn a posted tweet into an error: %v", err)
	}
}

func TestEstimateCost(t *testing.T) {
	cases := []struct {
		method, endpoint string
		items            int
		hasURL           bool
		want             float64
	}{
		{"GET", "/2/tweets/search/recent", 10, false, 10 * PricePostRead},
		{"", "GET /2/users/:id/mentions", 3, false, 3 * PricePostRead},
		{"GET", "/2/users/123/followers", 5, false, 5 * PriceFollowsRead},
		{"GET", "/2/users/by/username/jack", 1, false, PriceUserRead},
		{"GET", "/2/tweets/1/liking_users", 2, false, 2 * PriceUserRead},
		{"GET", "/2/tweets/counts/recent", 500, false, PriceCountsRecent},
		{"GET", "/2/some/unknown", 2, false, 2 * PriceUnknownRead},
		{"GET", "/2/tweets", -1, false, 0},
		{"POST", "/2/tweets", 1, false, PricePostCreate},
		{"POST", "/2/tweets", 1, true, PricePostCreateWithURL},
		{"DELETE", "/2/tweets/123", 1, false, PriceInteractionDelete},
		{"POST", "/2/users/1/likes", 1, false, PriceInteractionCreate},
		{"DELETE", "/2/users/1/following/2", 1, false, PriceInteractionDelete},
		{"POST", "/2/users/1/bookmarks", 1, false, PriceBookmark},
		{"DELETE", "/2/users/1/bookmarks/2", 1, false, PriceBookmark},
		{"POST", "/2/media/metadata", 1, false, PriceMediaMetadata},
		{"POST", "/2/media/upload/initialize", 1, false, PriceMediaUpload},
		{"POST", "/2/media/upload/123/append", 1, false, 0},
		{"PUT", "/2/tweets/1/hidden", 1, false, PriceUnknownWrite},
	}
	for _, tc := range cases {
		if got := EstimateCost(tc.method, tc.endpoint, tc.items, tc.hasURL); !near(got, tc.want) {
			t.Errorf("EstimateCost(%s %s, %d, %v) = %v, want %v", tc.method, tc.endpoint, tc.items, tc.hasURL, got, tc.want)
		}
	}
}

func TestEstimateWrite(t *testing.T) {
	cases := []struct {
		method, path, body string
		want               float64
	}{
		{"POST", "/2/tweets", `{"text":"plain words"}`, PricePostCreate},
		{"POST", "/2/tweets", `{"text":"read https://example.com/x"}`, PricePostCreateWithURL},
		{"POST", "/2/tweets", `{"text":"bare example.com link"}`, PricePostCreateWithURL},
		{"POST", "/2/tweets", `{"media":{"media_ids":["1"]}}`, PricePostCreate},
		{"POST", "/2/tweets", `not json`, PricePostCreateWithURL},
		{"post", "/2/users/9/retweets", `{"tweet_id":"1"}`, PriceInteractionCreate},
		{"DELETE", "/2/users/9/retweets/1", ``, PriceInteractionDelete},
		{"GET", "/2/tweets/1", ``, 0},
	}
	for _, tc := range cases {
		if got := EstimateWrite(tc.method, tc.path, []byte(tc.body)); !near(got, tc.want) {
			t.Errorf("EstimateWrite(%s %s %s) = %v, want %v", tc.method, tc.path, tc.body, got, tc.want)
		}
	}
}

func TestContainsURL(t *testing.T) {
	cases := []struct {
		text string
		want bool
	}{
		{"no links here", false},
		{"https://x.com/a", true},
		{"HTTP://EXAMPLE.COM", true},
		{"visit www.example.org today", true},
		{"tuitbot.dev is live", true},
		{"docs at sub.domain.io/path?q=1", true},
		{"email me@example.com", false},
		{"Node.js and e.g. stuff", false},
		{"version 1.2.3", false},
		{"", false},
	}
	for _, tc := range cases {
		if got := ContainsURL(tc.text); got != tc.want {
			t.Errorf("ContainsURL(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestRateLimitTracking(t *testing.T) {
	clock := &fixedClock{t: testEpoch}
	reset := testEpoch.Add(10 * time.Minute)
	day := testEpoch.Add(20 * time.Hour)
	remaining := 5
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /2/users/me":
			writeJSON(w, 200, `{"data":{"id":"42","name":"Me","username":"me"}}`)
		case "POST /2/tweets":
			w.Header().Set("x-rate-limit-limit", "100")
			w.Header().Set("x-rate-limit-remaining", strconv.Itoa(remaining))
			w.Header().Set("x-rate-limit-reset", strconv.FormatInt(reset.Unix(), 10))
			w.Header().Set("x-user-limit-24hour-limit", "17")
			w.Header().Set("x-user-limit-24hour-remaining", "0")
			w.Header().Set("x-user-limit-24hour-reset", strconv.FormatInt(day.Unix(), 10))
			w.Header().Set("x-app-limit-24hour-limit", "10000")
			w.Header().Set("x-app-limit-24hour-remaining", "9000")
			w.Header().Set("x-app-limit-24hour-reset", strconv.FormatInt(day.Unix(), 10))
			writeJSON(w, 201, `{"data":{"id":"1","text":"x"}}`)
		case "GET /2/users/42/mentions":
			w.Header().Set("x-rate-limit-limit", "180")
			w.Header().Set("x-rate-limit-remaining", "0")
			w.Header().Set("x-rate-limit-reset", strconv.FormatInt(reset.Unix(), 10))
			writeJSON(w, 200, `{"meta":{"result_count":0}}`)
		}
	}, func(o *Options) { o.Now = clock.now })
	ctx := context.Background()
	_, info, err := h.c.PostTweet(ctx, PostParams{Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if info.RateLimit == nil || info.RateLimit.Remaining != 5 || info.RateLimit.Limit != 100 {
		t.Fatalf("call rate limit = %+v", info.RateLimit)
	}
	// The 24-hour user quota is exhausted, so the wait runs to its reset.
	if info.RateLimit.RecommendedWaitMS != (20 * time.Hour).Milliseconds() {
		t.Fatalf("recommended wait = %d", info.RateLimit.RecommendedWaitMS)
	}
	if _, err := h.c.Mentions(ctx, "", ListParams{}); err != nil {
		t.Fatal(err)
	}
	all := h.c.RateLimits()
	if len(all) != 2 || all[0].Endpoint != "GET /2/users/:id/mentions" || all[1].Endpoint != "POST /2/tweets" {
		t.Fatalf("states = %+v", all)
	}
	m := all[0]
	if m.AccountID != "acct-1" || m.Remaining != 0 || m.RecommendedWaitMS != (10*time.Minute).Milliseconds() {
		t.Fatalf("mentions state = %+v", m)
	}
	p := all[1]
	if p.User24h == nil || p.User24h.Limit != 17 || p.App24h == nil || p.App24h.Remaining != 9000 || !p.Reset.Equal(reset) {
		t.Fatalf("post state = %+v", p)
	}
	// Time passes: waits shrink and end at the reset.
	clock.set(reset)
	st, ok := h.c.RateLimit("GET /2/users/:id/mentions")
	if !ok || st.RecommendedWaitMS != 0 {
		t.Fatalf("after reset = %+v %v", st, ok)
	}
	// Quota available again: no wait.
	remaining = 50
	clock.set(day.Add(time.Second))
	if _, _, err := h.c.PostTweet(ctx, PostParams{Text: "y"}); err != nil {
		t.Fatal(err)
	}
	st, _ = h.c.RateLimit("POST /2/tweets")
	if st.Remaining != 50 || st.RecommendedWaitMS != 0 {
		t.Fatalf("post after reset = %+v", st)
	}
}

func TestRateLimitStatePerAccount(t *testing.T) {
	handler := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-rate-limit-limit", "10")
		w.Header().Set("x-rate-limit-remaining", "9")
		w.Header().Set("x-rate-limit-reset", strconv.FormatInt(testEpoch.Add(time.Minute).Unix(), 10))
		writeJSON(w, 200, `{"data":{"id":"1","text":"x"}}`)
	}
	a := newHarness(t, handler, func(o *Options) { o.AccountID = "a" })
	b := newHarness(t, handler, func(o *Options) { o.AccountID = "b" })
	if _, _, err := a.c.GetTweet(context.Background(), "1"); err != nil {
		t.Fatal(err)
	}
	if len(b.c.RateLimits()) != 0 {
		t.Fatalf("account b sees account a's limits")
	}
	if s := a.c.RateLimits(); len(s) != 1 || s[0].AccountID != "a" {
		t.Fatalf("account a = %+v", s)
	}
}

func TestParseRateLimitIgnoresGarbage(t *testing.T) {
	h := http.Header{}
	h.Set("x-rate-limit-limit", "abc")
	h.Set("x-rate-limit-remaining", "-3")
	h.Set("x-rate-limit-reset", "99999999999999999999")
	if _, ok := parseRateLimit(h); ok {
		t.Fatalf("garbage headers produced a state")
	}
	if _, _, ok := retryAfter(h, testEpoch); ok {
		t.Fatalf("garbage reset produced a wait")
	}
}
