package xsim

import (
	"strings"
	"testing"
)

// TestLongPosts: a Premium author may post up to 25,000 weighted
// characters; reads answer a long post's text cut to an ordinary post's
// length with an ellipsis, and its whole text in note_tweet (note_post)
// only when asked for; a plain account gets X's refusal and nothing is
// posted; /2/users/me tells each its subscription.
func TestLongPosts(t *testing.T) {
	e := newEnv(t)
	premium := e.s.DemoAccounts()["brand_b"]
	access, _, _ := e.s.IssueToken(premium, e.s.AllScopes())
	for _, tc := range []struct {
		token, want string
	}{{e.token, "None"}, {access, "Premium"}} {
		r := e.doTok("GET", "/2/users/me?user.fields=subscription_type", tc.token, nil)
		wantStatus(t, r, 200)
		if got := r.body["data"].(map[string]any)["subscription_type"]; got != tc.want {
			t.Errorf("subscription_type %v, want %s", got, tc.want)
		}
	}

	long := strings.TrimSpace(strings.Repeat("Long posts say more. ", 48)) // 1007 characters
	before := e.counter(CountTweetsCreated)
	wantProblem(t, e.do("POST", "/2/tweets", map[string]any{"text": long}), 403, typeBlank)
	if e.counter(CountTweetsCreated) != before {
		t.Fatal("a plain account's long post was posted")
	}

	r := e.doTok("POST", "/2/tweets", access, map[string]any{"text": long + " #golang"})
	wantStatus(t, r, 201)
	id := r.body["data"].(map[string]any)["id"].(string)
	tooLong := strings.Repeat("a", maxLongPostLength+1)
	wantProblem(t, e.doTok("POST", "/2/tweets", access, map[string]any{"text": tooLong}), 403, typeBlank)

	for _, field := range []string{"note_tweet", "note_post"} {
		r = e.doTok("GET", "/2/tweets/"+id+"?tweet.fields="+field, access, nil)
		wantStatus(t, r, 200)
		data := r.body["data"].(map[string]any)
		text := data["text"].(string)
		if !strings.HasSuffix(text, "…") || weightedLength(text) > maxPostLength || !strings.HasPrefix(long, strings.TrimSuffix(text, "…")) {
			t.Errorf("text %q (%d weighted), want the post's start cut to fit 280 with an ellipsis", text, weightedLength(text))
		}
		note, _ := data[field].(map[string]any)
		if note == nil || note["text"] != long+" #golang" {
			t.Fatalf("%s %v, want the whole text", field, data[field])
		}
		ent, _ := note["entities"].(map[string]any)
		if tags, _ := ent["hashtags"].([]any); len(tags) != 1 {
			t.Errorf("%s entities %v, want the hashtag past the cut", field, ent)
		}
	}
	r = e.doTok("GET", "/2/tweets/"+id, access, nil)
	if data := r.body["data"].(map[string]any); data["note_tweet"] != nil {
		t.Errorf("note_tweet sent unasked: %v", data)
	}
	short := e.doTok("POST", "/2/tweets", access, map[string]any{"text": "A short one from a Premium account."})
	sid := short.body["data"].(map[string]any)["id"].(string)
	if data := e.doTok("GET", "/2/tweets/"+sid+"?tweet.fields=note_tweet", access, nil).body["data"].(map[string]any); data["note_tweet"] != nil {
		t.Errorf("a short post has a note: %v", data)
	}
}

func TestTruncateLongPost(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("語", 300),
		strings.Repeat("word ", 100),
		strings.Repeat("x", 400),
		strings.Repeat("see https://example.com/a/long/path ", 30),
	} {
		got := truncateLongPost(text)
		if n := weightedLength(got); n > maxPostLength || n < maxPostLength-30 {
			t.Errorf("truncateLongPost(%.20q…) weighs %d, want just under %d", text, n, maxPostLength)
		}
	}
}
