package xrules

import (
	"context"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// TestAutomationRules: X's automation rules hold on every access level.
// What software decides (an agent, the autopilot) is queued for a person
// or refused by the named rule; what a person typed (the CLI) is not
// theirs to judge.
func TestAutomationRules(t *testing.T) {
	posts := map[string]Post{
		"100": {ID: "100", AuthorID: "7", Mentions: []string{"TuitBot", "carol"}},
	}
	for _, tc := range []struct {
		name string
		call Call
		aiOK bool
		rule string
		code apperr.Code
	}{
		{name: "an AI reply typed in the CLI", call: Call{Effect: "x_reply_to_tweet", TweetID: "100", Caller: "cli"}},
		{name: "an AI reply, X's approval not declared", call: Call{Effect: "x_reply_to_tweet", TweetID: "100", Caller: "mcp"}, rule: RuleAIReplies},
		{name: "an AI reply, X's approval declared", call: Call{Effect: "x_reply_to_tweet", TweetID: "100", Caller: "mcp"}, aiOK: true},
		{name: "a second reply to one post", call: Call{Effect: "x_reply_to_tweet", TweetID: "100", Caller: "autopilot", Replied: true}, aiOK: true, code: apperr.ReplyAlreadySent},
		{name: "a reply naming who the post named", call: Call{Effect: "x_reply_to_tweet", TweetID: "100", Text: "@Carol agreed", Caller: "mcp"}, aiOK: true},
		{name: "a reply naming a stranger", call: Call{Effect: "x_reply_to_tweet", TweetID: "100", Text: "cc @dave", Caller: "mcp"}, aiOK: true, rule: RuleUnsolicitedMention},
		{name: "a post naming a stranger", call: Call{Effect: "x_post_tweet", Text: "hi @dave", Caller: "mcp"}, rule: RuleUnsolicitedMention},
		{name: "a post naming the account itself", call: Call{Effect: "x_post_tweet", Text: "follow @tuitbot", Caller: "mcp"}},
		{name: "an email address is no mention", call: Call{Effect: "x_post_tweet", Text: "mail me@example.com", Caller: "mcp"}},
		{name: "a repost", call: Call{Effect: "x_retweet", TweetID: "5", Caller: "mcp"}},
		{name: "an agent's like", call: Call{Effect: "x_like_tweet", TweetID: "5", Caller: "mcp"}, rule: RuleLikesFollows},
		{name: "an agent's follow", call: Call{Effect: "x_follow_user", TargetUser: "7", Caller: "mcp"}, rule: RuleLikesFollows},
		{name: "the autopilot's like", call: Call{Effect: "x_like_tweet", TweetID: "5", Caller: "autopilot"}, rule: RuleLikesFollows},
		{name: "a caller that names nobody likes", call: Call{Effect: "x_like_tweet", TweetID: "5"}, rule: RuleLikesFollows},
		{name: "a like typed in the CLI", call: Call{Effect: "x_like_tweet", TweetID: "5", Caller: "cli"}},
		{name: "a follow typed in the CLI", call: Call{Effect: "x_follow_user", TargetUser: "7", Caller: "cli"}},
		{name: "a like pressed in the web UI", call: Call{Effect: "x_like_tweet", TweetID: "5", Caller: webCaller}},
		{name: "an agent's unlike", call: Call{Effect: "x_unlike_tweet", TweetID: "5", Caller: "mcp"}},
		{name: "an agent's unfollow", call: Call{Effect: "x_unfollow_user", TargetUser: "7", Caller: "mcp"}},
		{name: "a DM to a user who wrote first", call: Call{Effect: "x_send_dm", TargetUser: "7", Text: "hi", Caller: "mcp"}},
		{name: "a DM to a user who did not", call: Call{Effect: "x_send_dm", TargetUser: "8", Text: "hi", Caller: "autopilot"}, rule: RuleDMFirst},
		{name: "a DM whose recipient the request hides", call: Call{Effect: "x_send_dm", Text: "hi", Caller: "mcp"}, rule: RuleDMFirst},
		{name: "a DM typed in the CLI", call: Call{Effect: "x_send_dm", TargetUser: "8", Text: "hi", Caller: "cli"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Enterprise: no access rule stands in front of them.
			c := Checker{Access: func() Access { return Enterprise }, Know: &world{posts: posts},
				Automation: Automation{AIRepliesApproved: func() bool { return tc.aiOK },
					DMedFirst: func(_ context.Context, user string) (bool, error) { return user == "7", nil }}}
			err := c.Check(context.Background(), tc.call)
			route, routed := AsToPerson(err)
			switch {
			case tc.rule != "":
				if !routed || route.Rule != tc.rule {
					t.Fatalf("%v, want it sent to a person by %s", err, tc.rule)
				}
				// Only the likes-and-follows rule is a person's alone; the
				// others let an agent allowed to approve decide.
				if route.PersonOnly != (tc.rule == RuleLikesFollows) || (PersonOnly(tc.call) != nil) != route.PersonOnly {
					t.Fatalf("%s: person only %v, PersonOnly %v", tc.rule, route.PersonOnly, PersonOnly(tc.call))
				}
			case tc.code != "":
				if apperr.CodeOf(err) != tc.code {
					t.Fatalf("%v, want %s", err, tc.code)
				}
			case err != nil:
				t.Fatalf("%v, want nil", err)
			case PersonOnly(tc.call) != nil:
				t.Fatalf("%+v is a person's alone, want anyone's", tc.call)
			}
		})
	}
}

// TestDisclosesAutomation: the words by which a bio says the account is
// automated, whatever their case, and nothing that merely contains them.
func TestDisclosesAutomation(t *testing.T) {
	for bio, want := range map[string]bool{
		"Automated account run by @alice": true,
		"A BOT for Go release notes":      true,
		"Tips on Go. Run by @gopher_team": true,
		"operated by @acme":               true,
		"Building tools for developers.":  false,
		"Robotics and botany":             false,
		"Run by the team":                 false,
		"":                                false,
		"automatedly":                     false,
	} {
		if got := DisclosesAutomation(bio); got != want {
			t.Errorf("DisclosesAutomation(%q) = %v, want %v", bio, got, want)
		}
	}
}
