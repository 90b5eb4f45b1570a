package autopilot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestScheduledDraftRefusedAsCrossAccountDuplicate: a scheduled draft
// whose text another account of the home posted an hour before is refused
// with cross_account_duplicate when the publisher posts it: nothing reaches
// X, the draft fails and the audit row says why, and the run goes on: a
// draft of the account's own text due with it goes out in the same run.
func TestScheduledDraftRefusedAsCrossAccountDuplicate(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		now := e.clock.Now()
		at := store.FormatTime(now.Add(-time.Minute))
		// brand_b's post, as its gateway recorded it an hour ago.
		if _, err := e.db().Exec(`INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, intent_key, params_summary, status, account_id, owner, created_at)
			VALUES ('b-1', 'x_post_tweet', 'h', 'i', '{"text":"Our tooling notes for this week are up: read them!"}', 'success', 'brand_b', 'x', ?)`,
			store.FormatTime(now.Add(-time.Hour))); err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"our tooling notes for this week are up, read them", "A scheduled post of the default account's own."} {
			if _, err := e.db().Exec(`INSERT INTO drafts (content_type, content, status, scheduled_for, created_at, updated_at)
			VALUES ('tweet', ?, 'scheduled', ?, ?, ?)`, text, at, at, at); err != nil {
				t.Fatal(err)
			}
		}
		r := e.runner(e.app, autopilot.LoopPublisher)
		if res := tick(t, r)[autopilot.LoopPublisher]; res.Error != "" || !strings.Contains(res.Summary, "refused before X: "+string(apperr.CrossAccountDup)) {
			t.Fatalf("publisher: %+v, want the draft refused with %s and the run going on", res, apperr.CrossAccountDup)
		}
		var status string
		if err := e.db().QueryRow(`SELECT status FROM drafts WHERE content LIKE 'our tooling%'`).Scan(&status); err != nil || status != "failed" {
			t.Fatalf("the refused draft is %q (%v), want failed", status, err)
		}
		var own bool
		for _, tw := range e.sim.World().Tweets {
			switch tw.Text {
			case "our tooling notes for this week are up, read them":
				t.Errorf("the cross-account duplicate reached X as %s", tw.ID)
			case "A scheduled post of the default account's own.":
				own = true
			}
		}
		if !own {
			t.Error("the draft of the account's own text was not posted")
		}
		var code string
		if err := e.db().QueryRow(`SELECT COALESCE(error_code,'') FROM mutation_audit WHERE account_id = 'default' AND status = 'failure'`).Scan(&code); err != nil ||
			code != string(apperr.CrossAccountDup) {
			t.Fatalf("the refused draft's audit row: %q (%v), want %s", code, err, apperr.CrossAccountDup)
		}
	})
}
