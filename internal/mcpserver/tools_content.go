package mcpserver

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

var llmErrors = []apperr.Code{apperr.LLMNotConfigured, apperr.LLMError, apperr.ValidationError}

// GenerateTweetInput is generate_tweet's input.
type GenerateTweetInput struct {
	Topic  string `json:"topic,omitempty" jsonschema:"what to write about; default: the first content pillar or industry topic"`
	Format string `json:"format,omitempty" jsonschema:"list, tip, question, story, contrarian or observation"`
}

// GenerateReplyInput is generate_reply's input.
type GenerateReplyInput struct {
	TweetText      string `json:"tweet_text" jsonschema:"the tweet to reply to"`
	TweetAuthor    string `json:"tweet_author" jsonschema:"its author's handle"`
	MentionProduct bool   `json:"mention_product,omitempty" jsonschema:"allow mentioning the product where it genuinely helps"`
}

// GenerateThreadInput is generate_thread's input.
type GenerateThreadInput struct {
	Topic     string `json:"topic,omitempty" jsonschema:"what the thread is about"`
	Structure string `json:"structure,omitempty" jsonschema:"transformation, framework, mistakes or analysis"`
}

// ThreadPlanInput is generate_thread_plan's input.
type ThreadPlanInput struct {
	Topic          string `json:"topic" jsonschema:"what the thread is about"`
	Objective      string `json:"objective,omitempty" jsonschema:"what the thread should achieve"`
	TargetAudience string `json:"target_audience,omitempty" jsonschema:"who it is for"`
	Structure      string `json:"structure,omitempty" jsonschema:"transformation, framework, mistakes or analysis"`
}

// SuggestInput is suggest_topics' input.
type SuggestInput struct {
	Count int `json:"count,omitempty" jsonschema:"topics to suggest, 1-20, default 5"`
}

// ComposeInput is compose_tweet's input.
type ComposeInput struct {
	Topic        string               `json:"topic,omitempty" jsonschema:"what to write about (required unless content or tweets is given)"`
	Format       string               `json:"format,omitempty" jsonschema:"list, tip, question, story, contrarian or observation"`
	Content      string               `json:"content,omitempty" jsonschema:"store this text as is instead of generating"`
	Tweets       []string             `json:"tweets,omitempty" jsonschema:"store this thread as is"`
	ScheduledFor string               `json:"scheduled_for,omitempty" jsonschema:"RFC 3339 time to publish at; absent stores a draft"`
	Options      *actions.PostOptions `json:"options,omitempty" jsonschema:"optional post settings (a thread's first post): reply_settings, poll, community_id, made_with_ai, paid_partnership"`
}

// ListDraftsInput filters list_drafts.
type ListDraftsInput struct {
	Status string `json:"status,omitempty" jsonschema:"draft, scheduled, queued or posted"`
}

// UpdateDraftInput is update_draft's input.
type UpdateDraftInput struct {
	DraftID      int64                `json:"draft_id" jsonschema:"the draft's id"`
	Content      *string              `json:"content,omitempty" jsonschema:"new text of a single-tweet draft"`
	Tweets       []string             `json:"tweets,omitempty" jsonschema:"new tweets of a thread draft"`
	ScheduledFor string               `json:"scheduled_for,omitempty" jsonschema:"RFC 3339 time to publish at"`
	Unschedule   bool                 `json:"unschedule,omitempty" jsonschema:"turn a scheduled item back into a draft"`
	Options      *actions.PostOptions `json:"options,omitempty" jsonschema:"replace the draft's post settings; an empty object removes them"`
}

// DraftIDInput names a draft.
type DraftIDInput struct {
	DraftID int64 `json:"draft_id" jsonschema:"the draft's id"`
}

// ProposeInputItem is one reply to propose.
type ProposeInputItem struct {
	CandidateID    string `json:"candidate_id" jsonschema:"tweet id from the discovery feed"`
	PreDraftedText string `json:"pre_drafted_text,omitempty" jsonschema:"use this text instead of generating"`
}

// ProposeInput is propose_and_queue_replies' input.
type ProposeInput struct {
	Items          []ProposeInputItem `json:"items" jsonschema:"replies to propose"`
	MentionProduct bool               `json:"mention_product,omitempty" jsonschema:"allow generated replies to mention the product"`
}

// DraftRepliesInput is draft_replies_for_candidates' input.
type DraftRepliesInput struct {
	CandidateIDs   []string `json:"candidate_ids" jsonschema:"tweet ids from the discovery feed (1-20)"`
	Archetype      string   `json:"archetype,omitempty" jsonschema:"agree_and_expand, respectful_disagree, add_data, ask_question or share_experience"`
	MentionProduct bool     `json:"mention_product,omitempty" jsonschema:"allow mentioning the product"`
}

func parseTime(field, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, apperr.New(apperr.InvalidInput, "%s: %q is not an RFC 3339 time", field, s)
	}
	return &t, nil
}

func gen(c *Call) (*content.Generator, error) { return c.Deps.Generator() }

func contentTools() []*Tool {
	llmSpec := func(name, title, desc string, out any) Spec {
		return Spec{Name: name, Title: title, Category: "content", Description: desc + " Nothing is posted.", Needs: Needs{LLM: true},
			Profiles: workflowOnly, Hints: Hints{OpenWorld: true}, Errors: llmErrors}
	}
	local := func(name, title, desc string, h Hints, out any) Spec {
		return Spec{Name: name, Title: title, Category: "composer", Description: desc, Needs: Needs{DB: true},
			Profiles: workflowOnly, Hints: h, Errors: []apperr.Code{apperr.DBError, apperr.NotFound, apperr.TweetTooLong}}
	}
	return []*Tool{
		def(llmSpec("generate_tweet", "Generate tweet", "Draft a tweet with the LLM from the business profile; checked for length (≤280 weighted) and banned phrases.", map[string]any{}),
			func(ctx context.Context, c *Call, in GenerateTweetInput) (Result, error) {
				g, err := gen(c)
				if err != nil {
					return Result{}, err
				}
				t, err := g.GenerateTweet(ctx, in.Topic, in.Format)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: map[string]any{"tweet": t, "weighted_length": tweettext.WeightedLength(t)}}, nil
			}),
		def(llmSpec("generate_reply", "Generate reply", "Draft a reply to a tweet; rejects banned phrases and replies too similar to the last 20.", map[string]any{}),
			func(ctx context.Context, c *Call, in GenerateReplyInput) (Result, error) {
				g, err := gen(c)
				if err != nil {
					return Result{}, err
				}
				s, err := c.Deps.Workflow()
				if err != nil {
					return Result{}, err
				}
				recent, err := s.RecentReplyTexts(ctx, content.RecentRepliesCompared)
				if err != nil {
					return Result{}, err
				}
				t, err := g.GenerateReply(ctx, content.ReplyInput{TweetText: in.TweetText, TweetAuthor: in.TweetAuthor, MentionProduct: in.MentionProduct, RecentReplies: recent})
				if err != nil {
					return Result{}, err
				}
				return Result{Data: map[string]any{"reply": t, "weighted_length": tweettext.WeightedLength(t)}}, nil
			}),
		def(llmSpec("generate_thread", "Generate thread", "Draft a thread; every tweet is checked for length.", map[string]any{}),
			func(ctx context.Context, c *Call, in GenerateThreadInput) (Result, error) {
				g, err := gen(c)
				if err != nil {
					return Result{}, err
				}
				ts, err := g.GenerateThread(ctx, in.Topic, in.Structure)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: map[string]any{"thread": ts, "tweet_count": len(ts)}}, nil
			}),
		def(llmSpec("generate_thread_plan", "Plan thread", "Draft a thread with a plan: structure, hook type, first-tweet preview and a heuristic performance estimate.", content.ThreadPlan{}),
			func(ctx context.Context, c *Call, in ThreadPlanInput) (Result, error) {
				g, err := gen(c)
				if err != nil {
					return Result{}, err
				}
				p, err := g.GenerateThreadPlan(ctx, content.PlanInput{Topic: in.Topic, Objective: in.Objective, TargetAudience: in.TargetAudience, Structure: in.Structure})
				if err != nil {
					return Result{}, err
				}
				return Result{Data: struct {
					*content.ThreadPlan
					TweetCount int `json:"tweet_count"`
				}{p, len(p.Tweets)}}, nil
			}),
		def(Spec{Name: "suggest_topics", Title: "Suggest topics", Category: "content", Needs: Needs{DB: true, LLM: true},
			Description: "Rank topics by measured performance; with no data yet, ask the LLM over the profile's pillars and keywords. Says which source it used.",
			Profiles:    workflowOnly, Hints: Hints{OpenWorld: true}, Errors: append([]apperr.Code{apperr.DBError}, llmErrors...)},
			func(ctx context.Context, c *Call, in SuggestInput) (Result, error) {
				s, err := c.Deps.Workflow()
				if err != nil {
					return Result{}, err
				}
				measured, err := s.MeasuredTopics(ctx)
				if err != nil {
					return Result{}, err
				}
				p, _ := c.Deps.LLM()
				sug, err := content.NewGenerator(p, c.Deps.Profile()).SuggestTopics(ctx, in.Count, measured)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: sug}, nil
			}),
		def(Spec{Name: "compose_tweet", Title: "Compose tweet", Category: string(policy.CatContent), Mutation: true, Needs: Needs{DB: true, LLM: true},
			Description: "Generate a tweet with AI assist from a topic (or take your content or tweets as is) and store it as a draft, or as a scheduled item with scheduled_for. In composer mode the draft is also queued for approval, so nothing is silently dropped.",
			Profiles:    workflowOnly, Hints: Hints{OpenWorld: true},
			Errors: append(append([]apperr.Code{apperr.DBError, apperr.TweetTooLong}, llmErrors...), gatewayErrors...)},
			func(ctx context.Context, c *Call, in ComposeInput) (Result, error) {
				when, err := parseTime("scheduled_for", in.ScheduledFor)
				if err != nil {
					return Result{}, err
				}
				cp, err := c.Deps.Composer()
				if err != nil {
					return Result{}, err
				}
				r, err := cp.Compose(ctx, workflow.ComposeRequest{Topic: in.Topic, Format: in.Format, Content: in.Content, Tweets: in.Tweets, ScheduledFor: when, Options: in.Options})
				return Result{Data: r}, err
			}),
		def(local("list_drafts", "List drafts", "List drafts and scheduled items, newest first.", readLocal, []workflow.Draft{}),
			func(ctx context.Context, c *Call, in ListDraftsInput) (Result, error) {
				switch in.Status {
				case "", "draft", "scheduled", "queued", "posted":
				default:
					return Result{}, apperr.New(apperr.InvalidInput, "status: %q is not allowed; allowed values: draft, scheduled, queued, posted", in.Status)
				}
				s, err := c.Deps.Workflow()
				if err != nil {
					return Result{}, err
				}
				ds, err := s.Drafts(ctx, in.Status)
				return Result{Data: map[string]any{"drafts": ds, "count": len(ds)}}, err
			}),
		def(local("update_draft", "Update draft", "Edit a draft's text or options, or schedule or unschedule it. Local only.", Hints{Idempotent: true}, workflow.Draft{}),
			func(ctx context.Context, c *Call, in UpdateDraftInput) (Result, error) {
				when, err := parseTime("scheduled_for", in.ScheduledFor)
				if err != nil {
					return Result{}, err
				}
				s, err := c.Deps.Workflow()
				if err != nil {
					return Result{}, err
				}
				d, err := s.UpdateDraft(ctx, in.DraftID, workflow.DraftUpdate{Content: in.Content, Tweets: in.Tweets, ScheduledFor: when, Unschedule: in.Unschedule, Options: in.Options})
				return Result{Data: d}, err
			}),
		def(local("delete_draft", "Delete draft", "Delete a draft; a queued draft's approval item is rejected too. Local only.", Hints{Destructive: true, Idempotent: true}, map[string]any{}),
			func(ctx context.Context, c *Call, in DraftIDInput) (Result, error) {
				cp, err := c.Deps.Composer()
				if err != nil {
					return Result{}, err
				}
				if err := cp.DeleteDraft(ctx, in.DraftID); err != nil {
					return Result{}, err
				}
				return Result{Data: map[string]any{"deleted": true, "draft_id": in.DraftID}}, nil
			}),
		def(Spec{Name: "propose_and_queue_replies", Title: "Propose and queue replies", Category: string(policy.CatWrite), Mutation: true,
			Needs:       Needs{X: true, DB: true, LLM: true},
			Description: "Draft a reply per discovery candidate with the LLM (or take pre_drafted_text) and send each through the gateway, so approval routing, dedup and audit apply. Reports per-item status: queued, executed, duplicate, blocked or error.",
			Profiles:    workflowOnly, Hints: additive, Errors: append(mutationErrors(), llmErrors...)},
			func(ctx context.Context, c *Call, in ProposeInput) (Result, error) {
				r, err := c.Deps.Replier("mcp", "")
				if err != nil {
					return Result{}, err
				}
				items := make([]workflow.ProposeItem, len(in.Items))
				for i, it := range in.Items {
					items[i] = workflow.ProposeItem{CandidateID: it.CandidateID, PreDraftedText: it.PreDraftedText}
				}
				out, err := r.Propose(ctx, items, in.MentionProduct)
				return Result{Data: map[string]any{"results": out}}, err
			}),
		def(Spec{Name: "draft_replies_for_candidates", Title: "Draft replies", Category: "discovery", Needs: Needs{DB: true, LLM: true},
			Description: "Draft replies for chosen discovery candidates without posting anything.",
			Profiles:    workflowOnly, Hints: Hints{OpenWorld: true}, Errors: append([]apperr.Code{apperr.DBError}, llmErrors...)},
			func(ctx context.Context, c *Call, in DraftRepliesInput) (Result, error) {
				r, err := c.Deps.Replier("mcp", "")
				if err != nil {
					return Result{}, err
				}
				out, err := r.DraftReplies(ctx, in.CandidateIDs, in.Archetype, in.MentionProduct)
				return Result{Data: map[string]any{"drafts": out}}, err
			}),
	}
}
