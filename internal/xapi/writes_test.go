package xapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func writeServer(mu *sync.Mutex, bodies map[string]map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if len(raw) > 0 {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				writeJSON(w, 400, `{"title":"Invalid Request","detail":"bad json"}`)
				return
			}
			mu.Lock()
			bodies[r.Method+" "+r.URL.Path] = m
			mu.Unlock()
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				writeJSON(w, 400, `{"title":"Invalid Request","detail":"content type"}`)
				return
			}
		}
		switch r.Method + " " + r.URL.Path {
		case "GET /2/users/me":
			writeJSON(w, 200, `{"data":{"id":"42","name":"Me","username":"me"}}`)
		case "POST /2/tweets":
			writeJSON(w, 201, `{"data":{"id":"555","text":"hello","edit_history_tweet_ids":["555"]}}`)
		case "DELETE /2/tweets/555":
			writeJSON(w, 200, `{"data":{"deleted":true}}`)
		case "POST /2/users/42/likes":
			writeJSON(w, 200, `{"data":{"liked":true}}`)
		case "DELETE /2/users/42/likes/7":
			writeJSON(w, 200, `{"data":{"liked":false}}`)
		case "POST /2/users/42/retweets":
			writeJSON(w, 200, `{"data":{"retweeted":true,"rest_id":"7"}}`)
		case "DELETE /2/users/42/retweets/7":
			writeJSON(w, 200, `{"data":{"retweeted":false}}`)
		case "POST /2/users/42/bookmarks":
			writeJSON(w, 200, `{"data":{"bookmarked":true}}`)
		case "DELETE /2/users/42/bookmarks/7":
			writeJSON(w, 200, `{"data":{"bookmarked":false}}`)
		case "POST /2/users/42/following":
			writeJSON(w, 200, `{"data":{"following":false,"pending_follow":true}}`)
		case "DELETE /2/users/42/following/9":
			writeJSON(w, 200, `{"data":{"following":false}}`)
		default:
			writeJSON(w, 404, `{"title":"Not Found Error","detail":"no route"}`)
		}
	}
}

func TestPostTweetBodies(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string]map[string]any{}
	h := newHarness(t, writeServer(&mu, bodies))
	ctx := context.Background()
	cases := []struct {
		name string
		p    PostParams
		want string
	}{
		{"plain", PostParams{Text: "hello"}, `{"text":"hello"}`},
		{"reply with media", PostParams{Text: "re", ReplyTo: "100", MediaIDs: []string{"1", "2"}},
			`{"media":{"media_ids":["1","2"]},"reply":{"in_reply_to_tweet_id":"100"},"text":"re"}`},
		{"quote keeps media", PostParams{Text: "q", QuoteOf: "200", MediaIDs: []string{"3"}},
			`{"media":{"media_ids":["3"]},"quote_tweet_id":"200","text":"q"}`},
		{"media only", PostParams{MediaIDs: []string{"4"}}, `{"media":{"media_ids":["4"]},"text":""}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw, info, err := h.c.PostTweet(ctx, tc.p)
			if err != nil || tw.ID != "555" || info.RetryCount != 0 {
				t.Fatalf("PostTweet = %+v, %v", tw, err)
			}
			mu.Lock()
			got, _ := json.Marshal(bodies["POST /2/tweets"])
			mu.Unlock()
			if string(got) != tc.want {
				t.Fatalf("body = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPostTweetValidation(t *testing.T) {
	h := newHarness(t, writeServer(&sync.Mutex{}, map[string]map[string]any{}))
	ctx := context.Background()
	cases := []struct {
		name  string
		p     PostParams
		field string
	}{
		{"empty", PostParams{}, "text"},
		{"five media", PostParams{Text: "x", MediaIDs: []string{"1", "2", "3", "4", "5"}}, "media_ids"},
		{"bad media id", PostParams{Text: "x", MediaIDs: []string{"1", "abc"}}, "media_ids[1]"},
		{"bad reply", PostParams{Text: "x", ReplyTo: "1 2"}, "reply_to"},
		{"bad quote", PostParams{Text: "x", QuoteOf: "-1"}, "quote_of"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := h.c.PostTweet(ctx, tc.p)
			e := wantCode(t, err, apperr.InvalidInput)
			if !containsField(e.Message, tc.field) {
				t.Fatalf("message %q does not name %s", e.Message, tc.field)
			}
		})
	}
	if n := h.hits.get("POST /2/tweets"); n != 0 {
		t.Fatalf("invalid posts reached X %d times", n)
	}
}

func TestActions(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string]map[string]any{}
	h := newHarness(t, writeServer(&mu, bodies))
	ctx := context.Background()
	type boolCall func() (bool, CallInfo, error)
	cases := []struct {
		name     string
		call     boolCall
		key      string
		want     bool
		bodyKey  string
		bodyWant string
	}{
		{"like", func() (bool, CallInfo, error) { return h.c.Like(ctx, "7") }, "POST /2/users/42/likes", true, "tweet_id", "7"},
		{"unlike", func() (bool, CallInfo, error) { return h.c.Unlike(ctx, "7") }, "DELETE /2/users/42/likes/7", false, "", ""},
		{"retweet", func() (bool, CallInfo, error) { return h.c.Retweet(ctx, "7") }, "POST /2/users/42/retweets", true, "tweet_id", "7"},
		{"unretweet", func() (bool, CallInfo, error) { return h.c.Unretweet(ctx, "7") }, "DELETE /2/users/42/retweets/7", false, "", ""},
		{"bookmark", func() (bool, CallInfo, error) { return h.c.Bookmark(ctx, "7") }, "POST /2/users/42/bookmarks", true, "tweet_id", "7"},
		{"unbookmark", func() (bool, CallInfo, error) { return h.c.Unbookmark(ctx, "7") }, "DELETE /2/users/42/bookmarks/7", false, "", ""},
		{"unfollow", func() (bool, CallInfo, error) { return h.c.Unfollow(ctx, "9") }, "DELETE /2/users/42/following/9", false, "", ""},
		{"delete", func() (bool, CallInfo, error) { return h.c.DeleteTweet(ctx, "555") }, "DELETE /2/tweets/555", true, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("result = %v, want %v", got, tc.want)
			}
			if h.hits.get(tc.key) != 1 {
				t.Fatalf("%s hits = %d", tc.key, h.hits.get(tc.key))
			}
			if tc.bodyKey != "" {
				mu.Lock()
				v := bodies[tc.key][tc.bodyKey]
				mu.Unlock()
				if v != tc.bodyWant {
					t.Fatalf("body %s = %v", tc.bodyKey, v)
				}
			}
		})
	}
	fr, _, err := h.c.Follow(ctx, "9")
	if err != nil || fr.Following || !fr.PendingFollow {
		t.Fatalf("Follow = %+v, %v", fr, err)
	}
	mu.Lock()
	if bodies["POST /2/users/42/following"]["target_user_id"] != "9" {
		t.Fatalf("follow body = %v", bodies["POST /2/users/42/following"])
	}
	mu.Unlock()
	if n := h.hits.get("GET /2/users/me"); n != 1 {
		t.Fatalf("me looked up %d times, want 1 (cached)", n)
	}
	for _, bad := range []func() error{
		func() error { _, _, err := h.c.Like(ctx, "x"); return err },
		func() error { _, _, err := h.c.Follow(ctx, ""); return err },
		func() error { _, _, err := h.c.DeleteTweet(ctx, "1/2"); return err },
	} {
		wantCode(t, bad(), apperr.InvalidInput)
	}
}
