package toolstest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// post decodes a post as the tools return it. xapi.Tweet cannot be used:
// it decodes X's wire form, which has no resolved author.
type post struct {
	ID       string     `json:"id"`
	Text     string     `json:"text"`
	AuthorID string     `json:"author_id"`
	Author   *xapi.User `json:"author"`
}

// tweetList decodes the data of tweet and user list tools.
type tweetList struct {
	Tweets []post         `json:"tweets"`
	Errors []xapi.Problem `json:"errors"`
	Users  []xapi.User    `json:"users"`
}

// requireAuthors checks that every post carries its author, resolved from
// X's includes, and that the author is the emulator's account with that id.
func requireAuthors(t *testing.T, w *xsim.World, tweets []post) {
	t.Helper()
	names := map[string]string{}
	for _, u := range w.Users {
		names[u.ID] = u.Username
	}
	for _, tw := range tweets {
		if tw.Author == nil {
			t.Fatalf("post %s has no author resolved from includes", tw.ID)
		}
		if tw.Author.ID != tw.AuthorID || tw.Author.Username != names[tw.AuthorID] || tw.Author.Username == "" {
			t.Fatalf("post %s: author %s/@%s, want %s/@%s", tw.ID, tw.Author.ID, tw.Author.Username, tw.AuthorID, names[tw.AuthorID])
		}
	}
}

// requirePage checks meta.pagination against the returned item count.
func requirePage(t *testing.T, r result, n int) {
	t.Helper()
	p := r.Meta.Pagination
	if p == nil {
		t.Fatalf("%s: list result without meta.pagination", r.tool)
	}
	if p.ResultCount != n {
		t.Fatalf("%s: pagination.result_count = %d, %d items returned", r.tool, p.ResultCount, n)
	}
	if p.HasMore != (p.NextToken != "") {
		t.Fatalf("%s: has_more=%t with next_token %q", r.tool, p.HasMore, p.NextToken)
	}
}

// requireClampNote checks that the clamp was reported.
func requireClampNote(t *testing.T, r result, field string, to int) {
	t.Helper()
	for _, n := range r.Meta.Notes {
		if strings.HasPrefix(n, field+" ") && strings.Contains(n, fmt.Sprintf("clamped to %d", to)) {
			return
		}
	}
	t.Fatalf("%s: no note that %s was clamped to %d; notes: %q", r.tool, field, to, r.Meta.Notes)
}

func requireNoNotes(t *testing.T, r result) {
	t.Helper()
	if len(r.Meta.Notes) != 0 {
		t.Fatalf("%s: unexpected notes %q", r.tool, r.Meta.Notes)
	}
}

// malformedIDs are ids X would never issue; every tool must name the field.
var malformedIDs = []string{"abc", "12a4", "-5", "1.5", "12345678901234567890", " 123"}

func requireRejectsIDs(t *testing.T, e *env, tool, field string, args func(id string) map[string]any) {
	t.Helper()
	for _, bad := range malformedIDs {
		e.call(tool, args(bad)).fails(t, apperr.InvalidInput).mentions(t, field)
	}
	e.call(tool, args("")).fails(t, apperr.InvalidInput).mentions(t, field)
}

func TestReadTools(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.Sim.World()
	demo := w.DemoUserID
	before := e.counters()
	t.Cleanup(func() {
		// No read tool may change anything on X.
		e.requireDelta(before, nil)
	})

	t.Run("get_tweet_by_id", func(t *testing.T) {
		want := e.demoTweet(nil)
		var tw post
		r := e.call("get_tweet_by_id", map[string]any{"tweet_id": want.ID}).ok(t, &tw)
		if tw.ID != want.ID || tw.Text != want.Text || tw.AuthorID != want.AuthorID {
			t.Fatalf("got %s/%q by %s, want %s/%q by %s", tw.ID, tw.Text, tw.AuthorID, want.ID, want.Text, want.AuthorID)
		}
		requireAuthors(t, w, []post{tw})
		if r.Meta.Pagination != nil {
			t.Fatal("a single-object read carries pagination")
		}
		requireRejectsIDs(t, e, "get_tweet_by_id", "tweet_id", func(id string) map[string]any { return map[string]any{"tweet_id": id} })
		e.call("get_tweet_by_id", map[string]any{"tweet_id": "1"}).fails(t, apperr.XNotFound)
	})

	t.Run("x_get_user_by_username", func(t *testing.T) {
		u := e.otherUser()
		var got xapi.User
		e.call("x_get_user_by_username", map[string]any{"username": "@" + strings.ToUpper(u.Username)}).ok(t, &got)
		if got.ID != u.ID || got.Username != u.Username || got.PublicMetrics.FollowersCount < u.FollowersBase {
			t.Fatalf("got %+v, want @%s (%s) with at least %d followers", got, u.Username, u.ID, u.FollowersBase)
		}
		e.call("x_get_user_by_username", map[string]any{"username": "  "}).fails(t, apperr.InvalidInput).mentions(t, "username")
		e.call("x_get_user_by_username", map[string]any{"username": "nobody_here_xyz"}).fails(t, apperr.XNotFound)
	})

	t.Run("x_get_user_by_id", func(t *testing.T) {
		u := e.otherUser()
		var got xapi.User
		e.call("x_get_user_by_id", map[string]any{"user_id": u.ID}).ok(t, &got)
		if got.ID != u.ID || got.Username != u.Username {
			t.Fatalf("got %s/@%s, want %s/@%s", got.ID, got.Username, u.ID, u.Username)
		}
		requireRejectsIDs(t, e, "x_get_user_by_id", "user_id", func(id string) map[string]any { return map[string]any{"user_id": id} })
		e.call("x_get_user_by_id", map[string]any{"user_id": "42"}).fails(t, apperr.XNotFound)
	})

	t.Run("x_get_users_by_ids", func(t *testing.T) {
		a, b := w.Users[1], w.Users[2]
		var got tweetList
		r := e.call("x_get_users_by_ids", map[string]any{"user_ids": []string{a.ID, "42", b.ID}}).ok(t, &got)
		ids := []string{}
		for _, u := range got.Users {
			ids = append(ids, u.ID)
		}
		slices.Sort(ids)
		want := []string{a.ID, b.ID}
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Fatalf("users %v, want %v", ids, want)
		}
		if len(got.Errors) != 1 || got.Errors[0].Value != "42" && got.Errors[0].ResourceID != "42" {
			t.Fatalf("errors %+v, want one problem about id 42", got.Errors)
		}
		_ = r
		e.call("x_get_users_by_ids", map[string]any{"user_ids": []string{}}).fails(t, apperr.InvalidInput).mentions(t, "user_ids")
		many := make([]string, 101)
		for i := range many {
			many[i] = fmt.Sprint(1000 + i)
		}
		e.call("x_get_users_by_ids", map[string]any{"user_ids": many}).fails(t, apperr.InvalidInput).mentions(t, "user_ids", "101")
		e.call("x_get_users_by_ids", map[string]any{"user_ids": []string{a.ID, "x1"}}).fails(t, apperr.InvalidInput).mentions(t, "user_ids[1]")
	})

	t.Run("x_search_tweets", func(t *testing.T) {
		var p1 tweetList
		r := e.call("x_search_tweets", map[string]any{"query": "golang", "max_results": 5}).ok(t, &p1)
		requireClampNote(t, r, "max_results", 10)
		requirePage(t, r, len(p1.Tweets))
		if len(p1.Tweets) != 10 || !r.Meta.Pagination.HasMore {
			t.Fatalf("first page: %d posts, has_more=%t; the demo world has more than 10 golang posts", len(p1.Tweets), r.Meta.Pagination.HasMore)
		}
		requireAuthors(t, w, p1.Tweets)
		for _, tw := range p1.Tweets {
			if !strings.Contains(strings.ToLower(tw.Text), "golang") {
				t.Fatalf("post %s does not match the query: %q", tw.ID, tw.Text)
			}
		}
		var p2 tweetList
		r2 := e.call("x_search_tweets", map[string]any{"query": "golang", "max_results": 10, "pagination_token": r.Meta.Pagination.NextToken}).ok(t, &p2)
		requireNoNotes(t, r2)
		requirePage(t, r2, len(p2.Tweets))
		for _, tw := range p2.Tweets {
			for _, seen := range p1.Tweets {
				if tw.ID == seen.ID {
					t.Fatalf("page 2 repeats post %s", tw.ID)
				}
			}
		}
		var newer tweetList
		e.call("x_search_tweets", map[string]any{"query": "golang", "max_results": 250, "since_id": p1.Tweets[0].ID}).ok(t, &newer)
		if len(newer.Tweets) != 0 {
			t.Fatalf("since_id of the newest match still returned %d posts", len(newer.Tweets))
		}
		r3 := e.call("x_search_tweets", map[string]any{"query": "golang", "max_results": 250})
		requireClampNote(t, r3, "max_results", 100)
		e.call("x_search_tweets", map[string]any{"query": "  "}).fails(t, apperr.InvalidInput).mentions(t, "query")
		e.call("x_search_tweets", map[string]any{"query": strings.Repeat("a", 513)}).fails(t, apperr.InvalidInput).mentions(t, "query")
		requireRejectsIDs(t, e, "x_search_tweets", "since_id", func(id string) map[string]any {
			if id == "" {
				return map[string]any{"query": "golang", "since_id": "x"}
			}
			return map[string]any{"query": "golang", "since_id": id}
		})
	})

	t.Run("x_get_user_mentions", func(t *testing.T) {
		var got tweetList
		r := e.call("x_get_user_mentions", map[string]any{"max_results": 1000}).ok(t, &got)
		requireClampNote(t, r, "max_results", 100)
		requirePage(t, r, len(got.Tweets))
		if len(got.Tweets) == 0 {
			t.Fatal("the demo world mentions the demo account, but no mentions came back")
		}
		requireAuthors(t, w, got.Tweets)
		for _, tw := range got.Tweets {
			if !strings.Contains(strings.ToLower(tw.Text), "@"+xsim.DemoUsername) {
				t.Fatalf("post %s does not mention @%s: %q", tw.ID, xsim.DemoUsername, tw.Text)
			}
		}
		requireRejectsIDs(t, e, "x_get_user_mentions", "since_id", func(id string) map[string]any {
			if id == "" {
				id = "zz"
			}
			return map[string]any{"since_id": id}
		})
	})

	t.Run("x_get_user_tweets", func(t *testing.T) {
		u := e.demoTweet(nil).AuthorID
		var got tweetList
		r := e.call("x_get_user_tweets", map[string]any{"user_id": u, "max_results": 2}).ok(t, &got)
		requireClampNote(t, r, "max_results", 5)
		requirePage(t, r, len(got.Tweets))
		if len(got.Tweets) == 0 {
			t.Fatal("no posts for an author who posted")
		}
		requireAuthors(t, w, got.Tweets)
		for _, tw := range got.Tweets {
			if tw.AuthorID != u {
				t.Fatalf("post %s is by %s, want %s", tw.ID, tw.AuthorID, u)
			}
		}
		requireRejectsIDs(t, e, "x_get_user_tweets", "user_id", func(id string) map[string]any { return map[string]any{"user_id": id} })
	})

	t.Run("x_get_home_timeline", func(t *testing.T) {
		var got tweetList
		r := e.call("x_get_home_timeline", map[string]any{"max_results": 5}).ok(t, &got)
		requireNoNotes(t, r)
		requirePage(t, r, len(got.Tweets))
		if len(got.Tweets) != 5 || !r.Meta.Pagination.HasMore {
			t.Fatalf("%d posts, has_more=%t; want a full page of 5 with more", len(got.Tweets), r.Meta.Pagination.HasMore)
		}
		requireAuthors(t, w, got.Tweets)
		r2 := e.call("x_get_home_timeline", map[string]any{"max_results": 101})
		requireClampNote(t, r2, "max_results", 100)
	})

	t.Run("x_get_followers", func(t *testing.T) {
		want := map[string]bool{}
		for _, f := range w.Follows {
			if f.To == demo {
				want[f.From] = true
			}
		}
		got := collectUsers(t, e, "x_get_followers", demo, len(want))
		if !mapsEqual(got, want) {
			t.Fatalf("followers %v, want %v", keys(got), keys(want))
		}
		r := e.call("x_get_followers", map[string]any{"user_id": demo, "max_results": 5000})
		requireClampNote(t, r, "max_results", 1000)
		requireRejectsIDs(t, e, "x_get_followers", "user_id", func(id string) map[string]any { return map[string]any{"user_id": id} })
	})

	t.Run("x_get_following", func(t *testing.T) {
		want := map[string]bool{}
		for _, f := range w.Follows {
			if f.From == demo {
				want[f.To] = true
			}
		}
		got := collectUsers(t, e, "x_get_following", demo, len(want))
		if !mapsEqual(got, want) {
			t.Fatalf("following %v, want %v", keys(got), keys(want))
		}
		requireRejectsIDs(t, e, "x_get_following", "user_id", func(id string) map[string]any { return map[string]any{"user_id": id} })
	})

	t.Run("x_get_liked_tweets", func(t *testing.T) {
		want := map[string]bool{}
		for _, l := range w.Likes {
			if l.From == demo {
				want[l.To] = true
			}
		}
		var got tweetList
		r := e.call("x_get_liked_tweets", map[string]any{"user_id": demo, "max_results": 100}).ok(t, &got)
		requirePage(t, r, len(got.Tweets))
		requireAuthors(t, w, got.Tweets)
		ids := map[string]bool{}
		for _, tw := range got.Tweets {
			ids[tw.ID] = true
		}
		if !mapsEqual(ids, want) {
			t.Fatalf("liked %v, want %v", keys(ids), keys(want))
		}
		requireRejectsIDs(t, e, "x_get_liked_tweets", "user_id", func(id string) map[string]any { return map[string]any{"user_id": id} })
	})

	t.Run("x_get_bookmarks", func(t *testing.T) {
		want := map[string]bool{}
		for _, b := range w.Bookmarks {
			if b.From == demo {
				want[b.To] = true
			}
		}
		var got tweetList
		r := e.call("x_get_bookmarks", map[string]any{"max_results": 500}).ok(t, &got)
		requireClampNote(t, r, "max_results", 100)
		requirePage(t, r, len(got.Tweets))
		requireAuthors(t, w, got.Tweets)
		ids := map[string]bool{}
		for _, tw := range got.Tweets {
			ids[tw.ID] = true
		}
		if !mapsEqual(ids, want) {
			t.Fatalf("bookmarks %v, want %v", keys(ids), keys(want))
		}
	})

	t.Run("x_get_tweet_liking_users", func(t *testing.T) {
		likers := map[string]map[string]bool{}
		for _, l := range w.Likes {
			if likers[l.To] == nil {
				likers[l.To] = map[string]bool{}
			}
			likers[l.To][l.From] = true
		}
		var tweet string
		for id, us := range likers {
			if len(us) >= 2 && (tweet == "" || len(us) > len(likers[tweet])) {
				tweet = id
			}
		}
		if tweet == "" {
			t.Fatal("no post with two likers in the demo world")
		}
		var got tweetList
		r := e.call("x_get_tweet_liking_users", map[string]any{"tweet_id": tweet}).ok(t, &got)
		requirePage(t, r, len(got.Users))
		ids := map[string]bool{}
		for _, u := range got.Users {
			ids[u.ID] = true
		}
		if !mapsEqual(ids, likers[tweet]) {
			t.Fatalf("liking users %v, want %v", keys(ids), keys(likers[tweet]))
		}
		r2 := e.call("x_get_tweet_liking_users", map[string]any{"tweet_id": tweet, "max_results": 101})
		requireClampNote(t, r2, "max_results", 100)
		requireRejectsIDs(t, e, "x_get_tweet_liking_users", "tweet_id", func(id string) map[string]any { return map[string]any{"tweet_id": id} })
	})

	t.Run("x_get_me", func(t *testing.T) {
		var me xapi.User
		e.call("x_get_me", map[string]any{}).ok(t, &me)
		if me.ID != demo || me.Username != xsim.DemoUsername {
			t.Fatalf("me = %s/@%s, want %s/@%s", me.ID, me.Username, demo, xsim.DemoUsername)
		}
		e.call("x_get_me", map[string]any{"verbose": true}).fails(t, apperr.InvalidInput).mentions(t, "verbose")
	})
}

// collectUsers pages through a user list with small pages and checks every
// page's pagination meta.
func collectUsers(t *testing.T, e *env, tool, userID string, total int) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	token := ""
	for page := 0; page < 20; page++ {
		args := map[string]any{"user_id": userID, "max_results": 5}
		if token != "" {
			args["pagination_token"] = token
		}
		var l tweetList
		r := e.call(tool, args).ok(t, &l)
		requirePage(t, r, len(l.Users))
		for _, u := range l.Users {
			if got[u.ID] {
				t.Fatalf("%s: user %s repeated across pages", tool, u.ID)
			}
			got[u.ID] = true
		}
		token = r.Meta.Pagination.NextToken
		if token == "" {
			if total > 5 && page == 0 {
				t.Fatalf("%s: %d users but the first page of 5 says there is no more", tool, total)
			}
			return got
		}
	}
	t.Fatalf("%s: pagination did not end", tool)
	return nil
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
