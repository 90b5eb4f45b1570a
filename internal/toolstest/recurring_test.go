package toolstest

import (
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// TestRecurringPostsOverMCP: the recurring tools read times in the
// account's timezone, refuse a repeating text with duplicate_content_risk
// unless vary gives variants, and pause, resume and delete; none reaches X.
func TestRecurringPostsOverMCP(t *testing.T) {
	// A Monday, 13:00 in Berlin.
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	e := newEnv(t, envOptions{permissive: true, now: clk.Now, configure: func(c *config.Config) {
		c.Schedule.Timezone = "Europe/Berlin"
		c.Accounts = map[string]map[string]any{"brand_b": {"schedule": map[string]any{"timezone": "America/New_York"}}}
	}})
	before := e.counters()
	e.call("create_recurring_post", map[string]any{"content": "Daily standup notes are up.", "every": map[string]any{"n": 1, "unit": "day"}, "time": "09:00"}).
		fails(t, apperr.DuplicateRisk).mentions(t, "vary", "duplicate")
	var p workflow.RecurringPost
	e.call("create_recurring_post", map[string]any{"content": "Notes for Monday.", "every": map[string]any{"n": 1, "unit": "day"}, "time": "09:00",
		"weekdays": []string{"mon", "tue", "wed", "thu", "fri"},
		"vary":     map[string]any{"variants": []string{"Notes for Tuesday.", "Notes for Wednesday.", "Notes for Thursday.", "Notes for Friday."}}}).ok(t, &p)
	if p.ID == 0 || p.Status != "active" || p.NextAt != "2026-12-01T09:00:00+01:00" || len(p.Texts) != 5 {
		t.Fatalf("create_recurring_post = %+v", p)
	}
	var list struct {
		RecurringPosts []workflow.RecurringPost `json:"recurring_posts"`
		Timezone       string                   `json:"timezone"`
	}
	e.call("list_recurring_posts", map[string]any{}).ok(t, &list)
	if len(list.RecurringPosts) != 1 || list.Timezone != "Europe/Berlin" {
		t.Fatalf("list_recurring_posts = %+v", list)
	}
	// Each account has its own rules, read in its own timezone.
	var b workflow.RecurringPost
	e.call("create_recurring_post", map[string]any{"account": "brand_b", "content": "Brand B weekly.", "every": map[string]any{"n": 1, "unit": "week"}, "time": "09:00"}).ok(t, &b)
	if b.NextAt != "2026-11-30T09:00:00-05:00" {
		t.Fatalf("brand_b's rule next at %s, want this Monday 09:00 in New York (07:00 there now)", b.NextAt)
	}
	e.call("list_recurring_posts", map[string]any{"account": "brand_b"}).ok(t, &list)
	if len(list.RecurringPosts) != 1 || list.RecurringPosts[0].ID != b.ID || list.Timezone != "America/New_York" {
		t.Fatalf("brand_b's list = %+v", list)
	}
	e.call("delete_recurring_post", map[string]any{"id": p.ID, "account": "brand_b"}).fails(t, apperr.NotFound)
	var u workflow.RecurringPost
	e.call("update_recurring_post", map[string]any{"id": p.ID, "action": "pause"}).ok(t, &u)
	if u.Status != "paused" || u.NextAt != "" {
		t.Fatalf("paused: %+v", u)
	}
	e.call("update_recurring_post", map[string]any{"id": p.ID, "action": "resume"}).ok(t, &u)
	if u.Status != "active" {
		t.Fatalf("resumed: %+v", u)
	}
	e.call("delete_recurring_post", map[string]any{"id": p.ID}).ok(t, nil)
	e.requireDelta(before, map[string]int64{})

	// Bad input names the field.
	e.call("create_recurring_post", map[string]any{"content": "x", "every": map[string]any{"n": 1, "unit": "month"}, "time": "09:00"}).fails(t, apperr.InvalidInput).mentions(t, "every.unit")
	e.call("create_recurring_post", map[string]any{"content": "x", "every": map[string]any{"n": 1, "unit": "week"}, "time": "9am"}).fails(t, apperr.InvalidInput).mentions(t, "time")
	e.call("create_recurring_post", map[string]any{"content": "x", "every": map[string]any{"n": 1, "unit": "week"}, "time": "09:00", "vary": map[string]any{"rewrite": "llm"}}).fails(t, apperr.InvalidInput).mentions(t, "rewrite")
	e.call("update_recurring_post", map[string]any{"id": p.ID, "action": "pause"}).fails(t, apperr.NotFound).mentions(t, "id")
	e.call("update_recurring_post", map[string]any{"id": 1, "action": "stop"}).fails(t, apperr.InvalidInput).mentions(t, "action")
}
