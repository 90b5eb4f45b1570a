package mcpserver_test

import (
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/policy"
)

// TestMutationRowsAgreeWithGatewayActions: one fact in one place. Every
// mutation row of the registry is a gateway action or a wrapper the
// gateway admits, under the same name and category, and the other way
// round; only the approval review tools (which replay a queued call under
// its own name) have neither.
func TestMutationRowsAgreeWithGatewayActions(t *testing.T) {
	gated := map[string]policy.Category{}
	for _, a := range actions.All(actions.Deps{}) {
		gated[a.Tool] = a.Category
	}
	for _, w := range actions.Wrappers() {
		if _, dup := gated[w.Tool]; dup {
			t.Errorf("%s is both a gateway action and a wrapper", w.Tool)
		}
		gated[w.Tool] = w.Category
	}
	rows := map[string]*mcpserver.Tool{}
	for _, row := range mcpserver.Registry() {
		rows[row.Name] = row
		cat, isGated := gated[row.Name]
		switch {
		case !row.Mutation && isGated:
			t.Errorf("%s runs through the gateway but its registry row is not a mutation", row.Name)
		case !row.Mutation:
		case row.Category == string(policy.CatApproval):
			if isGated {
				t.Errorf("approval review tool %s is also a gateway action", row.Name)
			}
		case !isGated:
			t.Errorf("mutation %s has no gateway action: nothing would gate it", row.Name)
		case string(cat) != row.Category:
			t.Errorf("%s: registry category %q, gateway category %q", row.Name, row.Category, cat)
		}
	}
	for name := range gated {
		if rows[name] == nil {
			t.Errorf("gateway action %s has no registry row", name)
		}
	}
}

// TestPolicyAcceptsEveryMutationName: policy configuration may name every
// mutation tool of the registry (except the approval review tools, which
// policy never sees), and the read-only profiles carry none of them.
func TestPolicyAcceptsEveryMutationName(t *testing.T) {
	var names []string
	for _, row := range mcpserver.Registry() {
		if row.Mutation && row.Category != string(policy.CatApproval) {
			names = append(names, row.Name)
		}
	}
	for _, want := range []string{actions.ComposeTool, actions.ProposeTool} {
		if !slices.Contains(names, want) {
			t.Fatalf("%s is not a mutation row", want)
		}
	}
	cfg := config.Default()
	cfg.MCPPolicy.BlockedTools = names
	cfg.MCPPolicy.RequireApprovalFor = []string{}
	cfg.MCPPolicy.Rules = []config.PolicyRule{{ID: "named", Priority: 500, Conditions: config.PolicyConditions{Tools: names},
		Action: config.PolicyAction{Type: "deny", Reason: "every mutation named"}}}
	for _, n := range names {
		cfg.MCPPolicy.RateLimits = append(cfg.MCPPolicy.RateLimits, config.PolicyRate{Key: "per_" + n, Dimension: "tool", MatchValue: n, MaxCount: 1, PeriodSeconds: 3600})
	}
	if _, err := app.NewPolicyEngine(&cfg); err != nil {
		t.Fatalf("policy refuses a mutation tool's name: %v", err)
	}
	for _, p := range []mcpserver.Profile{mcpserver.Readonly, mcpserver.APIReadonly} {
		d := config.Default()
		d.MCPPolicy.AllowAgentApproval = true
		tools, err := mcpserver.Select(mcpserver.Registry(), mcpserver.Options{Profile: p, Config: &d})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, tool := range tools {
			if slices.Contains(names, tool.Name) || tool.Mutation {
				t.Errorf("read-only profile %s carries mutation %s", p, tool.Name)
			}
		}
	}
}
