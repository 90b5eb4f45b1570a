package xrules

import (
	"context"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// RuleOptOut: "If a user says 'stop', stop". A user who writes an opt-out
// phrase to the account gets no automated reply, @mention or DM from it
// again until a person clears them.
const RuleOptOut = "stop_means_stop"

// DefaultOptOutPhrases are the phrases that opt a user out when
// x_api.opt_out_phrases is not set.
var DefaultOptOutPhrases = []string{"stop", "unsubscribe", "opt out", "opt-out", "optout", "leave me alone", "go away", "do not contact me", "don't contact me"}

// foldText brings text to one spelling per meaning: NFKC folds full-width
// and compatibility forms ("ｓｔｏｐ" is "stop"), case folding drops case,
// and every run of characters that are not letters or digits becomes a
// single space, so "Unsubscribe!" and "opt   out" match their phrases.
func foldText(s string) string {
	s = cases.Fold().String(norm.NFKC.String(s))
	var b strings.Builder
	space := true
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '\u2019' {
			if r == '\u2019' {
				r = '\''
			}
			b.WriteRune(r)
			space = false
			continue
		}
		if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

// SaysOptOut reports the first of phrases that text says as whole words
// ("please stop replying" says "stop", "stopwatch" does not), matched
// without regard to case or width. Phrases empty means
// DefaultOptOutPhrases.
func SaysOptOut(text string, phrases []string) (string, bool) {
	if len(phrases) == 0 {
		phrases = DefaultOptOutPhrases
	}
	words := " " + foldText(text) + " "
	for _, p := range phrases {
		f := foldText(p)
		if f == "" {
			continue
		}
		if strings.Contains(words, " "+f+" ") {
			return p, true
		}
	}
	return "", false
}

// optedOut refuses an automated call that would reach a user on the
// account's suppression list: the author of the post it replies to, the
// recipient of a DM, anyone a post @mentions.
func (c Checker) optedOut(ctx context.Context, call Call) error {
	if c.Automation.OptedOut == nil {
		return nil
	}
	type reached struct{ user, field string }
	var users []reached
	switch call.Effect {
	case "x_send_dm":
		users = append(users, reached{call.TargetUser, "participant_id"})
	case "x_reply_to_tweet":
		if call.TweetID != "" && c.Know != nil {
			p, err := c.Know.Post(ctx, call.TweetID)
			switch {
			case apperr.CodeOf(err) == apperr.XNotFound:
				// No such post: no author to reach, and X answers the
				// reply with the same not-found.
			case err != nil:
				return err
			default:
				users = append(users, reached{p.AuthorID, "in_reply_to_id"})
			}
		}
	}
	if posting[call.Effect] {
		for _, n := range Mentions(call.Text) {
			users = append(users, reached{n, "text"})
		}
	}
	for _, u := range users {
		if u.user == "" {
			continue
		}
		out, err := c.Automation.OptedOut(ctx, u.user)
		if err != nil {
			return apperr.Wrap(apperr.DBError, err, "reading the suppression list")
		}
		if out {
			return apperr.New(apperr.UserOptedOut,
				"%s: user %s told the account to stop and is on its suppression list; X's guidelines say \"If a user says 'stop,' stop\"; nothing was sent to X (a person can lift it with `tuitbot optouts clear %s`)", u.field, u.user, u.user).
				With("rule", RuleOptOut).With("user", u.user)
		}
	}
	return nil
}
