package counters_test

import (
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// testTools stands in for the tool registry.
func testTools() map[string]policy.Category {
	return map[string]policy.Category{
		"x_post_tweet":     policy.CatWrite,
		"x_reply_to_tweet": policy.CatWrite,
		"x_quote_tweet":    policy.CatWrite,
		"x_post_thread":    policy.CatThread,
		"x_edit_tweet":     policy.CatWrite,
		"x_follow_user":    policy.CatEngage,
		"x_unfollow_user":  policy.CatEngage,
		"x_like_tweet":     policy.CatEngage,
		"x_retweet":        policy.CatEngage,
		"x_delete_tweet":   policy.CatDelete,
		"x_post":           policy.CatUniversal,
	}
}

func known(name string) bool {
	_, ok := testTools()[name]
	return ok
}

// base is a fixed instant: Wednesday 2026-03-04 12:00 UTC.
func base() time.Time { return time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) }

func mustEngine(t testing.TB, cfg policy.Config) *policy.Engine {
	t.Helper()
	e, err := policy.NewEngine(cfg, known)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	return e
}

// bare is an enforcing config with no compat rules or limits.
func bare() policy.Config { return policy.Config{EnforceForMutations: true} }

// agencyAt20 is a database, the agency template's engine with at most 20
// mutations an hour, and account "acct"'s counters on a clock at base().
func agencyAt20(t testing.TB) (*clock, *sql.DB, *policy.Engine, *counters.Store) {
	t.Helper()
	clk := &clock{t: base()}
	db := openDB(t)
	cfg := bare()
	cfg.MaxMutationsPerHour = 20
	cfg.Template = policy.TemplateAgencyMode
	return clk, db, mustEngine(t, cfg), counters.New(db, "acct", clk.now)
}

// req builds a request for tool with the registry's category.
func req(tool string) policy.Request {
	cat, ok := testTools()[tool]
	if !ok {
		panic("test uses unknown tool " + tool)
	}
	return policy.Request{Tool: tool, Category: cat, Mode: policy.ModeAutopilot, Now: base()}
}

func noUsage(string) (float64, time.Time, bool) { return 0, time.Time{}, false }

// openDB opens a real, fully migrated tuitbot database of the backend the
// test runs on (storetest.ForEachBackend): the counters' SQL is tested
// against the schema each dialect's migrations create.
func openDB(t testing.TB) *sql.DB {
	t.Helper()
	return storetest.Open(t, store.Options{ReserveBytes: -1}).DB
}

// clock is an injectable, settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func wantDecision(t *testing.T, got policy.Decision, outcome policy.Outcome, ruleID string, code apperr.Code) {
	t.Helper()
	if got.Outcome != outcome || got.RuleID != ruleID || got.Code != code {
		t.Fatalf("decision = {%s %q %q} (%s), want {%s %q %q}",
			got.Outcome, got.RuleID, got.Code, got.Reason, outcome, ruleID, code)
	}
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
