package xrequest

import (
	"net/url"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xapi"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		method, path string
		want         Effect
	}{
		{"POST", "/2/tweets", Effect{Kind: KindTweetCreate}},
		{"DELETE", "/2/tweets/123", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"POST", "/2/users/42/likes", Effect{Kind: KindLike, UserID: "42"}},
		{"DELETE", "/2/users/42/likes/123", Effect{Kind: KindUnlike, UserID: "42", TweetID: "123"}},
		{"POST", "/2/users/42/following", Effect{Kind: KindFollow, UserID: "42"}},
		{"DELETE", "/2/users/42/following/77", Effect{Kind: KindUnfollow, UserID: "42", TargetUserID: "77"}},
		{"POST", "/2/users/42/retweets", Effect{Kind: KindRetweet, UserID: "42"}},
		{"DELETE", "/2/users/42/retweets/123", Effect{Kind: KindUnretweet, UserID: "42", TweetID: "123"}},
		{"POST", "/2/users/42/bookmarks", Effect{Kind: KindBookmark, UserID: "42"}},
		{"DELETE", "/2/users/42/bookmarks/123", Effect{Kind: KindUnbookmark, UserID: "42", TweetID: "123"}},
		{"POST", "/2/media/upload", Effect{Kind: KindMediaUpload}},
		{"POST", "/2/media/upload/initialize", Effect{Kind: KindMediaUpload}},
		{"POST", "/2/media/upload/9/append", Effect{Kind: KindMediaUpload}},
		{"POST", "/2/media/upload/9/finalize", Effect{Kind: KindMediaUpload}},
		{"POST", "/2/chat/media/upload/initialize", Effect{Kind: KindMediaUpload}},
		{"POST", "/1.1/media/upload.json", Effect{Kind: KindMediaUpload}},

		// Legacy v1.1 writes must not slip past the hard rules.
		{"POST", "/1.1/statuses/update.json", Effect{Kind: KindTweetCreate}},
		{"POST", "/1.1/statuses/destroy/123.json", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"POST", "/1.1/statuses/retweet/123.json", Effect{Kind: KindRetweet, TweetID: "123"}},
		{"POST", "/1.1/statuses/unretweet/123.json", Effect{Kind: KindUnretweet, TweetID: "123"}},
		{"POST", "/1.1/favorites/create.json", Effect{Kind: KindLike}},
		{"POST", "/1.1/favorites/destroy.json", Effect{Kind: KindUnlike}},
		{"POST", "/1.1/friendships/create.json", Effect{Kind: KindFollow}},
		{"POST", "/1.1/friendships/destroy.json", Effect{Kind: KindUnfollow}},
		{"POST", "/1.1/statuses/destroy.json", Effect{Kind: KindTweetDelete}},
		{"POST", "/1.1/statuses/destroy", Effect{Kind: KindTweetDelete}},
		{"POST", "/1.1/statuses/destroy/123", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"POST", "/1.1/statuses/retweet.json", Effect{Kind: KindRetweet}},
		{"POST", "/1.1/statuses/unretweet.json", Effect{Kind: KindUnretweet}},
		{"POST", "/1.1/favorites/create/9.json", Effect{Kind: KindLike, TweetID: "9"}},
		{"POST", "/1.1/favorites/destroy/9.json", Effect{Kind: KindUnlike, TweetID: "9"}},
		{"POST", "/1.1/friendships/create/7.json", Effect{Kind: KindFollow, TargetUserID: "7"}},
		{"POST", "/1.1/friendships/destroy/7.json", Effect{Kind: KindUnfollow, TargetUserID: "7"}},
		{"POST", "/1.1/statuses/update_with_media.json", Effect{Kind: KindTweetCreate}},
		{"POST", "/1.1/Statuses/Destroy.JSON", Effect{Kind: KindTweetDelete}},
		// ".json" is dropped from every segment, wherever it is put.
		{"POST", "/1.1/statuses/destroy.json/123", Effect{Kind: KindTweetDelete, TweetID: "123"}},

		// Lenient spellings still classify, so hard rules cannot be dodged.
		{"delete", "/2/tweets/123", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"Delete", "/2/Tweets/123/", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"DELETE", "/2/tweets/%31%32%33", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"DELETE", "//2//tweets//123", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"DELETE", "/2/tweets/not-a-number", Effect{Kind: KindTweetDelete, TweetID: "not-a-number"}},
		{"DELETE", "/2/tweets/123.json", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		// Matrix parameters are refused by Check; Classify, which may see an
		// unchecked path, still cuts them off rather than missing a delete.
		{"DELETE", "/2;/tweets/123", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"DELETE", "/2/tweets;/123", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"DELETE", "/2/tweets;v=1/123", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"post", "/2/TWEETS", Effect{Kind: KindTweetCreate}},
		{"POST", "/2/users/42/LIKES/", Effect{Kind: KindLike, UserID: "42"}},

		// Reads.
		{"GET", "/2/tweets/123", Effect{Kind: KindRead}},
		{"GET", "/2/users/42/likes", Effect{Kind: KindRead}},
		{"get", "/anything", Effect{Kind: KindRead}},
		{"GET", "/1.1/media/upload.json", Effect{Kind: KindRead}},

		// Rows of X's table that no typed tool covers: listed, with no tool.
		{"PUT", "/2/tweets/123/hidden", Effect{Kind: KindOther, TweetID: "123"}},
		{"POST", "/2/media/metadata", Effect{Kind: KindOther}},

		// Others.
		{"DELETE", "/2/tweets", Effect{Kind: KindOther}},
		{"DELETE", "/2/tweets/search/webhooks/1", Effect{Kind: KindOther}},
		{"POST", "/2/tweets/123", Effect{Kind: KindOther}},
		{"POST", "/2/users/42/likes/123", Effect{Kind: KindOther}},
		{"DELETE", "/2/users/42/likes", Effect{Kind: KindOther}},
		{"POST", "/3/tweets", Effect{Kind: KindOther}},
		{"PATCH", "/2/tweets", Effect{Kind: KindOther}},
		{"", "/2/tweets", Effect{Kind: KindOther}},
		{"POST", "", Effect{Kind: KindOther}},
		{"POST", "/2/tweets/.json", Effect{Kind: KindOther}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			got := Classify(tt.method, tt.path)
			untyped := tt.path == "/2/tweets/123/hidden" || tt.path == "/2/media/metadata"
			if (got.Endpoint == "") != (tt.want.Kind == KindOther && !untyped || tt.want.Kind == KindRead) {
				t.Fatalf("Classify = %+v: Endpoint set for no row or missing for a row", got)
			}
			if want := kindTools()[got.Kind]; got.Tool != want {
				t.Fatalf("Classify = %+v: tool %q, want the kind's %q", got, got.Tool, want)
			}
			got.Endpoint, got.Tool = "", ""
			if got != tt.want {
				t.Fatalf("Classify = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestEndpointTableUnambiguous checks every pair of rows: no request may
// match two of them, so a request classifies to exactly one row or none.
// A placeholder overlaps any segment; fixed segments overlap when equal
// ignoring case.
func TestEndpointTableUnambiguous(t *testing.T) {
	rows := endpoints()
	seen := map[string]bool{}
	for i, a := range rows {
		if seen[a.name()] {
			t.Errorf("row %q appears twice", a.name())
		}
		seen[a.name()] = true
		if a.method != "POST" && a.method != "DELETE" && a.method != "PUT" {
			t.Errorf("row %q: method must be an upper-case write verb", a.name())
		}
		if !strings.HasPrefix(a.path, "/") || strings.Contains(a.path, ".json") || strings.Contains(a.path, ";") {
			t.Errorf("row %q: template must start with '/' and carry no .json suffix or ';'", a.name())
		}
		for _, seg := range templateSegments(a.path) {
			f, ok := placeholder(seg)
			if seg == "" || strings.ContainsAny(seg, "{}") && !ok {
				t.Errorf("row %q: bad segment %q", a.name(), seg)
			}
			if ok && f != fieldUser && f != fieldTweet && f != fieldTarget && f != fieldMedia && f != fieldList && f != fieldDM && f != fieldConv {
				t.Errorf("row %q: unknown placeholder %q", a.name(), seg)
			}
		}
		for _, b := range rows[i+1:] {
			if a.method == b.method && templatesOverlap(templateSegments(a.path), templateSegments(b.path)) {
				t.Errorf("rows %q and %q can match the same request", a.name(), b.name())
			}
		}
		// Every row's own template, with sample ids, matches it alone.
		sample := strings.NewReplacer("{user}", "1", "{tweet}", "2", "{target}", "3", "{media}", "4", "{list}", "5", "{dm_event}", "6", "{conversation}", "1-3").Replace(a.path)
		if got := matchRows(rows, a.method, pathSegments(sample)); len(got) != 1 || got[0] != i {
			t.Errorf("%s %s matches rows %v, want only %d", a.method, sample, got, i)
		}
		// Only a row of X's table that no typed tool covers (hiding a
		// reply) has none; it is still listed.
		if tool := (Effect{Kind: a.kind, Tool: a.tool}).Equivalent(); tool == "" && (a.kind != KindOther || a.tool != "" || !untypedRow(a)) {
			t.Errorf("row %q has kind %q with no equivalent tool", a.name(), a.kind)
		}
	}
}

func templatesOverlap(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		_, pa := placeholder(a[i])
		_, pb := placeholder(b[i])
		if !pa && !pb && !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestEquivalent names the typed tool and category for every kind, and the
// reply and quote variants of a create.
func TestEquivalent(t *testing.T) {
	tests := []struct {
		e    Effect
		tool string
	}{
		{Effect{Kind: KindTweetCreate}, "x_post_tweet"},
		{Effect{Kind: KindTweetCreate, Variant: VariantReply}, "x_reply_to_tweet"},
		{Effect{Kind: KindTweetCreate, Variant: VariantQuote}, "x_quote_tweet"},
		{Effect{Kind: KindTweetDelete}, "x_delete_tweet"},
		{Effect{Kind: KindLike}, "x_like_tweet"},
		{Effect{Kind: KindUnlike}, "x_unlike_tweet"},
		{Effect{Kind: KindFollow}, "x_follow_user"},
		{Effect{Kind: KindUnfollow}, "x_unfollow_user"},
		{Effect{Kind: KindRetweet}, "x_retweet"},
		{Effect{Kind: KindUnretweet}, "x_unretweet"},
		{Effect{Kind: KindBookmark}, "x_bookmark_tweet"},
		{Effect{Kind: KindUnbookmark}, "x_unbookmark_tweet"},
		{Effect{Kind: KindMediaUpload}, "x_upload_media"},
		{Effect{Kind: KindOther}, ""},
		{Effect{Kind: KindRead}, ""},
		{Effect{Kind: KindOther, Variant: VariantReply}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.e.Kind+"/"+tt.e.Variant, func(t *testing.T) {
			if tool := tt.e.Equivalent(); tool != tt.tool {
				t.Fatalf("Equivalent = %q, want %q", tool, tt.tool)
			}
		})
	}
}

// TestUniversalRequestEquivalentTool goes from a raw universal request to
// the typed tool whose policy it gets, including the forms whose meaning is
// in the body or the query.
func TestUniversalRequestEquivalentTool(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		tool string
	}{
		{"post", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"hi"}`}, "x_post_tweet"},
		{"reply", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"hi","reply":{"in_reply_to_tweet_id":"5"}}`}, "x_reply_to_tweet"},
		{"reply without id", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"hi","reply":{}}`}, "x_reply_to_tweet"},
		{"quote", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"hi","quote_tweet_id":"6"}`}, "x_quote_tweet"},
		{"reply and quote", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"hi","quote_tweet_id":"6","reply":{"in_reply_to_tweet_id":"5"}}`}, "x_reply_to_tweet"},
		{"null reply is a post", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"hi","reply":null}`}, "x_post_tweet"},
		{"v1.1 reply", Request{Method: "POST", Path: "/1.1/statuses/update.json", Query: []KV{{"status", "hi"}, {"in_reply_to_status_id", "5"}}}, "x_reply_to_tweet"},
		{"v1.1 quote", Request{Method: "POST", Path: "/1.1/statuses/update.json", Query: []KV{{"status", "hi"}, {"attachment_url", "https://x.com/a/status/6"}}}, "x_quote_tweet"},
		{"like", Request{Method: "POST", Path: "/2/users/1/likes", Body: `{"tweet_id":"2"}`}, "x_like_tweet"},
		{"unlike", Request{Method: "DELETE", Path: "/2/users/1/likes/2"}, "x_unlike_tweet"},
		{"retweet", Request{Method: "POST", Path: "/2/users/1/retweets", Body: `{"tweet_id":"2"}`}, "x_retweet"},
		{"unretweet", Request{Method: "DELETE", Path: "/2/users/1/retweets/2"}, "x_unretweet"},
		{"follow", Request{Method: "POST", Path: "/2/users/1/following", Body: `{"target_user_id":"3"}`}, "x_follow_user"},
		{"unfollow", Request{Method: "DELETE", Path: "/2/users/1/following/3"}, "x_unfollow_user"},
		{"bookmark", Request{Method: "POST", Path: "/2/users/1/bookmarks", Body: `{"tweet_id":"2"}`}, "x_bookmark_tweet"},
		{"unbookmark", Request{Method: "DELETE", Path: "/2/users/1/bookmarks/2"}, "x_unbookmark_tweet"},
		{"delete", Request{Method: "DELETE", Path: "/2/tweets/2"}, "x_delete_tweet"},
		{"v1.1 delete, id in query", Request{Method: "POST", Path: "/1.1/statuses/destroy.json", Query: []KV{{"id", "2"}}}, "x_delete_tweet"},
		{"media", Request{Method: "POST", Host: "upload.x.com", Path: "/2/media/upload/initialize", Body: `{}`}, "x_upload_media"},
		{"unknown write", Request{Method: "PUT", Path: "/2/tweets/2/hidden", Body: `{"hidden":true}`}, ""},
		{"read", Request{Method: "GET", Path: "/2/tweets/2"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tool := ClassifyChecked(mustCheck(t, tt.req)).Equivalent(); tool != tt.tool {
				t.Fatalf("Equivalent = %q, want %q", tool, tt.tool)
			}
		})
	}
}

func TestEffectMutates(t *testing.T) {
	if (Effect{Kind: KindRead}).Mutates() {
		t.Error("read mutates")
	}
	for _, k := range []string{KindTweetCreate, KindTweetDelete, KindLike, KindOther, KindMediaUpload} {
		if !(Effect{Kind: k}).Mutates() {
			t.Errorf("%s does not mutate", k)
		}
	}
}

func TestClassifyChecked(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want Effect
	}{
		{"like body", Request{Method: "POST", Path: "/2/users/42/likes", Body: `{"tweet_id":"123"}`},
			Effect{Kind: KindLike, UserID: "42", TweetID: "123"}},
		{"retweet numeric id", Request{Method: "POST", Path: "/2/users/42/retweets", Body: `{"tweet_id":12345678901234567890}`},
			Effect{Kind: KindRetweet, UserID: "42", TweetID: "12345678901234567890"}},
		{"bookmark body", Request{Method: "POST", Path: "/2/users/42/bookmarks", Body: `{"tweet_id":"5"}`},
			Effect{Kind: KindBookmark, UserID: "42", TweetID: "5"}},
		{"follow body", Request{Method: "POST", Path: "/2/users/42/following", Body: `{"target_user_id":"77"}`},
			Effect{Kind: KindFollow, UserID: "42", TargetUserID: "77"}},
		{"like no body", Request{Method: "POST", Path: "/2/users/42/likes"}, Effect{Kind: KindLike, UserID: "42"}},
		{"like wrong type", Request{Method: "POST", Path: "/2/users/42/likes", Body: `{"tweet_id":{"x":1}}`},
			Effect{Kind: KindLike, UserID: "42"}},
		{"like array body", Request{Method: "POST", Path: "/2/users/42/likes", Body: `["123"]`}, Effect{Kind: KindLike, UserID: "42"}},
		{"v1.1 favorite", Request{Method: "POST", Path: "/1.1/favorites/create.json", Query: []KV{{"id", "9"}}},
			Effect{Kind: KindLike, TweetID: "9"}},
		{"v1.1 unfavorite", Request{Method: "POST", Path: "/1.1/favorites/destroy.json", Query: []KV{{"id", "9"}}},
			Effect{Kind: KindUnlike, TweetID: "9"}},
		{"v1.1 follow", Request{Method: "POST", Path: "/1.1/friendships/create.json", Query: []KV{{"user_id", "7"}}},
			Effect{Kind: KindFollow, TargetUserID: "7"}},
		{"v1.1 unfollow", Request{Method: "POST", Path: "/1.1/friendships/destroy.json", Query: []KV{{"user_id", "7"}}},
			Effect{Kind: KindUnfollow, TargetUserID: "7"}},
		{"v1.1 retweet keeps path id", Request{Method: "POST", Path: "/1.1/statuses/retweet/3.json", Body: `{"tweet_id":"99"}`},
			Effect{Kind: KindRetweet, TweetID: "3"}},
		{"delete path id", Request{Method: "DELETE", Path: "/2/tweets/8"}, Effect{Kind: KindTweetDelete, TweetID: "8"}},
		{"read", Request{Method: "GET", Path: "/2/users/42/likes"}, Effect{Kind: KindRead}},

		// v1.1 forms with the id in the query as well as in the path.
		{"v1.1 delete query id", Request{Method: "POST", Path: "/1.1/statuses/destroy.json", Query: []KV{{"id", "8"}}},
			Effect{Kind: KindTweetDelete, TweetID: "8"}},
		{"v1.1 delete path id wins", Request{Method: "POST", Path: "/1.1/statuses/destroy/8.json", Query: []KV{{"id", "9"}}},
			Effect{Kind: KindTweetDelete, TweetID: "8"}},
		{"v1.1 retweet query id", Request{Method: "POST", Path: "/1.1/statuses/retweet.json", Query: []KV{{"id", "8"}}},
			Effect{Kind: KindRetweet, TweetID: "8"}},
		{"v1.1 unretweet query id", Request{Method: "POST", Path: "/1.1/statuses/unretweet.json", Query: []KV{{"id", "8"}}},
			Effect{Kind: KindUnretweet, TweetID: "8"}},
		{"v1.1 favorite path id", Request{Method: "POST", Path: "/1.1/favorites/create/8.json"},
			Effect{Kind: KindLike, TweetID: "8"}},
		{"v1.1 follow path id", Request{Method: "POST", Path: "/1.1/friendships/create/7.json"},
			Effect{Kind: KindFollow, TargetUserID: "7"}},

		// Replies and quotes stay tweet creates, with the variant and ids.
		{"reply", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"a","reply":{"in_reply_to_tweet_id":"5"}}`},
			Effect{Kind: KindTweetCreate, Variant: VariantReply, ReplyTo: "5"}},
		{"reply not an object", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"a","reply":"5"}`},
			Effect{Kind: KindTweetCreate, Variant: VariantReply}},
		{"quote", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"a","quote_tweet_id":6}`},
			Effect{Kind: KindTweetCreate, Variant: VariantQuote, QuoteOf: "6"}},
		{"reply that quotes", Request{Method: "POST", Path: "/2/tweets", Body: `{"quote_tweet_id":"6","reply":{"in_reply_to_tweet_id":"5"}}`},
			Effect{Kind: KindTweetCreate, Variant: VariantReply, ReplyTo: "5", QuoteOf: "6"}},
		{"v1.1 reply", Request{Method: "POST", Path: "/1.1/statuses/update.json", Query: []KV{{"in_reply_to_status_id", "5"}}},
			Effect{Kind: KindTweetCreate, Variant: VariantReply, ReplyTo: "5"}},
		{"v1.1 quote", Request{Method: "POST", Path: "/1.1/statuses/update.json", Query: []KV{{"attachment_url", "https://twitter.com/jack/status/20"}}},
			Effect{Kind: KindTweetCreate, Variant: VariantQuote, QuoteOf: "20"}},
		{"v1.1 quote of no status", Request{Method: "POST", Path: "/1.1/statuses/update.json", Query: []KV{{"attachment_url", "https://x.com/jack"}}},
			Effect{Kind: KindTweetCreate, Variant: VariantQuote}},
		{"plain post", Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"a"}`}, Effect{Kind: KindTweetCreate}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ClassifyChecked(mustCheck(t, tt.req))
			if want := kindTools()[got.Kind]; got.Tool != want {
				t.Fatalf("Classify = %+v: tool %q, want the kind's %q", got, got.Tool, want)
			}
			got.Endpoint, got.Tool = "", ""
			if got != tt.want {
				t.Fatalf("ClassifyChecked = %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := ClassifyChecked(nil); got.Kind != KindOther {
		t.Fatalf("ClassifyChecked(nil) = %+v", got)
	}
}

// TestTypedWritesAreClassified: every write a typed tool makes in X's
// endpoint table is a classification row, so a universal request to it
// gets that tool's policy and undo; x_mute_user is the example of a tool
// with no kind of its own.
func TestTypedWritesAreClassified(t *testing.T) {
	for _, r := range xapi.NewEndpoints().All() {
		if r.Kind == xapi.EffectRead || r.Tool == "" {
			continue
		}
		sample := strings.NewReplacer(":id", "1", ":source_user_id", "1", ":tweet_id", "2", ":source_tweet_id", "2", ":target_user_id", "3", ":user_id", "3", ":participant_id", "3", ":event_id", "4").Replace(r.Path)
		e := Classify(r.Method, sample)
		if r.BodyKey != "" {
			// A body-keyed row is told apart by its body alone.
			c, err := Check(Request{Method: r.Method, Path: sample, Body: `{"text":"t","` + r.BodyKey + `":{"previous_post_id":"2"}}`})
			if err != nil {
				t.Fatal(err)
			}
			e = ClassifyChecked(c)
		}
		if e.Tool != r.Tool || e.Endpoint == "" {
			t.Errorf("%s %s classifies as %+v, want the row of %s", r.Method, sample, e, r.Tool)
		}
	}
	c, err := Check(Request{Method: "POST", Path: "/2/users/42/muting", Body: `{"target_user_id":"77"}`})
	if err != nil {
		t.Fatal(err)
	}
	e := ClassifyChecked(c)
	if e.Equivalent() != "x_mute_user" || e.TargetUserID != "77" || e.UserID != "42" {
		t.Fatalf("raw mute classifies as %+v (equivalent %q)", e, e.Equivalent())
	}
	if ep, ok := e.Same(xapi.NewEndpoints()); !ok || ep.Undo == nil || ep.Undo.Tool != "x_unmute_user" {
		t.Fatalf("raw mute's row %+v, %v: want the undo x_unmute_user", ep, ok)
	}
	// A raw direct message is x_send_dm to the user its path names, and a
	// raw delete of one is x_delete_dm of the event its path names.
	if e := Classify("POST", "/2/dm_conversations/with/77/messages"); e.Equivalent() != "x_send_dm" || e.TargetUserID != "77" {
		t.Errorf("raw direct message classifies as %+v (equivalent %q)", e, e.Equivalent())
	}
	if e := Classify("DELETE", "/2/dm_events/88"); e.Equivalent() != "x_delete_dm" || e.DMEventID != "88" {
		t.Errorf("raw delete of a direct message classifies as %+v (equivalent %q)", e, e.Equivalent())
	}
}

// TestListWritesNameTheListAndMember: a universal List write is the typed
// List tool's, with the List from the path and the member from the path
// or the body, which is what its undo needs.
func TestListWritesNameTheListAndMember(t *testing.T) {
	for _, tt := range []struct {
		method, path, body string
		tool, list, member string
	}{
		{"POST", "/2/lists", `{"name":"x"}`, "x_list_create", "", ""},
		{"DELETE", "/2/lists/5", "", "x_list_delete", "5", ""},
		{"POST", "/2/lists/5/members", `{"user_id":"77"}`, "x_list_add_member", "5", "77"},
		{"DELETE", "/2/lists/5/members/77", "", "x_list_remove_member", "5", "77"},
	} {
		c, err := Check(Request{Method: tt.method, Path: tt.path, Body: tt.body})
		if err != nil {
			t.Fatal(err)
		}
		e := ClassifyChecked(c)
		if e.Equivalent() != tt.tool || e.ListID != tt.list || e.TargetUserID != tt.member {
			t.Errorf("%s %s classifies as %+v (equivalent %q), want %s on list %q member %q",
				tt.method, tt.path, e, e.Equivalent(), tt.tool, tt.list, tt.member)
		}
	}
}

// TestEditBodyIsAnEdit: a POST /2/tweets whose body has edit_options has
// x_edit_tweet's effect and names the post it edits; the same request
// without it, or with it null, is a post.
func TestEditBodyIsAnEdit(t *testing.T) {
	tests := []struct {
		body, tool, tweet string
	}{
		{`{"text":"new words","edit_options":{"previous_post_id":"42"}}`, "x_edit_tweet", "42"},
		{`{"edit_options":{"previous_post_id":"42"},"text":"new words","media":{"media_ids":["7"]}}`, "x_edit_tweet", "42"},
		{`{"text":"new words","edit_options":null}`, "x_post_tweet", ""},
		{`{"text":"new words"}`, "x_post_tweet", ""},
		{`{"text":"new words","reply":{"in_reply_to_tweet_id":"9"}}`, "x_reply_to_tweet", ""},
	}
	for _, tc := range tests {
		c, err := Check(Request{Method: "POST", Path: "/2/tweets", Body: tc.body})
		if err != nil {
			t.Fatal(err)
		}
		e := ClassifyChecked(c)
		if got := e.Equivalent(); got != tc.tool || e.TweetID != tc.tweet {
			t.Errorf("%s: equivalent %q, tweet %q; want %q, %q", tc.body, got, e.TweetID, tc.tool, tc.tweet)
		}
	}
	if e := Classify("POST", "/2/tweets"); e.Tool != "x_post_tweet" {
		t.Errorf("without a body POST /2/tweets is %q", e.Tool)
	}
}

// TestMessagesAndDeletesInEverySpelling: every route that sends a direct
// message is x_send_dm's effect and every route that deletes is the typed
// delete's, whatever the spelling (v2 or v1.1, letter case, a trailing
// slash, a ".json" suffix, percent-encoding); a write no row lists is
// unlisted, so a person sees it. A spelling Check cannot read one way
// only (a double slash, a dot segment, a matrix parameter) is refused.
func TestMessagesAndDeletesInEverySpelling(t *testing.T) {
	tests := []struct {
		method, path, query, body string
		tool                      string
	}{
		{"POST", "/2/dm_conversations/with/77/messages", "", `{"text":"hi"}`, "x_send_dm"},
		{"POST", "/2/dm_conversations/5-77/messages", "", `{"text":"hi"}`, "x_send_dm"},
		{"POST", "/2/DM_Conversations/5-77/Messages/", "", `{"text":"hi"}`, "x_send_dm"},
		{"POST", "/2/dm_conversations/5-77/messages.json", "", `{"text":"hi"}`, "x_send_dm"},
		{"POST", "/2/%64m_conversations/5-77/%6Dessages", "", `{"text":"hi"}`, "x_send_dm"},
		{"POST", "/2/dm_conversations", "", `{"conversation_type":"Group","participant_ids":["5","77"],"message":{"text":"hi"}}`, "x_send_dm"},
		{"POST", "/2/dm_conversations/", "", `{"conversation_type":"Group"}`, "x_send_dm"},
		{"POST", "/2/dm_conversations.json", "", `{}`, "x_send_dm"},
		{"POST", "/1.1/direct_messages/events/new.json", "", `{"event":{"type":"message_create"}}`, "x_send_dm"},
		{"POST", "/1.1/Direct_Messages/Events/New", "", `{}`, "x_send_dm"},
		{"POST", "/1.1/direct_messages/new.json", "user_id=77&text=hi", "", "x_send_dm"},
		{"DELETE", "/1.1/direct_messages/events/destroy.json", "id=88", "", "x_delete_dm"},
		{"POST", "/1.1/direct_messages/destroy.json", "id=88", "", "x_delete_dm"},
		{"DELETE", "/2/dm_events/88/", "", "", "x_delete_dm"},
		{"POST", "/1.1/lists/destroy.json", "list_id=5", "", "x_list_delete"},
		{"POST", "/1.1/LISTS/DESTROY/", "list_id=5", "", "x_list_delete"},
		{"POST", "/1.1/lists/destroy.json", "slug=team&owner_screen_name=demo", "", "x_list_delete"},
		{"DELETE", "/2/Lists/5.json", "", "", "x_list_delete"},
		{"POST", "/1.1/lists/create.json", "name=team", "", "x_list_create"},
		{"POST", "/1.1/lists/members/create.json", "list_id=5&user_id=77", "", "x_list_add_member"},
		{"POST", "/1.1/lists/members/destroy.json", "list_id=5&user_id=77", "", "x_list_remove_member"},
		{"POST", "/1.1/statuses/destroy/20.json", "", "", "x_delete_tweet"},
		{"DELETE", "/2/tweets/20/", "", "", "x_delete_tweet"},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		var kvs []KV
		for k, vs := range q {
			kvs = append(kvs, KV{Key: k, Value: vs[0]})
		}
		c, err := Check(Request{Method: tt.method, Path: tt.path, Query: kvs, Body: tt.body})
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.path, err)
		}
		e := ClassifyChecked(c)
		if got := e.Equivalent(); got != tt.tool || !e.Listed() {
			t.Errorf("%s %s?%s classifies as %+v (equivalent %q), want %s", tt.method, tt.path, tt.query, e, got, tt.tool)
		}
	}
	ids := map[string]Effect{
		"POST /2/dm_conversations/5-77/messages":           {ConversationID: "5-77"},
		"POST /2/dm_conversations/with/77/messages":        {TargetUserID: "77"},
		"DELETE /1.1/direct_messages/events/destroy?id=88": {DMEventID: "88"},
		"POST /1.1/lists/destroy?list_id=5":                {ListID: "5"},
	}
	for req, want := range ids {
		method, rest, _ := strings.Cut(req, " ")
		path, query, _ := strings.Cut(rest, "?")
		k, v, _ := strings.Cut(query, "=")
		var kvs []KV
		if k != "" {
			kvs = []KV{{Key: k, Value: v}}
		}
		c, err := Check(Request{Method: method, Path: path, Query: kvs, Body: `{"text":"hi"}`})
		if method == "DELETE" {
			c, err = Check(Request{Method: method, Path: path, Query: kvs})
		}
		if err != nil {
			t.Fatal(err)
		}
		e := ClassifyChecked(c)
		if e.ConversationID != want.ConversationID || e.TargetUserID != want.TargetUserID || e.DMEventID != want.DMEventID || e.ListID != want.ListID {
			t.Errorf("%s names %+v, want %+v", req, e, want)
		}
	}

	// Writes no row lists: unlisted, with no typed tool.
	for _, tt := range []struct{ method, path string }{
		{"POST", "/1.1/lists/members/destroy_all.json"},
		{"POST", "/1.1/blocks/destroy.json"},
		{"POST", "/2/direct_messages/events/new"},
		{"POST", "/1.1/dm_conversations/5-77/messages"},
		{"PUT", "/2/lists/5"},
		{"POST", "/2/tweets/search/stream/rules"},
	} {
		c, err := Check(Request{Method: tt.method, Path: tt.path, Body: `{}`})
		if err != nil {
			t.Fatal(err)
		}
		if e := ClassifyChecked(c); e.Listed() || e.Equivalent() != "" {
			t.Errorf("%s %s classifies as %+v, want an unlisted write", tt.method, tt.path, e)
		}
	}
	// A write X's table lists with no typed tool is listed, with none.
	c, err := Check(Request{Method: "PUT", Path: "/2/tweets/20/hidden", Body: `{"hidden":true}`})
	if err != nil {
		t.Fatal(err)
	}
	if e := ClassifyChecked(c); !e.Listed() || e.Equivalent() != "" || e.Endpoint != "PUT /2/tweets/{tweet}/hidden" {
		t.Errorf("hiding a reply classifies as %+v, want the listed row with no typed tool", e)
	}

	// Ambiguous spellings never reach the classifier.
	for _, p := range []string{"/2//dm_conversations/5-77/messages", "/2/dm_conversations/./5-77/messages",
		"/2/dm_conversations;x=1/5-77/messages", "/2/dm_conversations/%2e%2e/5-77/messages", "//2/dm_conversations"} {
		if _, err := Check(Request{Method: "POST", Path: p, Body: `{}`}); err == nil {
			t.Errorf("path %q is accepted", p)
		}
	}
}

// untypedRow reports whether row comes from a write of X's endpoint table
// that names no typed tool.
func untypedRow(row endpoint) bool {
	for _, r := range v2Rows(xapi.NewEndpoints()) {
		if r.name() == row.name() {
			return r.tool == ""
		}
	}
	return false
}

// TestListPinsAndFollowsAreListed: pinning and following a List are rows
// of the table (so a person is not asked to judge an unknown write, and
// the ledger prices them as List writes); a path that names the List
// names it in the effect.
func TestListPinsAndFollowsAreListed(t *testing.T) {
	for _, tt := range []struct{ method, path, body, list string }{
		{"POST", "/2/users/9/pinned_lists", `{"list_id":"5"}`, ""},
		{"DELETE", "/2/users/9/pinned_lists/5", "", "5"},
		{"POST", "/2/users/9/followed_lists", `{"list_id":"5"}`, ""},
		{"DELETE", "/2/users/9/followed_lists/5", "", "5"},
	} {
		c, err := Check(Request{Method: tt.method, Path: tt.path, Body: tt.body})
		if err != nil {
			t.Fatal(err)
		}
		e := ClassifyChecked(c)
		if !e.Listed() || e.ListID != tt.list || e.UserID != "9" {
			t.Errorf("%s %s classifies as %+v, want a listed write on list %q by user 9", tt.method, tt.path, e, tt.list)
		}
	}
}
