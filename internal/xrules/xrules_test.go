package xrules

import (
	"context"
	"net/url"
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
		{"follow", Call{Effect: "x_follow_user", TargetUser: "77"}, true, apperr.XFeatureUnavailable, "https://x.com/intent/user?user_id=77", 0},
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

// TestIntentLinkEscapesAndBounds: the prefilled text survives the link
// exactly (ampersands, hashes, newlines, plus signs, emoji, a text that
// looks like another parameter), the base's trailing slash is dropped,
// and a text too long for a link is left out rather than cut.
func TestIntentLinkEscapesAndBounds(t *testing.T) {
	long280 := strings.Repeat("😀", 280)
	cases := []struct {
		name     string
		base     string
		call     Call
		wantPath string
		want     map[string]string
	}{
		{"reply with every special character", "http://127.0.0.1:8099/", Call{Effect: "x_reply_to_tweet", TweetID: "12", Text: "a&b=c #tag +1 100%\nnext&in_reply_to=99 ?x"},
			"/intent/tweet", map[string]string{"in_reply_to": "12", "text": "a&b=c #tag +1 100%\nnext&in_reply_to=99 ?x"}},
		{"quote of a post", "https://x.com", Call{Effect: "x_quote_tweet", TweetID: "34", Text: "é & ü"},
			"/intent/tweet", map[string]string{"url": "https://x.com/i/web/status/34", "text": "é & ü"}},
		{"280 emoji fit whole", "https://x.com", Call{Effect: "x_reply_to_tweet", TweetID: "5", Text: long280},
			"/intent/tweet", map[string]string{"in_reply_to": "5", "text": long280}},
		{"a long post's text is left out", "https://x.com", Call{Effect: "x_reply_to_tweet", TweetID: "5", Text: strings.Repeat("€", 3000)},
			"/intent/tweet", map[string]string{"in_reply_to": "5"}},
		{"like", "https://x.com", Call{Effect: "x_like_tweet", TweetID: "7"}, "/intent/like", map[string]string{"tweet_id": "7"}},
		// X's follow intent takes the handle (screen_name) only; without
		// it the link is the profile, which has the Follow button.
		{"follow", "", Call{Effect: "x_follow_user", TargetUser: "8", TargetUsername: "gopher_gabe"}, "/intent/follow", map[string]string{"screen_name": "gopher_gabe"}},
		{"follow of an unknown handle", "", Call{Effect: "x_follow_user", TargetUser: "8"}, "/intent/user", map[string]string{"user_id": "8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			link := IntentLink(tc.base, tc.call)
			if len(link) > MaxIntentLink {
				t.Fatalf("link of %d bytes, longer than %d", len(link), MaxIntentLink)
			}
			u, err := url.Parse(link)
			if err != nil {
				t.Fatalf("parse %q: %v", link, err)
			}
			if u.Path != tc.wantPath || strings.Contains(u.RawQuery, " ") || strings.Contains(u.RawQuery, "\n") {
				t.Fatalf("link %q: path %q", link, u.Path)
			}
			q := u.Query()
			if len(q) != len(tc.want) {
				t.Fatalf("link %q has parameters %v, want %v", link, q, tc.want)
			}
			for k, v := range tc.want {
				if got := q[k]; len(got) != 1 || got[0] != v {
					t.Fatalf("link %q: %s = %q, want %q", link, k, got, v)
				}
			}
		})
	}
}
