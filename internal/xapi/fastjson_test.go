package xapi

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// checkFast asserts that whenever the fast decoder accepts body, encoding/json
// accepts it too and produces the identical value.
func checkFast[W any](t *testing.T, body []byte, fast func(*fastScan, *W) bool) bool {
	t.Helper()
	var a envelope[W]
	if !fastEnvelope(body, &a, fast) {
		return false
	}
	var b envelope[W]
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, body)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("decoders disagree on %q:\nfast %#v\nstd  %#v", body, a, b)
	}
	return true
}

const xsimTweetBody = `{"data":{"author_id":"1600000229651","conversation_id":"2123056994649636864","created_at":"2026-11-18T14:13:26.673Z","edit_history_tweet_ids":["2123056994649636864"],"entities":{"urls":[{"display_url":"example.com/blog/post","end":104,"expanded_url":"https://example.com/blog/post","start":75,"url":"https://example.com/blog/post"}]},"id":"2123056994649636864","lang":"en","possibly_sensitive":false,"public_metrics":{"bookmark_count":0,"impression_count":220,"like_count":1,"quote_count":0,"reply_count":0,"repost_count":0,"retweet_count":0},"text":"Our AI agents now draft replies \u0026 a human approves. \ud83d\ude80 \"quoted\"\n https://example.com/blog/post"},"includes":{"users":[{"created_at":"2015-10-23T12:00:00.000Z","description":"Founder, AI agents for ops teams.","id":"1600000229651","location":"New York","name":"Yara Haddad","profile_image_url":"https://pbs.twimg.com/profile_images/yc_yara_normal.jpg","protected":false,"public_metrics":{"followers_count":339,"following_count":37,"like_count":17,"listed_count":1,"media_count":0,"post_count":6,"tweet_count":6},"url":"","username":"yc_yara","verified":false,"verified_type":"none"}]}}`

func TestFastDecodeTakesTheFastPathOnXBodies(t *testing.T) {
	oneTweet := []string{
		xsimTweetBody,
		`{"data":{"id":"101","text":"hello","author_id":"9","attachments":{"media_keys":["3_1"],"poll_ids":[]},
		  "entities":{"hashtags":[{"start":0,"end":3,"tag":"go"}],"mentions":[{"start":4,"end":9,"username":"jack","id":"12"}],"cashtags":null},
		  "referenced_tweets":[{"type":"quoted","id":"5"}],"referenced_posts":null},"includes":{"users":[{"id":"9","name":"Nine","username":"nine"}]}}`,
		`{"data":null,"includes":null,"meta":null}`,
		" \n{\"data\":{\"id\":\"1\",\"text\":\"日本語 ✓\"}}\t",
	}
	for _, b := range oneTweet {
		if !checkFast(t, []byte(b), fastOneTweet) {
			t.Errorf("fast path refused a normal body: %s", b)
		}
	}
	if !checkFast(t, []byte(tweetsPage), fastTweets) {
		t.Errorf("fast path refused a page of posts")
	}
	if !checkFast(t, []byte(usersPage), fastUsers) {
		t.Errorf("fast path refused a page of users")
	}
	if !checkFast(t, []byte(`{"data":{"id":"42","name":"Me","username":"me","public_metrics":{"followers_count":3,"following_count":4,"tweet_count":5,"listed_count":0}}}`), fastOneUser) {
		t.Errorf("fast path refused a user")
	}
}

func TestFastDecodeFallsBackOnUnusualInput(t *testing.T) {
	cases := []string{
		`{"data":{"id":"1","id":"2"}}`,                   // duplicate key
		`{"data":{"ID":"1"}}`,                            // case-folded key
		`{"Data":{"id":"1"}}`,                            // case-folded envelope key
		`{"data":{"id":"1","text":"\ud800"}}`,            // lone surrogate
		"{\"data\":{\"id\":\"1\",\"text\":\"\xff\"}}",    // invalid UTF-8 in a decoded string
		`{"data":{"public_metrics":{"like_count":1.0}}}`, // non-integer
		`{"data":{"public_metrics":{"like_count":1e2}}}`,
		`{"data":{"id":"1"},"errors":[{"title":"x"}]}`,  // partial errors
		`{"data":{"id":"1"},"includes":{"media":[{}]}}`, // media expansion
		`{"data":{"id":"1"}} x`,                         // trailing garbage
		`{"data":{"id":"1"}`,                            // cut off
		`{"data":{"id":1}}`,                             // wrong type
		`{"data":{"created_at":"yesterday"}}`,           // bad time
		`[]`,
		``,
	}
	for _, b := range cases {
		if checkFast(t, []byte(b), fastOneTweet) {
			t.Errorf("fast path accepted %q; it must leave it to encoding/json", b)
		}
	}
}

// FuzzFastDecode is a differential test: the fast decoder may refuse any
// input, but what it accepts must decode exactly as encoding/json does.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{
		xsimTweetBody, tweetsPage, usersPage,
		`{"data":[{"id":"1","text":"a\\b\/c\u00e9","entities":{"urls":[null,{"start":-0,"end":2}]}}],"meta":{"result_count":1,"next_token":"x"}}`,
		`{"data":[],"includes":{"users":[],"tweets":[{"id":"2"}],"posts":null,"places":[{"id":"p"}]},"meta":{"newest_id":"9"}}`,
		`{"data":{"id":"1","unknown":{"deep":[1,2,{"x":"\ud800"}],"n":-1.5e-3},"possibly_sensitive":true}}`,
		`{"data":{"created_at":"2026-03-01T00:00:00Z","public_metrics":{"retweet_count":9223372036854775807}}}`,
		`{"data":{"id":"1","Text":"x"}}`,
		`{"data":{"\u0069d":"1"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkFast(t, body, fastOneTweet)
		checkFast(t, body, fastOneUser)
		checkFast(t, body, fastTweets)
		checkFast(t, body, fastUsers)
	})
}

// TestFastDecodeRandomBodies round-trips randomly generated posts and users
// through encoding/json's encoder: the fast path must accept every one and
// agree with encoding/json's decoder.
func TestFastDecodeRandomBodies(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pool := []rune("aZ09 _-/\\\"'<>&\n\t\x00\x1fé日本🙂\u2028\U0001F680")
	str := func() string {
		n := rng.IntN(12)
		r := make([]rune, n)
		for i := range r {
			r[i] = pool[rng.IntN(len(pool))]
		}
		return string(r)
	}
	strs := func() []string {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		return []string{str(), str()}
	}
	num := func() int64 { return rng.Int64N(1<<40) - 1<<20 }
	tweet := func() wireTweet {
		w := wireTweet{ID: str(), Text: str(), AuthorID: str(), Lang: str(), PossiblySensitive: rng.IntN(2) == 0,
			CreatedAt:           time.Unix(rng.Int64N(1<<31), rng.Int64N(1e9)).UTC(),
			PublicMetrics:       wireTweetMetrics{Retweet: num(), Repost: num(), Like: num(), Impression: num()},
			EditHistoryTweetIDs: strs(), EditHistoryPostIDs: strs()}
		if rng.IntN(2) == 0 {
			w.ReferencedTweets = []ReferencedTweet{{Type: str(), ID: str()}}
		}
		if rng.IntN(2) == 0 {
			w.Attachments = &Attachments{MediaKeys: strs(), PollIDs: strs()}
		}
		if rng.IntN(2) == 0 {
			w.Entities = &Entities{URLs: []URLEntity{{Start: int(num()), End: int(num()), URL: str(), ExpandedURL: str()}},
				Hashtags: []TagEntity{{Tag: str()}}, Mentions: []MentionEntity{{Username: str(), ID: str()}}}
		}
		return w
	}
	user := func() wireUser {
		return wireUser{ID: str(), Name: str(), Username: str(), Description: str(), Protected: rng.IntN(2) == 0,
			CreatedAt:     time.Unix(rng.Int64N(1<<31), 0).In(time.FixedZone("x", 3600)),
			PublicMetrics: wireUserMetrics{Followers: num(), Tweets: num(), Posts: num()}}
	}
	for i := 0; i < 500; i++ {
		one := envelope[*wireTweet]{Data: ptr(tweet()), Includes: wireIncludes{Users: []wireUser{user()}}}
		many := envelope[[]wireTweet]{Data: []wireTweet{tweet(), tweet()}, Meta: PageMeta{ResultCount: 2, NextToken: str()},
			Includes: wireIncludes{Tweets: []wireTweet{tweet()}, Posts: []wireTweet{tweet()}}}
		users := envelope[[]wireUser]{Data: []wireUser{user(), user()}}
		for _, v := range []struct {
			body []byte
			fast func([]byte) bool
		}{
			{mustJSON(t, one), func(b []byte) bool { return checkFast(t, b, fastOneTweet) }},
			{mustJSON(t, many), func(b []byte) bool { return checkFast(t, b, fastTweets) }},
			{mustJSON(t, users), func(b []byte) bool { return checkFast(t, b, fastUsers) }},
		} {
			if !v.fast(v.body) {
				t.Fatalf("fast path refused an encoding/json body: %s", v.body)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFoldEqualMatchesBytesEqualFold(t *testing.T) {
	names := []string{"id", "text", "public_metrics", "media_key", "url"}
	keys := []string{"id", "ID", "Id", "iD", "text", "TEXT", "public_metrics", "PUBLIC_METRICS", "public-metrics",
		"media_key", "media\x7fkey", "MEDIA@KEY", "media`key", "url", "URL", "ur", "\u212ad", "i\u0130", "", "_"}
	for _, k := range keys {
		for _, n := range names {
			if got, want := foldEqual([]byte(k), n), bytes.EqualFold([]byte(k), []byte(n)); got != want {
				t.Errorf("foldEqual(%q, %q) = %v, want %v", k, n, got, want)
			}
		}
	}
}
