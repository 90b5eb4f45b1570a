package policy_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"

	"github.com/tuitbot/tuitbot/internal/policy"
)

// Example shows the gateway's use of the package: build the engine from
// config once, sync the limits on start, check before calling X, consume
// after X carried the mutation out.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "policy-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "t.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE policy_counters (
  account_id TEXT NOT NULL, key TEXT NOT NULL, dimension TEXT NOT NULL, match_value TEXT NOT NULL DEFAULT '',
  max_value REAL NOT NULL, period_seconds INTEGER NOT NULL, used REAL NOT NULL DEFAULT 0,
  window_start TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (account_id, key))`); err != nil {
		panic(err)
	}

	registry := map[string]bool{"x_post_tweet": true, "x_like_tweet": true, "x_delete_tweet": true}
	cfg := policy.DefaultConfig()
	cfg.MaxMutationsPerHour = 1
	cfg.RequireApprovalFor = []string{"post_tweet"} // alias of x_post_tweet
	engine, err := policy.NewEngine(cfg, func(name string) bool { return registry[name] })
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	counters := policy.NewCounters(db, "default", func() time.Time { return now })
	if err := counters.Sync(ctx, engine.Limits()); err != nil {
		panic(err)
	}

	call := func(tool string, cat policy.Category) policy.Request {
		return policy.Request{Tool: tool, Category: cat, Mode: policy.ModeAutopilot}
	}
	for _, r := range []policy.Request{
		call("x_post_tweet", policy.CatWrite),
		call("x_delete_tweet", policy.CatDelete),
		call("x_like_tweet", policy.CatEngage),
		call("x_like_tweet", policy.CatEngage),
	} {
		d, err := engine.Check(ctx, counters, r)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s [%s]\n", r.Tool, d.Outcome, d.RuleID)
		if d.Outcome == policy.Allow {
			// ... call X; on success:
			if err := counters.Consume(ctx, engine.Limits(), r); err != nil {
				panic(err)
			}
		}
	}
	// Output:
	// x_post_tweet: require_approval [compat:approval:x_post_tweet]
	// x_delete_tweet: require_approval [hard:delete_approval]
	// x_like_tweet: allow []
	// x_like_tweet: deny [compat:max_mutations_per_hour]
}
