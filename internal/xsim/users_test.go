package xsim

import (
	"net/http"
	"testing"
)

func TestUserLookups(t *testing.T) {
	e := newEnv(t)
	rae := e.userID("rustacean_rae")
	r := e.get("/2/users/me?user.fields=public_metrics,created_at,description")
	wantStatus(t, r, 200)
	if r.data()["username"] != DemoUsername || r.data()["id"] != e.me {
		t.Fatalf("me = %s", r.raw)
	}
	pm := r.data()["public_metrics"].(map[string]any)
	for _, k := range []string{"followers_count", "following_count", "tweet_count", "post_count", "listed_count"} {
		if _, ok := pm[k]; !ok {
			t.Errorf("public_metrics lacks %s", k)
		}
	}
	if r := e.get("/2/users/" + rae); r.data()["username"] != "rustacean_rae" {
		t.Fatalf("by id: %s", r.raw)
	}
	if r := e.get("/2/users/by/username/RUSTACEAN_RAE"); r.data()["id"] != rae {
		t.Fatalf("by username is case-insensitive: %s", r.raw)
	}
	r = e.get("/2/users?ids=" + rae + "," + e.me + ",9")
	if len(r.list()) != 2 || len(r.body["errors"].([]any)) != 1 {
		t.Fatalf("by ids: %s", r.raw)
	}
	if r := e.get("/2/users/by/username/nobody_here"); r.body["errors"] == nil || r.status != 200 {
		t.Fatalf("missing username: %s", r.raw)
	}
	if r := e.get("/2/users/12345"); r.body["errors"] == nil {
		t.Fatalf("missing id: %s", r.raw)
	}
	wantProblem(t, e.get("/2/users/by/username/bad-name!"), 400, typeInvalidRequest)
	wantProblem(t, e.get("/2/users/abc"), 400, typeInvalidRequest)
	r = e.get("/2/users/me?expansions=pinned_tweet_id&tweet.fields=created_at")
	if r.body["includes"] == nil {
		t.Fatalf("pinned tweet not expanded: %s", r.raw)
	}
}

func TestTimelines(t *testing.T) {
	e := newEnv(t)
	rae := e.userID("rustacean_rae")
	cases := []struct {
		path     string
		min, max string
	}{
		{"/2/users/" + e.me + "/tweets", "4", "101"},
		{"/2/users/" + e.me + "/mentions", "4", "101"},
		{"/2/users/" + e.me + "/timelines/reverse_chronological", "0", "101"},
		{"/2/users/" + e.me + "/liked_tweets", "4", "101"},
		{"/2/users/" + e.me + "/bookmarks", "0", "101"},
		{"/2/users/" + e.me + "/followers", "0", "1001"},
		{"/2/users/" + e.me + "/following", "0", "1001"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			r := e.get(tc.path)
			wantStatus(t, r, 200)
			if len(r.list()) == 0 {
				t.Fatalf("empty: %s", r.raw)
			}
			wantProblem(t, e.get(tc.path+"?max_results="+tc.min), 400, typeInvalidRequest)
			wantProblem(t, e.get(tc.path+"?max_results="+tc.max), 400, typeInvalidRequest)
		})
	}
	// Another user's home timeline and bookmarks are not ours to read.
	wantProblem(t, e.get("/2/users/"+rae+"/timelines/reverse_chronological"), 403, typeBlank)
	wantProblem(t, e.get("/2/users/"+rae+"/bookmarks"), 403, typeBlank)
	// Missing users answer 200 with errors.
	if r := e.get("/2/users/77/tweets"); r.status != 200 || r.body["errors"] == nil {
		t.Fatalf("missing user timeline: %s", r.raw)
	}
}

func TestTimelinePaginationCoversEverything(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{
		"/2/users/" + e.me + "/timelines/reverse_chronological?max_results=7",
		"/2/users/" + e.me + "/followers?max_results=5",
		"/2/users/" + e.me + "/liked_tweets?max_results=5",
	} {
		seen := map[string]bool{}
		next := ""
		for i := 0; i < 200; i++ {
			p := path
			if next != "" {
				p += "&pagination_token=" + next
			}
			r := e.get(p)
			wantStatus(t, r, 200)
			for _, d := range r.list() {
				id := d.(map[string]any)["id"].(string)
				if seen[id] {
					t.Fatalf("%s: %s repeated", path, id)
				}
				seen[id] = true
			}
			next, _ = r.meta()["next_token"].(string)
			if next == "" {
				break
			}
			if len(next) < 16 {
				t.Fatalf("token %q shorter than the spec's 16", next)
			}
		}
		if len(seen) < 5 {
			t.Fatalf("%s: only %d items", path, len(seen))
		}
	}
}

func TestUserTweetsExclude(t *testing.T) {
	e := newEnv(t)
	parent := e.someTweet()
	reply := e.do("POST", "/2/tweets", map[string]any{"text": "a reply", "reply": map[string]any{"in_reply_to_tweet_id": parent}})
	id := reply.data()["id"]
	// The newest posts come first, so the reply is on the first page
	// unless it is excluded.
	has := func(r resp) bool {
		for _, d := range r.body["data"].([]any) {
			if d.(map[string]any)["id"] == id {
				return true
			}
		}
		return false
	}
	all := e.get("/2/users/" + e.me + "/tweets?max_results=100")
	noReplies := e.get("/2/users/" + e.me + "/tweets?max_results=100&exclude=replies")
	if !has(all) || has(noReplies) {
		t.Fatalf("reply %v listed without exclude: %v, with exclude=replies: %v; want listed only without", id, has(all), has(noReplies))
	}
	wantProblem(t, e.get("/2/users/"+e.me+"/tweets?exclude=nope"), 400, typeInvalidRequest)
}

func TestEngagementWrites(t *testing.T) {
	e := newEnv(t)
	tid := e.someTweet()
	target := e.userID("hn_hank")
	if e.s.World() == nil {
		t.Fatal("no world")
	}
	// Make sure we start from "not following".
	e.do("DELETE", "/2/users/"+e.me+"/following/"+target, nil)
	e.s.ResetCounters()
	me := "/2/users/" + e.me
	steps := []struct {
		method, path string
		body         any
		key          string
		want         any
		counter      string
	}{
		{"POST", me + "/likes", map[string]any{"tweet_id": tid}, "liked", true, CountLikes},
		{"DELETE", me + "/likes/" + tid, nil, "liked", false, CountUnlikes},
		{"POST", me + "/following", map[string]any{"target_user_id": target}, "following", true, CountFollows},
		{"DELETE", me + "/following/" + target, nil, "following", false, CountUnfollows},
		{"POST", me + "/retweets", map[string]any{"tweet_id": tid}, "retweeted", true, CountRetweets},
		{"DELETE", me + "/retweets/" + tid, nil, "retweeted", false, CountUnretweets},
		{"POST", me + "/bookmarks", map[string]any{"tweet_id": tid}, "bookmarked", true, CountBookmarks},
		{"DELETE", me + "/bookmarks/" + tid, nil, "bookmarked", false, CountUnbookmarks},
	}
	for _, st := range steps {
		t.Run(st.method+" "+st.path, func(t *testing.T) {
			for i := 0; i < 2; i++ { // the second call is idempotent
				r := e.do(st.method, st.path, st.body)
				wantStatus(t, r, 200)
				if r.data()[st.key] != st.want {
					t.Fatalf("%s = %v: %s", st.key, r.data()[st.key], r.raw)
				}
			}
			if n := e.counter(st.counter); n != 1 {
				t.Fatalf("%s = %d, want exactly 1", st.counter, n)
			}
		})
	}
}

func TestEngagementWriteErrors(t *testing.T) {
	e := newEnv(t)
	other := e.userID("gopher_gabe")
	tid := e.someTweet()
	me := "/2/users/" + e.me
	cases := []struct {
		name, method, path string
		body               any
		status             int
		typ                string
	}{
		{"like for another user", "POST", "/2/users/" + other + "/likes", map[string]any{"tweet_id": tid}, 403, typeBlank},
		{"unlike for another user", "DELETE", "/2/users/" + other + "/likes/" + tid, nil, 403, typeBlank},
		{"follow for another user", "POST", "/2/users/" + other + "/following", map[string]any{"target_user_id": e.me}, 403, typeBlank},
		{"unfollow for another user", "DELETE", "/2/users/" + other + "/following/" + e.me, nil, 403, typeBlank},
		{"retweet for another user", "POST", "/2/users/" + other + "/retweets", map[string]any{"tweet_id": tid}, 403, typeBlank},
		{"bookmark for another user", "POST", "/2/users/" + other + "/bookmarks", map[string]any{"tweet_id": tid}, 403, typeBlank},
		{"like missing tweet", "POST", me + "/likes", map[string]any{"tweet_id": "99"}, 404, typeNotFound},
		{"unlike missing tweet", "DELETE", me + "/likes/99", nil, 404, typeNotFound},
		{"follow missing user", "POST", me + "/following", map[string]any{"target_user_id": "99"}, 404, typeNotFound},
		{"unfollow missing user", "DELETE", me + "/following/99", nil, 404, typeNotFound},
		{"retweet missing", "POST", me + "/retweets", map[string]any{"tweet_id": "99"}, 404, typeNotFound},
		{"unretweet missing", "DELETE", me + "/retweets/99", nil, 404, typeNotFound},
		{"bookmark missing", "POST", me + "/bookmarks", map[string]any{"tweet_id": "99"}, 404, typeNotFound},
		{"unbookmark missing", "DELETE", me + "/bookmarks/99", nil, 404, typeNotFound},
		{"follow self", "POST", me + "/following", map[string]any{"target_user_id": e.me}, 400, typeInvalidRequest},
		{"like bad body", "POST", me + "/likes", map[string]any{"tweet": tid}, 400, typeInvalidRequest},
		{"like bad id", "POST", me + "/likes", map[string]any{"tweet_id": "x"}, 400, typeInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, e.do(tc.method, tc.path, tc.body), tc.status, tc.typ)
		})
	}
	for k, v := range e.s.Counters() {
		if v != 0 {
			t.Errorf("counter %s = %d after refused writes", k, v)
		}
	}
}

func TestRetweetAppearsAndDeleteCascades(t *testing.T) {
	e := newEnv(t)
	id := e.post("original words here")
	other, _, _ := e.s.IssueToken(e.userID("gopher_gabe"), e.s.AllScopes())
	r := e.doTok("POST", "/2/users/"+e.userID("gopher_gabe")+"/retweets", other, map[string]any{"tweet_id": id})
	wantStatus(t, r, 200)
	rt := r.data()["rest_id"].(string)
	g := e.get("/2/tweets/" + rt + "?tweet.fields=referenced_tweets")
	if g.data()["text"] != "RT @"+DemoUsername+": original words here" {
		t.Fatalf("retweet text = %v", g.data()["text"])
	}
	wantStatus(t, e.do("DELETE", "/2/tweets/"+id, nil), 200)
	if g := e.get("/2/tweets/" + rt); g.body["errors"] == nil {
		t.Fatal("retweet of a deleted post survived")
	}
}

func TestSuspendedAccount(t *testing.T) {
	e := newEnv(t)
	e.s.SetSuspended(e.me, true)
	r := e.do("POST", "/2/tweets", map[string]any{"text": "can I post?"})
	wantProblem(t, r, http.StatusForbidden, typeBlank)
	if r.body["detail"] != DetailSuspended {
		t.Fatalf("detail = %v", r.body["detail"])
	}
	wantProblem(t, e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": e.someTweet()}), 403, typeBlank)
	wantStatus(t, e.get("/2/users/me"), 200) // reads still work
	e.s.SetSuspended(e.me, false)
	e.post("can I post?")
	if e.counter(CountTweetsCreated) != 1 {
		t.Fatal("suspended write applied")
	}
}

func TestClientNotEnrolled(t *testing.T) {
	e := newEnv(t)
	e.s.SetClientNotEnrolled(true)
	r := e.get("/2/users/me")
	wantProblem(t, r, 403, typeClientForbidden)
	if r.body["reason"] != "client-not-enrolled" || r.body["client_id"] != DefaultClientID {
		t.Fatalf("body = %s", r.raw)
	}
	e.s.SetClientNotEnrolled(false)
	wantStatus(t, e.get("/2/users/me"), 200)
}
