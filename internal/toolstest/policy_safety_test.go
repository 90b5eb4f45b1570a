package toolstest

import (
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

type modeInfo struct {
	Mode            string   `json:"mode"`
	ApprovalMode    bool     `json:"approval_mode"`
	OverriddenBy    []string `json:"overridden_by"`
	DryRunMutations bool     `json:"dry_run_mutations"`
}

type mutationAnswer struct {
	DryRun        bool   `json:"dry_run"`
	Routed        bool   `json:"routed_to_approval"`
	ApprovalID    int64  `json:"approval_queue_id"`
	MatchedRuleID string `json:"matched_rule_id"`
}

func (e *env) pendingCount() int {
	e.t.Helper()
	var p struct {
		Pending int `json:"pending"`
	}
	e.call("get_pending_count", map[string]any{}).ok(e.t, &p)
	return p.Pending
}

// TestDryRunWinsOverTemplates: with dry_run_mutations on, no template or
// rule makes a mutation reach X or the approval queue, and the mode and
// policy tools say so.
func TestDryRunWinsOverTemplates(t *testing.T) {
	for _, tmpl := range []string{policy.TemplateGrowthAggressive, policy.TemplateSafeDefault, ""} {
		t.Run("template="+tmpl, func(t *testing.T) {
			e := newEnv(t, envOptions{configure: func(c *config.Config) {
				c.MCPPolicy.Template = tmpl
				c.MCPPolicy.DryRunMutations = true
			}})
			before := e.counters()
			target := e.engageTarget(0)
			for _, call := range []struct {
				tool string
				args map[string]any
			}{
				{"x_post_tweet", map[string]any{"text": "dry run must not post " + tmpl}},
				{"x_like_tweet", map[string]any{"tweet_id": target}},
				{"x_delete_tweet", map[string]any{"tweet_id": target}},
				{"x_post", map[string]any{"path": "/2/tweets", "body": `{"text":"raw dry run"}`}},
			} {
				var a mutationAnswer
				r := e.call(call.tool, call.args).ok(t, &a)
				if !a.DryRun || a.Routed || a.MatchedRuleID != policy.RuleHardDryRun {
					t.Fatalf("%s: %s, want a dry run by %s", call.tool, r.Data, policy.RuleHardDryRun)
				}
				if !r.Meta.DryRunMutations {
					t.Errorf("%s: meta.dry_run_mutations is not set", call.tool)
				}
			}
			e.requireDelta(before, nil)
			if n := e.pendingCount(); n != 0 {
				t.Fatalf("a dry run entered the approval queue: %d pending", n)
			}
			var m modeInfo
			e.call("get_mode", map[string]any{}).ok(t, &m)
			if !m.DryRunMutations || !slices.Equal(m.OverriddenBy, []string{policy.RuleHardDryRun}) {
				t.Errorf("get_mode = %+v, want dry_run_mutations and overridden_by [%s]", m, policy.RuleHardDryRun)
			}
			var ps struct {
				DryRunMutations bool          `json:"dry_run_mutations"`
				Warnings        []string      `json:"warnings"`
				Rules           []policy.Rule `json:"rules"`
			}
			e.call("get_policy_status", map[string]any{}).ok(t, &ps)
			if !ps.DryRunMutations || len(ps.Rules) == 0 || ps.Rules[0].ID != policy.RuleHardDryRun {
				t.Errorf("get_policy_status: dry_run_mutations %t, first rule %v", ps.DryRunMutations, ps.Rules)
			}
			var v struct {
				Valid    bool     `json:"valid"`
				Warnings []string `json:"warnings"`
			}
			e.call("validate_config", map[string]any{}).ok(t, &v)
			if !v.Valid || !strings.Contains(strings.Join(v.Warnings, "\n"), "dry_run_mutations is on") {
				t.Errorf("validate_config = %+v, want the dry-run warning", v)
			}
		})
	}
}

// TestApprovalModeReportsWhatHappens: get_mode and meta name the rules that
// let calls skip approval, and exactly those calls skip it.
func TestApprovalModeReportsWhatHappens(t *testing.T) {
	tests := []struct {
		name     string
		template string
		want     []string
		// bookmarkRuns says whether a bookmark executes with approval_mode
		// on. (A like would go to a person whatever the policy: X's
		// automation rules.)
		bookmarkRuns bool
	}{
		{"growth_aggressive allows past approval mode", policy.TemplateGrowthAggressive, []string{"template:growth_aggressive:allow_all"}, true},
		{"no template: approval mode routes everything", "", []string{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOptions{configure: func(c *config.Config) {
				c.ApprovalMode = true
				c.MCPPolicy.Template = tt.template
				c.MCPPolicy.RequireApprovalFor = []string{}
			}})
			var m modeInfo
			r := e.call("get_mode", map[string]any{}).ok(t, &m)
			if !m.ApprovalMode || !slices.Equal(m.OverriddenBy, tt.want) {
				t.Fatalf("get_mode = %+v, want approval_mode with overridden_by %v", m, tt.want)
			}
			if got := r.Meta.ApprovalOverriddenBy; !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Fatalf("meta.approval_overridden_by = %v, want %v", got, tt.want)
			}
			before := e.counters()
			var a mutationAnswer
			e.call("x_bookmark_tweet", map[string]any{"tweet_id": e.engageTarget(0)}).ok(t, &a)
			if tt.bookmarkRuns {
				if a.Routed {
					t.Fatal("overridden_by says the bookmark runs, but it was routed to approval")
				}
				e.requireDelta(before, map[string]int64{xsim.CountBookmarks: 1})
			} else {
				if !a.Routed || a.MatchedRuleID != policy.RuleApprovalMode {
					t.Fatalf("nothing overrides approval mode, but the bookmark was not routed by it: %+v", a)
				}
				e.requireDelta(before, nil)
			}
		})
	}
}

// TestUniversalRequestsGetTheTypedToolsPolicy: with approval mode off and
// the default require_approval_for, a post or a like through x_post waits
// for approval exactly like x_post_tweet and x_like_tweet, and the queue and
// audit rows name both tools.
func TestUniversalRequestsGetTheTypedToolsPolicy(t *testing.T) {
	e := newEnv(t, envOptions{configure: func(c *config.Config) {
		c.ApprovalMode = false
		c.MCPPolicy.MaxMutationsPerHour = 0
	}})
	demo := e.Sim.DemoUserID()
	before := e.counters()
	tests := []struct {
		name, path, body, equiv, rule string
	}{
		{"post", "/2/tweets", `{"text":"raw post must wait"}`, "x_post_tweet", "compat:approval:x_post_tweet"},
		{"like", "/2/users/" + demo + "/likes", `{"tweet_id":"` + e.engageTarget(0) + `"}`, "x_like_tweet", "compat:approval:x_like_tweet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a mutationAnswer
			e.call("x_post", map[string]any{"path": tt.path, "body": tt.body}).ok(t, &a)
			if !a.Routed || a.MatchedRuleID != tt.rule {
				t.Fatalf("x_post %s: %+v, want routed by %s", tt.path, a, tt.rule)
			}
			var it gateway.ApprovalItem
			e.call("get_approval_item", map[string]any{"id": a.ApprovalID}).ok(t, &it)
			if it.Tool != "x_post" || it.EquivalentTool != tt.equiv {
				t.Fatalf("approval item names %q / %q, want x_post / %s", it.Tool, it.EquivalentTool, tt.equiv)
			}
		})
	}
	e.requireDelta(before, nil)

	// A write of X's table no typed tool covers needs approval too; nothing
	// names x_put. One the table does not list waits whatever the rules.
	var a mutationAnswer
	e.call("x_put", map[string]any{"path": "/2/tweets/1/hidden", "body": `{"hidden":true}`}).ok(t, &a)
	if !a.Routed || a.MatchedRuleID != policy.RuleUnknownWrite {
		t.Fatalf("unknown write: %+v, want routed by %s", a, policy.RuleUnknownWrite)
	}
	e.call("x_put", map[string]any{"path": "/2/lists/1", "body": `{"name":"n"}`}).ok(t, &a)
	if !a.Routed || a.MatchedRuleID != policy.RuleHardUnlistedWrite {
		t.Fatalf("unlisted write: %+v, want routed by %s", a, policy.RuleHardUnlistedWrite)
	}
}

// TestUniversalAuditRowNamesBothTools: an executed universal request's
// audit row records the typed tool it was treated as.
func TestUniversalAuditRowNamesBothTools(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	r := e.call("x_post", map[string]any{"path": "/2/tweets", "body": `{"text":"raw post runs"}`}).ok(t, nil)
	a := e.audit(r.Meta.CorrelationID)
	if a.Tool != "x_post" || a.EquivalentTool != "x_post_tweet" {
		t.Fatalf("audit row names %q / %q, want x_post / x_post_tweet", a.Tool, a.EquivalentTool)
	}
}
