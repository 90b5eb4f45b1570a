package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// migratedTo returns a database file at path migrated up to version only,
// as an older release left it, with raw access for writing rows in that
// release's format.
func migratedTo(t *testing.T, path string, version int64) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, os.DirFS("migrations"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version); err != nil {
		t.Fatalf("migrate to %d: %v", version, err)
	}
	return raw
}

func TestCounterTimesMigrateToMilliseconds(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	raw := migratedTo(t, path, 8)
	// Rows as the counters wrote them before: nanosecond text.
	start := time.Date(2026, 3, 4, 12, 0, 0, 123456789, time.UTC)
	for _, row := range []struct {
		key  string
		used float64
	}{{policy.LimitKeyMaxMutationsPerHour, 3}, {"engage", 1}} {
		if _, err := raw.ExecContext(ctx, `INSERT INTO policy_counters
			(account_id, key, dimension, match_value, max_value, period_seconds, used, window_start, updated_at)
			VALUES ('default', ?, 'global', '*', 5, 3600, ?, '2026-03-04T12:00:00.123456789Z', '2026-03-04T12:10:00.000000001Z')`,
			row.key, row.used); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db := open(t, path, store.Options{})
	var ws, upd string
	if err := db.QueryRowContext(ctx, `SELECT window_start, updated_at FROM policy_counters WHERE key = ?`,
		policy.LimitKeyMaxMutationsPerHour).Scan(&ws, &upd); err != nil {
		t.Fatal(err)
	}
	if ws != "2026-03-04T12:00:00.123Z" || upd != "2026-03-04T12:10:00.000Z" {
		t.Fatalf("after migration window_start %q updated_at %q, want the store's millisecond format", ws, upd)
	}
	if _, err := store.ParseTime(ws); err != nil {
		t.Fatalf("store cannot read the migrated time: %v", err)
	}

	// The counters keep using the migrated window: a charge in the same
	// hour adds to it instead of restarting it, as a text comparison
	// between two formats would have done.
	now := start.Add(30 * time.Minute)
	ctr := counters.New(db.DB, "default", func() time.Time { return now })
	eng, err := policy.NewEngine(policy.Config{EnforceForMutations: true, MaxMutationsPerHour: 5},
		func(s string) bool { return s == "x_like_tweet" })
	if err != nil {
		t.Fatal(err)
	}
	if err := ctr.Consume(ctx, eng.Limits(), policy.Request{Tool: "x_like_tweet", Category: policy.CatEngage, Now: now}); err != nil {
		t.Fatal(err)
	}
	snap, err := ctr.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u := snap[policy.LimitKeyMaxMutationsPerHour]
	if u.Used != 4 || !u.WindowStart.Equal(start.Truncate(time.Millisecond)) {
		t.Errorf("usage after a charge in the migrated window = %+v, want 4 used since %v", u, start.Truncate(time.Millisecond))
	}
}

func TestTargetTweetIDBackfilledFromParams(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	raw := migratedTo(t, path, 9)
	audit := func(corr, tool, summary string, request any) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary,
			status, created_at, request_json) VALUES (?, ?, 'h', ?, 'success', '2026-03-04T12:00:00.000Z', ?)`, corr, tool, summary, request); err != nil {
			t.Fatal(err)
		}
	}
	approval := func(tool, params string) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, `INSERT INTO approval_queue (tool_name, params_json, original_params, params_hash,
			created_at, expires_at) VALUES (?, ?, ?, 'h', '2026-03-04T12:00:00.000Z', '2026-03-05T12:00:00.000Z')`, tool, params, params); err != nil {
			t.Fatal(err)
		}
	}
	audit("reply", "x_reply_to_tweet", `{"in_reply_to_id":"101","text":"about 999"}`, `{"in_reply_to_id":"101","text":"about 999"}`)
	audit("like", "x_like_tweet", `{"tweet_id":"102"}`, nil)             // before 00008: summary only
	audit("cut", "x_reply_to_tweet", `{"in_reply_to_id":"103","te`, nil) // truncated summary
	audit("post", "x_post_tweet", `{"text":"in_reply_to_id 104"}`, `{"text":"in_reply_to_id 104"}`)
	approval("x_quote_tweet", `{"quoted_tweet_id":"201","text":"q"}`)
	approval("x_reply_to_tweet", `{"in_reply_to_id":"202","text":"r"}`)
	approval("x_delete_tweet", `{"tweet_id":"203"}`)
	raw.Close()

	db := open(t, path, store.Options{})
	targets := func(q string) map[string]string {
		t.Helper()
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var k string
			var v sql.NullString
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			out[k] = v.String
		}
		return out
	}
	got := targets(`SELECT correlation_id, target_tweet_id FROM mutation_audit`)
	want := map[string]string{"reply": "101", "like": "102", "cut": "", "post": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("audit %s target = %q, want %q", k, got[k], v)
		}
	}
	got = targets(`SELECT tool_name, target_tweet_id FROM approval_queue`)
	want = map[string]string{"x_quote_tweet": "201", "x_reply_to_tweet": "202", "x_delete_tweet": "203"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("approval %s target = %q, want %q", k, got[k], v)
		}
	}
	for _, idx := range []string{"idx_mutation_audit_target", "idx_approval_target"} {
		var sqlText string
		if err := db.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, idx).Scan(&sqlText); err != nil {
			t.Errorf("index %s: %v", idx, err)
		} else if !strings.Contains(sqlText, "target_tweet_id") {
			t.Errorf("index %s is %s", idx, sqlText)
		}
	}
}

// TestIntentKeyTakesTheParametersHash: rows written before intent keys,
// on either dialect, take their parameters hash as their intent key, so
// the gateway (which looks a call up by intent key and by parameters hash)
// still finds them: an unknown attempt of before the upgrade keeps
// blocking its repeat.
func TestIntentKeyTakesTheParametersHash(t *testing.T) {
	ctx := context.Background()
	for _, tc := range migratedCases(ctx, 13, 3) {
		t.Run(tc.name, func(t *testing.T) {
			raw, target := tc.before(t)
			rebind := func(q string) string {
				if tc.name == "postgres" {
					return store.Rebind(q)
				}
				return q
			}
			if _, err := raw.ExecContext(ctx, rebind(`INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, owner,
				status, created_at) VALUES ('old', 'x_post_tweet', 'h-audit', '{}', '', 'unknown', '2026-03-04T12:00:00.000Z')`)); err != nil {
				t.Fatal(err)
			}
			if _, err := raw.ExecContext(ctx, rebind(`INSERT INTO approval_queue (tool_name, params_json, original_params, params_hash,
				created_at, expires_at) VALUES ('x_post_tweet', '{}', '{}', 'h-queue', '2026-03-04T12:00:00.000Z', '2026-03-05T12:00:00.000Z')`)); err != nil {
				t.Fatal(err)
			}
			raw.Close()

			db := open(t, target, store.Options{})
			for _, q := range []struct{ table, want string }{{"mutation_audit", "h-audit"}, {"approval_queue", "h-queue"}} {
				var key sql.NullString
				if err := db.QueryRowContext(ctx, `SELECT intent_key FROM `+q.table).Scan(&key); err != nil {
					t.Fatal(err)
				}
				if key.String != q.want {
					t.Errorf("%s: intent_key %v after the migration, want the parameters hash %q", q.table, key, q.want)
				}
			}
		})
	}
}

// migratedCase is a database on one dialect, migrated up to a release
// before a change, raw, and the target store.Open takes.
type migratedCase struct {
	name   string
	before func(t *testing.T) (*sql.DB, string)
}

// migratedCases are the same release on each dialect: SQLite at version
// sqliteV, PostgreSQL at pgV (their migrations are numbered apart).
func migratedCases(ctx context.Context, sqliteV, pgV int64) []migratedCase {
	return []migratedCase{
		{"sqlite", func(t *testing.T) (*sql.DB, string) {
			path := filepath.Join(t.TempDir(), "t.db")
			return migratedTo(t, path, sqliteV), path
		}},
		{"postgres", func(t *testing.T) (*sql.DB, string) {
			url := pgtest.NewDatabase(t, "")
			raw, err := sql.Open("pgx", url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { raw.Close() })
			p, err := goose.NewProvider(goose.DialectPostgres, raw, os.DirFS("migrations_postgres"), goose.WithDisableGlobalRegistry(true))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.UpTo(ctx, pgV); err != nil {
				t.Fatalf("migrate to %d: %v", pgV, err)
			}
			return raw, url
		}},
	}
}
