package xsim

import (
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Where each rule of the X of 2026 comes from: the changelog entry's date
// and title, or, for the 2026-04-16 entry whose title our sources do not
// give, its date and its words.
const (
	srcSpam    = `2026-02-23 "Addressing LLM-generated spam"`
	srcRemoved = `2026-04-16 (effective 2026-04-20) "Following, Likes, and Quote-Posts via the API have been removed from all self-serve tiers"`
	srcPrices  = `2026-04-16 prices: "summoned replies remain $0.01", Owned Reads $0.001 per resource`
	srcSearch  = `2026-05-04 search moved to a new index: keyword search drops reposts; min_likes:, min_replies:, min_reposts:`
)

// fixture is the scenario every rule runs against, built on an enterprise
// world before the row's access level is set.
type fixture struct {
	stranger, reposter string
	myPost             string // a post by the demo account
	plain              string // the stranger's post, which summons nobody
	mentionsMe         string // the stranger's post that @mentions the demo account
	quotesMe           string // the stranger's quote of myPost
	repliesToMe        string // the stranger's reply to myPost
	liked              string // a post the demo account liked
	myQuote            string // the demo account's quote of plain
	// Posts with a word of their own, for search.
	rareOrig, rareRepost, rareLiked, rareReplied, rareQuiet string
}

const rareWord = "quokkazanzibar"

func newFixture(t *testing.T, e *env) *fixture {
	t.Helper()
	f := &fixture{}
	demo := map[string]bool{}
	for _, id := range e.s.DemoAccounts() {
		demo[id] = true
	}
	for _, u := range e.s.World().Users {
		if demo[u.ID] || u.Protected {
			continue
		}
		if f.stranger == "" {
			f.stranger = u.ID
		} else if f.reposter == "" {
			f.reposter = u.ID
		}
	}
	postAs := func(user, text, inReplyTo string) string {
		t.Helper()
		id, err := e.s.PostAs(user, text, inReplyTo)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	strangerTok, _, _ := e.s.IssueToken(f.stranger, e.s.AllScopes())
	reposterTok, _, _ := e.s.IssueToken(f.reposter, e.s.AllScopes())
	created := func(r resp) string {
		t.Helper()
		if r.status != http.StatusCreated && r.status != http.StatusOK {
			t.Fatalf("fixture: %d %s", r.status, r.raw)
		}
		if id, _ := r.data()["id"].(string); id != "" {
			return id
		}
		return r.data()["rest_id"].(string)
	}
	f.myPost = e.post("a post of the demo account for the 2026 rules")
	f.plain = postAs(f.stranger, "thinking about build systems today", "")
	f.mentionsMe = postAs(f.stranger, "what do you think, @"+DemoUsername+"?", "")
	f.repliesToMe = postAs(f.stranger, "I agree with this", f.myPost)
	f.quotesMe = created(e.doTok("POST", "/2/tweets", strangerTok, map[string]any{"text": "worth reading", "quote_tweet_id": f.myPost}))
	f.liked = postAs(f.stranger, "a post the demo account likes", "")
	wantStatus(t, e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": f.liked}), http.StatusOK)
	wantStatus(t, e.do("POST", "/2/users/"+e.me+"/following", map[string]any{"target_user_id": f.stranger}), http.StatusOK)
	wantStatus(t, e.do("POST", "/2/users/"+e.me+"/bookmarks", map[string]any{"tweet_id": f.plain}), http.StatusOK)
	wantStatus(t, e.do("POST", "/2/lists", map[string]any{"name": "rules of 2026"}), http.StatusCreated)
	f.myQuote = created(e.do("POST", "/2/tweets", map[string]any{"text": "my quote of a stranger", "quote_tweet_id": f.plain}))
	// One of each of the other owned reads: a block (made on x.com), a
	// mute, a List followed and pinned, and a List of the stranger's with
	// the demo account in it.
	if err := e.s.Block(e.me, f.reposter); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("POST", "/2/users/"+e.me+"/muting", map[string]any{"target_user_id": f.reposter}), http.StatusOK)
	theirList := created(e.doTok("POST", "/2/lists", strangerTok, map[string]any{"name": "people I read"}))
	wantStatus(t, e.doTok("POST", "/2/lists/"+theirList+"/members", strangerTok, map[string]any{"user_id": e.me}), http.StatusOK)
	wantStatus(t, e.do("POST", "/2/users/"+e.me+"/followed_lists", map[string]any{"list_id": theirList}), http.StatusOK)
	wantStatus(t, e.do("POST", "/2/users/"+e.me+"/pinned_lists", map[string]any{"list_id": theirList}), http.StatusOK)
	wantStatus(t, e.doTok("POST", "/2/users/"+f.reposter+"/followed_lists", reposterTok, map[string]any{"list_id": theirList}), http.StatusOK)

	f.rareOrig = postAs(f.stranger, rareWord+" is the word of the day", "")
	f.rareRepost = created(e.doTok("POST", "/2/users/"+f.reposter+"/retweets", reposterTok, map[string]any{"tweet_id": f.rareOrig}))
	f.rareLiked = postAs(f.stranger, rareWord+" liked once", "")
	wantStatus(t, e.doTok("POST", "/2/users/"+f.reposter+"/likes", reposterTok, map[string]any{"tweet_id": f.rareLiked}), http.StatusOK)
	f.rareReplied = postAs(f.stranger, rareWord+" replied to once", "")
	postAs(f.reposter, "an answer", f.rareReplied)
	f.rareQuiet = postAs(f.stranger, rareWord+" nobody cared", "")
	return f
}

// search returns the ids a recent search finds.
func (e *env) search(t *testing.T, query string) []string {
	t.Helper()
	r := e.get("/2/tweets/search/recent?max_results=100&query=" + url.QueryEscape(query))
	wantStatus(t, r, http.StatusOK)
	var ids []string
	for _, d := range r.list() {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	slices.Sort(ids)
	return ids
}

// notPermitted is X's bare 403 body, exactly.
var notPermitted = map[string]any{"title": "Forbidden", "detail": "You are not permitted to perform this action.", "type": "about:blank", "status": float64(403)}

func TestRulesOf2026(t *testing.T) {
	reply := func(target func(*fixture) string, text string) func(*testing.T, *env, *fixture) resp {
		return func(t *testing.T, e *env, f *fixture) resp {
			return e.do("POST", "/2/tweets", map[string]any{"text": text, "reply": map[string]any{"in_reply_to_tweet_id": target(f)}})
		}
	}
	read := func(path func(*env, *fixture) string) func(*testing.T, *env, *fixture) resp {
		return func(t *testing.T, e *env, f *fixture) resp { return e.get(path(e, f)) }
	}
	mine := func(suffix string) func(*env, *fixture) string {
		return func(e *env, _ *fixture) string { return "/2/users/" + e.me + suffix }
	}
	searchFor := func(query string, want func(*fixture) []string) func(*testing.T, *env, *fixture) resp {
		return func(t *testing.T, e *env, f *fixture) resp {
			if got, w := e.search(t, query), want(f); !slices.Equal(got, sorted(w)) {
				t.Errorf("search %q = %v, want %v", query, got, sorted(w))
			}
			return resp{status: http.StatusOK}
		}
	}
	badQuery := func(query string) func(*testing.T, *env, *fixture) resp {
		return func(t *testing.T, e *env, f *fixture) resp {
			return e.get("/2/tweets/search/recent?query=" + url.QueryEscape(query))
		}
	}
	payPerUse, enterprise := AccessPayPerUse, AccessEnterprise
	cases := []struct {
		source string
		name   string
		access Access
		strict bool // Options.StrictSummons
		run    func(*testing.T, *env, *fixture) resp
		status int
		// bill is the units billed per kind by the request; a refusal
		// bills nothing and changes nothing.
		bill map[string]int64
	}{
		{srcSpam, "a reply to a post that does not summon the account is refused", payPerUse, false,
			reply(func(f *fixture) string { return f.plain }, "unsolicited thoughts"), 403, nil},
		{srcSpam, "a reply to a post that @mentions the account is summoned", payPerUse, false,
			reply(func(f *fixture) string { return f.mentionsMe }, "thanks for asking"), 201, map[string]int64{BillSummonedReply: 1}},
		{srcSpam, "a reply to a post that quotes one of the account's posts is summoned", payPerUse, false,
			reply(func(f *fixture) string { return f.quotesMe }, "thanks for sharing"), 201, map[string]int64{BillSummonedReply: 1}},
		{srcSpam, "a reply to a reply to one of the account's posts is summoned by default", payPerUse, false,
			reply(func(f *fixture) string { return f.repliesToMe }, "glad you agree"), 201, map[string]int64{BillSummonedReply: 1}},
		{srcSpam, "with StrictSummons a reply to a reply to one of the account's posts is refused", payPerUse, true,
			reply(func(f *fixture) string { return f.repliesToMe }, "glad you agree, strictly"), 403, nil},
		{srcSpam, "a reply to the account's own post is a thread, priced as a post", payPerUse, false,
			reply(func(f *fixture) string { return f.myPost }, "and one more thing"), 201, map[string]int64{BillContentCreate: 1}},
		{srcSpam, "enterprise: a reply to a post that does not summon the account is posted", enterprise, false,
			reply(func(f *fixture) string { return f.plain }, "enterprise thoughts"), 201, map[string]int64{BillContentCreate: 1}},

		{srcRemoved, "a like is refused", payPerUse, false, func(t *testing.T, e *env, f *fixture) resp {
			return e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": f.plain})
		}, 403, nil},
		{srcRemoved, "an unlike is refused and the like stays", payPerUse, false, func(t *testing.T, e *env, f *fixture) resp {
			r := e.do("DELETE", "/2/users/"+e.me+"/likes/"+f.liked, nil)
			if !e.s.liked(e.me, f.liked) {
				t.Error("the refused unlike removed the like")
			}
			return r
		}, 403, nil},
		{srcRemoved, "a follow is refused", payPerUse, false, func(t *testing.T, e *env, f *fixture) resp {
			return e.do("POST", "/2/users/"+e.me+"/following", map[string]any{"target_user_id": f.reposter})
		}, 403, nil},
		{srcRemoved, "an unfollow is refused and the follow stays", payPerUse, false, func(t *testing.T, e *env, f *fixture) resp {
			r := e.do("DELETE", "/2/users/"+e.me+"/following/"+f.stranger, nil)
			if !e.s.following(e.me, f.stranger) {
				t.Error("the refused unfollow removed the follow")
			}
			return r
		}, 403, nil},
		{srcRemoved, "a quote post is refused", payPerUse, false, func(t *testing.T, e *env, f *fixture) resp {
			return e.do("POST", "/2/tweets", map[string]any{"text": "a self-serve quote", "quote_tweet_id": f.plain})
		}, 403, nil},
		{srcRemoved, "deleting a quote post is still allowed", payPerUse, false, func(t *testing.T, e *env, f *fixture) resp {
			return e.do("DELETE", "/2/tweets/"+f.myQuote, nil)
		}, 200, map[string]int64{BillContentManage: 1}},
		{srcRemoved, "a repost is still allowed", payPerUse, false, func(t *testing.T, e *env, f *fixture) resp {
			return e.do("POST", "/2/users/"+e.me+"/retweets", map[string]any{"tweet_id": f.plain})
		}, 200, map[string]int64{BillInteraction: 1}},
		{srcRemoved, "enterprise: a like is made", enterprise, false, func(t *testing.T, e *env, f *fixture) resp {
			return e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": f.plain})
		}, 200, map[string]int64{BillInteraction: 1}},
		{srcRemoved, "enterprise: a follow is made", enterprise, false, func(t *testing.T, e *env, f *fixture) resp {
			return e.do("POST", "/2/users/"+e.me+"/following", map[string]any{"target_user_id": f.reposter})
		}, 200, map[string]int64{BillInteraction: 1}},
		{srcRemoved, "enterprise: a quote post is made", enterprise, false, func(t *testing.T, e *env, f *fixture) resp {
			return e.do("POST", "/2/tweets", map[string]any{"text": "an enterprise quote", "quote_tweet_id": f.plain})
		}, 201, map[string]int64{BillContentCreate: 1}},

		{srcPrices, "a summoned reply with a URL costs $0.010", payPerUse, false,
			reply(func(f *fixture) string { return f.mentionsMe }, "details at https://example.com/answer"), 201, map[string]int64{BillSummonedReply: 1}},
		{srcPrices, "a thread reply with a URL keeps the URL price", payPerUse, false,
			reply(func(f *fixture) string { return f.myPost }, "more at https://example.com/thread"), 201, map[string]int64{BillContentURL: 1}},
		{srcPrices, "enterprise: a reply with a URL keeps the URL price", enterprise, false,
			reply(func(f *fixture) string { return f.mentionsMe }, "enterprise answer https://example.com/e"), 201, map[string]int64{BillContentURL: 1}},
		{srcPrices, "the account's own posts are an owned read", payPerUse, false,
			read(mine("/tweets?max_results=5")), 200, map[string]int64{BillOwnedRead: 5}},
		{srcPrices, "the account's mentions are an owned read", payPerUse, false,
			read(mine("/mentions?max_results=5")), 200, map[string]int64{BillOwnedRead: 5}},
		{srcPrices, "the account's liked posts are an owned read", payPerUse, false,
			read(mine("/liked_tweets?max_results=5")), 200, map[string]int64{BillOwnedRead: 5}},
		{srcPrices, "the account's followers are an owned read", payPerUse, false,
			read(mine("/followers?max_results=5")), 200, map[string]int64{BillOwnedRead: 5}},
		{srcPrices, "the accounts it follows are an owned read", payPerUse, false,
			read(mine("/following?max_results=5")), 200, map[string]int64{BillOwnedRead: 5}},
		{srcPrices, "the account's bookmarks are an owned read", payPerUse, false,
			read(mine("/bookmarks?max_results=5")), 200, map[string]int64{BillOwnedRead: 5}},
		{srcPrices, "the account's lists are an owned read", payPerUse, false,
			read(mine("/owned_lists")), 200, map[string]int64{BillOwnedRead: 1}},
		{srcPrices, "the accounts it blocks are an owned read", payPerUse, false,
			read(mine("/blocking")), 200, map[string]int64{BillOwnedRead: 1}},
		{srcPrices, "the accounts it mutes are an owned read", payPerUse, false,
			read(mine("/muting")), 200, map[string]int64{BillOwnedRead: 1}},
		{srcPrices, "the lists it pinned are an owned read", payPerUse, false,
			read(mine("/pinned_lists")), 200, map[string]int64{BillOwnedRead: 1}},
		{srcPrices, "the lists it follows are an owned read", payPerUse, false,
			read(mine("/followed_lists")), 200, map[string]int64{BillOwnedRead: 1}},
		{srcPrices, "the lists it is a member of are an owned read", payPerUse, false,
			read(mine("/list_memberships")), 200, map[string]int64{BillOwnedRead: 1}},
		{srcPrices, "the lists another account follows are not an owned read", payPerUse, false,
			read(func(_ *env, f *fixture) string { return "/2/users/" + f.reposter + "/followed_lists" }), 200, map[string]int64{BillListRead: 1}},
		{srcPrices, "another account's posts are not an owned read", payPerUse, false,
			read(func(_ *env, f *fixture) string { return "/2/users/" + f.stranger + "/tweets?max_results=5" }), 200, map[string]int64{BillPostRead: 5}},
		{srcPrices, "enterprise: the account's own posts keep the post read price", enterprise, false,
			read(mine("/tweets?max_results=5")), 200, map[string]int64{BillPostRead: 5}},

		{srcSearch, "keyword search drops reposts", payPerUse, false, searchFor(rareWord, func(f *fixture) []string {
			return []string{f.rareOrig, f.rareLiked, f.rareReplied, f.rareQuiet}
		}), 200, nil},
		{srcSearch, "enterprise: keyword search drops reposts", enterprise, false, searchFor(rareWord, func(f *fixture) []string {
			return []string{f.rareOrig, f.rareLiked, f.rareReplied, f.rareQuiet}
		}), 200, nil},
		{srcSearch, "operators alone still find reposts", payPerUse, false, func(t *testing.T, e *env, f *fixture) resp {
			if got := e.search(t, "is:retweet from:"+f.reposter); !slices.Contains(got, f.rareRepost) {
				t.Errorf("is:retweet from:%s = %v, want the repost %s among them", f.reposter, got, f.rareRepost)
			}
			return resp{status: http.StatusOK}
		}, 200, nil},
		{srcSearch, "min_likes: keeps posts with at least that many likes", payPerUse, false, searchFor(rareWord+" min_likes:1", func(f *fixture) []string {
			return []string{f.rareLiked}
		}), 200, nil},
		{srcSearch, "min_replies: keeps posts with at least that many replies", payPerUse, false, searchFor(rareWord+" min_replies:1", func(f *fixture) []string {
			return []string{f.rareReplied}
		}), 200, nil},
		{srcSearch, "min_reposts: keeps posts with at least that many reposts", payPerUse, false, searchFor(rareWord+" min_reposts:1", func(f *fixture) []string {
			return []string{f.rareOrig}
		}), 200, nil},
		{srcSearch, "min_likes:0 keeps every post", payPerUse, false, searchFor(rareWord+" min_likes:0", func(f *fixture) []string {
			return []string{f.rareOrig, f.rareLiked, f.rareReplied, f.rareQuiet}
		}), 200, nil},
		{srcSearch, "a word for min_likes: is refused", payPerUse, false, badQuery(rareWord + " min_likes:many"), 400, nil},
		{srcSearch, "a negative min_replies: is refused", payPerUse, false, badQuery(rareWord + " min_replies:-1"), 400, nil},
		{srcSearch, "a fraction for min_reposts: is refused", payPerUse, false, badQuery(rareWord + " min_reposts:1.5"), 400, nil},
		{srcSearch, "a signed min_likes: is refused", payPerUse, false, badQuery(rareWord + " min_likes:+3"), 400, nil},
		{srcSearch, "an overflowing min_likes: is refused", payPerUse, false, badQuery(rareWord + " min_likes:99999999999999999999"), 400, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.StrictSummons = tc.strict })
			f := newFixture(t, e)
			if err := e.s.SetAccess(tc.access); err != nil {
				t.Fatal(err)
			}
			before, counters, world := e.s.Billing(), e.s.Counters(), e.s.World()
			r := tc.run(t, e, f)
			if r.status != tc.status {
				t.Fatalf("%s: status %d, want %d: %s", tc.source, r.status, tc.status, r.raw)
			}
			after := e.s.Billing()
			switch tc.status {
			case 403:
				if !reflect.DeepEqual(r.body, notPermitted) {
					t.Errorf("%s: body %s, want X's bare 403", tc.source, r.raw)
				}
				if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
					t.Errorf("content type %q", ct)
				}
				if after.Micros != before.Micros || !maps.Equal(e.s.Counters(), counters) ||
					len(e.s.World().Tweets) != len(world.Tweets) {
					t.Errorf("%s: a refusal changed the world or billed $%d micros", tc.source, after.Micros-before.Micros)
				}
			case 400:
				if p, _ := r.body["type"].(string); p != typeInvalidRequest || !strings.Contains(string(r.raw), "query") {
					t.Errorf("%s: body %s, want an invalid-request problem naming the query", tc.source, r.raw)
				}
			}
			if tc.bill == nil {
				return
			}
			var wantMicros int64
			for kind, units := range tc.bill {
				if got := after.Units[kind] - before.Units[kind]; got != units {
					t.Errorf("%s: %s units %d, want %d (billed %v)", tc.source, kind, got, units, diffUnits(before, after))
				}
				wantMicros += units * Prices()[kind]
			}
			if got := after.Micros - before.Micros; got != wantMicros {
				t.Errorf("%s: billed %d micro-dollars (%v), want %d", tc.source, got, diffUnits(before, after), wantMicros)
			}
		})
	}
}

func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func diffUnits(before, after BillingTotal) map[string]int64 {
	d := map[string]int64{}
	for k, v := range after.Units {
		if n := v - before.Units[k]; n != 0 {
			d[k] = n
		}
	}
	return d
}

func (s *Server) liked(user, tweet string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hasEdge(s.st.likesBy[user], user, tweet)
}

func (s *Server) following(from, to string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.isFollowing(from, to)
}

// TestOwnedReadRoutesAreTheTwelve pins the Owned Reads list to the twelve
// endpoints of the 2026-04-16 entry, each a route the emulator serves.
func TestOwnedReadRoutesAreTheTwelve(t *testing.T) {
	routes := New(Options{}).Routes()
	var got []string
	for _, suffix := range []string{"bookmarks", "blocking", "muting", "pinned_lists", "tweets", "mentions", "liked_tweets",
		"followers", "following", "owned_lists", "followed_lists", "list_memberships"} {
		key := "GET /2/users/{id}/" + suffix
		if !isOwnedReadRoute(key) {
			t.Errorf("%s is not an owned read", key)
		}
		if !slices.Contains(routes, key) {
			t.Errorf("%s is an owned read the emulator does not serve", key)
		}
		got = append(got, suffix)
	}
	for _, not := range []string{"GET /2/users/{id}", "GET /2/users/me", "GET /2/users/{id}/timelines/reverse_chronological", "POST /2/users/{id}/bookmarks"} {
		if isOwnedReadRoute(not) {
			t.Errorf("%s is an owned read", not)
		}
	}
	if len(got) != 12 {
		t.Fatalf("%d owned reads", len(got))
	}
}

func TestAccessLevels(t *testing.T) {
	e := newEnv(t)
	if got := e.s.AccessOf(e.me); got != AccessEnterprise {
		t.Fatalf("a world that says nothing: %q, want enterprise (today's behaviour)", got)
	}
	brand := e.s.DemoAccounts()["brand_b"]
	if err := e.s.SetUserAccess(brand, AccessPayPerUse); err != nil {
		t.Fatal(err)
	}
	if e.s.AccessOf(brand) != AccessPayPerUse || e.s.AccessOf(e.me) != AccessEnterprise {
		t.Fatal("a per-account level reached another account")
	}
	// The level is per account: the brand is refused, the demo account is
	// not.
	tok, _, _ := e.s.IssueToken(brand, e.s.AllScopes())
	target := e.someTweet()
	wantStatus(t, e.doTok("POST", "/2/users/"+brand+"/likes", tok, map[string]any{"tweet_id": target}), 403)
	wantStatus(t, e.do("POST", "/2/users/"+e.me+"/likes", map[string]any{"tweet_id": target}), 200)

	for _, bad := range []Access{"basic", "PAY_PER_USE", " enterprise"} {
		if err := e.s.SetAccess(bad); err == nil || !strings.Contains(err.Error(), "access level") {
			t.Errorf("SetAccess(%q) = %v, want an error naming the access level", bad, err)
		}
		if err := e.s.SetUserAccess(e.me, bad); err == nil {
			t.Errorf("SetUserAccess(%q) accepted", bad)
		}
	}
	if err := e.s.SetUserAccess("1", AccessPayPerUse); err == nil {
		t.Error("SetUserAccess of a user that does not exist accepted")
	}
	if a, err := ParseAccess("pay_per_use"); err != nil || a != AccessPayPerUse {
		t.Errorf("ParseAccess(pay_per_use) = %q, %v", a, err)
	}

	// Saved and loaded with the world; Options.Access overrides the world's.
	if err := e.s.SetAccess(AccessPayPerUse); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "world.json")
	if err := SaveWorld(path, e.s.World()); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWorld(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Access != AccessPayPerUse || w.AccessByUser[brand] != AccessPayPerUse {
		t.Fatalf("loaded access %q %v", w.Access, w.AccessByUser)
	}
	s := New(Options{World: w, Access: AccessEnterprise})
	if s.AccessOf(e.me) != AccessEnterprise || s.AccessOf(brand) != AccessPayPerUse {
		t.Fatalf("Options.Access: demo %q, brand %q", s.AccessOf(e.me), s.AccessOf(brand))
	}
	w.AccessByUser[brand] = "gold"
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "access_by_user") {
		t.Fatalf("a world with an unknown level: %v", err)
	}
	w.AccessByUser = map[string]Access{"1": AccessPayPerUse}
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "not a user") {
		t.Fatalf("a world with a level for nobody: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("New accepted Options.Access \"gold\"")
		}
	}()
	New(Options{Access: "gold"})
}
