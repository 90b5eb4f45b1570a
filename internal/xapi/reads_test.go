package xapi

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// recorder remembers the last request to each path.
type recorder struct {
	mu   sync.Mutex
	reqs map[string]*http.Request
	body map[string][]byte
}

func newRecorder() *recorder {
	return &recorder{reqs: map[string]*http.Request{}, body: map[string][]byte{}}
}

func (r *recorder) keep(req *http.Request, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := req.Method + " " + req.URL.Path
	r.reqs[key] = req
	r.body[key] = body
}

func (r *recorder) query(t *testing.T, key string) url.Values {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	req, ok := r.reqs[key]
	if !ok {
		t.Fatalf("no request %s", key)
	}
	return req.URL.Query()
}

const tweetsPage = `{"data":[
 {"id":"101","text":"first https://t.co/x","author_id":"9","created_at":"2026-03-09T10:00:00.000Z","conversation_id":"101","lang":"en",
  "public_metrics":{"retweet_count":2,"reply_count":3,"like_count":4,"quote_count":1,"bookmark_count":0,"impression_count":99},
  "entities":{"urls":[{"start":6,"end":18,"url":"https://t.co/x","expanded_url":"https://example.com"}]},
  "edit_history_tweet_ids":["101"]},
 {"id":"102","text":"second","author_id":"8","referenced_posts":[{"type":"replied_to","id":"100"}],
  "public_metrics":{"repost_count":7,"reply_count":0,"like_count":1,"quote_count":0,"bookmark_count":0,"impression_count":5}}],
 "includes":{"users":[{"id":"9","name":"Nine","username":"nine","public_metrics":{"followers_count":10,"following_count":2,"tweet_count":30,"listed_count":1}},
   {"id":"8","name":"Eight","username":"eight","public_metrics":{"followers_count":5,"following_count":1,"post_count":12,"listed_count":0}}]},
 "meta":{"result_count":2,"next_token":"NEXT","newest_id":"102","oldest_id":"101"}}`

const usersPage = `{"data":[{"id":"9","name":"Nine","username":"nine"},{"id":"8","name":"Eight","username":"eight"}],"meta":{"result_count":2,"next_token":"UNEXT"}}`

func readServer(rec *recorder) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec.keep(r, nil)
		switch r.URL.Path {
		case "/2/users/me":
			writeJSON(w, 200, `{"data":{"id":"42","name":"Me","username":"me_user","subscription_type":"Premium","public_metrics":{"followers_count":3,"following_count":4,"tweet_count":5,"listed_count":0}}}`)
		case "/2/tweets/101":
			writeJSON(w, 200, `{"data":{"id":"101","text":"hello","author_id":"9","attachments":{"poll_ids":["77"]}},"includes":{"users":[{"id":"9","name":"Nine","username":"nine"}],
				"polls":[{"id":"77","options":[{"position":1,"label":"Yes","votes":12},{"position":2,"label":"No","votes":3}],"duration_minutes":60,"end_datetime":"2026-03-01T12:00:00.000Z","voting_status":"closed"}]}}`)
		case "/2/tweets/404":
			writeJSON(w, 200, `{"errors":[{"value":"404","detail":"Could not find tweet with id: [404].","title":"Not Found Error","resource_type":"tweet","parameter":"id","resource_id":"404","type":"https://api.twitter.com/2/problems/resource-not-found"}]}`)
		case "/2/users/9", "/2/users/by/username/nine":
			writeJSON(w, 200, `{"data":{"id":"9","name":"Nine","username":"nine","description":"bio"}}`)
		case "/2/tweets":
			writeJSON(w, 200, `{"data":[{"id":"101","text":"a","author_id":"9"}],"includes":{"users":[{"id":"9","name":"Nine","username":"nine"}]},
				"errors":[{"value":"5","detail":"Could not find tweet with ids: [5].","title":"Not Found Error","resource_type":"tweet","parameter":"ids","resource_id":"5","type":"https://api.twitter.com/2/problems/resource-not-found"}]}`)
		case "/2/users":
			writeJSON(w, 200, usersPage)
		case "/2/tweets/search/recent", "/2/users/42/mentions", "/2/users/9/tweets", "/2/users/42/tweets",
			"/2/users/42/timelines/reverse_chronological", "/2/users/9/liked_tweets", "/2/users/42/bookmarks":
			writeJSON(w, 200, tweetsPage)
		case "/2/users/9/followers", "/2/users/9/following", "/2/users/42/followers", "/2/tweets/101/liking_users":
			writeJSON(w, 200, usersPage)
		default:
			writeJSON(w, 404, `{"title":"Not Found Error","detail":"no route","type":"about:blank","status":404}`)
		}
	}
}

func TestTypedReadsSendXParamsAndDecode(t *testing.T) {
	rec := newRecorder()
	h := newHarness(t, readServer(rec))
	ctx := context.Background()

	me, _, err := h.c.Me(ctx)
	if err != nil || me.ID != "42" || me.Username != "me_user" || me.PublicMetrics.TweetCount != 5 || me.SubscriptionType != "Premium" {
		t.Fatalf("Me = %+v, %v", me, err)
	}
	// The account's own user also tells its X subscription.
	if q := rec.query(t, "GET /2/users/me"); q.Get("user.fields") != userFields+",subscription_type" {
		t.Fatalf("Me user.fields = %q", q.Get("user.fields"))
	}

	tw, _, err := h.c.GetTweet(ctx, "101")
	if err != nil || tw.Text != "hello" || tw.Author == nil || tw.Author.Username != "nine" {
		t.Fatalf("GetTweet = %+v, %v", tw, err)
	}
	q := rec.query(t, "GET /2/tweets/101")
	if q.Get("tweet.fields") != tweetFields || q.Get("expansions") != "attachments.poll_ids,author_id" || q.Get("user.fields") != userFields ||
		q.Get("poll.fields") != "duration_minutes,end_datetime,id,options,voting_status" {
		t.Fatalf("GetTweet query = %v", q)
	}
	if p := tw.Poll; p == nil || len(p.Options) != 2 || p.Options[0].Votes != 12 || p.Options[1].Label != "No" || p.DurationMinutes != 60 ||
		p.VotingStatus != "closed" || !p.EndDatetime.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("GetTweet poll = %+v, want the expanded poll with its votes", tw.Poll)
	}

	page, err := h.c.GetTweets(ctx, []string{"101", "5"})
	if err != nil || len(page.Data) != 1 || len(page.Errors) != 1 || page.Errors[0].ResourceID != "5" {
		t.Fatalf("GetTweets = %+v, %v", page, err)
	}
	if got := rec.query(t, "GET /2/tweets").Get("ids"); got != "101,5" {
		t.Fatalf("ids = %q", got)
	}

	u, _, err := h.c.GetUser(ctx, "9")
	if err != nil || u.Description != "bio" {
		t.Fatalf("GetUser = %+v, %v", u, err)
	}
	u, _, err = h.c.GetUserByUsername(ctx, "@nine")
	if err != nil || u.ID != "9" {
		t.Fatalf("GetUserByUsername = %+v, %v", u, err)
	}
	up, err := h.c.GetUsers(ctx, []string{"9", "8"})
	if err != nil || len(up.Data) != 2 || up.Meta.NextToken != "UNEXT" {
		t.Fatalf("GetUsers = %+v, %v", up, err)
	}
	if got := rec.query(t, "GET /2/users").Get("ids"); got != "9,8" {
		t.Fatalf("users ids = %q", got)
	}
}

func TestTweetListsPaginationAndAliases(t *testing.T) {
	rec := newRecorder()
	h := newHarness(t, readServer(rec))
	ctx := context.Background()
	lp := ListParams{MaxResults: 50, PaginationToken: "PT", SinceID: "77"}

	cases := []struct {
		name  string
		call  func() (*Page[Tweet], error)
		key   string
		since bool
	}{
		{"search", func() (*Page[Tweet], error) {
			return h.c.SearchRecent(ctx, SearchParams{Query: "golang -is:retweet", MaxResults: 50, SinceID: "77", PaginationToken: "PT"})
		}, "GET /2/tweets/search/recent", true},
		{"mentions of me", func() (*Page[Tweet], error) { return h.c.Mentions(ctx, "", lp) }, "GET /2/users/42/mentions", true},
		{"user tweets", func() (*Page[Tweet], error) { return h.c.UserTweets(ctx, "9", lp) }, "GET /2/users/9/tweets", true},
		{"home timeline", func() (*Page[Tweet], error) { return h.c.HomeTimeline(ctx, lp) }, "GET /2/users/42/timelines/reverse_chronological", true},
		{"liked tweets", func() (*Page[Tweet], error) {
			return h.c.LikedTweets(ctx, "9", ListParams{MaxResults: 50, PaginationToken: "PT"})
		}, "GET /2/users/9/liked_tweets", false},
		{"bookmarks", func() (*Page[Tweet], error) {
			return h.c.Bookmarks(ctx, ListParams{MaxResults: 50, PaginationToken: "PT"})
		}, "GET /2/users/42/bookmarks", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Data) != 2 || p.Meta.NextToken != "NEXT" || p.Meta.NewestID != "102" || p.Meta.ResultCount != 2 {
				t.Fatalf("page = %+v", p.Meta)
			}
			a, b := p.Data[0], p.Data[1]
			if a.Author == nil || a.Author.Username != "nine" || b.Author == nil || b.Author.PublicMetrics.TweetCount != 12 {
				t.Fatalf("authors not attached: %+v %+v", a.Author, b.Author)
			}
			if a.PublicMetrics.RetweetCount != 2 || b.PublicMetrics.RetweetCount != 7 || a.PublicMetrics.ImpressionCount != 99 {
				t.Fatalf("metrics = %+v %+v", a.PublicMetrics, b.PublicMetrics)
			}
			if !a.HasURL() || a.CreatedAt.IsZero() || len(b.ReferencedTweets) != 1 || b.ReferencedTweets[0].Type != "replied_to" {
				t.Fatalf("fields = %+v / %+v", a, b)
			}
			q := rec.query(t, tc.key)
			if q.Get("max_results") != "50" || q.Get("pagination_token") != "PT" || q.Get("expansions") != "attachments.poll_ids,author_id" {
				t.Fatalf("query = %v", q)
			}
			if tc.since && q.Get("since_id") != "77" {
				t.Fatalf("since_id missing: %v", q)
			}
			if p.Call.RetryCount != 0 {
				t.Fatalf("retry count %d", p.Call.RetryCount)
			}
		})
	}
	if n := h.hits.get("GET /2/users/me"); n != 1 {
		t.Fatalf("the authenticated user id must be cached: /2/users/me called %d times", n)
	}
}

func TestUserLists(t *testing.T) {
	rec := newRecorder()
	h := newHarness(t, readServer(rec))
	ctx := context.Background()
	cases := []struct {
		name string
		call func() (*Page[User], error)
		key  string
	}{
		{"followers", func() (*Page[User], error) { return h.c.Followers(ctx, "9", ListParams{MaxResults: 1000}) }, "GET /2/users/9/followers"},
		{"my followers", func() (*Page[User], error) { return h.c.Followers(ctx, "", ListParams{MaxResults: 1}) }, "GET /2/users/42/followers"},
		{"following", func() (*Page[User], error) {
			return h.c.Following(ctx, "9", ListParams{PaginationToken: "ABCDEFGHIJKLMNOP"})
		}, "GET /2/users/9/following"},
		{"liking users", func() (*Page[User], error) { return h.c.LikingUsers(ctx, "101", ListParams{MaxResults: 100}) }, "GET /2/tweets/101/liking_users"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.call()
			if err != nil || len(p.Data) != 2 || p.Data[1].Username != "eight" {
				t.Fatalf("page = %+v, %v", p, err)
			}
			if q := rec.query(t, tc.key); q.Get("user.fields") != userFields {
				t.Fatalf("user.fields = %v", q)
			}
		})
	}
}

func TestReadInputValidation(t *testing.T) {
	h := newHarness(t, readServer(newRecorder()))
	ctx := context.Background()
	many := make([]string, 101)
	for i := range many {
		many[i] = "1"
	}
	cases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"tweet id letters", func() error { _, _, err := h.c.GetTweet(ctx, "12a"); return err }, "tweet_id"},
		{"tweet id path trick", func() error { _, _, err := h.c.GetTweet(ctx, "1/../../x"); return err }, "tweet_id"},
		{"empty ids", func() error { _, err := h.c.GetTweets(ctx, nil); return err }, "ids"},
		{"too many ids", func() error { _, err := h.c.GetUsers(ctx, many); return err }, "ids"},
		{"bad id in batch", func() error { _, err := h.c.GetTweets(ctx, []string{"1", "x"}); return err }, "ids[1]"},
		{"username", func() error { _, _, err := h.c.GetUserByUsername(ctx, "no spaces"); return err }, "username"},
		{"empty query", func() error { _, err := h.c.SearchRecent(ctx, SearchParams{Query: "  "}); return err }, "query"},
		{"search max_results", func() error { _, err := h.c.SearchRecent(ctx, SearchParams{Query: "a", MaxResults: 5}); return err }, "max_results"},
		{"mentions max_results", func() error { _, err := h.c.Mentions(ctx, "9", ListParams{MaxResults: 101}); return err }, "max_results"},
		{"followers max_results", func() error { _, err := h.c.Followers(ctx, "9", ListParams{MaxResults: 1001}); return err }, "max_results"},
		{"since_id", func() error { _, err := h.c.UserTweets(ctx, "9", ListParams{SinceID: "abc"}); return err }, "since_id"},
		{"since_id unsupported", func() error { _, err := h.c.Bookmarks(ctx, ListParams{SinceID: "1"}); return err }, "since_id"},
		{"liking users id", func() error { _, err := h.c.LikingUsers(ctx, "", ListParams{}); return err }, "tweet_id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := wantCode(t, tc.call(), apperr.InvalidInput)
			if !containsField(e.Message, tc.field) {
				t.Fatalf("message %q does not name %s", e.Message, tc.field)
			}
		})
	}
	if len(h.usage.all()) != 0 {
		t.Fatalf("invalid input must not reach X, ledger has %d rows", len(h.usage.all()))
	}
}

func containsField(msg, field string) bool {
	return len(msg) >= len(field) && msg[:len(field)] == field
}

func TestSingleLookupMissingIsNotFound(t *testing.T) {
	h := newHarness(t, readServer(newRecorder()))
	_, _, err := h.c.GetTweet(context.Background(), "404")
	e := wantCode(t, err, apperr.XNotFound)
	if !contains(e.Message, "Could not find tweet") {
		t.Fatalf("message = %q", e.Message)
	}
}
