package toolstest

import (
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestRawWriteRollbackMatchesItsOutcome: the rollback guidance of a raw
// write says what the audit row says. A 5xx to a POST leaves the outcome
// unknown (the audit row is unknown, a repeat is refused), so the guidance
// must not claim that X did not apply it: it says the outcome is unknown and
// how to find out. A 4xx is X refusing the request, which is not applied.
func TestRawWriteRollbackMatchesItsOutcome(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	type raw struct {
		Status int `json:"status"`
	}
	post := func(body string) (result, raw) {
		t.Helper()
		var d raw
		r := e.call("x_post", map[string]any{"path": "/2/tweets", "body": body}).ok(t, &d)
		if r.Meta.Rollback == nil {
			t.Fatalf("x_post answered %d without rollback guidance", d.Status)
		}
		return r, d
	}

	t.Run("503 after X applied it: unknown", func(t *testing.T) {
		e.Sim.SetFault("POST /2/tweets", xsim.Fault{ApplyThenFailNext: 1, ErrorStatus: 503})
		r, d := post(`{"text":"Did X take this raw post? Nobody knows yet."}`)
		e.Sim.ClearFaults()
		if d.Status != 503 {
			t.Fatalf("data.status %d, want 503", d.Status)
		}
		if a := e.audit(r.Meta.CorrelationID); a.Status != "unknown" {
			t.Fatalf("audit status %q, want unknown", a.Status)
		}
		note := r.Meta.Rollback.Note
		for _, bad := range []string{"did not apply", "nothing to undo"} {
			if strings.Contains(note, bad) {
				t.Errorf("rollback note %q claims %q for an unknown outcome", note, bad)
			}
		}
		for _, want := range []string{"unknown", "x_get_user_tweets", "tuitbot audit resolve", "--happened", "--did-not-happen", "x_delete_tweet"} {
			if !strings.Contains(note, want) {
				t.Errorf("rollback note %q does not mention %q", note, want)
			}
		}
		if r.Meta.Rollback.Reversible {
			t.Errorf("rollback %+v is reversible, but there is no id to undo yet", r.Meta.Rollback)
		}
	})

	t.Run("400: X refused it, nothing applied", func(t *testing.T) {
		r, d := post(`{"text":"","reply_settings":"nobody"}`)
		if d.Status != 400 {
			t.Fatalf("data.status %d, want 400", d.Status)
		}
		if note := r.Meta.Rollback.Note; !strings.Contains(note, "not apply") || strings.Contains(note, "unknown") {
			t.Errorf("rollback note %q, want that X did not apply the request", note)
		}
	})
}
