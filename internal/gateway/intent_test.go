package gateway

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// spelledAction is a second tool with the fake tool's effect: its
// parameters wrap the fake tool's under "as", the way a universal request
// carries a typed tool's parameters in its body.
func spelledAction(f *fakeAction) *Action {
	a := f.action()
	a.Tool = "fake_spelled"
	a.Validate = nil
	a.Intent = func(params json.RawMessage) (string, json.RawMessage, bool) {
		var p struct {
			As json.RawMessage `json:"as"`
		}
		if json.Unmarshal(params, &p) != nil || p.As == nil {
			return "", nil, false
		}
		return fakeTool, p.As, true
	}
	return a
}

// typedIntent gives the fake tool its own intent, as every typed tool has.
func typedIntent(a *Action) *Action {
	a.Intent = func(params json.RawMessage) (string, json.RawMessage, bool) { return a.Tool, params, true }
	return a
}

func TestIntentKeyIsCanonical(t *testing.T) {
	act := typedIntent((&fakeAction{}).action())
	key := func(params string) string {
		t.Helper()
		k, err := IntentKey(act, json.RawMessage(params))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	same := []struct{ name, a, b string }{
		{"key order and spaces", `{"text":"t","media_ids":["1"]}`, `{ "media_ids": ["1"], "text": "t" }`},
		{"NFC and NFD", `{"text":"` + norm.NFC.String("café") + `"}`, `{"text":"` + norm.NFD.String("café") + `"}`},
		{"null member", `{"text":"t"}`, `{"text":"t","media":null}`},
		{"empty members", `{"text":"t"}`, `{"text":"t","media_ids":[],"reply":{},"quote":"","nested":{"a":null,"b":[]}}`},
		{"list of empty lists", `{"text":"t"}`, `{"text":"t","media_ids":[[],[]]}`},
	}
	for _, tt := range same {
		if key(tt.a) != key(tt.b) {
			t.Errorf("%s: %s and %s have different intent keys", tt.name, tt.a, tt.b)
		}
	}
	different := []struct{ name, a, b string }{
		{"text", `{"text":"t"}`, `{"text":"u"}`},
		{"list order", `{"media_ids":["1","2"]}`, `{"media_ids":["2","1"]}`},
		{"list positions", `{"media_ids":[[],["1"]]}`, `{"media_ids":[["1"],[]]}`},
		{"a value that is not empty", `{"text":"t"}`, `{"text":"t","n":0}`},
		{"whitespace in text", `{"text":"t"}`, `{"text":"t "}`},
	}
	for _, tt := range different {
		if key(tt.a) == key(tt.b) {
			t.Errorf("%s: %s and %s have one intent key", tt.name, tt.a, tt.b)
		}
	}
	// Without an intent a call is only ever identical to itself, and its
	// key is neither its parameters hash nor any intent's.
	plain := (&fakeAction{}).action()
	k, err := IntentKey(plain, json.RawMessage(`{"text":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, hash := canon(t, `{"text":"t"}`); k == hash || k == key(`{"text":"t"}`) {
		t.Errorf("an action without an intent shares its key %s with another identity", k)
	}
}

// TestSpellingsShareTheDuplicateChecks: two tools with one intent are one
// call for every duplicate check, in memory and in the database, and the
// audit keeps each call's own tool and parameters hash.
func TestSpellingsShareTheDuplicateChecks(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		g := e.g
		typedIntent(g.actions[fakeTool])
		g.Register(spelledAction(e.act))
		spelled := func(text, key string) (Response, error) {
			return g.Do(e.ctx, Call{Tool: "fake_spelled", Params: map[string]any{"as": map[string]string{"text": text}}, IdempotencyKey: key})
		}

		first := e.mustDo(map[string]string{"text": "one"}, "")
		r, err := spelled("one", "")
		if err != nil || r.Kind != Duplicate || r.CorrelationID != first.CorrelationID {
			t.Fatalf("the other spelling in the memory window: %+v %v, want a duplicate of %s", r, err, first.CorrelationID)
		}
		e.clock.Advance(time.Minute)
		if r, err = spelled("one", ""); err != nil || r.Kind != Duplicate || r.CorrelationID != first.CorrelationID {
			t.Fatalf("the other spelling in the database window: %+v %v, want a duplicate of %s", r, err, first.CorrelationID)
		}
		if e.act.count() != 1 {
			t.Fatalf("executed %d times, want once", e.act.count())
		}
		rows := e.audit()
		if last := rows[len(rows)-1]; last.tool != "fake_spelled" || last.status != statusDuplicate || last.dupOf != first.CorrelationID || last.hash == rows[0].hash {
			t.Fatalf("duplicate row %+v: want the other spelling's own tool and hash, pointing at %s", last, first.CorrelationID)
		}

		// A caller's key names one intent, whatever the spelling.
		keyed := e.mustDo(map[string]string{"text": "two"}, "k")
		if r, err = spelled("two", "k"); err != nil || r.Kind != Duplicate || r.CorrelationID != keyed.CorrelationID {
			t.Fatalf("the key with the other spelling: %+v %v, want a duplicate of %s", r, err, keyed.CorrelationID)
		}
		if _, err = spelled("three", "k"); apperr.CodeOf(err) != apperr.IdempotencyConflict {
			t.Fatalf("the key with another intent: %v, want %s", err, apperr.IdempotencyConflict)
		}

		// An unknown outcome blocks the other spelling, naming it.
		e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
			return Result{}, apperr.New(apperr.XOutcomeUnknown, "timed out")
		})
		_, err = spelled("four", "")
		corr, _ := apperr.As(err).Extra["correlation_id"].(string)
		e.act.setRun(nil)
		e.clock.Advance(time.Hour)
		_, err = e.do(g, map[string]string{"text": "four"}, "")
		if ae := wantCode(t, err, apperr.OutcomeUnverified); ae.Extra["original_correlation_id"] != corr || !contains(ae.Message, "fake_spelled") {
			t.Fatalf("blocked by %v (%s), want %s made with fake_spelled", ae.Extra["original_correlation_id"], ae.Message, corr)
		}

		// Another process's call of the other spelling, still running,
		// holds this one off.
		params := json.RawMessage(`{"as":{"text":"six"}}`)
		other, err := identityOf(g.actions["fake_spelled"], params)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, intent_key, params_summary, status, owner, created_at)
			VALUES ('running', 'fake_spelled', ?, ?, '{}', 'pending', ?, ?)`, other.hash, other.intent, g.instance, ts(e.clock.Now())); err != nil {
			t.Fatal(err)
		}
		_, err = e.do(g, map[string]string{"text": "six"}, "")
		if ae := wantCode(t, err, apperr.MutationInFlight); ae.Extra["original_correlation_id"] != "running" {
			t.Fatalf("in flight: %v, want held off by the running call", ae)
		}

		// One item waits for approval, whatever the spelling.
		e.pol.set(approvalThenAllow)
		queued := e.mustDo(map[string]string{"text": "five"}, "")
		r, err = spelled("five", "")
		if err != nil || r.Kind != Routed || !r.Queued.Duplicate || r.ApprovalID != queued.ApprovalID {
			t.Fatalf("the other spelling while item %d waits: %+v %v", queued.ApprovalID, r, err)
		}
	})
}

// TestRowsOlderThanIntentKeysStillBlock: a row written before intent keys
// has its parameters hash as its key (the migration copies it); the call it
// recorded, made again with the same tool, still meets it. Such rows are
// there before any gateway of this version starts.
func TestRowsOlderThanIntentKeysStillBlock(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, status := range []string{statusUnknown, statusSuccess} {
			t.Run(status, func(t *testing.T) {
				e := newEnv(t)
				c, hash := canon(t, `{"text":"old"}`)
				if _, err := e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, intent_key, params_summary, status, owner, created_at)
					VALUES ('old-row', ?, ?, ?, ?, ?, 'gone', ?)`, fakeTool, hash, hash, c, status, ts(e.clock.Now())); err != nil {
					t.Fatal(err)
				}
				g := e.open()
				typedIntent(g.actions[fakeTool])
				e.clock.Advance(time.Minute)
				r, err := e.do(g, json.RawMessage(c), "")
				switch status {
				case statusUnknown:
					if ae := wantCode(t, err, apperr.OutcomeUnverified); ae.Extra["original_correlation_id"] != "old-row" {
						t.Fatalf("blocked by %v, want old-row", ae.Extra)
					}
				default:
					if err != nil || r.Kind != Duplicate || r.CorrelationID != "old-row" {
						t.Fatalf("answered %+v %v, want a duplicate of old-row", r, err)
					}
				}
				if e.act.count() != 0 {
					t.Fatal("the call ran again")
				}
			})
		}
	})
}

// TestRowsOlderThanIntentKeysAreLookedUpWhileTheyCount: the lookups by
// parameters hash (half of every call's duplicate check) are made only
// while a row written before intent keys can answer a call: an unresolved
// unknown or interrupted attempt forever, a row in the duplicate window
// until it leaves it (from its resolution when it was resolved), an item
// waiting for approval until it expires. Rows with intent keys never
// count, whatever their status.
func TestRowsOlderThanIntentKeysAreLookedUpWhileTheyCount(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		const window = 5 * time.Minute
		for _, c := range []struct {
			name   string
			status string
			legacy bool
			// age is how long before the gateway starts the row was
			// written; resolved, when set, how long before it started
			// the row was resolved as having happened.
			age, resolved time.Duration
			queued        bool
			// matters is how long after the start the row still counts:
			// -1 never, 0 forever.
			matters time.Duration
		}{
			{name: "none", matters: -1},
			{name: "intent key", status: statusUnknown, matters: -1},
			{name: "recent success", status: statusSuccess, legacy: true, age: time.Minute, matters: window - time.Minute},
			{name: "old success", status: statusSuccess, legacy: true, age: time.Hour, matters: -1},
			{name: "old unknown", status: statusUnknown, legacy: true, age: 30 * 24 * time.Hour, matters: 0},
			{name: "old interrupted", status: statusInterrupted, legacy: true, age: 30 * 24 * time.Hour, matters: 0},
			{name: "resolved lately", status: statusUnknown, legacy: true, age: time.Hour, resolved: 2 * time.Minute, matters: window - 2*time.Minute},
			{name: "resolved long ago", status: statusUnknown, legacy: true, age: time.Hour, resolved: 50 * time.Minute, matters: -1},
			{name: "queued", legacy: true, queued: true, matters: 20 * time.Minute},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := newEnv(t)
				start := e.clock.Now()
				key := "intent-key"
				if c.legacy {
					key = "the-hash"
				}
				if c.queued {
					if _, err := e.db.ExecContext(e.ctx, `INSERT INTO approval_queue (account_id, tool_name, params_json, original_params, params_hash, intent_key,
						status, created_at, expires_at) VALUES ('default', ?, '{}', '{}', 'the-hash', ?, 'pending', ?, ?)`,
						fakeTool, key, ts(start.Add(-time.Hour)), ts(start.Add(c.matters))); err != nil {
						t.Fatal(err)
					}
				}
				if c.status != "" {
					var resolution, resolvedAt any
					if c.resolved != 0 {
						resolution, resolvedAt = ResolvedHappened, ts(start.Add(-c.resolved))
					}
					if _, err := e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, intent_key, params_summary, status,
						owner, created_at, resolution, resolved_at) VALUES ('row', ?, 'the-hash', ?, '{}', ?, 'gone', ?, ?, ?)`,
						fakeTool, key, c.status, ts(start.Add(-c.age)), resolution, resolvedAt); err != nil {
						t.Fatal(err)
					}
				}
				g := e.open()
				if err := g.readyForCalls(e.ctx); err != nil {
					t.Fatal(err)
				}
				for _, at := range []time.Duration{0, time.Minute, 2 * window, 30 * 24 * time.Hour} {
					want := c.matters == 0 || at < c.matters
					if got := g.legacy.matter(start.Add(at)); got != want {
						t.Errorf("%v after the start: looked up by hash = %v, want %v", at, got, want)
					}
				}
			})
		}
	})
}

// TestRefusedCallIsNoDuplicate: a call X refused (a universal request
// answered 4xx, returned as data) is audited as a failure, gives its quota
// back, and an identical call after it runs.
func TestRefusedCallIsNoDuplicate(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
			return Result{Data: map[string]int{"status": 403}, NotApplied: apperr.New(apperr.XForbidden, "X refused the request (403)")}, nil
		})
		first := e.mustDo(map[string]string{"text": "no"}, "")
		if first.Kind != Executed || first.Result == nil {
			t.Fatalf("refused call answered %+v, want X's answer as data", first)
		}
		rows := e.audit()
		if rows[0].status != statusFailure || rows[0].errCode != string(apperr.XForbidden) {
			t.Fatalf("audit row %+v, want a failure with X's error", rows[0])
		}
		if e.pol.consumedCount() != 0 {
			t.Fatalf("%d reservations kept, want the refused call's given back", e.pol.consumedCount())
		}
		e.act.setRun(nil)
		if r := e.mustDo(map[string]string{"text": "no"}, ""); r.Kind != Executed || e.act.count() != 2 {
			t.Fatalf("the repeat answered %s after %d executions, want it executed", r.Kind, e.act.count())
		}
	})
}
