package store_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestApprovedRowsNameWhoAskedAndWhoDecided: rows an older release wrote
// for approved calls name "approval" as their caller; after the upgrade,
// on either dialect, they name the queued call's caller and the reviewer
// who decided, read from the item they replayed. A row whose item is gone
// keeps what it had, and a row no person decided names no decider.
func TestApprovedRowsNameWhoAskedAndWhoDecided(t *testing.T) {
	ctx := context.Background()
	for _, tc := range migratedCases(ctx, 23, 13) {
		t.Run(tc.name, func(t *testing.T) {
			raw, target := tc.before(t)
			exec := func(q string, args ...any) {
				t.Helper()
				if tc.name == "postgres" {
					q = store.Rebind(q)
				}
				if _, err := raw.ExecContext(ctx, q, args...); err != nil {
					t.Fatal(err)
				}
			}
			exec(`INSERT INTO approval_queue (id, tool_name, params_json, original_params, params_hash, caller, loop_name, status,
				reviewed_by, created_at, expires_at) VALUES (7, 'x_post_tweet', '{}', '{}', 'h', 'autopilot', 'content', 'executed',
				'link:phone', '2026-03-04T12:00:00.000Z', '2026-03-05T12:00:00.000Z')`)
			audit := func(corr, caller string, approval any) {
				exec(`INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, params_summary, owner, status, created_at, caller, approval_id)
					VALUES (?, 'x_post_tweet', 'h', '{}', '', 'success', '2026-03-04T12:00:00.000Z', ?, ?)`, corr, caller, approval)
			}
			audit("approved", "approval", 7)
			audit("item-gone", "approval", 99)
			audit("allowed", "mcp", nil)
			raw.Close()

			db := open(t, target, store.Options{})
			want := map[string][2]string{"approved": {"autopilot", "link:phone"}, "item-gone": {"approval", ""}, "allowed": {"mcp", ""}}
			for corr, w := range want {
				var caller string
				var decided sql.NullString
				if err := db.QueryRowContext(ctx, `SELECT caller, decided_by FROM mutation_audit WHERE correlation_id = ?`, corr).Scan(&caller, &decided); err != nil {
					t.Fatal(err)
				}
				if caller != w[0] || decided.String != w[1] {
					t.Errorf("%s: asked by %q, decided by %q after the upgrade; want %q, %q", corr, caller, decided.String, w[0], w[1])
				}
			}
		})
	}
}
