package xrules

import (
	"context"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// world is what the account knows of X in these cases: its own id and
// handle, and posts by id.
type world struct {
	posts map[string]Post
	reads int
}

func (w *world) Account(context.Context) (Account, error) {
	return Account{ID: "42", Username: "TuitBot"}, nil
}

func (w *world) Post(_ context.Context, id string) (Post, error) {
	w.reads++
	p, ok := w.posts[id]
	if !ok {
		return Post{}, apperr.New(apperr.XNotFound, "no post %s", id)
	}
	return p, nil
}

// TestRules: on pay_per_use, likes, follows, quotes and their undos are
// refused with x_feature_unavailable and a by-hand link, without reading
// anything; a reply is allowed only to a post that @mentions the account
// (any case), quotes one of its posts, or is its own when own posts
// summon; everything else passes. On enterprise nothing is refused and
// nothing is read.
func TestRules(t *testing.T) {
	posts := map[string]Post{
		"100": {ID: "100", AuthorID: "7", Mentions: []string{"someone", "tuitbot"}},
		"101": {ID: "101", AuthorID: "7", Quotes: []string{"900"}},
		"102": {ID: "102", AuthorID: "42"},
		"104": {ID: "104", AuthorID: "7", InReplyToUserID: "42"},
		"105": {ID: "105", AuthorID: "7", Quotes: []string{"999"}},
		"103": {ID: "103", AuthorID: "7", Mentions: []string{"tuitbot_fan"}, Quotes: []string{"901"}},
		"900": {ID: "900", AuthorID: "42"},
		"901": {ID: "901", AuthorID: "8"},
	}
	for _, tc := range []struct {
		name      string
		call      Call
		ownSummon bool
		code      apperr.Code
		hint      string
		reads     int
	}{
		{"like", Call{Effect: "x_like_tweet", TweetID: "5"}, true, apperr.XFeatureUnavailable, "https://x.com/intent/like?tweet_id=5", 0},
		{"unlike", Call{Effect: "x_unlike_tweet", TweetID: "5"}, true, apperr.XFeatureUnavailable, "https://x.com/i/web/status/5", 0},
		{"follow", Call{Effect: "x_follow_user", TargetUser: "77"}, true, apperr.XFeatureUnavailable, "https://x.com/intent/follow?user_id=77", 0},
		{"unfollow", Call{Effect: "x_unfollow_user", TargetUser: "77"}, true, apperr.XFeatureUnavailable, "https://x.com/intent/user?user_id=77", 0},
		{"quote", Call{Effect: "x_quote_tweet", TweetID: "5", Text: "so true"}, true, apperr.XFeatureUnavailable,
			"https://x.com/intent/tweet?text=so+true&url=https%3A%2F%2Fx.com%2Fi%2Fweb%2Fstatus%2F5", 0},
		{"reply to a mention", Call{Effect: "x_reply_to_tweet", TweetID: "100"}, true, "", "", 1},
		{"reply to a mention that quotes", Call{Effect: "x_reply_to_tweet", TweetID: "100", QuoteOf: "5"}, true, apperr.XFeatureUnavailable,
			"https://x.com/intent/tweet?url=https%3A%2F%2Fx.com%2Fi%2Fweb%2Fstatus%2F5", 0},
		{"reply to a quote of ours", Call{Effect: "x_reply_to_tweet", TweetID: "101"}, true, "", "", 2},
		{"reply to our own post (a thread)", Call{Effect: "x_reply_to_tweet", TweetID: "102"}, false, "", "", 1},
		{"reply to a reply to our post", Call{Effect: "x_reply_to_tweet", TweetID: "104"}, true, "", "", 1},
		{"reply to a reply to our post, own replies not summoning", Call{Effect: "x_reply_to_tweet", TweetID: "104"}, false, apperr.ReplyNotSummoned,
			"https://x.com/intent/tweet?in_reply_to=104", 1},
		{"reply to a quote of a post that is gone", Call{Effect: "x_reply_to_tweet", TweetID: "105"}, true, apperr.ReplyNotSummoned, "", 2},
		{"reply to a stranger", Call{Effect: "x_reply_to_tweet", TweetID: "103", Text: "hi there"}, true, apperr.ReplyNotSummoned,
			"https://x.com/intent/tweet?in_reply_to=103&text=hi+there", 2},
		{"reply without a readable target", Call{Effect: "x_reply_to_tweet"}, true, apperr.ReplyNotSummoned, "", 0},
		{"a post", Call{Effect: "x_post_tweet", Text: "hello"}, true, "", "", 0},
		{"a repost", Call{Effect: "x_retweet", TweetID: "5"}, true, "", "", 0},
		{"a bookmark", Call{Effect: "x_bookmark_tweet", TweetID: "5"}, true, "", "", 0},
		{"an unknown write", Call{}, true, "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{posts: posts}
			c := Checker{Access: func() Access { return PayPerUse }, OwnRepliesSummon: tc.ownSummon, Know: w}
			err := c.CheckAccess(context.Background(), tc.call)
			if got := apperr.CodeOf(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
			if tc.hint != "" && !strings.Contains(err.Error(), tc.hint) {
				t.Errorf("error %q lacks the by-hand link %s", err, tc.hint)
			}
			if w.reads != tc.reads {
				t.Errorf("%d posts read, want %d", w.reads, tc.reads)
			}

			w.reads = 0
			c.Access = func() Access { return Enterprise }
			if err := c.CheckAccess(context.Background(), tc.call); err != nil || w.reads != 0 {
				t.Errorf("enterprise: %v after %d reads, want nil after none", err, w.reads)
			}
		})
	}
}
