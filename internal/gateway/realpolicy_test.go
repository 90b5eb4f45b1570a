package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// enginePolicy joins the real rule engine with its stored counters, as the
// application does.
type enginePolicy struct {
	eng *policy.Engine
	ctr *counters.Store
}

func (p enginePolicy) Reserve(ctx context.Context, tx *sql.Tx, req policy.Request) (policy.Decision, policy.Reservation, error) {
	return p.eng.ReserveTx(ctx, p.ctr.Tx(tx), req)
}

func (p enginePolicy) Release(ctx context.Context, r policy.Reservation) error {
	return p.ctr.Release(ctx, r)
}

const fakeDelete = "fake_delete"

// withEngine replaces the fake policy with the real engine for cfg, in
// mode (autopilot or composer) and approval mode.
func (e *env) withEngine(cfg policy.Config, mode string, approval bool) {
	e.t.Helper()
	known := func(t string) bool { return t == fakeTool || t == fakeDelete }
	eng, err := policy.NewEngine(cfg, known)
	if err != nil {
		e.t.Fatalf("policy engine: %v", err)
	}
	ctr := counters.New(e.db.DB, "default", e.clock.Now)
	if err := ctr.Sync(e.ctx, eng.Limits()); err != nil {
		e.t.Fatalf("sync limits: %v", err)
	}
	e.opts.Policy = enginePolicy{eng, ctr}
	e.opts.Mode = func() (string, bool) { return mode, approval }
	e.g = e.open()
	e.g.Register(&Action{Tool: fakeDelete, Category: policy.CatDelete, Execute: e.act.execute})
}

// TestRealPolicyRulePaths drives every seed-003 rule path through the
// gateway with the real engine: hard rules, compat keys, approval mode and
// the hourly limit.
func TestRealPolicyRulePaths(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		open := policy.Config{EnforceForMutations: true}
		tests := []struct {
			name     string
			cfg      policy.Config
			mode     string
			approval bool
			tool     string
			wantKind Kind
			wantCode apperr.Code
			wantRule string
		}{
			{"no rule allows", open, policy.ModeAutopilot, false, fakeTool, Executed, "", ""},
			{"deletes always need approval", open, policy.ModeAutopilot, false, fakeDelete, Routed, "", policy.RuleHardDeleteApproval},
			{"deletes need approval with enforcement off", policy.Config{}, policy.ModeAutopilot, false, fakeDelete, Routed, "", policy.RuleHardDeleteApproval},
			{"composer mode routes everything", open, policy.ModeComposer, false, fakeTool, Routed, "", policy.RuleHardComposerApproval},
			{"approval mode routes what no rule allows", open, policy.ModeAutopilot, true, fakeTool, Routed, "", policy.RuleApprovalMode},
			{"blocked_tools denies", policy.Config{EnforceForMutations: true, BlockedTools: []string{fakeTool}}, policy.ModeAutopilot, false, fakeTool, "", apperr.PolicyBlocked, "compat:blocked:" + fakeTool},
			{"require_approval_for routes", policy.Config{EnforceForMutations: true, RequireApprovalFor: []string{fakeTool}}, policy.ModeAutopilot, false, fakeTool, Routed, "", "compat:approval:" + fakeTool},
			{"dry_run_mutations answers a dry run", policy.Config{EnforceForMutations: true, DryRunMutations: true}, policy.ModeAutopilot, false, fakeTool, DryRun, "", policy.RuleHardDryRun},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t)
				e.withEngine(tc.cfg, tc.mode, tc.approval)
				r, err := e.g.Do(e.ctx, Call{Tool: tc.tool, Params: map[string]any{"text": "p"}})
				if tc.wantCode != "" {
					ae := wantCode(t, err, tc.wantCode)
					if ae.Extra["matched_rule_id"] != tc.wantRule {
						t.Fatalf("denied by %v, want %s", ae.Extra["matched_rule_id"], tc.wantRule)
					}
					return
				}
				if err != nil || r.Kind != tc.wantKind {
					t.Fatalf("kind %q err %v, want %q", r.Kind, err, tc.wantKind)
				}
				if tc.wantRule != "" {
					if got := dataMap(t, r.Answer())["matched_rule_id"]; got != tc.wantRule {
						t.Fatalf("matched_rule_id %v, want %s", got, tc.wantRule)
					}
				}
				if want := map[Kind]int{Executed: 1}[tc.wantKind]; e.act.count() != want {
					t.Fatalf("executed %d times, want %d", e.act.count(), want)
				}
				if tc.wantKind == Routed {
					// Approving replays it; only the approval outcome is bypassed.
					it, resp, err := e.g.Approve(e.ctx, r.ApprovalID, "alice", "")
					if err != nil || resp.Kind != Executed || it.Status != ApprovalExecuted || e.act.count() != 1 {
						t.Fatalf("approve: kind %q item %+v err %v", resp.Kind, it, err)
					}
				}
			})
		}
	})
}

func TestRealPolicyHourlyLimit(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.withEngine(policy.Config{EnforceForMutations: true, MaxMutationsPerHour: 2}, policy.ModeAutopilot, false)
		first := e.mustDo(map[string]any{"text": "1"}, "")
		e.mustDo(map[string]any{"text": "2"}, "")
		_, err := e.do(e.g, map[string]any{"text": "3"}, "")
		ae := wantCode(t, err, apperr.PolicyRateLimited)
		reset, _ := ae.Extra["rate_limit_reset"].(string)
		if at, perr := time.Parse(time.RFC3339, reset); perr != nil || !at.Equal(e.clock.Now().Add(time.Hour)) {
			t.Fatalf("rate_limit_reset %q, want an hour after the first call", reset)
		}
		// A repeat of an executed call is still its duplicate, not a denial.
		e.clock.Advance(time.Minute)
		if r := e.mustDo(map[string]any{"text": "1"}, ""); r.Kind != Duplicate || r.CorrelationID != first.CorrelationID {
			t.Fatalf("repeat at the limit: %q", r.Kind)
		}
		// Failed calls use no quota: once the window passes the limit is whole.
		e.clock.Advance(time.Hour)
		e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
			return Result{}, apperr.New(apperr.XForbidden, "no")
		})
		for i := 0; i < 3; i++ {
			_, err := e.do(e.g, map[string]any{"text": fmt.Sprint("f", i)}, "")
			wantCode(t, err, apperr.XForbidden)
		}
		e.act.setRun(nil)
		e.mustDo(map[string]any{"text": "4"}, "")
		e.mustDo(map[string]any{"text": "5"}, "")
		_, err = e.do(e.g, map[string]any{"text": "6"}, "")
		wantCode(t, err, apperr.PolicyRateLimited)
	})
}
