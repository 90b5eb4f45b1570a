package actions

import (
	"encoding/json"
	"testing"

	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestUniversalRequestsHaveTheTypedIntent: every typed tool a universal
// request can do the work of has the same intent key as that request, on
// any host, and the request loses it as soon as it asks for more.
func TestUniversalRequestsHaveTheTypedIntent(t *testing.T) {
	acts := map[string]*gateway.Action{}
	for _, a := range All(Deps{}) {
		acts[a.Tool] = a
	}
	key := func(tool string, params any) string {
		t.Helper()
		b, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		k, err := gateway.IntentKey(acts[tool], b)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	raw := func(method, host, path, body string) RawParams {
		return RawParams{Method: method, Host: host, Path: path, Body: body}
	}
	tests := []struct {
		tool  string
		typed any
		raw   RawParams
	}{
		{"x_post_tweet", PostParams{Text: "t", MediaIDs: []string{"5", "6"}}, raw("POST", "", "/2/tweets", `{"text":"t","media":{"media_ids":["5","6"]}}`)},
		{"x_reply_to_tweet", PostParams{Text: "t", InReplyToID: "7"}, raw("POST", "upload.x.com", "/2/tweets", `{"text":"t","reply":{"in_reply_to_tweet_id":"7"}}`)},
		{"x_quote_tweet", PostParams{Text: "t", QuotedTweetID: "7"}, raw("POST", "upload.twitter.com", "/2/tweets", `{"quote_tweet_id":"7","text":"t"}`)},
		{"x_edit_tweet", EditParams{TweetID: "7", Text: "t"}, raw("POST", "", "/2/tweets", `{"edit_options":{"previous_post_id":"7"},"text":"t"}`)},
		{"x_delete_tweet", TweetIDParams{TweetID: "7"}, raw("DELETE", "", "/2/tweets/7", "")},
		{"x_like_tweet", TweetIDParams{TweetID: "7"}, raw("POST", "", "/2/users/1/likes", `{"tweet_id":"7"}`)},
		{"x_unlike_tweet", TweetIDParams{TweetID: "7"}, raw("DELETE", "", "/2/users/1/likes/7", "")},
		{"x_retweet", TweetIDParams{TweetID: "7"}, raw("POST", "", "/2/users/1/retweets", `{"tweet_id":"7"}`)},
		{"x_unretweet", TweetIDParams{TweetID: "7"}, raw("DELETE", "", "/2/users/1/retweets/7", "")},
		{"x_bookmark_tweet", TweetIDParams{TweetID: "7"}, raw("POST", "", "/2/users/1/bookmarks", `{"tweet_id":"7"}`)},
		{"x_unbookmark_tweet", TweetIDParams{TweetID: "7"}, raw("DELETE", "", "/2/users/1/bookmarks/7", "")},
		{"x_follow_user", UserIDParams{TargetUserID: "9"}, raw("POST", "", "/2/users/1/following", `{"target_user_id":"9"}`)},
		{"x_unfollow_user", UserIDParams{TargetUserID: "9"}, raw("DELETE", "", "/2/users/1/following/9", "")},
		{"x_mute_user", UserIDParams{TargetUserID: "9"}, raw("POST", "", "/2/users/1/muting", `{"target_user_id":"9"}`)},
		{"x_unmute_user", UserIDParams{TargetUserID: "9"}, raw("DELETE", "", "/2/users/1/muting/9", "")},
		{"x_list_delete", ListIDParams{ListID: "5"}, raw("DELETE", "", "/2/lists/5", "")},
		{"x_list_add_member", ListMemberParams{ListID: "5", UserID: "9"}, raw("POST", "", "/2/lists/5/members", `{"user_id":"9"}`)},
		{"x_list_remove_member", ListMemberParams{ListID: "5", UserID: "9"}, raw("DELETE", "", "/2/lists/5/members/9", "")},
		{"x_send_dm", DMParams{ParticipantID: "9", Text: "hi", MediaID: "5"}, raw("POST", "", "/2/dm_conversations/with/9/messages", `{"attachments":[{"media_id":"5"}],"text":"hi"}`)},
		{"x_delete_dm", DMEventIDParams{DMEventID: "8"}, raw("DELETE", "", "/2/dm_events/8", "")},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.tool] = true
		universal := map[string]string{"POST": "x_post", "DELETE": "x_delete"}[tt.raw.Method]
		if got, want := key(universal, tt.raw), key(tt.tool, tt.typed); got != want {
			t.Errorf("%s %s %s: intent key differs from %s's", universal, tt.raw.Method, tt.raw.Path, tt.tool)
		}
	}
	for tool, shape := range paramShapes() {
		if shape != shapeNone && !covered[tool] {
			t.Errorf("%s can be spelled as a universal request, but no case here shows that both have one intent", tool)
		}
	}

	// A request that asks X for more than the typed tool can, or for
	// something else, is another intent.
	typed := key("x_post_tweet", PostParams{Text: "t"})
	for _, body := range []string{
		`{"text":"t","reply_settings":"following"}`,
		`{"text":"t","media":{"media_ids":["5"]}}`,
		`{"text":"t","reply":{"in_reply_to_tweet_id":"7","exclude_reply_user_ids":["8"]}}`,
		`{"text":"t2"}`,
	} {
		if key("x_post", raw("POST", "", "/2/tweets", body)) == typed {
			t.Errorf("x_post %s has x_post_tweet {text: t}'s intent", body)
		}
	}
	// An edit is not a post, and an edit of another post or with more in
	// its body is another edit.
	edit := key("x_edit_tweet", EditParams{TweetID: "7", Text: "t"})
	if edit == typed {
		t.Error("an edit has the intent of a post with its text")
	}
	for _, body := range []string{
		`{"text":"t"}`,
		`{"text":"t","edit_options":{"previous_post_id":"8"}}`,
		`{"text":"t","edit_options":{"previous_post_id":"7"},"reply_settings":"following"}`,
		`{"text":"t2","edit_options":{"previous_post_id":"7"}}`,
	} {
		if key("x_post", raw("POST", "", "/2/tweets", body)) == edit {
			t.Errorf("x_post %s has x_edit_tweet {tweet_id: 7, text: t}'s intent", body)
		}
	}
	// A thread of more than one post is a thread.
	if key("x_post_thread", ThreadParams{Tweets: []string{"t", "u"}}) == key("x_post_tweet", PostParams{Text: "t"}) {
		t.Error("a thread of two posts has its first post's intent")
	}
}
