package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// gatewayErrors are the codes the gateway itself can produce.
var gatewayErrors = []apperr.Code{apperr.PolicyError, apperr.PolicyBlocked, apperr.PolicyRateLimited, apperr.PolicyHardRule,
	apperr.PolicyUserRule, apperr.PolicyBudget, apperr.IdempotencyConflict, apperr.MutationInFlight, apperr.OutcomeUnverified,
	apperr.DBError, apperr.XOutcomeUnknown, apperr.ApprovalQueueFull}

func mutationErrors(extra ...apperr.Code) []apperr.Code {
	out := append([]apperr.Code{}, xErrors...)
	out = append(out, gatewayErrors...)
	return append(out, extra...)
}

var (
	// additive creates something new on X.
	additive = Hints{OpenWorld: true}
	// additiveIdem sets state that a repeat leaves unchanged (like, follow).
	additiveIdem = Hints{Idempotent: true, OpenWorld: true}
	// removal undoes or deletes state.
	removal = Hints{Destructive: true, Idempotent: true, OpenWorld: true}
)

// mutate runs a call through the gateway and shapes the result.
func mutate(ctx context.Context, c *Call, tool string, params any, key string) (Result, error) {
	g, err := c.Deps.Gateway()
	if err != nil {
		return Result{}, err
	}
	resp, err := g.Do(ctx, gateway.Call{Tool: tool, Params: params, IdempotencyKey: key, Caller: "mcp"})
	m := envelope.Meta{CorrelationID: resp.CorrelationID, Rollback: resp.Rollback}
	if resp.RetryCount > 0 {
		rc := resp.RetryCount
		m.RetryCount = &rc
	}
	auditMeta(&m, resp)
	if err != nil {
		return Result{Meta: m}, err
	}
	return Result{Data: resp.Data, Meta: m}, nil
}

// auditMeta tells the caller when the gateway ran a call but could not
// record its outcome.
func auditMeta(m *envelope.Meta, resp gateway.Response) {
	if resp.AuditIncomplete {
		m.AuditIncomplete = true
		m.Warnings = append(m.Warnings, gateway.AuditIncompleteWarning)
	}
}

// PostTweetInput is x_post_tweet's input.
type PostTweetInput struct {
	Text           string   `json:"text" jsonschema:"the post text, at most 280 weighted characters"`
	MediaIDs       []string `json:"media_ids,omitempty" jsonschema:"up to 4 media ids from x_upload_media"`
	IdempotencyKey string   `json:"idempotency_key,omitempty" jsonschema:"optional caller key: a retry with the same key and parameters returns the first result; the same key with other parameters is an error"`
}

// ReplyInput is x_reply_to_tweet's input.
type ReplyInput struct {
	Text           string   `json:"text" jsonschema:"the reply text, at most 280 weighted characters"`
	InReplyToID    string   `json:"in_reply_to_id" jsonschema:"id of the tweet to reply to"`
	MediaIDs       []string `json:"media_ids,omitempty" jsonschema:"up to 4 media ids from x_upload_media"`
	IdempotencyKey string   `json:"idempotency_key,omitempty" jsonschema:"optional caller key: a retry with the same key and parameters returns the first result; the same key with other parameters is an error"`
}

// QuoteInput is x_quote_tweet's input.
type QuoteInput struct {
	Text           string   `json:"text" jsonschema:"the quote text, at most 280 weighted characters"`
	QuotedTweetID  string   `json:"quoted_tweet_id" jsonschema:"id of the tweet to quote"`
	MediaIDs       []string `json:"media_ids,omitempty" jsonschema:"up to 4 media ids from x_upload_media"`
	IdempotencyKey string   `json:"idempotency_key,omitempty" jsonschema:"optional caller key: a retry with the same key and parameters returns the first result; the same key with other parameters is an error"`
}

// TweetMutationInput acts on one tweet.
type TweetMutationInput struct {
	TweetID        string `json:"tweet_id" jsonschema:"the tweet's id (a decimal string)"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"optional caller key: a retry with the same key and parameters returns the first result; the same key with other parameters is an error"`
}

// UserMutationInput acts on one user.
type UserMutationInput struct {
	TargetUserID   string `json:"target_user_id" jsonschema:"the user's id (a decimal string)"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"optional caller key: a retry with the same key and parameters returns the first result; the same key with other parameters is an error"`
}

// ThreadInput is x_post_thread's input.
type ThreadInput struct {
	Tweets         []string   `json:"tweets" jsonschema:"the tweets in order; each is posted as a reply to the one before"`
	MediaIDs       [][]string `json:"media_ids,omitempty" jsonschema:"per-tweet media ids, by index"`
	IdempotencyKey string     `json:"idempotency_key,omitempty" jsonschema:"optional caller key: a retry with the same key and parameters returns the first result; the same key with other parameters is an error"`
}

// UploadInput is x_upload_media's input.
type UploadInput struct {
	FilePath       string `json:"file_path" jsonschema:"absolute path of a jpg, png, webp, gif or mp4 inside a configured media directory"`
	AltText        string `json:"alt_text,omitempty" jsonschema:"alt text sent to X (at most 1000 characters)"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"optional caller key: a retry with the same key and parameters returns the first result; the same key with other parameters is an error"`
}

func writeSpec(name, title, desc string, cat policy.Category, h Hints, out any, extra ...apperr.Code) Spec {
	return Spec{Name: name, Title: title, Description: desc + " Goes through the policy gateway: it may be routed to human approval, deduplicated or denied.",
		Category: string(cat), Mutation: true, Needs: Needs{X: true, DB: true}, Profiles: workflowOnly, Hints: h,
		Errors: mutationErrors(extra...), Output: out}
}

func tweetMutation(name, title, desc string, h Hints) *Tool {
	return def(writeSpec(name, title, desc, policy.CatEngage, h, actions.EngagementData(name, true, "")),
		func(ctx context.Context, c *Call, in TweetMutationInput) (Result, error) {
			if err := actions.CheckID("tweet_id", in.TweetID); err != nil {
				return Result{}, err
			}
			return mutate(ctx, c, name, actions.TweetIDParams{TweetID: in.TweetID}, in.IdempotencyKey)
		})
}

func xWriteTools() []*Tool {
	textErrs := []apperr.Code{apperr.TweetTooLong, apperr.XDuplicateContent}
	return []*Tool{
		def(writeSpec("x_post_tweet", "Post tweet", "Post a new tweet, optionally with media.", policy.CatWrite, additive, actions.PostedTweet{}, textErrs...),
			func(ctx context.Context, c *Call, in PostTweetInput) (Result, error) {
				p := actions.PostParams{Text: in.Text, MediaIDs: in.MediaIDs}
				if err := p.Validate("x_post_tweet"); err != nil {
					return Result{}, err
				}
				return mutate(ctx, c, "x_post_tweet", p, in.IdempotencyKey)
			}),
		def(writeSpec("x_reply_to_tweet", "Reply to tweet", "Reply to a tweet, optionally with media.", policy.CatWrite, additive, actions.PostedTweet{}, textErrs...),
			func(ctx context.Context, c *Call, in ReplyInput) (Result, error) {
				p := actions.PostParams{Text: in.Text, InReplyToID: in.InReplyToID, MediaIDs: in.MediaIDs}
				if err := p.Validate("x_reply_to_tweet"); err != nil {
					return Result{}, err
				}
				return mutate(ctx, c, "x_reply_to_tweet", p, in.IdempotencyKey)
			}),
		def(writeSpec("x_quote_tweet", "Quote tweet", "Quote a tweet with your own text, optionally with media.", policy.CatWrite, additive, actions.PostedTweet{}, textErrs...),
			func(ctx context.Context, c *Call, in QuoteInput) (Result, error) {
				p := actions.PostParams{Text: in.Text, QuotedTweetID: in.QuotedTweetID, MediaIDs: in.MediaIDs}
				if err := p.Validate("x_quote_tweet"); err != nil {
					return Result{}, err
				}
				return mutate(ctx, c, "x_quote_tweet", p, in.IdempotencyKey)
			}),
		def(writeSpec("x_delete_tweet", "Delete tweet", "Delete one of your tweets. Deletes always need human approval.", policy.CatDelete, removal, actions.DeletedTweet{}),
			func(ctx context.Context, c *Call, in TweetMutationInput) (Result, error) {
				if err := actions.CheckID("tweet_id", in.TweetID); err != nil {
					return Result{}, err
				}
				return mutate(ctx, c, "x_delete_tweet", actions.TweetIDParams{TweetID: in.TweetID}, in.IdempotencyKey)
			}),
		def(writeSpec("x_post_thread", "Post thread", "Post a thread: each tweet replies to the one before. If it breaks partway the posted ids are returned with thread_partial_failure.", policy.CatThread, additive, actions.PostedThread{}, apperr.TweetTooLong, apperr.ThreadPartial),
			func(ctx context.Context, c *Call, in ThreadInput) (Result, error) {
				p := actions.ThreadParams{Tweets: in.Tweets, MediaIDs: in.MediaIDs}
				if err := p.Validate(); err != nil {
					return Result{}, err
				}
				return mutate(ctx, c, "x_post_thread", p, in.IdempotencyKey)
			}),
		tweetMutation("x_like_tweet", "Like tweet", "Like a tweet.", additiveIdem),
		tweetMutation("x_unlike_tweet", "Unlike tweet", "Remove your like from a tweet.", removal),
		tweetMutation("x_retweet", "Retweet", "Retweet a tweet.", additiveIdem),
		tweetMutation("x_unretweet", "Undo retweet", "Undo your retweet of a tweet.", removal),
		tweetMutation("x_bookmark_tweet", "Bookmark tweet", "Bookmark a tweet.", additiveIdem),
		tweetMutation("x_unbookmark_tweet", "Remove bookmark", "Remove a tweet from your bookmarks.", removal),
		def(writeSpec("x_follow_user", "Follow user", "Follow a user.", policy.CatEngage, additiveIdem, actions.FollowState{}),
			func(ctx context.Context, c *Call, in UserMutationInput) (Result, error) {
				if err := actions.CheckID("target_user_id", in.TargetUserID); err != nil {
					return Result{}, err
				}
				return mutate(ctx, c, "x_follow_user", actions.UserIDParams{TargetUserID: in.TargetUserID}, in.IdempotencyKey)
			}),
		def(writeSpec("x_unfollow_user", "Unfollow user", "Unfollow a user.", policy.CatEngage, removal, actions.FollowState{}),
			func(ctx context.Context, c *Call, in UserMutationInput) (Result, error) {
				if err := actions.CheckID("target_user_id", in.TargetUserID); err != nil {
					return Result{}, err
				}
				return mutate(ctx, c, "x_unfollow_user", actions.UserIDParams{TargetUserID: in.TargetUserID}, in.IdempotencyKey)
			}),
		def(writeSpec("x_upload_media", "Upload media", "Upload a jpg, png, webp, gif or mp4 from a configured media directory and send its alt text to X. The same bytes are uploaded once per 24 h; chunked uploads report progress.", policy.CatMedia, additiveIdem, actions.MediaResult{},
			apperr.UnsupportedMedia, apperr.FileReadError, apperr.MediaUploadError, apperr.MediaPathBlocked),
			func(ctx context.Context, c *Call, in UploadInput) (Result, error) {
				p, err := actions.PrepareUpload(in.FilePath, in.AltText, c.Deps.Cfg.MediaDirs())
				if err != nil {
					return Result{}, err
				}
				ctx = actions.WithProgress(ctx, progressNotifier(ctx, c))
				return mutate(ctx, c, "x_upload_media", p, in.IdempotencyKey)
			}),
	}
}

// progressNotifier forwards upload progress as MCP progress notifications
// when the client asked for them with a progress token.
func progressNotifier(ctx context.Context, c *Call) func(done, total int64) {
	if c.Req == nil || c.Req.Params == nil || c.Req.Session == nil {
		return nil
	}
	tok := c.Req.Params.GetProgressToken()
	if tok == nil {
		return nil
	}
	return func(done, total int64) {
		_ = c.Req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: tok, Progress: float64(done), Total: float64(total), Message: "uploading media",
		})
	}
}

// DryRunTweet describes one tweet of a dry run.
type DryRunTweet struct {
	Index          int      `json:"index"`
	Text           string   `json:"text"`
	WeightedLength int      `json:"weighted_length"`
	Valid          bool     `json:"valid"`
	MediaIDs       []string `json:"media_ids"`
	ChainAction    string   `json:"chain_action"`
}

// DryRunReport is the data of the dry-run tools.
type DryRunReport struct {
	DryRun           bool          `json:"dry_run"`
	Valid            bool          `json:"valid"`
	Tweets           []DryRunTweet `json:"tweets"`
	PolicyDecision   string        `json:"policy_decision"`
	PolicyRuleID     string        `json:"policy_rule_id,omitempty"`
	PolicyReason     string        `json:"policy_reason,omitempty"`
	PolicyWouldAllow bool          `json:"policy_would_allow"`
	XAvailable       bool          `json:"x_client_available"`
}

func dryRun(ctx context.Context, c *Call, tool string, texts []string, media [][]string) (Result, error) {
	rep := DryRunReport{DryRun: true, Valid: true}
	for i, t := range texts {
		n := tweettext.WeightedLength(t)
		ok := tweettext.Parse(t).Valid
		var ids []string
		if i < len(media) {
			ids = media[i]
		}
		if ids == nil {
			ids = []string{}
		}
		chain := "post_tweet"
		if i > 0 {
			chain = "reply_to_previous"
		}
		rep.Tweets = append(rep.Tweets, DryRunTweet{Index: i, Text: t, WeightedLength: n, Valid: ok, MediaIDs: ids, ChainAction: chain})
		rep.Valid = rep.Valid && ok
	}
	_, xerr := c.Deps.X()
	rep.XAvailable = xerr == nil
	if c.Deps.Policy != nil {
		cat := policy.CatWrite
		if tool == "x_post_thread" {
			cat = policy.CatThread
		}
		d, err := c.Deps.Policy.Check(ctx, policy.Request{Tool: tool, Category: cat, Mode: c.Deps.Cfg.Mode,
			ApprovalMode: c.Deps.Cfg.EffectiveApprovalMode(), Now: c.Deps.Now()})
		if err != nil {
			return Result{}, apperr.Wrap(apperr.PolicyError, err, "policy evaluation failed: %v", err)
		}
		rep.PolicyDecision, rep.PolicyRuleID, rep.PolicyReason = string(d.Outcome), d.RuleID, d.Reason
		rep.PolicyWouldAllow = d.Outcome == policy.Allow
	} else {
		rep.PolicyDecision = "unavailable"
	}
	return Result{Data: rep}, nil
}

// DryRunTweetInput is x_post_tweet_dry_run's input.
type DryRunTweetInput struct {
	Text     string   `json:"text" jsonschema:"the post text to check"`
	MediaIDs []string `json:"media_ids,omitempty" jsonschema:"media ids that would be attached"`
}

// DryRunThreadInput is x_post_thread_dry_run's input.
type DryRunThreadInput struct {
	Tweets   []string   `json:"tweets" jsonschema:"the tweets to check"`
	MediaIDs [][]string `json:"media_ids,omitempty" jsonschema:"per-tweet media ids"`
}

func dryRunTools() []*Tool {
	spec := func(name, title, desc string) Spec {
		return Spec{Name: name, Title: title, Description: desc, Category: "write", Needs: Needs{DB: true},
			Profiles: workflowOnly, Hints: readLocal, Output: DryRunReport{}, Errors: []apperr.Code{apperr.PolicyError}}
	}
	return []*Tool{
		def(spec("x_post_tweet_dry_run", "Dry-run a tweet", "Check a tweet without posting: weighted length, validity, and what the policy would decide. No side effects."),
			func(ctx context.Context, c *Call, in DryRunTweetInput) (Result, error) {
				return dryRun(ctx, c, "x_post_tweet", []string{in.Text}, [][]string{in.MediaIDs})
			}),
		def(spec("x_post_thread_dry_run", "Dry-run a thread", "Check a thread without posting: each tweet's weighted length and validity, and what the policy would decide. No side effects."),
			func(ctx context.Context, c *Call, in DryRunThreadInput) (Result, error) {
				if len(in.Tweets) == 0 {
					return Result{}, apperr.New(apperr.InvalidInput, "tweets: at least one tweet is required")
				}
				return dryRun(ctx, c, "x_post_thread", in.Tweets, in.MediaIDs)
			}),
	}
}
