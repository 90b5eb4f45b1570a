package mcpserver

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// QueueSlotsInput is get_queue_slots' input.
type QueueSlotsInput struct {
	From string `json:"from,omitempty" jsonschema:"RFC 3339 time to list slots from; default: now"`
	Days int    `json:"days,omitempty" jsonschema:"days to list, 1-60, default 7"`
}

// Limits declares the arguments' limits.
func (QueueSlotsInput) Limits() argcheck.Limits {
	return argcheck.Limits{"days": argcheck.Between(1, 60)}
}

// NextFreeSlotInput is get_next_free_slot's input.
type NextFreeSlotInput struct {
	After string `json:"after,omitempty" jsonschema:"RFC 3339 time the slots must come after; default: now"`
	Count int    `json:"count,omitempty" jsonschema:"free slots to return, 1-20, default 1; together they respect the gap and the daily cap"`
}

// Limits declares the arguments' limits.
func (NextFreeSlotInput) Limits() argcheck.Limits {
	return argcheck.Limits{"count": argcheck.Between(1, 20)}
}

// ScheduleInQueueInput is schedule_in_queue's input.
type ScheduleInQueueInput struct {
	DraftID  int64                `json:"draft_id,omitempty" jsonschema:"a draft or scheduled item to place in the queue (or pass content or tweets)"`
	Content  string               `json:"content,omitempty" jsonschema:"text of a new single-tweet item"`
	Tweets   []string             `json:"tweets,omitempty" jsonschema:"posts of a new thread"`
	Position string               `json:"position,omitempty" jsonschema:"next (the first free slot, default), last (the first free slot after the queue's latest item) or first_after (the first free slot after 'after')"`
	After    string               `json:"after,omitempty" jsonschema:"RFC 3339 time; required with position first_after"`
	Options  *actions.PostOptions `json:"options,omitempty" jsonschema:"optional post settings sent with the post (as x_post_tweet's): reply_settings, poll, community_id, made_with_ai, paid_partnership; for a thread they apply to its first post; omitted keeps a queued draft's own"`
}

var queueErrors = []apperr.Code{apperr.QueueNotConfigured, apperr.QueueFull, apperr.ConfigError, apperr.DBError}

// queuePolicy is the queue of the account the call acts for.
func queuePolicy(c *Call) (queue.Policy, error) {
	p, err := c.Deps.Cfg.QueuePolicy()
	if err != nil {
		return p, apperr.Wrap(apperr.ConfigError, err, "%v", err)
	}
	return p, nil
}

// queueOf gives a queue tool the workflow service, the account's queue
// policy and the time its argument field (value) names.
func queueOf(c *Call, field, value string) (*workflow.Service, queue.Policy, time.Time, error) {
	at, err := timeOr(c, field, value)
	if err != nil {
		return nil, queue.Policy{}, at, err
	}
	q, err := queuePolicy(c)
	if err != nil {
		return nil, q, at, err
	}
	s, err := c.Deps.Workflow()
	return s, q, at, err
}

// timeOr parses an optional RFC 3339 argument; absent is now.
func timeOr(c *Call, field, s string) (time.Time, error) {
	t, err := parseTime(field, s)
	if err != nil || t != nil {
		return derefTime(t), err
	}
	return c.Deps.Now(), nil
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func queueTools() []*Tool {
	read := func(name, title, desc string) Spec {
		return Spec{Name: name, Title: title, Category: "composer", Description: desc, Needs: Needs{DB: true},
			Profiles: workflowOnly, Hints: readLocal, Errors: queueErrors}
	}
	return []*Tool{
		def(read("get_queue_slots", "Get queue slots", "List the posting queue's slots ([queue] slots in schedule.timezone) from a time, each with its status: free, taken (draft_id holds it), min_gap (too close to a scheduled post) or max_per_day (its day is full). Reads local records only; no X call."),
			func(ctx context.Context, c *Call, in QueueSlotsInput) (Result, error) {
				s, q, from, err := queueOf(c, "from", in.From)
				if err != nil {
					return Result{}, err
				}
				days := in.Days
				if days == 0 {
					days = 7
				}
				slots, err := s.QueueSlots(ctx, q, from, days)
				return Result{Data: map[string]any{"slots": slots, "count": len(slots), "timezone": q.Loc.String()}}, err
			}),
		def(read("get_next_free_slot", "Get next free slot", "The next free slots of the posting queue after a time (default now), searching a year ahead. Answers queue_not_configured when [queue] has no slots and queue_full when none is free. No X call."),
			func(ctx context.Context, c *Call, in NextFreeSlotInput) (Result, error) {
				s, q, after, err := queueOf(c, "after", in.After)
				if err != nil {
					return Result{}, err
				}
				n := in.Count
				if n == 0 {
					n = 1
				}
				ts, err := s.NextFreeSlots(ctx, q, after, n)
				if err != nil {
					return Result{}, err
				}
				out := make([]string, len(ts))
				for i, t := range ts {
					out[i] = t.In(q.Loc).Format(time.RFC3339)
				}
				return Result{Data: map[string]any{"slots": out, "count": len(out), "timezone": q.Loc.String()}}, nil
			}),
		def(Spec{Name: "schedule_in_queue", Title: "Schedule in queue", Category: string(policy.CatContent), Mutation: true, Needs: Needs{DB: true},
			Description: "Place a draft (draft_id) or new content or tweets in a free slot of the posting queue; two callers never take the same slot. Nothing is sent to X now: when the slot comes the publisher posts it through the gateway, which in composer mode queues it for approval.",
			Profiles:    workflowOnly, Hints: Hints{},
			Errors: append(append([]apperr.Code{apperr.TweetTooLong, apperr.NotFound, apperr.ValidationError}, queueErrors...), gatewayErrors...)},
			func(ctx context.Context, c *Call, in ScheduleInQueueInput) (Result, error) {
				after, err := parseTime("after", in.After)
				if err != nil {
					return Result{}, err
				}
				q, err := queuePolicy(c)
				if err != nil {
					return Result{}, err
				}
				cp, err := c.Deps.Composer()
				if err != nil {
					return Result{}, err
				}
				r, err := cp.ScheduleInQueue(ctx, q, workflow.QueueRequest{DraftID: in.DraftID, Content: in.Content, Tweets: in.Tweets, Position: in.Position, After: after, Options: in.Options})
				return Result{Data: r}, err
			}),
	}
}
