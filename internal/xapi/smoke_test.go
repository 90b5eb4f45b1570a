package xapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func TestSmokeCore(t *testing.T) {
	h := newHarness(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /2/tweets/123":
			writeJSON(w, 200, `{"data":{"id":"123","text":"hi","author_id":"9"},"includes":{"users":[{"id":"9","name":"N","username":"n"}]}}`)
		case "POST /2/tweets":
			writeJSON(w, 503, `{"title":"Service Unavailable"}`)
		case "GET /2/users/me":
			writeJSON(w, 500, `{}`)
		}
	})
	tw, _, err := h.c.GetTweet(context.Background(), "123")
	if err != nil || tw.Author == nil || tw.Author.Username != "n" {
		t.Fatalf("GetTweet: %+v %v", tw, err)
	}
	_, _, err = h.c.PostTweet(context.Background(), PostParams{Text: "x"})
	wantCode(t, err, apperr.XOutcomeUnknown)
	if n := h.hits.get("POST /2/tweets"); n != 1 {
		t.Fatalf("post hits %d", n)
	}
	_, _, err = h.c.Me(context.Background())
	wantCode(t, err, apperr.XAPIError)
	if n := h.hits.get("GET /2/users/me"); n != 3 {
		t.Fatalf("me hits %d", n)
	}
}
