package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// TestDryRunOutranksEverything: dry_run_mutations is a hard rule ahead of
// the delete and composer approvals, blocked_tools, templates, user rules,
// approval mode, enforcement and limits.
func TestDryRunOutranksEverything(t *testing.T) {
	withDryRun := func(f func(*Config)) Config {
		c := DefaultConfig()
		c.DryRunMutations = true
		f(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		req  func() Request
	}{
		{"growth_aggressive allows everything", withDryRun(func(c *Config) { c.Template = TemplateGrowthAggressive }),
			func() Request { return req("x_post_tweet") }},
		{"safe_default routes posts to approval", withDryRun(func(c *Config) { c.Template = TemplateSafeDefault }),
			func() Request { return req("x_post_tweet") }},
		{"agency_mode", withDryRun(func(c *Config) { c.Template = TemplateAgencyMode }),
			func() Request { return req("x_like_tweet") }},
		{"user allow rule", withDryRun(func(c *Config) {
			c.Rules = []Rule{{ID: "all", Priority: MinUserPriority, Enabled: true, Action: Action{Type: ActionAllow}}}
		}), func() Request { return req("x_retweet") }},
		{"default require_approval_for", withDryRun(func(*Config) {}), func() Request { return req("x_like_tweet") }},
		{"approval mode", withDryRun(func(*Config) {}), func() Request {
			r := req("x_retweet")
			r.ApprovalMode = true
			return r
		}},
		{"delete hard rule", withDryRun(func(*Config) {}), func() Request { return req("x_delete_tweet") }},
		{"composer hard rule", withDryRun(func(*Config) {}), func() Request {
			r := req("x_post_tweet")
			r.Mode = ModeComposer
			return r
		}},
		{"blocked tool", withDryRun(func(c *Config) { c.BlockedTools = []string{"x_retweet"} }),
			func() Request { return req("x_retweet") }},
		{"enforcement off", withDryRun(func(c *Config) { c.EnforceForMutations = false }),
			func() Request { return req("x_retweet") }},
		{"approved replay", withDryRun(func(*Config) {}), func() Request {
			r := req("x_post_tweet")
			r.BypassApproval = true
			return r
		}},
		{"unknown universal write", withDryRun(func(*Config) {}), func() Request {
			r := req("x_put")
			r.UnknownWrite = true
			return r
		}},
		{"exhausted limit", withDryRun(func(c *Config) { c.MaxMutationsPerHour = 1 }),
			func() Request { return req("x_retweet") }},
	}
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e := mustEngine(t, tt.cfg)
				got := decideWith(t, db, e, tt.req(), map[string]float64{LimitKeyMaxMutationsPerHour: 99}, base())
				wantDecision(t, got, DryRun, RuleHardDryRun, "")
				if r := e.Rules()[0]; r.ID != RuleHardDryRun || r.Source != SourceHard || r.Priority > HardBandMax {
					t.Errorf("first rule = %s (%s, priority %d), want the hard dry-run rule", r.ID, r.Source, r.Priority)
				}
				if !e.DryRun() {
					t.Error("DryRun() = false")
				}
			})
		}
	})
}

// TestApprovalOverridesMatchDecisions: with approval mode on, a call that
// executes anyway was allowed by a rule ApprovalOverrides reports, and with
// no overrides reported every call that is not denied waits for a human.
func TestApprovalOverridesMatchDecisions(t *testing.T) {
	configs := map[string]func() Config{
		"defaults": DefaultConfig,
		"user allow likes": func() Config {
			c := DefaultConfig()
			c.Rules = []Rule{{ID: "likes", Priority: 200, Enabled: true,
				Conditions: Conditions{Tools: []string{"x_like_tweet"}}, Action: Action{Type: ActionAllow}}}
			return c
		},
		"user rule only in composer": func() Config {
			c := bare()
			c.Rules = []Rule{{ID: "composer-likes", Priority: 200, Enabled: true,
				Conditions: Conditions{Modes: []string{ModeComposer}}, Action: Action{Type: ActionAllow}}}
			return c
		},
		"enforcement off": func() Config {
			c := DefaultConfig()
			c.Template = TemplateGrowthAggressive
			c.EnforceForMutations = false
			return c
		},
	}
	for _, tmpl := range Templates() {
		configs[tmpl] = func() Config {
			c := DefaultConfig()
			c.Template = tmpl
			return c
		}
	}
	for name, mk := range configs {
		t.Run(name, func(t *testing.T) {
			e := mustEngine(t, mk())
			over := e.ApprovalOverrides(ModeAutopilot)
			for tool := range testTools() {
				r := req(tool)
				r.ApprovalMode = true
				d := e.Decide(r, noUsage)
				switch d.Outcome {
				case Allow, DryRun:
					ref := ""
					for _, rule := range e.Rules() {
						if rule.ID == d.RuleID {
							ref = RuleRef(rule)
						}
					}
					if ref == "" || !slices.Contains(over, ref) {
						t.Errorf("%s: %s by %q with approval mode on, but overridden_by = %v", tool, d.Outcome, d.RuleID, over)
					}
				case RequireApproval, Deny:
				}
			}
		})
	}
	growth := DefaultConfig()
	growth.Template = TemplateGrowthAggressive
	e := mustEngine(t, growth)
	if got := e.ApprovalOverrides(ModeAutopilot); !slices.Equal(got, []string{"template:growth_aggressive:allow_all"}) {
		t.Errorf("growth_aggressive overrides = %v", got)
	}
	if got := e.ApprovalOverrides(ModeComposer); len(got) != 0 {
		t.Errorf("composer mode routes everything first, overrides = %v", got)
	}
	growth.DryRunMutations = true
	if got := mustEngine(t, growth).ApprovalOverrides(ModeComposer); !slices.Equal(got, []string{RuleHardDryRun}) {
		t.Errorf("dry run overrides = %v", got)
	}
	if got := mustEngine(t, DefaultConfig()).ApprovalOverrides(ModeAutopilot); len(got) != 0 {
		t.Errorf("defaults have no allow rule, overrides = %v", got)
	}
}

func TestWarningsNameRulesThatNeverApply(t *testing.T) {
	tests := []struct {
		name string
		cfg  func() Config
		want []string
	}{
		{"user rule under a broader allow", func() Config {
			c := bare()
			c.Rules = []Rule{
				{ID: "engage", Priority: 200, Enabled: true, Conditions: Conditions{Categories: []Category{CatEngage}}, Action: Action{Type: ActionAllow}},
				{ID: "no-likes", Priority: 210, Enabled: true, Conditions: Conditions{Tools: []string{"x_like_tweet"}, Categories: []Category{CatEngage}}, Action: Action{Type: ActionDeny}},
			}
			return c
		}, []string{`rule "no-likes"`, `allow rule "engage"`}},
		{"user rule under a blocked tool", func() Config {
			c := bare()
			c.BlockedTools = []string{"x_retweet"}
			c.Rules = []Rule{{ID: "rt", Priority: 200, Enabled: true, Conditions: Conditions{Tools: []string{"x_retweet"}}, Action: Action{Type: ActionAllow}}}
			return c
		}, []string{`rule "rt"`, `deny rule "compat:blocked:x_retweet"`}},
		{"dry run", func() Config {
			c := DefaultConfig()
			c.DryRunMutations = true
			return c
		}, []string{"dry_run_mutations is on"}},
		{"enforcement off", func() Config {
			c := DefaultConfig()
			c.EnforceForMutations = false
			return c
		}, []string{"enforce_for_mutations is off: 7 "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := strings.Join(mustEngine(t, tt.cfg()).Warnings(), "\n")
			for _, s := range tt.want {
				if !strings.Contains(w, s) {
					t.Errorf("warnings lack %q:\n%s", s, w)
				}
			}
		})
	}
	// A narrower allow does not hide a broader rule, and a schedule-limited
	// rule hides nothing.
	c := bare()
	c.Rules = []Rule{
		{ID: "likes", Priority: 200, Enabled: true, Conditions: Conditions{Tools: []string{"x_like_tweet"}}, Action: Action{Type: ActionAllow}},
		{ID: "night", Priority: 205, Enabled: true, Conditions: Conditions{Schedule: &Schedule{StartHour: 22, EndHour: 6}}, Action: Action{Type: ActionDeny}},
		{ID: "engage", Priority: 210, Enabled: true, Conditions: Conditions{Categories: []Category{CatEngage}}, Action: Action{Type: ActionDeny}},
	}
	if w := mustEngine(t, c).Warnings(); len(w) != 0 {
		t.Errorf("unexpected warnings: %v", w)
	}
}

// TestBlockedToolLeavesTheDefaultApprovalList: blocking a tool the default
// require_approval_for names is not a conflict; blocked wins.
func TestBlockedToolLeavesTheDefaultApprovalList(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BlockedTools = []string{"post_tweet"}
	e := mustEngine(t, cfg)
	wantDecision(t, e.Decide(req("x_post_tweet"), noUsage), Deny, "compat:blocked:x_post_tweet", apperr.PolicyBlocked)
	for _, r := range e.Rules() {
		if r.ID == "compat:approval:x_post_tweet" {
			t.Error("the default approval rule for a blocked tool is still there")
		}
	}
	// The rest of the default list still applies.
	wantDecision(t, e.Decide(req("x_like_tweet"), noUsage), RequireApproval, "compat:approval:x_like_tweet", "")

	cfg.RequireApprovalForSet = true
	if _, err := NewEngine(cfg, known); err == nil || !strings.Contains(err.Error(), "both blocked_tools and require_approval_for") {
		t.Errorf("an explicit list naming a blocked tool: err = %v", err)
	}
}

// TestEquivalentIdentities: a universal request gets the policy of the typed
// tool it is equivalent to as well as its own; the strictest outcome wins.
func TestEquivalentIdentities(t *testing.T) {
	universal := func(tool string, equiv ...Identity) func() Request {
		return func() Request {
			r := req(tool)
			r.Equivalent = equiv
			return r
		}
	}
	post := Identity{Tool: "x_post_tweet", Category: CatWrite}
	like := Identity{Tool: "x_like_tweet", Category: CatEngage}
	del := Identity{Tool: "x_delete_tweet", Category: CatDelete}
	// A route the endpoint table does not list (a message or a delete
	// spelled some new way, as far as anyone knows).
	unlisted := func() Request {
		r := req("x_post")
		r.UnknownWrite, r.UnlistedWrite = true, true
		return r
	}
	userRule := func(id string, prio int, cond Conditions, act string) Rule {
		return Rule{ID: id, Priority: prio, Enabled: true, Conditions: cond, Action: Action{Type: act}}
	}
	tests := []struct {
		name    string
		cfg     func() Config
		req     func() Request
		usage   map[string]float64
		outcome Outcome
		ruleID  string
		code    apperr.Code
	}{
		{"require_approval_for of the typed tool", DefaultConfig, universal("x_post", post),
			nil, RequireApproval, "compat:approval:x_post_tweet", ""},
		{"a like through x_post", DefaultConfig, universal("x_post", like),
			nil, RequireApproval, "compat:approval:x_like_tweet", ""},
		{"blocked typed tool", func() Config {
			c := bare()
			c.BlockedTools = []string{"x_like_tweet"}
			return c
		}, universal("x_post", like), nil, Deny, "compat:blocked:x_like_tweet", apperr.PolicyBlocked},
		{"x_post's own deny is stricter than the typed allow", func() Config {
			c := bare()
			c.Rules = []Rule{
				userRule("likes", 200, Conditions{Tools: []string{"x_like_tweet"}}, ActionAllow),
				userRule("no-raw", 210, Conditions{Tools: []string{"x_post"}}, ActionDeny),
			}
			return c
		}, universal("x_post", like), nil, Deny, "no-raw", apperr.PolicyUserRule},
		{"allowing x_post does not lift the typed tool's approval", func() Config {
			c := DefaultConfig()
			c.Rules = []Rule{userRule("raw", 200, Conditions{Tools: []string{"x_post"}}, ActionAllow)}
			return c
		}, universal("x_post", post), nil, RequireApproval, "compat:approval:x_post_tweet", ""},
		{"a user dry run on the typed tool", func() Config {
			c := bare()
			c.Rules = []Rule{userRule("rehearse", 200, Conditions{Tools: []string{"x_post_tweet"}}, ActionDryRun)}
			return c
		}, universal("x_post", post), nil, DryRun, "rehearse", ""},
		{"category rules of the typed tool", func() Config {
			c := bare()
			c.Template = TemplateSafeDefault
			return c
		}, universal("x_post", post), nil, RequireApproval, "template:safe_default:write_approval", ""},
		{"a tweet delete is a delete", func() Config {
			c := bare()
			c.Template = TemplateGrowthAggressive
			return c
		}, universal("x_delete", del), nil, RequireApproval, RuleHardDeleteApproval, ""},
		{"both allowed", func() Config {
			c := bare()
			c.Template = TemplateGrowthAggressive
			return c
		}, universal("x_post", like), nil, Allow, "template:growth_aggressive:allow_all", ""},
		{"per-tool limit of the typed tool", func() Config {
			c := bare()
			c.RateLimits = []Limit{{Key: "likes", Dimension: DimTool, MatchValue: "x_like_tweet", Max: 2, PeriodSeconds: 3600}}
			return c
		}, universal("x_post", like), map[string]float64{"likes": 2}, Deny, "likes", apperr.PolicyRateLimited},
		{"per-category limit of the typed tool", func() Config {
			c := bare()
			c.RateLimits = []Limit{{Key: "engage", Dimension: DimCategory, MatchValue: "engage", Max: 2, PeriodSeconds: 3600}}
			return c
		}, universal("x_post", like), map[string]float64{"engage": 2}, Deny, "engage", apperr.PolicyRateLimited},
		{"x_post's own limit", func() Config {
			c := bare()
			c.RateLimits = []Limit{{Key: "raw", Dimension: DimTool, MatchValue: "x_post", Max: 2, PeriodSeconds: 3600}}
			return c
		}, universal("x_post", like), map[string]float64{"raw": 2}, Deny, "raw", apperr.PolicyRateLimited},
		{"unknown write needs approval", bare, func() Request {
			r := req("x_put")
			r.UnknownWrite = true
			return r
		}, nil, RequireApproval, RuleUnknownWrite, ""},
		{"an allow-all rule does not name the universal tool", func() Config {
			c := bare()
			c.Template = TemplateGrowthAggressive
			return c
		}, func() Request {
			r := req("x_put")
			r.UnknownWrite = true
			return r
		}, nil, RequireApproval, RuleUnknownWrite, ""},
		{"a rule naming the universal tool allows an unknown write", func() Config {
			c := bare()
			c.Rules = []Rule{userRule("raw-put", 200, Conditions{Tools: []string{"x_put"}}, ActionAllow)}
			return c
		}, func() Request {
			r := req("x_put")
			r.UnknownWrite = true
			return r
		}, nil, Allow, "raw-put", ""},
		{"an approved unknown write runs", bare, func() Request {
			r := req("x_put")
			r.UnknownWrite = true
			r.BypassApproval = true
			return r
		}, nil, Allow, "", ""},
		{"a rule naming the universal tool does not allow an unlisted write", func() Config {
			c := bare()
			c.Rules = []Rule{userRule("raw-post", 200, Conditions{Tools: []string{"x_post"}}, ActionAllow)}
			return c
		}, unlisted, nil, RequireApproval, RuleHardUnlistedWrite, ""},
		{"nor does an allow-all rule with approval mode and enforcement off", func() Config {
			c := bare()
			c.Template = TemplateGrowthAggressive
			c.EnforceForMutations = false
			return c
		}, unlisted, nil, RequireApproval, RuleHardUnlistedWrite, ""},
		{"a deny rule still denies an unlisted write", func() Config {
			c := bare()
			c.Rules = []Rule{userRule("no-raw", 200, Conditions{Tools: []string{"x_post"}}, ActionDeny)}
			return c
		}, unlisted, nil, Deny, "no-raw", apperr.PolicyUserRule},
		{"an approved unlisted write runs", func() Config {
			c := bare()
			c.Rules = []Rule{userRule("raw-post", 200, Conditions{Tools: []string{"x_post"}}, ActionAllow)}
			return c
		}, func() Request {
			r := unlisted()
			r.BypassApproval = true
			return r
		}, nil, Allow, "raw-post", ""},
	}
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := decideWith(t, db, mustEngine(t, tt.cfg()), tt.req(), tt.usage, base())
				wantDecision(t, got, tt.outcome, tt.ruleID, tt.code)
			})
		}
	})
}
