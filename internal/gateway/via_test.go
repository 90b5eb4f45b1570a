package gateway

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestViaDecisionStricterWins: the decision of the tool a call came
// through applies when it is stricter than the call's own.
func TestViaDecisionStricterWins(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			own, via policy.Outcome
			want     Kind
			wantErr  apperr.Code
		}{
			{"via approval over own allow", policy.Allow, policy.RequireApproval, Routed, ""},
			{"via dry run over own approval", policy.RequireApproval, policy.DryRun, DryRun, ""},
			{"via deny over own allow", policy.Allow, policy.Deny, "", apperr.PolicyUserRule},
			{"own approval over via allow", policy.RequireApproval, policy.Allow, Routed, ""},
			{"both allow", policy.Allow, policy.Allow, Executed, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t)
				e.pol.set(decision(tc.own, "own"))
				via := decision(tc.via, "via")(policy.Request{})
				r, err := e.g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"via"}`), Via: &via})
				if tc.wantErr != "" {
					ae := wantCode(t, err, tc.wantErr)
					if ae.Extra["matched_rule_id"] != "via" {
						t.Fatalf("denied by %v, want the via rule", ae.Extra["matched_rule_id"])
					}
					return
				}
				if err != nil || r.Kind != tc.want {
					t.Fatalf("kind %q err %v, want %q", r.Kind, err, tc.want)
				}
				if ran := e.act.count() == 1; ran != (tc.want == Executed) {
					t.Fatalf("executed %d times", e.act.count())
				}
			})
		}
	})
}

// TestAdmitReportsDenialAndIgnoresApprovalModeDefault: a wrapper tool is
// denied by name, and the approval-mode default is left to its inner
// calls.
func TestAdmitReportsDenialAndIgnoresApprovalModeDefault(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(decision(policy.Deny, "blocked"))
		_, err := e.g.Admit(e.ctx, "compose_tweet", policy.CatContent)
		wantCode(t, err, apperr.PolicyUserRule)
		e.pol.set(func(policy.Request) policy.Decision {
			return policy.Decision{Outcome: policy.RequireApproval, RuleID: policy.RuleApprovalMode, Source: policy.SourceMode}
		})
		d, err := e.g.Admit(e.ctx, "compose_tweet", policy.CatContent)
		if err != nil || d.Outcome != policy.Allow {
			t.Fatalf("approval-mode default: %+v %v, want allow", d, err)
		}
		e.pol.set(decision(policy.RequireApproval, "user:review"))
		if d, err := e.g.Admit(e.ctx, "compose_tweet", policy.CatContent); err != nil || d.Outcome != policy.RequireApproval {
			t.Fatalf("a rule requiring approval: %+v %v", d, err)
		}
		if len(e.audit()) != 0 {
			t.Fatal("admission wrote an audit row")
		}
	})
}

// TestNotReadyWritesNoAuditRow: a call that cannot be attempted (no X
// credentials) is answered before the pending row, while a call routed to
// approval still queues: approving it later, once signed in, is fine.
func TestNotReadyWritesNoAuditRow(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.g.actions[fakeTool].Ready = func(context.Context) error {
			return apperr.New(apperr.XNotConfigured, "no credentials")
		}
		_, err := e.do(e.g, json.RawMessage(`{"text":"not ready"}`), "")
		wantCode(t, err, apperr.XNotConfigured)
		if n := len(e.audit()); n != 0 || e.act.count() != 0 {
			t.Fatalf("%d audit rows, %d executions for a call that could not be attempted", n, e.act.count())
		}
		e.pol.set(decision(policy.RequireApproval, "review"))
		r, err := e.do(e.g, json.RawMessage(`{"text":"queued"}`), "")
		if err != nil || r.Kind != Routed {
			t.Fatalf("routed call without credentials: %q %v", r.Kind, err)
		}
	})
}
