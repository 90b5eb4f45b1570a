package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// dump renders every row of the tables the test fills, in id or key
// order, so two databases can be compared value by value.
func dump(t *testing.T, db *store.DB) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, correlation_id, COALESCE(idempotency_key, '<null>'), status, COALESCE(elapsed_ms, -1), created_at, COALESCE(result_json, '<null>') FROM mutation_audit ORDER BY id`,
		`SELECT account_id, key, used, max_value, period_seconds, window_start FROM policy_counters ORDER BY account_id, key`,
		`SELECT id, tool_name, params_json, status, expires_at FROM approval_queue ORDER BY id`,
		// Kept by the queue's triggers: rebuilt by the copy, not copied.
		`SELECT account_id, tool_name, caller, n FROM approval_pending_counts WHERE n <> 0 ORDER BY account_id, tool_name, caller`,
		`SELECT tweet_id, has_media, relevance_score, content FROM discovered_tweets ORDER BY tweet_id`,
		`SELECT id FROM db_identity`,
	} {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%v|", v)
			}
			b.WriteByte('\n')
		}
		rows.Close()
	}
	return b.String()
}

func fill(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO mutation_audit (correlation_id, idempotency_key, tool_name, params_hash, params_summary, status, elapsed_ms, owner, created_at, result_json)
			VALUES (?, ?, 'x_like_tweet', 'h1', '{}', 'success', 12, 'o', ?, ?)`, []any{"c1", "k1", "2026-03-04T05:06:07.800Z", `{"ok":"é 🎉"}`}},
		{`INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, status, owner, created_at)
			VALUES (?, 'x_like_tweet', 'h2', '{}', 'pending', 'o', ?)`, []any{"c2", "2026-03-04T05:06:08.000Z"}},
		{`INSERT INTO policy_counters (account_id, key, dimension, max_value, period_seconds, used, window_start, updated_at)
			VALUES ('default', 'likes', 'tool', 5, 3600, 2.5, ?, ?)`, []any{"2026-03-04T05:00:00.000Z", "2026-03-04T05:00:00.000Z"}},
		{`INSERT INTO approval_queue (tool_name, params_json, original_params, params_hash, created_at, expires_at)
			VALUES ('x_post_tweet', '{"text":"hi"}', '{"text":"hi"}', 'h3', ?, ?)`, []any{"2026-03-04T05:06:07.800Z", "2026-03-05T05:06:07.800Z"}},
		{`INSERT INTO discovered_tweets (tweet_id, content, discovered_at, has_media, relevance_score) VALUES ('9', 'a ''quoted'' text', ?, 1, 0.75)`,
			[]any{"2026-03-04T05:06:07.800Z"}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("fill: %v", err)
		}
	}
}

// TestCopyRoundTrip moves a SQLite database to PostgreSQL and back: every
// row, id and the identity arrive unchanged, the copies open again, and
// PostgreSQL numbers new rows past the copied ids.
func TestCopyRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lite := open(t, filepath.Join(dir, "a", "tuitbot.db"), store.Options{})
	fill(t, lite)
	want := dump(t, lite)

	pgURL := pgtest.NewDatabase(t, "")
	pg := open(t, pgURL, store.Options{})
	if _, err := store.Copy(ctx, lite, pg); err != nil {
		t.Fatalf("copy to postgres: %v", err)
	}
	if got := dump(t, pg); got != want {
		t.Fatalf("postgres copy differs:\n%s\nwant\n%s", got, want)
	}
	if pg.ID != lite.ID {
		t.Fatalf("identity %s, want %s", pg.ID, lite.ID)
	}
	var id int64
	if err := pg.QueryRowContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, owner, created_at)
		VALUES ('c3', 't', 'h', '{}', 'o', '2026-03-04T06:00:00.000Z') RETURNING id`).Scan(&id); err != nil || id != 3 {
		t.Fatalf("new row after the copy: id %d, %v; want 3", id, err)
	}
	if _, err := pg.ExecContext(ctx, `DELETE FROM mutation_audit WHERE id = 3`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Copy(ctx, lite, pg); err == nil || !strings.Contains(err.Error(), "already has") {
		t.Fatalf("a second copy into a filled database: %v, want a refusal", err)
	}

	backPath := filepath.Join(dir, "b", "tuitbot.db")
	back := open(t, backPath, store.Options{})
	if _, err := store.Copy(ctx, pg, back); err != nil {
		t.Fatalf("copy back to sqlite: %v", err)
	}
	if got := dump(t, back); got != want {
		t.Fatalf("sqlite copy differs:\n%s\nwant\n%s", got, want)
	}
	back.Close()
	// The copy is the database this home uses now: it opens again.
	again := open(t, backPath, store.Options{HistoryFiles: []string{store.IdentityPath(backPath)}})
	if again.ID != lite.ID {
		t.Fatalf("reopened copy has identity %s, want %s", again.ID, lite.ID)
	}
	var n int
	if err := again.QueryRowContext(ctx, `SELECT count(*) FROM mutation_audit`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("reopened copy has %d audit rows, %v", n, err)
	}
}

// TestCopyGathersStatistics: a copy is a bulk load, after which the target
// has its planner's statistics at once (PostgreSQL ANALYZE, SQLite PRAGMA
// optimize) instead of whenever autovacuum or the next open gets to it.
func TestCopyGathersStatistics(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lite := open(t, filepath.Join(dir, "a", "tuitbot.db"), store.Options{})
	fill(t, lite)
	pg := open(t, pgtest.NewDatabase(t, ""), store.Options{})
	back := open(t, filepath.Join(dir, "b", "tuitbot.db"), store.Options{})
	for _, c := range []struct {
		name     string
		src, dst *store.DB
		stats    string
	}{
		{"to postgres", lite, pg, `SELECT count(*) FROM pg_stats WHERE tablename = 'mutation_audit'`},
		{"to sqlite", pg, back, `SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'mutation_audit'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := store.Copy(ctx, c.src, c.dst); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := c.dst.QueryRowContext(ctx, c.stats).Scan(&n); err != nil || n == 0 {
				t.Fatalf("%d statistics rows of mutation_audit after the copy (%v)", n, err)
			}
		})
	}
}
