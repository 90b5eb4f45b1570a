package xrequest

import "testing"

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

		// Lenient spellings still classify, so hard rules cannot be dodged.
		{"delete", "/2/tweets/123", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"Delete", "/2/Tweets/123/", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"DELETE", "/2/tweets/%31%32%33", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"DELETE", "//2//tweets//123", Effect{Kind: KindTweetDelete, TweetID: "123"}},
		{"DELETE", "/2/tweets/not-a-number", Effect{Kind: KindTweetDelete, TweetID: "not-a-number"}},
		{"post", "/2/TWEETS", Effect{Kind: KindTweetCreate}},
		{"POST", "/2/users/42/LIKES/", Effect{Kind: KindLike, UserID: "42"}},

		// Reads.
		{"GET", "/2/tweets/123", Effect{Kind: KindRead}},
		{"GET", "/2/users/42/likes", Effect{Kind: KindRead}},
		{"get", "/anything", Effect{Kind: KindRead}},
		{"GET", "/1.1/media/upload.json", Effect{Kind: KindRead}},

		// Others.
		{"PUT", "/2/tweets/123/hidden", Effect{Kind: KindOther}},
		{"DELETE", "/2/tweets", Effect{Kind: KindOther}},
		{"DELETE", "/2/tweets/search/webhooks/1", Effect{Kind: KindOther}},
		{"POST", "/2/tweets/123", Effect{Kind: KindOther}},
		{"POST", "/2/users/42/likes/123", Effect{Kind: KindOther}},
		{"DELETE", "/2/users/42/likes", Effect{Kind: KindOther}},
		{"POST", "/2/media/metadata", Effect{Kind: KindOther}},
		{"POST", "/3/tweets", Effect{Kind: KindOther}},
		{"PATCH", "/2/tweets", Effect{Kind: KindOther}},
		{"", "/2/tweets", Effect{Kind: KindOther}},
		{"POST", "", Effect{Kind: KindOther}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			if got := Classify(tt.method, tt.path); got != tt.want {
				t.Fatalf("Classify = %+v, want %+v", got, tt.want)
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassifyChecked(mustCheck(t, tt.req)); got != tt.want {
				t.Fatalf("ClassifyChecked = %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := ClassifyChecked(nil); got.Kind != KindOther {
		t.Fatalf("ClassifyChecked(nil) = %+v", got)
	}
}
