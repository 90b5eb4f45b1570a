package toolstest

import (
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// TestQueueOverMCP: the queue tools answer from [queue] in the account's
// timezone, per account, and schedule_in_queue takes the free slots.
func TestQueueOverMCP(t *testing.T) {
	// A Monday, 13:00 in Berlin.
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	e := newEnv(t, envOptions{permissive: true, now: clk.Now, configure: func(c *config.Config) {
		c.Schedule.Timezone = "Europe/Berlin"
		c.Queue.Slots = []string{"mon-fri 09:00", "sat,sun 11:00"}
		c.Accounts = map[string]map[string]any{
			"brand_b": {"queue": map[string]any{"slots": []string{"daily 18:00"}}},
			"brand_c": {"queue": map[string]any{"slots": []string{}}},
		}
	}})
	type slots struct {
		Slots    []workflow.QueueSlot `json:"slots"`
		Timezone string               `json:"timezone"`
	}
	type free struct {
		Slots []string `json:"slots"`
	}
	var f free
	e.call("get_next_free_slot", map[string]any{"count": 2}).ok(t, &f)
	if strings.Join(f.Slots, " ") != "2026-12-01T09:00:00+01:00 2026-12-02T09:00:00+01:00" {
		t.Fatalf("get_next_free_slot = %v", f.Slots)
	}
	before := e.counters()
	var first, second workflow.ComposeResult
	e.call("schedule_in_queue", map[string]any{"content": "Queued through MCP."}).ok(t, &first)
	e.call("schedule_in_queue", map[string]any{"tweets": []string{"one", "two"}, "position": "next"}).ok(t, &second)
	if !strings.HasPrefix(first.ScheduledFor, "2026-12-01T08:00:00") || !strings.HasPrefix(second.ScheduledFor, "2026-12-02T08:00:00") || first.Status != "scheduled" {
		t.Fatalf("schedule_in_queue took %s (%s) and %s", first.ScheduledFor, first.Status, second.ScheduledFor)
	}
	e.requireDelta(before, map[string]int64{})
	var s slots
	e.call("get_queue_slots", map[string]any{"days": 3}).ok(t, &s)
	if s.Timezone != "Europe/Berlin" || len(s.Slots) != 3 || s.Slots[0].Status != "taken" || s.Slots[0].DraftID != first.ID || s.Slots[2].Status != "free" {
		t.Fatalf("get_queue_slots = %+v", s)
	}
	var d workflow.ComposeResult
	e.call("compose_tweet", map[string]any{"content": "A draft for Saturday."}).ok(t, &d)
	var sat workflow.ComposeResult
	e.call("schedule_in_queue", map[string]any{"draft_id": d.ID, "position": "first_after", "after": "2026-12-04T12:00:00+01:00"}).ok(t, &sat)
	if sat.ID != d.ID || !strings.HasPrefix(sat.ScheduledFor, "2026-12-05T10:00:00") {
		t.Fatalf("first_after took %s for draft %d", sat.ScheduledFor, sat.ID)
	}

	// Each account has its own queue.
	e.call("get_next_free_slot", map[string]any{"account": "brand_b"}).ok(t, &f)
	if strings.Join(f.Slots, " ") != "2026-11-30T18:00:00+01:00" {
		t.Fatalf("brand_b's next free slot = %v", f.Slots)
	}
	e.call("get_next_free_slot", map[string]any{"account": "brand_c"}).fails(t, apperr.QueueNotConfigured).mentions(t, "queue.slots")
	e.call("schedule_in_queue", map[string]any{"account": "brand_c", "content": "x"}).fails(t, apperr.QueueNotConfigured)

	// Bad input names the field.
	e.call("get_queue_slots", map[string]any{"days": 61}).fails(t, apperr.InvalidInput).mentions(t, "days")
	e.call("get_next_free_slot", map[string]any{"after": "tomorrow"}).fails(t, apperr.InvalidInput).mentions(t, "after")
	e.call("schedule_in_queue", map[string]any{"content": "x", "position": "soon"}).fails(t, apperr.InvalidInput).mentions(t, "position")
	e.call("schedule_in_queue", map[string]any{"position": "next"}).fails(t, apperr.InvalidInput).mentions(t, "draft_id")
}

// TestScheduleInQueueTakesPostOptions: schedule_in_queue takes
// x_post_tweet's options object, checked the same way (errors name the
// field), and stores it with the item, for a new item and for a queued
// draft.
func TestScheduleInQueueTakesPostOptions(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	e := newEnv(t, envOptions{permissive: true, now: clk.Now, configure: func(c *config.Config) {
		c.Queue.Slots = []string{"daily 09:00"}
	}})
	opts := map[string]any{"reply_settings": "following", "poll": map[string]any{"options": []string{"Yes", "No"}, "duration_minutes": 60}}
	var r workflow.ComposeResult
	e.call("schedule_in_queue", map[string]any{"content": "Which do you use?", "options": opts}).ok(t, &r)
	if r.Options == nil || r.Options.ReplySettings != "following" || r.Options.Poll == nil || len(r.Options.Poll.Options) != 2 || r.RoutedToApproval {
		t.Fatalf("schedule_in_queue = %+v (options %+v)", r, r.Options)
	}
	var d workflow.ComposeResult
	e.call("compose_tweet", map[string]any{"content": "A draft queued later."}).ok(t, &d)
	var q workflow.ComposeResult
	e.call("schedule_in_queue", map[string]any{"draft_id": d.ID, "options": map[string]any{"made_with_ai": true}}).ok(t, &q)
	if q.Options == nil || !q.Options.MadeWithAI {
		t.Fatalf("queued draft's options = %+v", q.Options)
	}
	var drafts struct {
		Drafts []workflow.Draft `json:"drafts"`
	}
	e.call("list_drafts", map[string]any{"status": "scheduled"}).ok(t, &drafts)
	stored := map[int64]bool{}
	for _, x := range drafts.Drafts {
		stored[x.ID] = x.Options != nil
	}
	if !stored[r.ID] || !stored[d.ID] {
		t.Errorf("stored options per item: %v; want both items to keep theirs", stored)
	}
	for _, c := range []struct {
		opts  map[string]any
		field string
	}{
		{map[string]any{"reply_settings": "nobody"}, "options.reply_settings"},
		{map[string]any{"poll": map[string]any{"options": []string{"only"}, "duration_minutes": 60}}, "options.poll.options"},
		{map[string]any{"poll": map[string]any{"options": []string{"a", " "}, "duration_minutes": 60}}, "options.poll.options[1]"},
	} {
		e.call("schedule_in_queue", map[string]any{"content": "bad options", "options": c.opts}).fails(t, apperr.InvalidInput).mentions(t, c.field)
	}
}
