package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/postlimit"
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

// additive creates something new on X.
var additive = Hints{OpenWorld: true}

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
	return Result{Data: resp.Answer(), Meta: m}, nil
}

// auditMeta tells the caller when the gateway ran a call but could not
// record its outcome.
func auditMeta(m *envelope.Meta, resp gateway.Response) {
	if resp.AuditIncomplete {
		m.AuditIncomplete = true
		m.Warnings = append(m.Warnings, gateway.AuditIncompleteWarning)
	}
}

// idempotencyKeyTag describes the key every mutation takes.
const idempotencyKeyTag = `json:"idempotency_key,omitempty" jsonschema:"retry key: the same key and parameters return the first result"`

// mutationTools derives the registry rows of the gateway's mutations (the
// universal request tools when raw is set, the typed ones otherwise) from
// their one definition in actions.
func mutationTools(raw bool) []*Tool {
	var out []*Tool
	for _, m := range actions.Mutations() {
		if m.Raw == raw {
			out = append(out, mutationTool(m))
		}
	}
	return out
}

// mutationTool is a mutation's registry row: its arguments plus the
// idempotency key, sent through the gateway.
func mutationTool(m actions.Mutation) *Tool {
	// Built on first use: a start lists and calls a few mutations, and
	// the schemas come generated (schemas_gen.go).
	in := sync.OnceValue(func() reflect.Type {
		return reflect.StructOf([]reflect.StructField{
			{Name: "Args", Type: m.Input, Anonymous: true},
			{Name: "IdempotencyKey", Type: reflect.TypeFor[string](), Tag: idempotencyKeyTag},
		})
	})
	t := &Tool{
		Name: m.Name, Title: m.Title, Category: string(m.Category), Mutation: true,
		// Clients that hide the server's instructions from the model still
		// show this: an agent must know a call may be queued, not run. The
		// short form costs 33 bytes a tool where the old sentence cost 93.
		Description: m.Description + " Via the gateway: may be queued.",
		Needs:       Needs{X: true, DB: true}, Profiles: workflowOnly, Errors: mutationErrors(m.Errors...),
		Hints:     Hints{Destructive: m.Destructive, Idempotent: m.Idempotent, OpenWorld: true},
		inputType: in, limitsOf: m.Input,
	}
	type call struct {
		args any
		key  string
	}
	t.parse = func(raw json.RawMessage) (any, error) {
		v := reflect.New(in()).Elem()
		if err := decodeStrict(raw, v.Addr().Interface()); err != nil {
			return nil, err
		}
		if err := argcheck.Check(v, t.limits()); err != nil {
			return nil, err
		}
		return call{args: v.Field(0).Interface(), key: v.Field(1).String()}, nil
	}
	t.handle = func(ctx context.Context, c *Call, a any) (Result, error) {
		in := a.(call)
		params, err := m.Prepare(in.args, actions.Env{MediaDirs: c.Deps.Cfg.MediaDirs(), Ctx: ctx, PostLimit: c.Deps.PostLimit})
		if err != nil {
			return Result{}, err
		}
		ctx = actions.WithProgress(ctx, progressNotifier(ctx, c))
		return mutate(ctx, c, m.Name, params, in.key)
	}
	return t
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
	DryRun bool `json:"dry_run"`
	Valid  bool `json:"valid"`
	// MaxWeightedLength is the longest post the account may write, and
	// LimitReason why: "25000: account is Premium (checked 2026-11-26)",
	// "280: x_api.max_post_length".
	MaxWeightedLength int           `json:"max_weighted_length"`
	LimitReason       string        `json:"limit_reason"`
	Tweets            []DryRunTweet `json:"tweets"`
	// Options are the post settings checked, as they would be sent.
	Options          *actions.PostOptions `json:"options,omitempty"`
	PolicyDecision   string               `json:"policy_decision"`
	PolicyRuleID     string               `json:"policy_rule_id,omitempty"`
	PolicyReason     string               `json:"policy_reason,omitempty"`
	PolicyWouldAllow bool                 `json:"policy_would_allow"`
	XAvailable       bool                 `json:"x_client_available"`
}

func dryRun(ctx context.Context, c *Call, tool string, texts []string, media [][]string, opts *actions.PostOptions) (Result, error) {
	var firstMedia int
	if len(media) > 0 {
		firstMedia = len(media[0])
	}
	if err := opts.Validate("options", firstMedia, false); err != nil {
		return Result{}, err
	}
	rep := DryRunReport{DryRun: true, Valid: true, Options: opts}
	limit := postlimit.Fixed(postlimit.Short)
	if c.Deps.PostLimit != nil {
		l, err := c.Deps.PostLimit.Limit(ctx)
		if err != nil {
			// Posting would ask X the same; say why the ordinary limit is used.
			l = postlimit.Limit{Max: tweettext.MaxWeightedLength, Reason: "280: the account's subscription could not be read: " + apperr.As(err).Message}
		}
		limit = l
	}
	rep.MaxWeightedLength, rep.LimitReason = limit.Max, limit.Reason
	for i, t := range texts {
		n := tweettext.WeightedLength(t)
		ok := tweettext.ParseWithin(t, limit.Max).Valid
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
		var parts []policy.Part
		if tool == "x_post_thread" {
			cat, parts = policy.CatThread, actions.ThreadParts(len(texts))
		}
		d, err := c.Deps.Policy.Check(ctx, policy.Request{Tool: tool, Category: cat, Parts: parts, Mode: c.Deps.Cfg.Mode,
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
	Text     string               `json:"text" jsonschema:"the post text to check"`
	MediaIDs []string             `json:"media_ids,omitempty" jsonschema:"media ids that would be attached"`
	Options  *actions.PostOptions `json:"options,omitempty" jsonschema:"post settings to check: reply_settings, poll, community_id, made_with_ai, paid_partnership"`
}

// DryRunThreadInput is x_post_thread_dry_run's input.
type DryRunThreadInput struct {
	Tweets   []string             `json:"tweets" jsonschema:"the tweets to check"`
	MediaIDs [][]string           `json:"media_ids,omitempty" jsonschema:"per-tweet media ids"`
	Options  *actions.PostOptions `json:"options,omitempty" jsonschema:"settings of the first post to check: reply_settings, poll, community_id, made_with_ai, paid_partnership"`
}

func dryRunTools() []*Tool {
	spec := func(name, title, desc string) Spec {
		return Spec{Name: name, Title: title, Description: desc, Category: "write", Needs: Needs{DB: true},
			Profiles: workflowOnly, Hints: readLocal, Errors: []apperr.Code{apperr.PolicyError}}
	}
	return []*Tool{
		def(spec("x_post_tweet_dry_run", "Dry-run a tweet", "Check a tweet without posting: weighted length, the account's post limit and why (max_weighted_length, limit_reason), validity, options, and what the policy would decide. No side effects."),
			func(ctx context.Context, c *Call, in DryRunTweetInput) (Result, error) {
				return dryRun(ctx, c, "x_post_tweet", []string{in.Text}, [][]string{in.MediaIDs}, in.Options)
			}),
		def(spec("x_post_thread_dry_run", "Dry-run a thread", "Check a thread without posting: each tweet's weighted length and validity, and what the policy would decide. No side effects."),
			func(ctx context.Context, c *Call, in DryRunThreadInput) (Result, error) {
				if len(in.Tweets) == 0 {
					return Result{}, apperr.New(apperr.InvalidInput, "tweets: at least one tweet is required")
				}
				return dryRun(ctx, c, "x_post_thread", in.Tweets, in.MediaIDs, in.Options)
			}),
	}
}
