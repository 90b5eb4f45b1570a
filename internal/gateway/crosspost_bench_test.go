package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/policy"
)

// BenchmarkPostedElsewhere is the cost of one cross-account duplicate
// check's read as the window grows: the other account's posts in the last
// day, then the check an account makes before each post it publishes.
func BenchmarkPostedElsewhere(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ctx := context.Background()
			db := openBenchDB(b)
			now := time.Now().UTC()
			for i := range n {
				at := now.Add(-time.Duration(n-i) * time.Second)
				if _, err := db.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, account_id, created_at)
					VALUES (?, 'x_post_tweet', 'h', ?, 'success', 'brand_b', ?)`,
					fmt.Sprintf("c%d", i), fmt.Sprintf(`{"text":"post number %d of the other account"}`, i), ts(at)); err != nil {
					b.Fatal(err)
				}
			}
			g, err := New(ctx, Options{DB: db, Policy: allowPolicy{}, AccountID: "default",
				LockDir: filepath.Join(b.TempDir(), "locks"), Now: func() time.Time { return now },
				Mode: func() (string, bool) { return policy.ModeAutopilot, false }})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			since := now.Add(-24 * time.Hour)
			if _, err := g.PostedElsewhere(ctx, since); err != nil {
				b.Fatal(err)
			}
			loop(b, func(int) {
				if _, err := g.PostedElsewhere(ctx, since); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
