package actions

import (
	"context"
	"fmt"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/postlimit"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// PostLimiter tells how long a post the account may write (see postlimit).
type PostLimiter interface {
	// Limit is the account's limit, asking X when what it was told is a
	// day old (x_api.max_post_length = auto).
	Limit(ctx context.Context) (postlimit.Limit, error)
	// Known is the limit as last learned, without asking X: what
	// validation without a context (the gateway's) applies.
	Known() postlimit.Limit
}

// ordinary is the limit when nothing else is known.
var ordinary = postlimit.Limit{Max: tweettext.MaxWeightedLength, Reason: "280: the limit of an ordinary post"}

// knownLimit is l's last known limit, or an ordinary post's.
func knownLimit(l PostLimiter) postlimit.Limit {
	if l == nil {
		return ordinary
	}
	return l.Known()
}

// LimitFor returns the limit for texts: an ordinary post's when every
// one fits it, so that X is asked only about a post that needs more.
func LimitFor(ctx context.Context, l PostLimiter, texts ...string) (postlimit.Limit, error) {
	if l == nil {
		return ordinary, nil
	}
	for _, t := range texts {
		if tweettext.WeightedLength(t) > tweettext.MaxWeightedLength {
			return l.Limit(ctx)
		}
	}
	return ordinary, nil
}

// ThreadHint is the way out of a post that is too long for the account.
func ThreadHint() apperr.Hint {
	return apperr.Hint{Do: "split the text into a thread with x_post_thread (or x_post_thread_dry_run to check it first)"}
}

// checkLength refuses text over limit, naming field (and index, when it
// is a thread's post, >= 0), the weighted length and why the limit is
// what it is.
func checkLength(field, text string, index int, limit postlimit.Limit) error {
	n := tweettext.WeightedLength(text)
	if n <= limit.Max {
		return nil
	}
	name := field
	if index >= 0 {
		name = fmt.Sprintf("%s[%d]", field, index)
	}
	e := apperr.New(apperr.TweetTooLong, "%s: weighted length %d exceeds %d (%s)", name, n, limit.Max, limit.Reason).
		With("weighted_length", n).With("max_weighted_length", limit.Max).With("limit_reason", limit.Reason).
		WithHints(ThreadHint())
	if index >= 0 {
		e.With("tweet_index", index)
	}
	return e
}

// checkAccountLimit checks texts (a post, or a thread's posts when there
// are several) against the account's limit as X tells it now, right
// before sending: the limit validation used may be a day old.
func checkAccountLimit(ctx context.Context, d Deps, field string, texts ...string) error {
	limit, err := LimitFor(ctx, d.PostLimit, texts...)
	if err != nil {
		return err
	}
	return checkTexts(field, texts, limit)
}

// checkTexts checks a post (one text, no index) or a thread's posts.
func checkTexts(field string, texts []string, limit postlimit.Limit) error {
	if len(texts) == 1 && field == "text" {
		return checkLength(field, texts[0], -1, limit)
	}
	for i, t := range texts {
		if err := checkLength(field, t, i, limit); err != nil {
			return err
		}
	}
	return nil
}
