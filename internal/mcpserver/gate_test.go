package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
)

// TestHumanDecisionsAreGated: every tool with which an agent decides for a
// human (an approval-category mutation) is gated on the account's own
// allow_agent_approval, so a new such tool cannot forget it.
func TestHumanDecisionsAreGated(t *testing.T) {
	var gated []string
	for _, tool := range Registry() {
		if tool.Category != "approval" || !tool.Mutation {
			continue
		}
		gated = append(gated, tool.Name)
		if tool.Enabled == nil || tool.EnabledBy != agentApprovalKey {
			t.Errorf("%s decides for a human but is not gated on %s", tool.Name, agentApprovalKey)
		}
	}
	for _, want := range []string{"approve_item", "reject_item", "approve_all", "resolve_mutation"} {
		if !slices.Contains(gated, want) {
			t.Errorf("%s is not an approval-category mutation", want)
		}
	}
}

// TestGateJudgesTheCallsAccount: a gated tool runs for an account that
// enables it and is refused, before its handler runs, for one that does
// not, whichever account the server itself acts for; the server lists it
// when any of its accounts enables it.
func TestGateJudgesTheCallsAccount(t *testing.T) {
	gated := def(Spec{
		Name: "gated", Title: "Gated", Description: "Test tool.", Category: "approval", Mutation: true,
		Needs: Needs{DB: true}, Profiles: []Profile{Workflow}, Hints: Hints{Destructive: true},
		Enabled: agentApproval, EnabledBy: agentApprovalKey, DisabledHint: agentApprovalHint,
	}, func(_ context.Context, c *Call, _ NoInput) (Result, error) {
		return Result{Data: c.Deps.accountName()}, nil
	})
	deps := func(t *testing.T, allow map[string]bool) map[string]*Deps {
		all := map[string]*Deps{}
		for _, name := range []string{"default", "brand_b"} {
			d := probeDeps(t)
			d.Cfg.MCPPolicy.AllowAgentApproval = allow[name]
			d.AccountName = name
			all[name] = d
		}
		for _, d := range all {
			d.Accounts = func() []string { return []string{"default", "brand_b"} }
			d.Account = func(name string) (*Deps, error) {
				o, ok := all[name]
				if !ok {
					return nil, apperr.New(apperr.InvalidInput, "account: unknown account %q", name)
				}
				cp := *o
				return &cp, nil
			}
		}
		return all
	}
	for _, allow := range []map[string]bool{{"default": true}, {"brand_b": true}, {}, {"default": true, "brand_b": true}} {
		all := deps(t, allow)
		for server, d := range all {
			cfgs, err := accountConfigs(d)
			if err != nil {
				t.Fatal(err)
			}
			listed, err := Select([]*Tool{gated}, Options{Profile: Workflow, Config: d.Cfg, AccountConfigs: cfgs})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(listed) == 1, allow["default"] || allow["brand_b"]; got != want {
				t.Errorf("allow %v, server for %s: listed %t, want %t", allow, server, got, want)
			}
			for _, acc := range []string{"default", "brand_b"} {
				raw := `{"account":"` + acc + `"}`
				call := &Call{Deps: d, Surface: &Surface{Profile: Workflow, Tools: []*Tool{gated}}}
				res, err := invoke(context.Background(), call, gated, resolvedOf(t, gated), []byte(raw))
				if allow[acc] {
					if err != nil || res.Data != acc {
						t.Errorf("allow %v, server for %s, call for %s: %v %v, want it to run for %s", allow, server, acc, res.Data, err, acc)
					}
					continue
				}
				e := apperr.As(err)
				if err == nil || e.Code != apperr.PolicyHardRule || !strings.Contains(e.Message, "account "+acc) || !strings.Contains(e.Message, "allow_agent_approval") {
					t.Errorf("allow %v, server for %s, call for %s: %v %v, want policy_denied_hard_rule naming the account and the setting", allow, server, acc, res.Data, err)
				}
			}
		}
	}
}

// The default configuration keeps agents from deciding for a human.
func TestAgentApprovalOffByDefault(t *testing.T) {
	d := config.Default()
	if agentApproval(&d) {
		t.Fatal("allow_agent_approval is on by default")
	}
}
