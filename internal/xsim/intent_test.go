package xsim

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestIntentPages: on a pay-per-use world, where the API refuses likes,
// follows, quote posts and unsummoned replies, a person on the intent
// pages does each of them as the demo user; the page first shows what
// the link prefilled. A link naming nothing gets a 400 that says so.
func TestIntentPages(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Access = AccessPayPerUse })
	target := e.someTweet()
	var author string
	for _, tw := range e.s.World().Tweets {
		if tw.ID == target {
			author = tw.AuthorID
		}
	}
	page := func(method, path string, form url.Values) (int, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, e.base+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		res, err := e.hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	reply := "/intent/tweet?" + url.Values{"in_reply_to": {target}, "text": {"thanks & <b>cheers</b>"}}.Encode()
	if code, body := page("GET", reply, nil); code != 200 || !strings.Contains(body, "thanks &amp; &lt;b&gt;cheers&lt;/b&gt;</textarea>") || !strings.Contains(body, ">Post</button>") {
		t.Fatalf("reply page %d:\n%s", code, body)
	}
	code, body := page("POST", reply, url.Values{"text": {"thanks & <b>cheers</b>"}})
	if code != 200 || !strings.Contains(body, "Your post is up") {
		t.Fatalf("posting the reply: %d\n%s", code, body)
	}
	var replied, quoted bool
	for _, tw := range e.s.World().Tweets {
		if tw.AuthorID == e.me && tw.InReplyToTweetID == target && tw.Text == "thanks & <b>cheers</b>" {
			replied = true
		}
	}
	quote := "/intent/tweet?" + url.Values{"url": {"https://x.com/i/web/status/" + target}, "text": {"so true"}}.Encode()
	if code, body := page("POST", quote, url.Values{"text": {"so true"}}); code != 200 {
		t.Fatalf("quote: %d\n%s", code, body)
	}
	for _, tw := range e.s.World().Tweets {
		if tw.AuthorID == e.me && tw.QuoteOf == target && tw.Text == "so true" {
			quoted = true
		}
	}
	if !replied || !quoted {
		t.Fatalf("replied %t, quoted %t", replied, quoted)
	}
	if code, body := page("GET", "/intent/like?tweet_id="+target, nil); code != 200 || !strings.Contains(body, `action="/intent/like?tweet_id=`+target+`"`) {
		t.Fatalf("the like page's form does not post back to its link: %d\n%s", code, body)
	}
	if code, body := page("POST", "/intent/like?tweet_id="+target, url.Values{}); code != 200 || !e.s.liked(e.me, target) {
		t.Fatalf("like: %d, liked %t\n%s", code, e.s.liked(e.me, target), body)
	}
	name := ""
	for _, u := range e.s.World().Users {
		if u.ID == author {
			name = u.Username
		}
	}
	if code, _ := page("POST", "/intent/follow?screen_name="+name, url.Values{}); code != 200 || !e.s.following(e.me, author) {
		t.Fatalf("follow @%s: %d", name, code)
	}
	// The user intent (the profile, with its Follow button) takes the id.
	other := ""
	for _, u := range e.s.World().Users {
		if u.ID != author && u.ID != e.me && !e.s.following(e.me, u.ID) {
			other = u.ID
			break
		}
	}
	if code, body := page("GET", "/intent/user?user_id="+other, nil); code != 200 || !strings.Contains(body, `id="intent-button">Follow<`) {
		t.Fatalf("the user intent: %d\n%s", code, body)
	}
	if code, _ := page("POST", "/intent/user?user_id="+other, url.Values{}); code != 200 || !e.s.following(e.me, other) {
		t.Fatalf("follow from the profile of %s: %d", other, code)
	}
	// X's follow intent names the account by handle (screen_name) only.
	for _, bad := range []string{"/intent/like", "/intent/like?tweet_id=1", "/intent/follow?screen_name=nobody_at_all_here", "/intent/follow?user_id=" + author} {
		if code, body := page("GET", bad, nil); code != 400 || !strings.Contains(body, `id="error"`) {
			t.Fatalf("GET %s: %d\n%s", bad, code, body)
		}
	}
}
