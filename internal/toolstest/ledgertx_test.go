package toolstest

import (
	"fmt"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestGatedPostWritesTwoTransactions: a post an agent makes through the
// gateway, executed against the emulator, commits two write transactions
// (the claim and the completion), and its X usage row and its posts
// ledger row are written with the completion, on SQLite and PostgreSQL.
func TestGatedPostWritesTwoTransactions(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
			if storetest.BackendOf(t) == storetest.Postgres {
				c.Storage.DatabaseURL = storetest.Target(t)
			}
		}})
		// The first post prepares what every later one reuses.
		e.call("x_post_tweet", map[string]any{"text": "warming up the ledger check"}).ok(t, nil)
		rows := func(table string) int {
			t.Helper()
			var n int
			if err := e.App.DB.QueryRowContext(e.ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		usage, posts := rows("x_api_usage"), rows("original_tweets")
		count := storetest.WriteTxCounter(t, e.App.DB)
		const n = 3
		for i := range n {
			e.call("x_post_tweet", map[string]any{"text": fmt.Sprintf("ledger check %d: %s", i, []string{"alpha", "bravo", "charlie"}[i])}).ok(t, nil)
		}
		if got := count(); got != 2*n {
			t.Errorf("%d gated posts committed %d write transactions, want %d (the claim and the completion of each)", n, got, 2*n)
		}
		if got := rows("x_api_usage") - usage; got < n {
			t.Errorf("%d X usage rows for %d posts, want at least one each", got, n)
		}
		if got := rows("original_tweets") - posts; got != n {
			t.Errorf("%d posts ledger rows for %d posts, want %d", got, n, n)
		}
	})
}
