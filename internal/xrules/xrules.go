// Package xrules holds X's platform rules of 2026 that depend on the API
// access level of an account's app: what a pay-per-use app may no longer do
// (likes, follows, quote posts, replies to posts that did not summon the
// account), judged before X is called, with what a person can do instead.
// The gateway asks Checker about every call, whatever tool spelled it;
// docs/x-rules.md gives each rule's source.
package xrules

import (
	"context"
	"net/url"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// Access is the API access level of an account's X app (x_api.access).
type Access string

// The access levels X sells.
const (
	// PayPerUse is X's self-serve access (credits, since 2026-02-06).
	PayPerUse Access = "pay_per_use"
	// Enterprise is a negotiated contract; X's 2026 restrictions of
	// self-serve tiers do not apply to it.
	Enterprise Access = "enterprise"
)

// Call is what the gateway knows of a call: the typed tool whose effect it
// has (a universal request's equivalent), the post it acts on, the user it
// follows or unfollows, and its text.
type Call struct {
	Effect     string
	TweetID    string
	TargetUser string
	// TargetUsername is TargetUser's handle, when known: X's follow
	// intent takes a handle (screen_name), not a user id.
	TargetUsername string
	Text           string
	// QuoteOf is the post the call quotes, whatever else it does: a
	// reply that quotes is a quote post too.
	QuoteOf string
	// Caller is who made the call (mcp, cli, autopilot, …): X's
	// automation rules bind what software decides, not a person.
	Caller string
	// Replied says the account already replied to TweetID by the API.
	Replied bool
	// Thread is the posts of a thread, in order (Text is empty then).
	Thread []string
}

// Post is what decides whether a post summoned the account.
type Post struct {
	ID       string
	AuthorID string
	// InReplyToUserID is the author of the post it replies to.
	InReplyToUserID string
	// Mentions are the usernames the post @mentions (X's entities).
	Mentions []string
	// Quotes are the posts it quotes.
	Quotes []string
}

// Account is the authenticated account.
type Account struct {
	ID, Username string
}

// Knowledge answers what a summons check needs: the account, and a post
// from what tuitbot already knows or, when it knows nothing, from X with
// the cheapest read.
type Knowledge interface {
	Account(ctx context.Context) (Account, error)
	Post(ctx context.Context, id string) (Post, error)
}

// Checker judges calls against the rules of the account's access level.
type Checker struct {
	// Access is read at every call, so a changed setting applies to items
	// approved before the change when they execute.
	Access func() Access
	// OwnRepliesSummon makes a post that replies to one of the account's
	// posts count as summoning it (x_api.own_replies_summon).
	OwnRepliesSummon bool
	// Know is asked only for replies on pay-per-use.
	Know Knowledge
	// IntentBase is where X's Web Intents live (https://x.com).
	IntentBase string
	// Automation configures X's automation rules, which hold on every
	// access level.
	Automation Automation
}

// unavailable lists the effects X removed from self-serve access on
// 2026-04-20 ("Following, Likes, and Quote-Posts via the API have been
// removed from all self-serve tiers"), each with what a person does
// instead. The undo of a like or a follow is part of the same API family
// (X's "Manage Likes" and "Manage follows" endpoints), so it is refused
// too; reposts and bookmarks are not named and stay open.
var unavailable = map[string]string{
	"x_like_tweet":    "likes",
	"x_unlike_tweet":  "likes",
	"x_follow_user":   "follows",
	"x_unfollow_user": "follows",
	"x_quote_tweet":   "quote posts",
}

// Unavailable lists the typed tools a pay-per-use app may not use.
func Unavailable() []string {
	return []string{"x_follow_user", "x_like_tweet", "x_quote_tweet", "x_unfollow_user", "x_unlike_tweet"}
}

// Check returns nil when X's rules let the call happen by the API, an
// *apperr.Error (x_feature_unavailable, reply_not_summoned,
// reply_already_sent) whose hint says what a person can do instead, or a
// *ToPerson when only a person may decide it. An error finding out (X
// unreachable) is returned as it is: the call is not attempted.
func (c Checker) Check(ctx context.Context, call Call) error {
	if err := c.CheckAccess(ctx, call); err != nil {
		return err
	}
	return c.automation(ctx, call)
}

// CheckAccess judges call against what the account's access level
// allows, and nothing else.
func (c Checker) CheckAccess(ctx context.Context, call Call) error {
	if c.Access == nil || c.Access() != PayPerUse {
		return nil
	}
	if call.QuoteOf != "" && call.Effect != "x_quote_tweet" {
		// A reply that also quotes is judged as the quote post it is.
		call = Call{Effect: "x_quote_tweet", TweetID: call.QuoteOf, Text: call.Text, Caller: call.Caller}
	}
	if what, ok := unavailable[call.Effect]; ok {
		return apperr.New(apperr.XFeatureUnavailable,
			"%s: X removed %s from pay-per-use API access on 2026-04-20 (x_api.access = \"pay_per_use\"); nothing was sent to X", call.Effect, what).
			With("access", string(PayPerUse)).With("rule", "self_serve_no_"+strings.ReplaceAll(what, " ", "_")).
			WithHints(c.byHand(call)...)
	}
	if call.Effect != "x_reply_to_tweet" || call.Replied {
		// A second reply is refused by the automation rules, which say
		// why better than a summons check.
		return nil
	}
	if call.TweetID == "" {
		return apperr.New(apperr.ReplyNotSummoned, "in_reply_to_id: the post replied to cannot be read from the request, so whether it summoned the account cannot be told; nothing was sent to X").
			With("access", string(PayPerUse))
	}
	ok, why, err := c.summoned(ctx, call.TweetID)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	return apperr.New(apperr.ReplyNotSummoned,
		"in_reply_to_id: post %s did not summon the account (%s); since 2026-02-23 X lets a pay-per-use app reply only to a post that @mentions the account or quotes one of its posts; nothing was sent to X", call.TweetID, why).
		With("access", string(PayPerUse)).With("in_reply_to_id", call.TweetID).WithHints(c.byHand(call)...)
}

// summoned reports whether post id summoned the account, and if not, why.
func (c Checker) summoned(ctx context.Context, id string) (bool, string, error) {
	if c.Know == nil {
		return false, "", apperr.New(apperr.InternalError, "no way to read the post replied to")
	}
	me, err := c.Know.Account(ctx)
	if err != nil {
		return false, "", err
	}
	p, err := c.Know.Post(ctx, id)
	if err != nil {
		return false, "", err
	}
	if p.AuthorID != "" && p.AuthorID == me.ID {
		// The rule is about another author summoning the account; a
		// reply to its own post (a thread) has nobody else to wait for.
		return true, "", nil
	}
	if p.InReplyToUserID != "" && p.InReplyToUserID == me.ID {
		if c.OwnRepliesSummon {
			return true, "", nil
		}
		return false, "it replies to the account's post without naming it, and x_api.own_replies_summon is false", nil
	}
	for _, m := range p.Mentions {
		if me.Username != "" && strings.EqualFold(strings.TrimPrefix(m, "@"), me.Username) {
			return true, "", nil
		}
	}
	for _, q := range p.Quotes {
		qp, err := c.Know.Post(ctx, q)
		if apperr.CodeOf(err) == apperr.XNotFound {
			// Gone, and not in the account's own ledger: not its post as
			// far as anyone can tell.
			continue
		}
		if err != nil {
			return false, "", err
		}
		if qp.AuthorID != "" && qp.AuthorID == me.ID {
			return true, "", nil
		}
	}
	return false, "it neither @mentions @" + me.Username + " nor quotes one of its posts", nil
}

// byHand is what a person can do on x.com instead, as X's Web Intents.
func (c Checker) byHand(call Call) []apperr.Hint {
	link := IntentLink(c.IntentBase, call)
	if link == "" {
		return []apperr.Hint{{Do: "do it on x.com by hand"}}
	}
	return []apperr.Hint{{Do: "do it on x.com by hand: " + link}}
}

// MaxIntentLink is the longest intent link IntentLink makes, in bytes:
// the request line servers commonly accept (8 KiB). A 280-character post
// of four-byte characters fits whole; a long post's text does not, and is
// left out of the link (the person pastes it from the card, which shows
// it) rather than cut.
const MaxIntentLink = 8 << 10

// IntentLink is the X Web Intent (or page) where a person does call by
// hand, logged in, pressing X's own button; "" when the call names nothing
// to link to. The text of a reply or quote is prefilled, escaped, unless
// the link would be longer than MaxIntentLink.
func IntentLink(base string, call Call) string {
	link := intentLink(base, call)
	if len(link) > MaxIntentLink && call.Text != "" {
		call.Text = ""
		link = intentLink(base, call)
	}
	return link
}

func intentLink(base string, call Call) string {
	if base == "" {
		base = "https://x.com"
	}
	base = strings.TrimRight(base, "/")
	q := url.Values{}
	switch call.Effect {
	case "x_like_tweet":
		if call.TweetID == "" {
			return ""
		}
		q.Set("tweet_id", call.TweetID)
		return base + "/intent/like?" + q.Encode()
	case "x_follow_user":
		// X's follow intent names the account by handle only
		// (intent/follow?screen_name=NAME); without the handle, the
		// profile page has the Follow button.
		if call.TargetUsername != "" {
			q.Set("screen_name", call.TargetUsername)
			return base + "/intent/follow?" + q.Encode()
		}
		if call.TargetUser == "" {
			return ""
		}
		q.Set("user_id", call.TargetUser)
		return base + "/intent/user?" + q.Encode()
	case "x_unfollow_user":
		// X has no unfollow intent: the profile has the button.
		if call.TargetUser == "" {
			return ""
		}
		q.Set("user_id", call.TargetUser)
		return base + "/intent/user?" + q.Encode()
	case "x_unlike_tweet":
		// No unlike intent either: the post has the button.
		if call.TweetID == "" {
			return ""
		}
		return base + "/i/web/status/" + url.PathEscape(call.TweetID)
	case "x_quote_tweet":
		if call.TweetID == "" {
			return ""
		}
		q.Set("url", base+"/i/web/status/"+call.TweetID)
		if call.Text != "" {
			q.Set("text", call.Text)
		}
		return base + "/intent/tweet?" + q.Encode()
	case "x_reply_to_tweet":
		if call.TweetID == "" {
			return ""
		}
		q.Set("in_reply_to", call.TweetID)
		if call.Text != "" {
			q.Set("text", call.Text)
		}
		return base + "/intent/tweet?" + q.Encode()
	}
	return ""
}
