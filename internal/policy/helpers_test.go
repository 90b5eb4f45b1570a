package policy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// testTools stands in for the tool registry.
func testTools() map[string]Category {
	return map[string]Category{
		"x_post_tweet":     CatWrite,
		"x_reply_to_tweet": CatWrite,
		"x_quote_tweet":    CatWrite,
		"x_post_thread":    CatThread,
		"x_edit_tweet":     CatWrite,
		"x_follow_user":    CatEngage,
		"x_unfollow_user":  CatEngage,
		"x_like_tweet":     CatEngage,
		"x_retweet":        CatEngage,
		"x_delete_tweet":   CatDelete,
		"x_send_dm":        CatDM,
		"x_upload_media":   CatMedia,
		"x_post":           CatUniversal,
		"x_put":            CatUniversal,
		"x_delete":         CatUniversal,
		"compose_tweet":    CatContent,
		"approve_item":     CatApproval,
	}
}

func known(name string) bool {
	_, ok := testTools()[name]
	return ok
}

// base is a fixed instant: Wednesday 2026-03-04 12:00 UTC.
func base() time.Time { return time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) }

func mustEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e, err := NewEngine(cfg, known)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	return e
}

// bare is an enforcing config with no compat rules or limits, so a test sees
// only what it adds.
func bare() Config {
	return Config{EnforceForMutations: true}
}

// req builds a request for tool with the registry's category.
func req(tool string) Request {
	cat, ok := testTools()[tool]
	if !ok {
		panic("test uses unknown tool " + tool)
	}
	return Request{Tool: tool, Category: cat, Mode: ModeAutopilot, Now: base()}
}

func noUsage(string) (float64, time.Time, bool) { return 0, time.Time{}, false }

// usageMap serves fixed usage to Decide.
func usageMap(m map[string]float64, start time.Time) func(string) (float64, time.Time, bool) {
	return func(k string) (float64, time.Time, bool) {
		v, ok := m[k]
		return v, start, ok
	}
}

func wantConfigError(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a config error mentioning %q, got nil", fragments)
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != apperr.ConfigError {
		t.Fatalf("want *apperr.Error with code %s, got %T %v", apperr.ConfigError, err, err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err.Error(), f)
		}
	}
}

// clock is an injectable, settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func wantDecision(t *testing.T, got Decision, outcome Outcome, ruleID string, code apperr.Code) {
	t.Helper()
	if got.Outcome != outcome || got.RuleID != ruleID || got.Code != code {
		t.Fatalf("decision = {%s %q %q} (%s), want {%s %q %q}",
			got.Outcome, got.RuleID, got.Code, got.Reason, outcome, ruleID, code)
	}
}
