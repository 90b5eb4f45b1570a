package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/postlimit"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// MaxThreadTweets bounds one thread.
const MaxThreadTweets = 25

// ThreadParams are x_post_thread's stored parameters: every tweet and every
// tweet's media, all part of the fingerprint.
type ThreadParams struct {
	Tweets   []string     `json:"tweets" jsonschema:"the tweets in order; each is posted as a reply to the one before"`
	MediaIDs [][]string   `json:"media_ids,omitempty" jsonschema:"per-tweet media ids, by index"`
	Options  *PostOptions `json:"options,omitempty" jsonschema:"settings of the first post"`
}

// Limits declares the arguments' limits.
func (ThreadParams) Limits() argcheck.Limits {
	return argcheck.Limits{
		"tweets":    {MinItems: 1, MaxItems: MaxThreadTweets},
		"media_ids": {ID: true, MaxItems: MaxThreadTweets},
	}
}

// Validate checks every tweet as an ordinary post; errors name the
// offending index.
func (p ThreadParams) Validate() error { return p.ValidateWithin(ordinary) }

// ValidateWithin checks every tweet against the account's post limit.
func (p ThreadParams) ValidateWithin(limit postlimit.Limit) error {
	if err := argcheck.Check(reflect.ValueOf(p), p.Limits()); err != nil {
		return err
	}
	if len(p.MediaIDs) > len(p.Tweets) {
		return apperr.New(apperr.InvalidInput, "media_ids: %d lists for %d tweets", len(p.MediaIDs), len(p.Tweets))
	}
	for i, t := range p.Tweets {
		if err := CheckTextWithin("tweets", t, i, false, limit); err != nil {
			return err
		}
	}
	for i, ids := range p.MediaIDs {
		if err := checkMedia(fmt.Sprintf("media_ids[%d]", i), ids); err != nil {
			return err
		}
	}
	first := 0
	if len(p.MediaIDs) > 0 {
		first = len(p.MediaIDs[0])
	}
	return p.Options.validate("options", first, false)
}

// ThreadParts is what a thread of n posts posts, for the limits of the
// tools that post the same way: its first post is an x_post_tweet, and each
// later post replies to the one before, as x_reply_to_tweet does. A limit
// on either tool therefore counts a thread's posts too.
func ThreadParts(n int) []policy.Part {
	cats := map[string]policy.Category{}
	for _, m := range Mutations() {
		cats[m.Name] = m.Category
	}
	var out []policy.Part
	if n > 0 {
		out = append(out, policy.Part{Identity: policy.Identity{Tool: "x_post_tweet", Category: cats["x_post_tweet"]}, Count: 1})
	}
	if n > 1 {
		out = append(out, policy.Part{Identity: policy.Identity{Tool: "x_reply_to_tweet", Category: cats["x_reply_to_tweet"]}, Count: n - 1})
	}
	return out
}

// PostedThread is x_post_thread's data.
type PostedThread struct {
	ThreadTweetIDs []string `json:"thread_tweet_ids"`
	TweetCount     int      `json:"tweet_count"`
	RootTweetID    string   `json:"root_tweet_id"`
}

// ThreadFailure is the data of a thread_partial_failure.
type ThreadFailure struct {
	PostedTweetIDs []string `json:"posted_tweet_ids"`
	FailedAtIndex  int      `json:"failed_at_index"`
	Cause          string   `json:"cause"`
}

func threadRollback(ids []string) *envelope.Rollback {
	if len(ids) == 0 {
		return irreversible("Nothing was posted.")
	}
	rev := make([]string, len(ids))
	for i, id := range ids {
		rev[len(ids)-1-i] = id
	}
	return rb("x_delete_tweet", map[string]any{"tweet_ids": rev}, "Delete each tweet with x_delete_tweet, last first.")
}

func threadAction(d Deps, _ Mutation) *gateway.Action {
	parse := func(params json.RawMessage) (ThreadParams, error) {
		var p ThreadParams
		if err := decode(params, &p); err != nil {
			return p, err
		}
		return p, p.ValidateWithin(knownLimit(d.PostLimit))
	}
	return &gateway.Action{
		// A human edits a thread post by post: the page sends the whole
		// list with one post changed, validated like a new thread.
		Editable: []string{"tweets"},
		Validate: func(params json.RawMessage) error { _, err := parse(params); return err },
		Intent: func(params json.RawMessage) (string, json.RawMessage, bool) {
			p, err := parse(params)
			if err != nil {
				return "", nil, false
			}
			return threadIntent(p, params)
		},
		Parts: func(params json.RawMessage) []policy.Part {
			p, _ := parse(params)
			return ThreadParts(len(p.Tweets))
		},
		Cost: func(params json.RawMessage) float64 {
			p, _ := parse(params)
			var sum float64
			// Every post after the first replies to the account's own
			// post before it: no summoned reply, so priced as a post.
			for _, t := range p.Tweets {
				sum += xapi.EstimatePost(t, false)
			}
			return sum
		},
		Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
			p, err := parse(params)
			if err != nil {
				return gateway.Result{}, err
			}
			if err := checkAccountLimit(ctx, d, "tweets", p.Tweets...); err != nil {
				return gateway.Result{}, err
			}
			x, err := client(d)
			if err != nil {
				return gateway.Result{}, err
			}
			var ids []string
			retries := 0
			for i, text := range p.Tweets {
				pp := xapi.PostParams{Text: text}
				if i > 0 {
					pp.ReplyTo = ids[i-1]
				}
				if i < len(p.MediaIDs) {
					pp.MediaIDs = p.MediaIDs[i]
				}
				if i == 0 {
					p.Options.apply(&pp)
				}
				tw, info, err := x.PostTweet(ctx, pp)
				retries += info.RetryCount
				if err != nil {
					if i == 0 {
						return gateway.Result{RetryCount: retries}, err
					}
					cause := apperr.As(err)
					fail := ThreadFailure{PostedTweetIDs: ids, FailedAtIndex: i, Cause: string(cause.Code) + ": " + cause.Message}
					e := apperr.New(apperr.ThreadPartial, "thread broke at tweet %d after posting %d tweets (%s); do not repost it whole", i, len(ids), cause.Code)
					e.Data = fail
					return gateway.Result{Data: fail, Rollback: threadRollback(ids), RetryCount: retries}, e
				}
				ids = append(ids, tw.ID)
			}
			if d.Recorder != nil {
				_ = d.Recorder.Posted(ctx, "thread", ids[0], p.Tweets[0])
			}
			return gateway.Result{
				Data:       PostedThread{ThreadTweetIDs: ids, TweetCount: len(ids), RootTweetID: ids[0]},
				Rollback:   threadRollback(ids),
				RetryCount: retries,
			}, nil
		},
	}
}
