package xsim

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestCreateAndGetTweet(t *testing.T) {
	e := newEnv(t)
	id := e.post("hello from the sandbox")
	if e.counter(CountTweetsCreated) != 1 {
		t.Fatalf("tweets_created = %d", e.counter(CountTweetsCreated))
	}
	r := e.get("/2/tweets/" + id + "?tweet.fields=author_id,created_at,public_metrics,conversation_id&expansions=author_id&user.fields=username,public_metrics")
	wantStatus(t, r, 200)
	d := r.data()
	if d["text"] != "hello from the sandbox" || d["author_id"] != e.me || d["conversation_id"] != id {
		t.Fatalf("data = %v", d)
	}
	if d["created_at"] != "2026-03-10T12:00:00.000Z" {
		t.Fatalf("created_at = %v", d["created_at"])
	}
	pm := d["public_metrics"].(map[string]any)
	for _, k := range []string{"retweet_count", "repost_count", "reply_count", "like_count", "quote_count", "bookmark_count", "impression_count"} {
		if _, ok := pm[k]; !ok {
			t.Errorf("public_metrics lacks %s", k)
		}
	}
	users := r.body["includes"].(map[string]any)["users"].([]any)
	if len(users) != 1 || users[0].(map[string]any)["username"] != DemoUsername {
		t.Fatalf("includes.users = %v", users)
	}
}

func TestGetTweetNotFoundIsPartialError(t *testing.T) {
	e := newEnv(t)
	r := e.get("/2/tweets/1")
	wantStatus(t, r, 200)
	errs := r.body["errors"].([]any)
	item := errs[0].(map[string]any)
	if item["type"] != typeNotFound || item["resource_id"] != "1" || item["parameter"] != "id" {
		t.Fatalf("errors = %v", errs)
	}
	if _, has := r.body["data"]; has {
		t.Fatal("data present for a missing tweet")
	}
}

func TestGetTweetsByIDsMixed(t *testing.T) {
	e := newEnv(t)
	id := e.someTweet()
	r := e.get("/2/tweets?ids=" + id + ",2")
	wantStatus(t, r, 200)
	if len(r.list()) != 1 || len(r.body["errors"].([]any)) != 1 {
		t.Fatalf("body = %s", r.raw)
	}
	wantProblem(t, e.get("/2/tweets?ids=abc"), 400, typeInvalidRequest)
	wantProblem(t, e.get("/2/tweets"), 400, typeInvalidRequest)
}

func TestBadFieldsAndExpansions(t *testing.T) {
	e := newEnv(t)
	id := e.someTweet()
	for _, q := range []string{"tweet.fields=bogus", "expansions=bogus", "user.fields=nope", "media.fields=nah"} {
		wantProblem(t, e.get("/2/tweets/"+id+"?"+q), 400, typeInvalidRequest)
	}
	// The OpenAPI spellings are accepted too.
	r := e.get("/2/tweets/" + id + "?post.fields=author_id,referenced_posts&expansions=referenced_posts,author_id")
	wantStatus(t, r, 200)
	if r.data()["author_id"] == nil {
		t.Fatalf("post.fields ignored: %s", r.raw)
	}
}

func TestDuplicateContent(t *testing.T) {
	e := newEnv(t)
	e.post("same words twice")
	r := e.do("POST", "/2/tweets", map[string]any{"text": "same words twice"})
	wantProblem(t, r, 403, typeBlank)
	if r.body["detail"] != DetailDuplicate {
		t.Fatalf("detail = %v", r.body["detail"])
	}
	if e.counter(CountTweetsCreated) != 1 {
		t.Fatalf("duplicate was applied")
	}
	// Outside the window the same text is allowed again.
	e.clock.Advance(25 * time.Hour)
	e.token, _, _ = e.s.IssueToken("", e.s.AllScopes())
	e.post("same words twice")
}

func TestCreateTweetValidation(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name   string
		body   any
		status int
		typ    string
	}{
		{"empty", map[string]any{"text": ""}, 400, typeInvalidRequest},
		{"no body", "", 400, typeInvalidRequest},
		{"unknown field", map[string]any{"text": "x", "bogus": 1}, 400, typeInvalidRequest},
		{"too long", map[string]any{"text": strings.Repeat("a", 281)}, 403, typeBlank},
		{"cjk too long", map[string]any{"text": strings.Repeat("漢", 141)}, 403, typeBlank},
		{"bad reply id", map[string]any{"text": "x", "reply": map[string]any{"in_reply_to_tweet_id": "abc"}}, 400, typeInvalidRequest},
		{"reply to missing", map[string]any{"text": "x", "reply": map[string]any{"in_reply_to_tweet_id": "5"}}, 403, typeBlank},
		{"quote missing", map[string]any{"text": "x", "quote_tweet_id": "5"}, 403, typeBlank},
		{"bad media", map[string]any{"text": "x", "media": map[string]any{"media_ids": []string{"123"}}}, 400, typeInvalidRequest},
		{"too many media", map[string]any{"text": "x", "media": map[string]any{"media_ids": []string{"1", "2", "3", "4", "5"}}}, 400, typeInvalidRequest},
		{"poll unsupported", map[string]any{"text": "x", "poll": map[string]any{"options": []string{"a", "b"}}}, 400, typeInvalidRequest},
		{"bad reply settings", map[string]any{"text": "x", "reply_settings": "everyone_ever"}, 400, typeInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, e.do("POST", "/2/tweets", tc.body), tc.status, tc.typ)
		})
	}
	if n := e.counter(CountTweetsCreated); n != 0 {
		t.Fatalf("invalid posts applied: %d", n)
	}
	// 280 ASCII characters and a long URL (counted as 23) are fine.
	e.post(strings.Repeat("b", 280))
	e.post("see https://example.com/" + strings.Repeat("p", 300))
}

func TestReplyAndQuote(t *testing.T) {
	e := newEnv(t)
	parent := e.someTweet()
	r := e.do("POST", "/2/tweets", map[string]any{"text": "great point", "reply": map[string]any{"in_reply_to_tweet_id": parent}})
	wantStatus(t, r, 201)
	reply := r.data()["id"].(string)
	q := e.do("POST", "/2/tweets", map[string]any{"text": "quoting this", "quote_tweet_id": parent})
	wantStatus(t, q, 201)
	g := e.get("/2/tweets/" + reply + "?tweet.fields=referenced_tweets,in_reply_to_user_id,conversation_id&expansions=referenced_tweets.id")
	refs := g.data()["referenced_tweets"].([]any)
	if refs[0].(map[string]any)["type"] != "replied_to" || refs[0].(map[string]any)["id"] != parent {
		t.Fatalf("refs = %v", refs)
	}
	inc := g.body["includes"].(map[string]any)["tweets"].([]any)
	if inc[0].(map[string]any)["id"] != parent {
		t.Fatalf("includes.tweets = %v", inc)
	}
}

func TestDeleteTweet(t *testing.T) {
	e := newEnv(t)
	id := e.post("to be deleted")
	r := e.do("DELETE", "/2/tweets/"+id, nil)
	wantStatus(t, r, 200)
	if r.data()["deleted"] != true || e.counter(CountTweetsDeleted) != 1 {
		t.Fatalf("delete: %s", r.raw)
	}
	// A repeated delete answers the same without a second side effect.
	r = e.do("DELETE", "/2/tweets/"+id, nil)
	wantStatus(t, r, 200)
	if e.counter(CountTweetsDeleted) != 1 {
		t.Fatal("second delete applied")
	}
	wantProblem(t, e.do("DELETE", "/2/tweets/7", nil), 404, typeNotFound)
	wantProblem(t, e.do("DELETE", "/2/tweets/"+e.someTweet(), nil), 403, typeBlank)
	wantProblem(t, e.do("DELETE", "/2/tweets/x1", nil), 400, typeInvalidRequest)
	g := e.get("/2/tweets/" + id)
	if g.body["errors"] == nil {
		t.Fatal("deleted tweet still readable")
	}
}

func TestSearchRecentOperators(t *testing.T) {
	e := newEnv(t)
	count := func(q string) int {
		t.Helper()
		r := e.get("/2/tweets/search/recent?max_results=100&query=" + url.QueryEscape(q))
		wantStatus(t, r, 200)
		return int(r.meta()["result_count"].(float64))
	}
	for _, q := range []string{"rust", "golang", "AI agents", "startup"} {
		if count(q) == 0 {
			t.Errorf("search %q found nothing", q)
		}
	}
	e.post("Pineapple rocket launches tomorrow https://example.com/x")
	e.post("pineapple smoothie recipe")
	cases := []struct {
		q    string
		want int
	}{
		{"pineapple", 2},
		{"pineapple rocket", 1},
		{`"rocket launches"`, 1},
		{`"launches rocket"`, 0},
		{"pineapple -rocket", 1},
		{"pineapple has:links", 1},
		{"pineapple -has:links", 1},
		{"(rocket OR smoothie) pineapple", 2},
		{"rocket OR smoothie", 2},
		{"pineapple from:" + DemoUsername, 2},
		{"pineapple from:rustacean_rae", 0},
		{"pineapple is:reply", 0},
		{"pineapple lang:en", 2},
		{"pineapple lang:ja", 0},
	}
	for _, tc := range cases {
		if got := count(tc.q); got != tc.want {
			t.Errorf("search %q = %d, want %d", tc.q, got, tc.want)
		}
	}
	if count("@"+DemoUsername) == 0 {
		t.Error("mentions of the demo account not found")
	}
	for _, bad := range []string{"", "-rust", "(rust", "rust)", `"open`, "foo:bar", "is:nonsense", "OR rust"} {
		r := e.get("/2/tweets/search/recent?query=" + url.QueryEscape(bad))
		wantProblem(t, r, 400, typeInvalidRequest)
	}
}

func TestSearchPaginationAndSinceID(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for i := 0; i < 25; i++ {
		ids = append(ids, e.post(fmt.Sprintf("zebra number %d", i)))
	}
	seen := map[string]bool{}
	tok := ""
	pages := 0
	for {
		p := "/2/tweets/search/recent?query=zebra&max_results=10"
		if tok != "" {
			p += "&next_token=" + tok
		}
		r := e.get(p)
		wantStatus(t, r, 200)
		pages++
		for _, d := range r.list() {
			id := d.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("id %s repeated across pages", id)
			}
			seen[id] = true
		}
		m := r.meta()
		if m["newest_id"] == nil || m["oldest_id"] == nil {
			t.Fatalf("meta = %v", m)
		}
		next, _ := m["next_token"].(string)
		if next == "" {
			break
		}
		tok = next
	}
	if len(seen) != 25 || pages != 3 {
		t.Fatalf("seen %d in %d pages", len(seen), pages)
	}
	r := e.get("/2/tweets/search/recent?query=zebra&since_id=" + ids[19])
	wantStatus(t, r, 200)
	if n := r.meta()["result_count"].(float64); n != 5 {
		t.Fatalf("since_id results = %v", n)
	}
	for _, bad := range []string{"max_results=9", "max_results=101", "max_results=x", "since_id=abc", "next_token=zz", "start_time=yesterday"} {
		wantProblem(t, e.get("/2/tweets/search/recent?query=zebra&"+bad), 400, typeInvalidRequest)
	}
	// Posts older than seven days are outside recent search.
	e.clock.Advance(8 * 24 * time.Hour)
	e.token, _, _ = e.s.IssueToken("", e.s.AllScopes())
	r = e.get("/2/tweets/search/recent?query=zebra")
	if n := r.meta()["result_count"].(float64); n != 0 {
		t.Fatalf("old posts still found: %v", n)
	}
	if _, has := r.body["data"]; has {
		t.Fatal("empty result carries data")
	}
}

func TestLikingUsers(t *testing.T) {
	e := newEnv(t)
	id := e.someTweet()
	wantStatus(t, e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": id}), 200)
	r := e.get("/2/tweets/" + id + "/liking_users?max_results=100")
	wantStatus(t, r, 200)
	found := false
	for _, u := range r.list() {
		if u.(map[string]any)["id"] == e.me {
			found = true
		}
	}
	if !found {
		t.Fatalf("demo user not among liking users: %s", r.raw)
	}
	if r := e.get("/2/tweets/3/liking_users"); r.body["errors"] == nil {
		t.Fatalf("missing tweet: %s", r.raw)
	}
	wantProblem(t, e.get("/2/tweets/"+id+"/liking_users?max_results=0"), 400, typeInvalidRequest)
}

func TestUnknownRoute(t *testing.T) {
	e := newEnv(t)
	wantProblem(t, e.get("/2/nothing/here"), http.StatusNotFound, typeBlank)
}

// TestPollFields: an expanded poll carries id and options, as X sends by
// default, and the fields poll.fields names; it is open until its end and
// closed after; an unknown poll field is refused.
func TestPollFields(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/2/tweets", map[string]any{"text": "Lunch?", "poll": map[string]any{"options": []string{"Now", "Later"}, "duration_minutes": 30}})
	wantStatus(t, r, 201)
	id := r.data()["id"].(string)
	poll := func(query string) map[string]any {
		t.Helper()
		r := e.get("/2/tweets/" + id + "?expansions=attachments.poll_ids&" + query)
		wantStatus(t, r, 200)
		polls, _ := r.body["includes"].(map[string]any)["polls"].([]any)
		if len(polls) != 1 {
			t.Fatalf("includes.polls = %s", r.raw)
		}
		return polls[0].(map[string]any)
	}
	if p := poll("tweet.fields=attachments"); p["id"] == nil || len(p["options"].([]any)) != 2 || p["duration_minutes"] != nil || p["voting_status"] != nil {
		t.Errorf("poll without poll.fields = %v, want id and options only", p)
	}
	all := "poll.fields=duration_minutes,end_datetime,id,options,voting_status"
	p := poll(all)
	if p["duration_minutes"] != float64(30) || p["end_datetime"] != testEpoch.Add(30*time.Minute).Format("2006-01-02T15:04:05.000Z") || p["voting_status"] != "open" {
		t.Errorf("poll with every field = %v, want 30 minutes, its end and open", p)
	}
	e.clock.Advance(31 * time.Minute)
	if p := poll(all); p["voting_status"] != "closed" {
		t.Errorf("poll after its end = %v, want closed", p)
	}
	wantProblem(t, e.get("/2/tweets/"+id+"?expansions=attachments.poll_ids&poll.fields=votes"), 400, typeInvalidRequest)
}

// TestPollVotes: votes the world's accounts cast show in the poll's
// options; a closed poll, an option it does not have, a post without a
// poll and no votes are refused.
func TestPollVotes(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/2/tweets", map[string]any{"text": "Tabs or spaces?", "poll": map[string]any{"options": []string{"Tabs", "Spaces"}, "duration_minutes": 30}})
	wantStatus(t, r, 201)
	id := r.data()["id"].(string)
	plain := e.do("POST", "/2/tweets", map[string]any{"text": "no poll here"})
	wantStatus(t, plain, 201)
	if err := e.s.Vote(id, 2, 7); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Vote(id, 1, 3); err != nil {
		t.Fatal(err)
	}
	got := e.get("/2/tweets/" + id + "?expansions=attachments.poll_ids")
	wantStatus(t, got, 200)
	opts := got.body["includes"].(map[string]any)["polls"].([]any)[0].(map[string]any)["options"].([]any)
	for i, want := range []float64{3, 7} {
		if v := opts[i].(map[string]any)["votes"]; v != want {
			t.Errorf("option %d has %v votes, want %v (%s)", i+1, v, want, got.raw)
		}
	}
	bad := []struct {
		name, id string
		pos      int
		n        int64
		want     string
	}{
		{"an option the poll lacks", id, 3, 1, "position 3"},
		{"no votes", id, 1, 0, "at least 1"},
		{"a post without a poll", plain.data()["id"].(string), 1, 1, "has no poll"},
	}
	for _, b := range bad {
		if err := e.s.Vote(b.id, b.pos, b.n); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: Vote = %v, want an error saying %q", b.name, err, b.want)
		}
	}
	e.clock.Advance(31 * time.Minute)
	if err := e.s.Vote(id, 1, 1); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a vote on a closed poll: %v, want refused", err)
	}
}
