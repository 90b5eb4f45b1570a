package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/counters"
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
