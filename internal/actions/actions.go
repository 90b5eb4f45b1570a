// Package actions defines how each mutation tool runs from its stored
// parameters. The gateway executes these and nothing else, so a queued item
// replays exactly the call that was approved.
package actions

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/postlimit"
	"github.com/tuitbot/tuitbot/internal/safefetch"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Deps are what the actions need.
type Deps struct {
	// X returns the client or why there is none (x_not_configured).
	X  func() (*xapi.Client, error)
	DB *store.DB
	// MediaDirs confine x_upload_media.
	MediaDirs []string
	// URLFetcher downloads for x_upload_media_from_url; nil refuses it.
	URLFetcher *safefetch.Fetcher
	// MaxURLBytes is the largest video it downloads (media.max_url_bytes).
	MaxURLBytes int64
	AccountID   string
	Now         func() time.Time
	// PostLimit tells how long the account's posts may be; nil allows
	// ordinary posts only.
	PostLimit PostLimiter
	// Recorder keeps what X took in the account's own ledgers; nil keeps
	// nothing. The composition root supplies it, since those ledgers belong
	// to packages that build on this one.
	Recorder Recorder
}

// Recorder is told about each post X took, for analytics and the
// autopilot's caps. Recording is best effort: the post already happened and
// is in the audit row, so a failure is reported to nobody.
type Recorder interface {
	// ReplySent records a reply to targetTweetID.
	ReplySent(ctx context.Context, targetTweetID, replyTweetID, text string) error
	// Posted records a tweet or a thread (kind "tweet" or "thread", by its
	// first post).
	Posted(ctx context.Context, kind, tweetID, text string) error
}

func (d Deps) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

// Register adds every mutation action to g.
func Register(g *gateway.Gateway, d Deps) {
	for _, a := range All(d) {
		g.Register(a)
	}
}

// All returns the gateway actions, one per mutation, each named and
// categorised by its Mutation.
func All(d Deps) []*gateway.Action {
	var out []*gateway.Action
	for _, m := range Mutations() {
		a := m.action(d, m)
		a.Tool, a.Category = m.Name, m.Category
		a.Ready = d.ready
		if a.Intent == nil && !m.Raw {
			a.Intent = ownIntent(m.Name)
		}
		if a.Request == nil {
			// Typed tools' parameters hold no secrets: kept whole, they say
			// exactly what was asked of X.
			a.Request = func(params json.RawMessage) []byte { return params }
		}
		out = append(out, a)
	}
	return out
}

// ready reports why X calls cannot be attempted now, if they cannot.
func (d Deps) ready(ctx context.Context) error {
	x, err := client(d)
	if err != nil {
		return err
	}
	return x.Ready(ctx)
}

// Wrapper is a mutation tool with no action of its own: it reaches X only
// through other gateway calls, and the gateway admits it by name first
// (gateway.Admit), so policy configuration can name it.
type Wrapper struct {
	Tool     string
	Category policy.Category
}

// Wrappers lists the wrapper tools.
func Wrappers() []Wrapper {
	return []Wrapper{
		{Tool: ComposeTool, Category: policy.CatContent},
		{Tool: ProposeTool, Category: policy.CatWrite},
		{Tool: QueueTool, Category: policy.CatContent},
	}
}

// The wrapper tools' names.
const (
	ComposeTool = "compose_tweet"
	ProposeTool = "propose_and_queue_replies"
	QueueTool   = "schedule_in_queue"
)

// decode reads stored parameters strictly.
// decodeValid decodes params strictly into a T and validates it.
func decodeValid[T interface{ Validate() error }](params json.RawMessage) (T, error) {
	var p T
	if err := decode(params, &p); err != nil {
		return p, err
	}
	return p, p.Validate()
}

func decode(params json.RawMessage, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(params)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return apperr.New(apperr.InvalidInput, "parameters: %v", err)
	}
	return nil
}

// CheckID validates an X id: a decimal string of 1 to 19 digits.
func CheckID(field, id string) error { return argcheck.ID(field, id) }

// CheckText applies the twitter-text weighted length of an ordinary post
// (280) to a tweet; index is the tweet's position in a thread, or -1.
func CheckText(field, text string, index int, allowEmpty bool) error {
	return CheckTextWithin(field, text, index, allowEmpty, ordinary)
}

// CheckTextWithin is CheckText against the account's limit.
func CheckTextWithin(field, text string, index int, allowEmpty bool, limit postlimit.Limit) error {
	if strings.TrimSpace(text) == "" {
		if allowEmpty {
			return nil
		}
		return apperr.New(apperr.InvalidInput, "%s: must not be empty", field)
	}
	return checkLength(field, text, index, limit)
}

func checkMedia(field string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return argcheck.Field(field, ids, mediaLimit())
}

func client(d Deps) (*xapi.Client, error) {
	if d.X == nil {
		return nil, apperr.New(apperr.XNotConfigured, "X is not configured").WithHints(apperr.SignIn()...)
	}
	return d.X()
}

func rb(undo string, params map[string]any, note string) *envelope.Rollback {
	return &envelope.Rollback{Reversible: true, UndoTool: undo, UndoParams: params, Note: note}
}

func irreversible(note string) *envelope.Rollback {
	return &envelope.Rollback{Reversible: false, Note: note}
}

// PostParams are the stored parameters of x_post_tweet, x_reply_to_tweet
// and x_quote_tweet.
type PostParams struct {
	Text          string       `json:"text"`
	InReplyToID   string       `json:"in_reply_to_id,omitempty"`
	QuotedTweetID string       `json:"quoted_tweet_id,omitempty"`
	MediaIDs      []string     `json:"media_ids,omitempty"`
	Options       *PostOptions `json:"options,omitempty"`
}

// Validate checks p for tool, as an ordinary post.
func (p PostParams) Validate(tool string) error { return p.ValidateWithin(tool, ordinary) }

// ValidateWithin checks p for tool against the account's post limit.
func (p PostParams) ValidateWithin(tool string, limit postlimit.Limit) error {
	if err := CheckTextWithin("text", p.Text, -1, len(p.MediaIDs) > 0 && tool == "x_post_tweet", limit); err != nil {
		return err
	}
	switch tool {
	case "x_reply_to_tweet":
		if err := CheckID("in_reply_to_id", p.InReplyToID); err != nil {
			return err
		}
	case "x_quote_tweet":
		if err := CheckID("quoted_tweet_id", p.QuotedTweetID); err != nil {
			return err
		}
	}
	if tool != "x_reply_to_tweet" && p.InReplyToID != "" {
		return apperr.New(apperr.InvalidInput, "in_reply_to_id: only x_reply_to_tweet takes it")
	}
	if tool != "x_quote_tweet" && p.QuotedTweetID != "" {
		return apperr.New(apperr.InvalidInput, "quoted_tweet_id: only x_quote_tweet takes it")
	}
	if err := checkMedia("media_ids", p.MediaIDs); err != nil {
		return err
	}
	return p.Options.validate("options", len(p.MediaIDs), p.QuotedTweetID != "")
}

// PostedTweet is the success data of a tweet-creating tool.
type PostedTweet struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

func postAction(d Deps, m Mutation) *gateway.Action {
	tool := m.Name
	parse := func(params json.RawMessage) (PostParams, error) {
		var p PostParams
		if err := decode(params, &p); err != nil {
			return p, err
		}
		return p, p.ValidateWithin(tool, knownLimit(d.PostLimit))
	}
	return &gateway.Action{
		EditableText: "text",
		Editable:     []string{"options"},
		Validate:     func(params json.RawMessage) error { _, err := parse(params); return err },
		Verify:       verifyPost(d, parse),
		Target: func(params json.RawMessage) string {
			p, err := parse(params)
			if err != nil {
				return ""
			}
			return p.InReplyToID + p.QuotedTweetID // Validate allows at most one, and only to its tool
		},
		Cost: func(params json.RawMessage) float64 {
			p, _ := parse(params)
			return xapi.EstimatePost(p.Text, p.InReplyToID != "")
		},
		Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
			p, err := parse(params)
			if err != nil {
				return gateway.Result{}, err
			}
			if err := checkAccountLimit(ctx, d, "text", p.Text); err != nil {
				return gateway.Result{}, err
			}
			x, err := client(d)
			if err != nil {
				return gateway.Result{}, err
			}
			xp := xapi.PostParams{Text: p.Text, ReplyTo: p.InReplyToID, QuoteOf: p.QuotedTweetID, MediaIDs: p.MediaIDs}
			p.Options.apply(&xp)
			tw, info, err := x.PostTweet(ctx, xp)
			if err != nil {
				return gateway.Result{RetryCount: info.RetryCount}, err
			}
			recordOriginal(ctx, d, tool, tw.ID, p)
			return gateway.Result{
				Data:       PostedTweet{ID: tw.ID, Text: tw.Text},
				Rollback:   undoOf(m, tw.ID),
				RetryCount: info.RetryCount,
			}, nil
		},
	}
}

// recordOriginal keeps our own posts for analytics; best effort, since the
// post itself already happened and is in the audit row.
func recordOriginal(ctx context.Context, d Deps, tool, id string, p PostParams) {
	if d.Recorder == nil {
		return
	}
	if tool == "x_reply_to_tweet" {
		_ = d.Recorder.ReplySent(ctx, p.InReplyToID, id, p.Text)
		return
	}
	_ = d.Recorder.Posted(ctx, "tweet", id, p.Text)
}

func accountOf(d Deps) string {
	if d.AccountID == "" {
		return "default"
	}
	return d.AccountID
}

// TweetIDParams are the arguments and stored parameters of tools that take
// one tweet.
type TweetIDParams struct {
	TweetID string `json:"tweet_id" jsonschema:"the tweet's id (a decimal string)"`
}

// Limits declares the arguments' limits.
func (TweetIDParams) Limits() argcheck.Limits { return argcheck.Limits{"tweet_id": {ID: true}} }

// DeletedTweet is x_delete_tweet's data.
type DeletedTweet struct {
	Deleted bool   `json:"deleted"`
	TweetID string `json:"tweet_id"`
}

func deleteAction(d Deps, m Mutation) *gateway.Action {
	return idAction[TweetIDParams](d, m,
		func(ctx context.Context, x *xapi.Client, id string) (any, *envelope.Rollback, xapi.CallInfo, error) {
			ok, info, err := x.DeleteTweet(ctx, id)
			return DeletedTweet{Deleted: ok, TweetID: id}, irreversible(m.Irreversible), info, err
		})
}

// idParams are stored parameters that name one X object.
type idParams interface {
	TweetIDParams | UserIDParams | DMEventIDParams
}

func idOf[P idParams](p P) (field, id string) {
	switch v := any(p).(type) {
	case TweetIDParams:
		return "tweet_id", v.TweetID
	case UserIDParams:
		return "target_user_id", v.TargetUserID
	case DMEventIDParams:
		return "dm_event_id", v.DMEventID
	}
	return "", ""
}

// idAction builds an action on one X object: decode and validate the id,
// get the client, run do, shape the result.
func idAction[P idParams](d Deps, m Mutation,
	do func(ctx context.Context, x *xapi.Client, id string) (any, *envelope.Rollback, xapi.CallInfo, error)) *gateway.Action {
	parse := func(params json.RawMessage) (string, error) {
		var p P
		if err := decode(params, &p); err != nil {
			return "", err
		}
		field, id := idOf(p)
		return id, CheckID(field, id)
	}
	return &gateway.Action{
		Validate: func(params json.RawMessage) error { _, err := parse(params); return err },
		Cost:     func(json.RawMessage) float64 { return costOf(m) },
		// Tools on one tweet name it as their target; a user is not one.
		Target: func(params json.RawMessage) string {
			var p P
			if decode(params, &p) != nil {
				return ""
			}
			if field, id := idOf(p); field == "tweet_id" && CheckID(field, id) == nil {
				return id
			}
			return ""
		},
		Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
			id, err := parse(params)
			if err != nil {
				return gateway.Result{}, err
			}
			x, err := client(d)
			if err != nil {
				return gateway.Result{}, err
			}
			data, undo, info, err := do(ctx, x, id)
			if err != nil {
				return gateway.Result{RetryCount: info.RetryCount}, err
			}
			return gateway.Result{Data: data, Rollback: undo, RetryCount: info.RetryCount}, nil
		},
	}
}
