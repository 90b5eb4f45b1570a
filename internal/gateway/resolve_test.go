package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestUnknownOutcomeStaysBlockedUntilResolved: no time window lifts the
// block on an unknown or interrupted attempt; a resolution does. Happened
// then answers as a duplicate of the attempt, did_not_happen lets the call
// run again, and who resolved it and when is on the row.
func TestUnknownOutcomeStaysBlockedUntilResolved(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, origin := range []string{statusUnknown, statusInterrupted} {
			for _, resolution := range []string{ResolvedHappened, ResolvedDidNotHappen} {
				t.Run(origin+"/"+resolution, func(t *testing.T) {
					e := newEnv(t)
					params := json.RawMessage(`{"text":"maybe posted"}`)
					var corr string
					if origin == statusUnknown {
						e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
							return Result{}, apperr.New(apperr.XOutcomeUnknown, "timed out")
						})
						_, err := e.do(e.g, params, "")
						corr, _ = wantCode(t, err, apperr.XOutcomeUnknown).Extra["correlation_id"].(string)
					} else {
						corr = e.insertRow(uuid.NewString(), statusPending, string(params), e.clock.Now())
						e.g = e.open() // the restart marks it interrupted
					}
					e.act.setRun(nil)
					ran := e.act.count()
					// Far past the database window, and past the memory window.
					for _, wait := range []time.Duration{time.Minute, 10 * time.Minute, 30 * 24 * time.Hour} {
						e.clock.Advance(wait)
						_, err := e.do(e.g, params, "")
						ae := wantCode(t, err, apperr.OutcomeUnverified)
						if ae.Extra["original_correlation_id"] != corr {
							t.Fatalf("after %s: blocked by %v, want %s", wait, ae.Extra["original_correlation_id"], corr)
						}
					}
					if e.act.count() != ran {
						t.Fatal("a blocked repeat was executed")
					}
					entry, err := e.g.Resolve(e.ctx, corr, resolution, ResolvedByCLI)
					if err != nil {
						t.Fatalf("Resolve: %v", err)
					}
					if entry.Resolution != resolution || entry.ResolvedBy != ResolvedByCLI || entry.ResolvedAt != ts(e.clock.Now()) {
						t.Fatalf("resolved row %+v", entry)
					}
					_, err = e.g.Resolve(e.ctx, corr, ResolvedHappened, ResolvedByCLI)
					wantCode(t, err, apperr.ValidationError)

					r, err := e.do(e.g, params, "")
					switch resolution {
					case ResolvedHappened:
						if err != nil || r.Kind != Duplicate || r.CorrelationID != corr || e.act.count() != ran {
							t.Fatalf("after happened: kind %q corr %q err %v, executed %d more", r.Kind, r.CorrelationID, err, e.act.count()-ran)
						}
					case ResolvedDidNotHappen:
						if err != nil || r.Kind != Executed || e.act.count() != ran+1 {
							t.Fatalf("after did_not_happen: kind %q err %v", r.Kind, err)
						}
					}
				})
			}
		}
	})
}

func TestResolveRefusesWhatIsNotUnknown(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		ok := e.mustDo(json.RawMessage(`{"text":"fine"}`), "")
		_, err := e.g.Resolve(e.ctx, ok.CorrelationID, ResolvedHappened, ResolvedByCLI)
		wantCode(t, err, apperr.ValidationError)
		_, err = e.g.Resolve(e.ctx, uuid.NewString(), ResolvedHappened, ResolvedByCLI)
		wantCode(t, err, apperr.NotFound)
		for _, tc := range []struct{ resolution, by, field string }{
			{"maybe", ResolvedByCLI, "resolution"},
			{ResolvedHappened, ResolvedByAuto, "resolved_by"},
		} {
			_, err := e.g.Resolve(e.ctx, ok.CorrelationID, tc.resolution, tc.by)
			if ae := wantCode(t, err, apperr.InvalidInput); !contains(ae.Message, tc.field) {
				t.Fatalf("error %q does not name %s", ae.Message, tc.field)
			}
		}
	})
}

// TestUnknownOutcomeResolvedByReadingX: an action that can find its effect
// on X resolves a blocking attempt by itself (auto) when it finds it, and
// the repeat answers as a duplicate with what was found; not finding it
// proves nothing, so the block stays.
func TestUnknownOutcomeResolvedByReadingX(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		found := false
		verified := 0
		e.g.actions[fakeTool].Verify = func(_ context.Context, params json.RawMessage) (any, bool, error) {
			verified++
			return map[string]any{"id": "42", "seen": json.RawMessage(params)}, found, nil
		}
		e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
			return Result{}, apperr.New(apperr.XOutcomeUnknown, "timed out")
		})
		params := json.RawMessage(`{"text":"posted?"}`)
		_, err := e.do(e.g, params, "")
		corr := wantCode(t, err, apperr.XOutcomeUnknown).Extra["correlation_id"]
		e.clock.Advance(time.Hour)

		_, err = e.do(e.g, params, "")
		wantCode(t, err, apperr.OutcomeUnverified)
		if verified != 1 {
			t.Fatalf("verified %d times, want 1", verified)
		}
		found = true
		r, err := e.do(e.g, params, "")
		if err != nil || r.Kind != Duplicate || r.CorrelationID != corr {
			t.Fatalf("after X shows the post: kind %q corr %q err %v", r.Kind, r.CorrelationID, err)
		}
		if cached := fmt.Sprint(dataMap(t, r.Answer())["cached_result"]); !contains(cached, "42") {
			t.Fatalf("cached_result %s, want what X showed", cached)
		}
		d, err := e.g.Detail(e.ctx, fmt.Sprint(corr))
		if err != nil || d.Resolution != ResolvedHappened || d.ResolvedBy != ResolvedByAuto {
			t.Fatalf("row after auto resolution: %+v %v", d, err)
		}
		if e.act.count() != 1 {
			t.Fatalf("executed %d times", e.act.count())
		}
	})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
