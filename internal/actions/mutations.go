package actions

import (
	"context"
	"net/http"
	"reflect"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/postlimit"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xrequest"
)

// Mutation is the one definition of a mutation tool: its name, category,
// arguments and how they become stored parameters, the data it returns and
// the gateway action that runs it. The MCP registry row and the gateway
// action are both derived from it, so they cannot disagree.
type Mutation struct {
	Name, Title string
	// Description says what the tool does; the server adds how the gateway
	// treats it.
	Description string
	Category    policy.Category
	// Destructive and Idempotent describe the effect on X, for clients.
	Destructive, Idempotent bool
	// Errors are the codes it can return beyond every X mutation's.
	Errors []apperr.Code
	// Input is the arguments' type (without the idempotency key, which the
	// server adds to every mutation); it declares its limits
	// (argcheck.Limited). Output is the type of the success data.
	Input, Output reflect.Type
	// Raw marks the universal request tools, whose endpoint is whatever
	// the caller names.
	Raw bool
	// Row names the typed tool whose endpoint-table row this mutation
	// calls, when that is not its own (a reply posts like x_post_tweet);
	// its price, retry class and undo come from that row.
	Row string
	// Irreversible says why the effect cannot be undone, for a mutation
	// whose endpoint row has no inverse.
	Irreversible string
	// ApprovalUnlessNamed marks a tool that needs approval unless the rule
	// that allows it names it (policy.Config.ApprovalUnlessNamed): a
	// wildcard or category allow does not let it through.
	ApprovalUnlessNamed bool

	prepare func(in any, env Env) (any, error)
	action  func(d Deps, m Mutation) *gateway.Action
}

// row is the name of the tool whose endpoint-table rows m calls.
func (m Mutation) row() string {
	if m.Row != "" {
		return m.Row
	}
	return m.Name
}

// Endpoints returns the endpoint-table rows m calls; none for the universal
// request tools.
func (m Mutation) Endpoints(t *xapi.Endpoints) []xapi.Endpoint { return t.ByTool(m.row()) }

// Env is what turning arguments into stored parameters may need.
type Env struct {
	// MediaDirs confine x_upload_media's file_path.
	MediaDirs []string
	// Ctx bounds asking X for the account's post limit; nil is
	// context.Background.
	Ctx context.Context
	// PostLimit tells how long the account's posts may be; nil allows
	// ordinary posts only.
	PostLimit PostLimiter
}

// limit is the post limit for texts (see resolveLimit).
func (e Env) limit(texts ...string) (postlimit.Limit, error) {
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return LimitFor(ctx, e.PostLimit, texts...)
}

// Prepare validates decoded arguments (a value of m.Input) and turns them
// into the parameters the gateway stores, replays and fingerprints.
func (m Mutation) Prepare(in any, env Env) (any, error) { return m.prepare(in, env) }

// define binds a mutation to its argument and data types.
func define[In, Out any](m Mutation, prepare func(In, Env) (any, error), action func(Deps, Mutation) *gateway.Action) Mutation {
	m.Input, m.Output = reflect.TypeFor[In](), reflect.TypeFor[Out]()
	m.prepare = func(in any, env Env) (any, error) {
		v, ok := in.(In)
		if !ok {
			return nil, apperr.New(apperr.InternalError, "%s: arguments of type %T, want %s", m.Name, in, m.Input)
		}
		return prepare(v, env)
	}
	m.action = action
	return m
}

// Mutations lists every mutation tool that reaches X through the gateway.
func Mutations() []Mutation {
	textErrs := []apperr.Code{apperr.TweetTooLong, apperr.XDuplicateContent}
	out := []Mutation{
		define[PostInput, PostedTweet](Mutation{Name: "x_post_tweet", Title: "Post tweet", Category: policy.CatWrite, Errors: textErrs,
			Description: "Post a new tweet, optionally with media."},
			func(in PostInput, env Env) (any, error) {
				return validated(env, PostParams{Text: in.Text, MediaIDs: in.MediaIDs, Options: in.Options.normalized()}, "x_post_tweet")
			}, postAction),
		define[ReplyInput, PostedTweet](Mutation{Name: "x_reply_to_tweet", Title: "Reply to tweet", Category: policy.CatWrite, Row: "x_post_tweet", Errors: textErrs,
			Description: "Reply to a tweet, optionally with media."},
			func(in ReplyInput, env Env) (any, error) {
				return validated(env, PostParams{Text: in.Text, InReplyToID: in.InReplyToID, MediaIDs: in.MediaIDs, Options: in.Options.normalized()}, "x_reply_to_tweet")
			}, postAction),
		define[QuoteInput, PostedTweet](Mutation{Name: "x_quote_tweet", Title: "Quote tweet", Category: policy.CatWrite, Row: "x_post_tweet", Errors: textErrs,
			Description: "Quote a tweet with your own text, optionally with media."},
			func(in QuoteInput, env Env) (any, error) {
				return validated(env, PostParams{Text: in.Text, QuotedTweetID: in.QuotedTweetID, MediaIDs: in.MediaIDs, Options: in.Options.normalized()}, "x_quote_tweet")
			}, postAction),
		define[TweetIDParams, DeletedTweet](Mutation{Name: "x_delete_tweet", Title: "Delete tweet", Category: policy.CatDelete, Irreversible: "Deletion is permanent.",
			Destructive: true, Idempotent: true,
			Description: "Delete one of your tweets. Deletes always need human approval."},
			same[TweetIDParams], deleteAction),
		define[ThreadParams, PostedThread](Mutation{Name: "x_post_thread", Title: "Post thread", Category: policy.CatThread, Row: "x_post_tweet",
			Errors:      []apperr.Code{apperr.TweetTooLong, apperr.ThreadPartial},
			Description: "Post a thread: each tweet replies to the one before. If it breaks partway the posted ids are returned with thread_partial_failure."},
			func(in ThreadParams, env Env) (any, error) {
				in.Options = in.Options.normalized()
				limit, err := env.limit(in.Tweets...)
				if err != nil {
					return nil, err
				}
				return in, in.ValidateWithin(limit)
			}, threadAction),
		editMutation(),
	}
	out = append(out, engageMutations()...)
	out = append(out, listMutations()...)
	out = append(out, dmMutations()...)
	out = append(out,
		define[UploadInput, MediaResult](Mutation{Name: "x_upload_media", Title: "Upload media", Category: policy.CatMedia, Idempotent: true,
			Irreversible: "Uploaded media cannot be deleted; it expires after 24 hours unless attached to a post.",
			Errors:       []apperr.Code{apperr.UnsupportedMedia, apperr.FileReadError, apperr.MediaUploadError, apperr.MediaPathBlocked},
			Description:  "Upload a jpg, png, webp, gif or mp4 from a configured media directory and send its alt text to X. The same bytes are uploaded once per 24 h; chunked uploads report progress."},
			func(in UploadInput, env Env) (any, error) {
				return PrepareUpload(in.FilePath, in.AltText, env.MediaDirs)
			}, uploadAction),
		define[UploadURLInput, URLMediaResult](Mutation{Name: "x_upload_media_from_url", Title: "Upload media from a URL", Category: policy.CatMedia,
			Idempotent: true, Row: "x_upload_media",
			Irreversible: "Uploaded media cannot be deleted; it expires after 24 hours unless attached to a post.",
			Errors: []apperr.Code{apperr.UnsupportedMedia, apperr.MediaUploadError, apperr.MediaURLBlocked, apperr.MediaTooLarge,
				apperr.MediaDownloadError},
			Description: "Download a jpg, png, webp, gif or mp4 from an https URL on a public host and upload it like x_upload_media, with its alt text. " +
				"Addresses on this host's network, credentials in the URL, other ports and more than 3 redirects are refused; " +
				"images stop at 5 MB, GIFs at 15 MB and videos at media.max_url_bytes, and the declared type must match the bytes."},
			prepareUploadURL, uploadURLAction),
	)
	return append(out, universalMutations()...)
}

// reflectOf is v as a reflect.Value, for argcheck.
func reflectOf(v any) reflect.Value { return reflect.ValueOf(v) }

// validated returns p when it is valid for tool.
// validated checks a post against the account's limit, asking X for it
// only when the text is longer than an ordinary post.
func validated(env Env, p PostParams, tool string) (any, error) {
	limit, err := env.limit(p.Text)
	if err != nil {
		return nil, err
	}
	return p, p.ValidateWithin(tool, limit)
}

// same stores arguments that are already the parameters, once they pass
// their declared limits.
func same[P argcheck.Limited](in P, _ Env) (any, error) {
	return in, argcheck.Check(reflect.ValueOf(in), in.Limits())
}

func universalMutations() []Mutation {
	raw := func(method string) func(RawWriteInput, Env) (any, error) {
		return func(in RawWriteInput, env Env) (any, error) {
			p := RawParams{Method: method, Host: in.Host, Path: in.Path, Query: in.Query, Headers: in.Headers, Body: in.Body}
			c, err := p.Check()
			if err != nil {
				return p, err
			}
			return p, postWorkOf(c).prepare(env)
		}
	}
	return []Mutation{
		define[RawWriteInput, RawData](Mutation{Name: "x_post", Title: "Raw POST", Category: policy.CatUniversal, Raw: true, Destructive: true,
			Errors:      []apperr.Code{apperr.XRequestBlocked, apperr.TweetTooLong, apperr.EditWindowClosed},
			Description: "POST to any X API path on an allowed host. An HTTP error status is still success: read data.status."},
			raw(http.MethodPost), universalAction(http.MethodPost)),
		define[RawWriteInput, RawData](Mutation{Name: "x_put", Title: "Raw PUT", Category: policy.CatUniversal, Raw: true, Destructive: true, Idempotent: true,
			Errors:      []apperr.Code{apperr.XRequestBlocked},
			Description: "PUT to any X API path on an allowed host. An HTTP error status is still success: read data.status."},
			raw(http.MethodPut), universalAction(http.MethodPut)),
		define[RawRequestInput, RawData](Mutation{Name: "x_delete", Title: "Raw DELETE", Category: policy.CatUniversal, Raw: true, Destructive: true, Idempotent: true,
			Errors:      []apperr.Code{apperr.XRequestBlocked},
			Description: "DELETE any X API path on an allowed host. Deleting a tweet this way needs approval like x_delete_tweet."},
			func(in RawRequestInput, env Env) (any, error) {
				return raw(http.MethodDelete)(RawWriteInput{RawRequestInput: in}, env)
			}, universalAction(http.MethodDelete)),
	}
}

// mediaLimit is the rule of a post's media_ids.
func mediaLimit() argcheck.Rule { return argcheck.Rule{ID: true, MaxItems: xapi.MaxMediaPerPost} }

// PostInput is x_post_tweet's arguments.
type PostInput struct {
	Text     string       `json:"text" jsonschema:"the post text, at most 280 weighted characters"`
	MediaIDs []string     `json:"media_ids,omitempty" jsonschema:"up to 4 media ids from x_upload_media"`
	Options  *PostOptions `json:"options,omitempty" jsonschema:"optional post settings"`
}

// Limits declares the arguments' limits.
func (PostInput) Limits() argcheck.Limits { return argcheck.Limits{"media_ids": mediaLimit()} }

// ReplyInput is x_reply_to_tweet's arguments.
type ReplyInput struct {
	Text        string       `json:"text" jsonschema:"the reply text, at most 280 weighted characters"`
	InReplyToID string       `json:"in_reply_to_id" jsonschema:"id of the tweet to reply to"`
	MediaIDs    []string     `json:"media_ids,omitempty" jsonschema:"up to 4 media ids from x_upload_media"`
	Options     *PostOptions `json:"options,omitempty" jsonschema:"optional post settings"`
}

// Limits declares the arguments' limits.
func (ReplyInput) Limits() argcheck.Limits {
	return argcheck.Limits{"in_reply_to_id": {ID: true}, "media_ids": mediaLimit()}
}

// QuoteInput is x_quote_tweet's arguments.
type QuoteInput struct {
	Text          string       `json:"text" jsonschema:"the quote text, at most 280 weighted characters"`
	QuotedTweetID string       `json:"quoted_tweet_id" jsonschema:"id of the tweet to quote"`
	MediaIDs      []string     `json:"media_ids,omitempty" jsonschema:"up to 4 media ids from x_upload_media"`
	Options       *PostOptions `json:"options,omitempty" jsonschema:"optional post settings"`
}

// Limits declares the arguments' limits.
func (QuoteInput) Limits() argcheck.Limits {
	return argcheck.Limits{"quoted_tweet_id": {ID: true}, "media_ids": mediaLimit()}
}

// UploadInput is x_upload_media's arguments.
type UploadInput struct {
	FilePath string `json:"file_path" jsonschema:"absolute path of a jpg, png, webp, gif or mp4 inside a configured media directory"`
	AltText  string `json:"alt_text,omitempty" jsonschema:"alt text sent to X (at most 1000 characters)"`
}

// Limits declares the arguments' limits.
func (UploadInput) Limits() argcheck.Limits {
	return argcheck.Limits{"alt_text": {MaxLength: MaxAltText}}
}

// RawRequestInput is x_delete's arguments, and where x_post and x_put send.
type RawRequestInput struct {
	Path    string        `json:"path" jsonschema:"API path starting with /"`
	Host    string        `json:"host,omitempty" jsonschema:"api.x.com (default), upload.x.com or upload.twitter.com"`
	Query   []xrequest.KV `json:"query,omitempty" jsonschema:"query parameters as [{key, value}]"`
	Headers []xrequest.KV `json:"headers,omitempty" jsonschema:"extra headers as [{key, value}]; only Accept, Accept-Language, Content-Type (application/json), If-None-Match and User-Agent are accepted"`
}

// RawWriteInput is x_post's and x_put's arguments.
type RawWriteInput struct {
	RawRequestInput
	Body string `json:"body,omitempty" jsonschema:"JSON request body as a string; validated as JSON before sending"`
}
