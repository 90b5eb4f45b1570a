package actions

import (
	"encoding/json"
	"testing"
)

func TestTargetNamesThePostActedOn(t *testing.T) {
	acts := map[string]func(json.RawMessage) string{}
	for _, a := range All(Deps{}) {
		acts[a.Tool] = a.Target
	}
	for _, tc := range []struct {
		tool, params, want string
	}{
		{"x_reply_to_tweet", `{"text":"hi","in_reply_to_id":"11"}`, "11"},
		{"x_quote_tweet", `{"text":"hi","quoted_tweet_id":"12"}`, "12"},
		{"x_like_tweet", `{"tweet_id":"13"}`, "13"},
		{"x_unlike_tweet", `{"tweet_id":"14"}`, "14"},
		{"x_retweet", `{"tweet_id":"15"}`, "15"},
		{"x_unretweet", `{"tweet_id":"16"}`, "16"},
		{"x_bookmark_tweet", `{"tweet_id":"17"}`, "17"},
		{"x_unbookmark_tweet", `{"tweet_id":"18"}`, "18"},
		{"x_delete_tweet", `{"tweet_id":"19"}`, "19"},
		{"x_post", `{"method":"POST","host":"api.x.com","path":"/2/tweets","body":"{\"text\":\"r\",\"reply\":{\"in_reply_to_tweet_id\":\"20\"}}"}`, "20"},
		// A plain post, a raw post without a reply, and invalid parameters
		// name no post.
		{"x_post_tweet", `{"text":"hi 21"}`, ""},
		{"x_post", `{"method":"POST","host":"api.x.com","path":"/2/tweets","body":"{\"text\":\"22\"}"}`, ""},
		{"x_reply_to_tweet", `{"text":"hi","in_reply_to_id":"not-an-id"}`, ""},
		{"x_like_tweet", `{"tweet_id":"23","extra":1}`, ""},
	} {
		target := acts[tc.tool]
		if target == nil {
			t.Errorf("%s has no Target", tc.tool)
			continue
		}
		if got := target(json.RawMessage(tc.params)); got != tc.want {
			t.Errorf("%s %s: Target = %q, want %q", tc.tool, tc.params, got, tc.want)
		}
	}
}
