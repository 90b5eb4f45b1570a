package xrules

import (
	"context"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// TestSaysOptOut: an opt-out phrase is found whatever its case or width,
// as whole words only.
func TestSaysOptOut(t *testing.T) {
	for _, tc := range []struct {
		text    string
		phrases []string
		want    string
	}{
		{text: "STOP", want: "stop"},
		{text: "ｓｔｏｐ", want: "stop"},
		{text: "@tuitbot please stop replying", want: "stop"},
		{text: "Unsubscribe!", want: "unsubscribe"},
		{text: "I want to OPT   OUT now", want: "opt out"},
		{text: "opt-out please", want: "opt out"},
		{text: "Leave me alone.", want: "leave me alone"},
		{text: "nice stopwatch", want: ""},
		{text: "nonstop fun", want: ""},
		{text: "great thread, thanks", want: ""},
		{text: "BASTA ya", phrases: []string{"basta"}, want: "basta"},
		{text: "stop", phrases: []string{"basta"}, want: ""},
	} {
		t.Run(tc.text, func(t *testing.T) {
			got, ok := SaysOptOut(tc.text, tc.phrases)
			if ok != (tc.want != "") || got != tc.want {
				t.Fatalf("SaysOptOut(%q) = %q, %v; want %q", tc.text, got, ok, tc.want)
			}
		})
	}
}

// TestOptedOutRefused: an automated reply to a suppressed user's post, a
// DM to them and a post @mentioning them are refused with user_opted_out;
// the same to anyone else, or typed by a person, is not refused by it.
func TestOptedOutRefused(t *testing.T) {
	posts := map[string]Post{
		"100": {ID: "100", AuthorID: "7", Mentions: []string{"TuitBot"}},
		"200": {ID: "200", AuthorID: "8", Mentions: []string{"TuitBot"}},
	}
	suppressed := map[string]bool{"7": true, "carol": true}
	for _, tc := range []struct {
		name    string
		call    Call
		refused bool
	}{
		{name: "a reply to the suppressed author", call: Call{Effect: "x_reply_to_tweet", TweetID: "100", Caller: "autopilot"}, refused: true},
		{name: "a reply to someone else", call: Call{Effect: "x_reply_to_tweet", TweetID: "200", Caller: "autopilot"}},
		{name: "a DM to the suppressed user", call: Call{Effect: "x_send_dm", TargetUser: "7", Text: "hi", Caller: "mcp"}, refused: true},
		{name: "a DM to someone else", call: Call{Effect: "x_send_dm", TargetUser: "8", Text: "hi", Caller: "mcp"}},
		{name: "a post @mentioning the suppressed user", call: Call{Effect: "x_post_tweet", Text: "thanks @Carol", Caller: "mcp"}, refused: true},
		{name: "a reply to a post X does not have", call: Call{Effect: "x_reply_to_tweet", TweetID: "404", Caller: "autopilot"}},
		{name: "a reply typed by a person", call: Call{Effect: "x_reply_to_tweet", TweetID: "100", Caller: "cli"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Checker{Access: func() Access { return Enterprise }, Know: &world{posts: posts},
				Automation: Automation{
					AIRepliesApproved: func() bool { return true },
					OptedOut:          func(_ context.Context, user string) (bool, error) { return suppressed[user], nil },
					// Everyone wrote first: the DM rule is not this test's.
					DMedFirst: func(context.Context, string) (bool, error) { return true, nil },
				}}
			err := c.Check(context.Background(), tc.call)
			if !tc.refused && err != nil {
				t.Fatalf("%v, want no refusal", err)
			}
			if got := apperr.CodeOf(err) == apperr.UserOptedOut; got != tc.refused {
				t.Fatalf("%v; refused with user_opted_out = %v, want %v", err, got, tc.refused)
			}
		})
	}
}
