package toolstest

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/postmetrics"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestBestPostingTimesOverMCP: with no measured posts the tool answers
// insufficient_data with the count; a refresh whose ceiling cost does not
// fit the spend budget is refused before any request reaches X; a refresh
// that fits back-fills the demo account's 200-post history, and the top
// bucket is the peak of the emulator's seeded curve; suggest_queue_slots
// proposes it as a slot.
func TestBestPostingTimesOverMCP(t *testing.T) {
	var requests atomic.Int64
	var budget float64
	e := newEnv(t, envOptions{onX: func(*http.Request) { requests.Add(1) }, configure: func(c *config.Config) {
		c.MCPPolicy.DailyBudgetUSD = 1
		budget = c.MCPPolicy.DailyBudgetUSD
	}})
	peak := xsim.DemoPeak(e.Cfg.Sandbox.Seed)
	slot := [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}[peak.Weekday] + " " + twoDigits(peak.Hour) + ":00"

	// The README names the sandbox's top bucket.
	if e.Cfg.Sandbox.Seed != config.Default().Sandbox.Seed || slot != "tue 15:00" {
		t.Fatalf("the default seed %d peaks at %s; the README says tue 15:00", e.Cfg.Sandbox.Seed, slot)
	}
	r := e.call("get_best_posting_times", map[string]any{}).fails(t, apperr.InsufficientData)
	if r.extra("posts") != float64(0) || r.extra("min_posts") != float64(10) {
		t.Fatalf("insufficient_data carries posts %v, min_posts %v; want 0 and 10", r.extra("posts"), r.extra("min_posts"))
	}
	e.call("suggest_queue_slots", map[string]any{}).fails(t, apperr.InsufficientData)

	if postmetrics.RefreshCostCeiling() <= budget {
		t.Fatalf("the refresh ceiling $%.2f fits the $%.2f budget: the case tests nothing", postmetrics.RefreshCostCeiling(), budget)
	}
	before := requests.Load()
	e.call("get_best_posting_times", map[string]any{"refresh": true}).fails(t, apperr.PolicyBudget)
	if n := requests.Load() - before; n != 0 {
		t.Fatalf("%d requests reached X before the budget refusal; want none", n)
	}

	// In the sandbox, whose budget has no cap by default, the refresh runs.
	e2 := newEnv(t, envOptions{})
	if e2.App.Sim == nil || e2.Cfg.MCPPolicy.DailyBudgetUSD != 0 {
		t.Fatal("want a sandbox App with no budget cap")
	}
	var a struct {
		postmetrics.Answer
		Buckets []postmetrics.Bucket `json:"buckets"`
		Posts   int                  `json:"posts"`
	}
	e2.call("get_best_posting_times", map[string]any{"refresh": true, "top": 3}).ok(t, &a)
	if a.Refresh == nil || a.Refresh.PostsRead < 200 || a.Refresh.CostUSD <= 0 {
		t.Fatalf("refresh %+v; want the history read and its cost", a.Refresh)
	}
	if a.Posts < 200 || len(a.Buckets) != 3 || a.Buckets[0].Slot != slot {
		t.Fatalf("ranked %d posts, buckets %+v; want the emulator's peak %s first", a.Posts, a.Buckets, slot)
	}
	// Older history is measured by public metrics, the last 30 days by
	// analytics.
	if a.Source != "mixed" {
		t.Errorf("source %q; want mixed", a.Source)
	}
	var s postmetrics.Suggestion
	e2.call("suggest_queue_slots", map[string]any{"count": 1}).ok(t, &s)
	if len(s.Slots) != 1 || s.Slots[0] != slot || !strings.Contains(s.TOML, slot) {
		t.Fatalf("suggest_queue_slots = %+v; want [%s]", s, slot)
	}

	// Bad input names the field.
	e2.call("get_best_posting_times", map[string]any{"metric": "vibes"}).fails(t, apperr.InvalidInput).mentions(t, "metric")
	e2.call("get_best_posting_times", map[string]any{"lookback_days": 400}).fails(t, apperr.InvalidInput).mentions(t, "lookback_days")
	e2.call("suggest_queue_slots", map[string]any{"count": 15}).fails(t, apperr.InvalidInput).mentions(t, "count")
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }
