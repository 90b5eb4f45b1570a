package counters_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/counters"
)

// Example shows the counters beside the policy engine: build the engine
// from config once, sync the limits on start, check before calling X,
// consume after X carried the mutation out. (The gateway instead reserves
// inside its own write transaction through Store.Tx.)
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "policy-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, filepath.Join(dir, "t.db"), store.Options{ReserveBytes: -1})
	if err != nil {
		panic(err)
	}
	defer db.Close()

	registry := map[string]bool{"x_post_tweet": true, "x_like_tweet": true, "x_delete_tweet": true}
	cfg := policy.DefaultConfig()
	cfg.MaxMutationsPerHour = 1
	cfg.RequireApprovalFor = []string{"post_tweet"} // alias of x_post_tweet
	engine, err := policy.NewEngine(cfg, func(name string) bool { return registry[name] })
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	counters := counters.New(db.DB, "default", func() time.Time { return now })
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
