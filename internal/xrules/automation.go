package xrules

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// X's developer guidelines ("Automated actions: what's allowed?") hold on
// every access level. Each rule below is named; the name is the policy
// rule id of an item it sends to a person ("x_rule:" + name) and the
// "rule" detail of a refusal.
const (
	// RuleOneReply: at most one automated reply per user interaction.
	RuleOneReply = "one_reply_per_interaction"
	// RuleAIReplies: an AI-powered app that generates and posts replies
	// needs X's prior approval.
	RuleAIReplies = "ai_replies_need_x_approval"
	// RuleUnsolicitedMention: no unsolicited @mentions.
	RuleUnsolicitedMention = "no_unsolicited_mentions"
)

// RouteRulePrefix starts the policy rule id of an item one of X's
// automation rules sent to a person.
const RouteRulePrefix = "x_rule:"

// ToPerson is what Check returns when X's automation rules let the call
// happen only if a person decides it: the gateway queues it for approval,
// whatever the policy says, and lets the approved replay through.
type ToPerson struct {
	Rule   string
	Reason string
	// PersonOnly: an agent allowed to approve items does not decide
	// this one either; only a person's approval lets the replay through.
	PersonOnly bool
}

func (t *ToPerson) Error() string { return t.Reason }

// RuleID is the policy rule id the approval item carries.
func (t *ToPerson) RuleID() string { return RouteRulePrefix + t.Rule }

// AsToPerson reports whether err sends the call to a person.
func AsToPerson(err error) (*ToPerson, bool) {
	var t *ToPerson
	ok := errors.As(err, &t)
	return t, ok
}

// Automation is what the automation rules need to know beyond the call.
type Automation struct {
	// AIRepliesApproved is x_api.ai_replies_approved: X approved the
	// app's AI-generated replies.
	AIRepliesApproved func() bool
	// OptedOut reports whether a user (an X user id or a username) is on
	// the account's suppression list; nil means nobody is.
	OptedOut func(ctx context.Context, user string) (bool, error)
	// DMedFirst reports whether a user (an X user id) sent the account a
	// DM, as far as tuitbot knows; nil means nobody is known to have.
	DMedFirst func(ctx context.Context, user string) (bool, error)
	// CrossAccountWindow is x_api.cross_account_duplicate_hours as a
	// duration; PostedElsewhere lists what the home's other accounts
	// posted within it. Either nil turns the cross-account check off (a
	// home of one account).
	CrossAccountWindow func() time.Duration
	PostedElsewhere    func(ctx context.Context, window time.Duration) ([]Posted, error)
}

// byPerson reports whether a person wrote the call (the CLI, typed by
// its user) rather than an agent, the autopilot or tuitbot's LLM.
func byPerson(caller string) bool {
	return caller == "cli"
}

var mentionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[^A-Za-z0-9_])@([A-Za-z0-9_]{1,15})`) })

// Mentions lists the usernames text @mentions, lower-cased, in order.
func Mentions(text string) []string {
	var out []string
	for _, m := range mentionRE().FindAllStringSubmatch(text, -1) {
		out = append(out, strings.ToLower(m[1]))
	}
	return out
}

// automation judges call against X's automation rules: nil, a refusal
// (*apperr.Error) or a *ToPerson.
func (c Checker) automation(ctx context.Context, call Call) error {
	// The same text on two of the home's accounts is refused whoever
	// typed it: X's rules leave no room for a person either.
	if err := c.crossPosted(ctx, call); err != nil {
		return err
	}
	if byPerson(call.Caller) {
		return nil
	}
	if t := likesFollows(call); t != nil {
		return t
	}
	if err := c.optedOut(ctx, call); err != nil {
		return err
	}
	if t, err := c.dmFirst(ctx, call); t != nil || err != nil {
		if err != nil {
			return err
		}
		return t
	}
	switch call.Effect {
	case "x_reply_to_tweet":
		if call.Replied {
			return apperr.New(apperr.ReplyAlreadySent,
				"in_reply_to_id: the account already replied to post %s; X's automation rules allow one automated reply per user interaction; nothing was sent to X", call.TweetID).
				With("rule", RuleOneReply).With("in_reply_to_id", call.TweetID).
				WithHints(c.byHand(call)...)
		}
	}
	if t, err := c.unsolicited(ctx, call); t != nil || err != nil {
		if err != nil {
			return err
		}
		return t
	}
	if call.Effect == "x_reply_to_tweet" && (c.Automation.AIRepliesApproved == nil || !c.Automation.AIRepliesApproved()) {
		return &ToPerson{Rule: RuleAIReplies,
			Reason: "X requires its prior approval for AI-generated replies and x_api.ai_replies_approved is false: a person decides each reply"}
	}
	return nil
}

// posting lists the effects that publish text others read.
var posting = map[string]bool{"x_post_tweet": true, "x_reply_to_tweet": true, "x_quote_tweet": true, "x_post_thread": true}

// unsolicited sends to a person a post that @mentions someone who did not
// engage first: someone the post replied to @mentions (its author's
// username is not among the facts tuitbot keeps of a post, so naming the
// author goes to a person too, the safe side).
func (c Checker) unsolicited(ctx context.Context, call Call) (*ToPerson, error) {
	if !posting[call.Effect] {
		return nil, nil
	}
	names := Mentions(call.Text)
	if len(names) == 0 {
		return nil, nil
	}
	engaged := map[string]bool{}
	if call.Effect == "x_reply_to_tweet" && call.TweetID != "" && c.Know != nil {
		p, err := c.Know.Post(ctx, call.TweetID)
		if err != nil {
			return nil, err
		}
		for _, m := range p.Mentions {
			engaged[strings.ToLower(strings.TrimPrefix(m, "@"))] = true
		}
	}
	if c.Know != nil {
		if me, err := c.Know.Account(ctx); err == nil && me.Username != "" {
			engaged[strings.ToLower(me.Username)] = true
		}
	}
	for _, n := range names {
		if !engaged[n] {
			return &ToPerson{Rule: RuleUnsolicitedMention,
				Reason: "X's developer guidelines forbid unsolicited @mentions and @" + n + " did not engage with the account first: a person decides"}, nil
		}
	}
	return nil, nil
}

// disclosure finds words by which a bio says the account is automated and
// who runs it: "automated", "bot", "run by @someone".
var disclosure = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(\bautomated\b|\bbot\b|\b(run|operated|managed) by @[A-Za-z0-9_]+)`)
})

// DisclosesAutomation reports whether bio says the account is automated,
// as X's developer guidelines ask of an automated account.
func DisclosesAutomation(bio string) bool {
	return disclosure().MatchString(bio)
}
