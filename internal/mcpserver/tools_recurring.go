package mcpserver

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// EveryInput is how often a recurring post repeats.
type EveryInput struct {
	N    int    `json:"n" jsonschema:"how many units between occurrences: 1-365 days or 1-52 weeks"`
	Unit string `json:"unit" jsonschema:"day or week"`
}

// VaryInput says how a recurring post's text changes.
type VaryInput struct {
	Variants []string `json:"variants" jsonschema:"other texts posted in turn after the rule's text (1-50, each a different single post); with them a text repeats only every len(variants)+1 occurrences"`
}

func (v *VaryInput) vary() *workflow.Vary {
	if v == nil {
		return nil
	}
	return &workflow.Vary{Variants: v.Variants}
}

// CreateRecurringInput is create_recurring_post's input.
type CreateRecurringInput struct {
	DraftID   int64      `json:"draft_id,omitempty" jsonschema:"a single-post draft whose text the rule posts (or pass content)"`
	Content   string     `json:"content,omitempty" jsonschema:"the text the rule posts"`
	Every     EveryInput `json:"every" jsonschema:"how often: {n, unit: day|week}"`
	Weekdays  []string   `json:"weekdays,omitempty" jsonschema:"days it falls on (mon..sun); for unit week default the day it is created, for unit day default every day"`
	Time      string     `json:"time" jsonschema:"HH:MM in schedule.timezone"`
	EndsAfter int        `json:"ends_after,omitempty" jsonschema:"stop after this many occurrences (1-10000); default never"`
	EndsOn    string     `json:"ends_on,omitempty" jsonschema:"YYYY-MM-DD: the last day an occurrence may fall on (in schedule.timezone)"`
	Vary      *VaryInput `json:"vary,omitempty" jsonschema:"how the text changes between occurrences; required when one text would repeat within X's duplicate window (7 days)"`
}

// UpdateRecurringInput is update_recurring_post's input.
type UpdateRecurringInput struct {
	ID        int64       `json:"id" jsonschema:"the recurring post's id"`
	Action    string      `json:"action,omitempty" jsonschema:"pause or resume"`
	Content   string      `json:"content,omitempty" jsonschema:"new text"`
	Every     *EveryInput `json:"every,omitempty" jsonschema:"new frequency"`
	Weekdays  []string    `json:"weekdays,omitempty" jsonschema:"new days (mon..sun)"`
	Time      string      `json:"time,omitempty" jsonschema:"new HH:MM time in schedule.timezone"`
	EndsAfter *int        `json:"ends_after,omitempty" jsonschema:"new occurrence count to stop after (0: never)"`
	EndsOn    *string     `json:"ends_on,omitempty" jsonschema:"new last day, YYYY-MM-DD (empty: none)"`
	Vary      *VaryInput  `json:"vary,omitempty" jsonschema:"new variants"`
}

// RecurringIDInput names one recurring post.
type RecurringIDInput struct {
	ID int64 `json:"id" jsonschema:"the recurring post's id"`
}

// ListRecurringInput is list_recurring_posts' input.
type ListRecurringInput struct{}

var recurringErrors = []apperr.Code{apperr.InvalidInput, apperr.ValidationError, apperr.DuplicateRisk, apperr.TweetTooLong, apperr.NotFound, apperr.ConfigError, apperr.DBError}

// recurringOf gives a recurring tool the workflow service and the
// account's timezone, which every rule's times are read in.
func recurringOf(c *Call) (*workflow.Service, *time.Location, error) {
	loc, err := time.LoadLocation(c.Deps.Cfg.Schedule.Timezone)
	if err != nil {
		return nil, nil, apperr.Wrap(apperr.ConfigError, err, "schedule.timezone: %v", err)
	}
	s, err := c.Deps.Workflow()
	return s, loc, err
}

func recurringTools() []*Tool {
	local := func(name, title, desc string, h Hints) Spec {
		return Spec{Name: name, Title: title, Category: "composer", Description: desc, Needs: Needs{DB: true},
			Profiles: workflowOnly, Hints: h, Errors: recurringErrors}
	}
	return []*Tool{
		def(local("create_recurring_post", "Create recurring post",
			"Post a text again and again: every n days or weeks, on weekdays, at an HH:MM time in schedule.timezone, until ends_after occurrences or ends_on. Each occurrence becomes a scheduled draft a day ahead and is published through the gateway like any scheduled draft (policy, approval, dedup, audit). X refuses a text repeated within its duplicate window, so a rule that would repeat one text within 7 days is refused with duplicate_content_risk unless vary.variants gives texts to rotate. Local only; nothing is sent to X now.", Hints{}),
			func(ctx context.Context, c *Call, in CreateRecurringInput) (Result, error) {
				s, loc, err := recurringOf(c)
				if err != nil {
					return Result{}, err
				}
				p, err := s.CreateRecurring(ctx, loc, workflow.RecurringRequest{DraftID: in.DraftID, Content: in.Content,
					Every: workflow.Every{N: in.Every.N, Unit: in.Every.Unit}, Weekdays: in.Weekdays, Time: in.Time,
					EndsAfter: in.EndsAfter, EndsOn: in.EndsOn, Vary: in.Vary.vary()})
				return Result{Data: p}, err
			}),
		def(local("list_recurring_posts", "List recurring posts", "List the account's recurring posts with their status (active, paused, ended), how many occurrences were made and the next one. Local only.", readLocal),
			func(ctx context.Context, c *Call, _ ListRecurringInput) (Result, error) {
				s, loc, err := recurringOf(c)
				if err != nil {
					return Result{}, err
				}
				ps, err := s.RecurringPosts(ctx, loc)
				return Result{Data: map[string]any{"recurring_posts": ps, "count": len(ps), "timezone": loc.String()}}, err
			}),
		def(local("update_recurring_post", "Update recurring post", "Pause or resume a recurring post, or change its text, frequency, days, time, end or variants (checked again as a new rule). Pausing withdraws occurrences made but not yet published; resuming starts from the next occurrence after now. Local only.", Hints{Idempotent: true}),
			func(ctx context.Context, c *Call, in UpdateRecurringInput) (Result, error) {
				s, loc, err := recurringOf(c)
				if err != nil {
					return Result{}, err
				}
				u := workflow.RecurringUpdate{Action: in.Action, Content: in.Content, Weekdays: in.Weekdays, Time: in.Time,
					EndsAfter: in.EndsAfter, EndsOn: in.EndsOn, Vary: in.Vary.vary()}
				if in.Every != nil {
					u.Every = &workflow.Every{N: in.Every.N, Unit: in.Every.Unit}
				}
				p, err := s.UpdateRecurring(ctx, loc, in.ID, u)
				return Result{Data: p}, err
			}),
		def(local("delete_recurring_post", "Delete recurring post", "Delete a recurring post and withdraw its occurrences not yet published; what it already posted stays. Local only.", Hints{Destructive: true, Idempotent: true}),
			func(ctx context.Context, c *Call, in RecurringIDInput) (Result, error) {
				s, _, err := recurringOf(c)
				if err != nil {
					return Result{}, err
				}
				n, err := s.DeleteRecurring(ctx, in.ID)
				return Result{Data: map[string]any{"deleted": err == nil, "id": in.ID, "withdrawn_drafts": n}}, err
			}),
	}
}

// MarkEvergreenInput is mark_evergreen's input.
type MarkEvergreenInput struct {
	TweetID  string   `json:"tweet_id" jsonschema:"the post to keep for recycling (a decimal string); marking it again refreshes its engagement"`
	Variants []string `json:"variants,omitempty" jsonschema:"texts for evergreen.mode requote (the quote's comment) and variant (a new post), used in turn; each a different single post (up to 50)"`
}

// Limits declares the arguments' limits.
func (MarkEvergreenInput) Limits() argcheck.Limits { return argcheck.Limits{"tweet_id": {ID: true}} }

// EvergreenIDInput names one evergreen post.
type EvergreenIDInput struct {
	TweetID string `json:"tweet_id" jsonschema:"the evergreen post's id"`
}

// Limits declares the arguments' limits.
func (EvergreenIDInput) Limits() argcheck.Limits { return argcheck.Limits{"tweet_id": {ID: true}} }

// ListEvergreenInput is list_evergreen's input.
type ListEvergreenInput struct{}

// EvergreenSettings says what [evergreen] does with the marked posts, as
// the evergreen tools (and the CLI beside them) answer it.
func EvergreenSettings(e config.Evergreen) map[string]any {
	return map[string]any{"enabled": e.Enabled, "fill_empty_slots": e.FillEmptySlots, "mode": e.Mode,
		"min_interval_days": e.MinIntervalDays, "max_recycles": e.MaxRecycles}
}

func evergreenTools() []*Tool {
	local := func(name, title, desc string, h Hints) Spec {
		return Spec{Name: name, Title: title, Category: "composer", Description: desc, Needs: Needs{DB: true},
			Profiles: workflowOnly, Hints: h, Errors: []apperr.Code{apperr.InvalidInput, apperr.NotFound, apperr.DBError}}
	}
	return []*Tool{
		def(Spec{Name: "mark_evergreen", Title: "Mark evergreen", Category: "composer", Needs: Needs{X: true, DB: true}, Profiles: workflowOnly,
			Description: "Keep one of the account's posts for recycling into empty queue slots ([evergreen] fill_empty_slots), with its engagement (likes + reposts + replies + quotes) read from X now; the best eligible post fills a slot still empty 2 h before its time, published through the gateway. Reads X; posts nothing.",
			Hints:       Hints{Idempotent: true, OpenWorld: true},
			Errors:      append([]apperr.Code{apperr.InvalidInput, apperr.TweetTooLong, apperr.DBError}, xErrors...)},
			func(ctx context.Context, c *Call, in MarkEvergreenInput) (Result, error) {
				s, err := c.Deps.Workflow()
				if err != nil {
					return Result{}, err
				}
				p, err := s.MarkEvergreen(ctx, in.TweetID, in.Variants)
				return Result{Data: map[string]any{"evergreen": p, "settings": EvergreenSettings(c.Deps.Cfg.Evergreen)}}, err
			}),
		def(local("unmark_evergreen", "Unmark evergreen", "Stop recycling a post; items already placed in the queue stay. Local only.", Hints{Destructive: true, Idempotent: true}),
			func(ctx context.Context, c *Call, in EvergreenIDInput) (Result, error) {
				s, err := c.Deps.Workflow()
				if err != nil {
					return Result{}, err
				}
				err = s.UnmarkEvergreen(ctx, in.TweetID)
				return Result{Data: map[string]any{"unmarked": err == nil, "tweet_id": in.TweetID}}, err
			}),
		def(local("list_evergreen", "List evergreen", "List the evergreen posts, most engagement first, with how often each was recycled, when last, and whether X still has it (status gone when it was deleted), and the [evergreen] settings. Local only.", readLocal),
			func(ctx context.Context, c *Call, _ ListEvergreenInput) (Result, error) {
				s, err := c.Deps.Workflow()
				if err != nil {
					return Result{}, err
				}
				ps, err := s.EvergreenPosts(ctx)
				return Result{Data: map[string]any{"evergreen": ps, "count": len(ps), "settings": EvergreenSettings(c.Deps.Cfg.Evergreen)}}, err
			}),
	}
}
