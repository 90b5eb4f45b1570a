package policy

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// TestDecideSeedPaths covers the rule paths the policy contract lists.
func TestDecideSeedPaths(t *testing.T) {
	hourStart := base().Add(-10 * time.Minute)
	tests := []struct {
		name    string
		cfg     func() Config
		req     func() Request
		usage   map[string]float64
		outcome Outcome
		ruleID  string
		code    apperr.Code
		reset   time.Time
	}{
		{
			name:    "allow when nothing matches",
			cfg:     bare,
			req:     func() Request { return req("x_like_tweet") },
			outcome: Allow,
		},
		{
			name: "enforcement disabled allows what rules would stop",
			cfg: func() Config {
				c := DefaultConfig()
				c.EnforceForMutations = false
				c.BlockedTools = []string{"x_retweet"}
				c.MaxMutationsPerHour = 1
				return c
			},
			req:     func() Request { return req("x_retweet") },
			usage:   map[string]float64{LimitKeyMaxMutationsPerHour: 99},
			outcome: Allow,
		},
		{
			name: "enforcement disabled still applies the delete hard rule",
			cfg: func() Config {
				c := DefaultConfig()
				c.EnforceForMutations = false
				return c
			},
			req:     func() Request { return req("x_delete_tweet") },
			outcome: RequireApproval, ruleID: RuleHardDeleteApproval,
		},
		{
			name: "enforcement disabled still applies the composer hard rule",
			cfg: func() Config {
				c := DefaultConfig()
				c.EnforceForMutations = false
				return c
			},
			req: func() Request {
				r := req("x_like_tweet")
				r.Mode = ModeComposer
				return r
			},
			outcome: RequireApproval, ruleID: RuleHardComposerApproval,
		},
		{
			name: "blocked tool is denied",
			cfg: func() Config {
				c := bare()
				c.BlockedTools = []string{"x_follow_user"}
				return c
			},
			req:     func() Request { return req("x_follow_user") },
			outcome: Deny, ruleID: "compat:blocked:x_follow_user", code: apperr.PolicyBlocked,
		},
		{
			name: "global limit exhausted",
			cfg: func() Config {
				c := bare()
				c.MaxMutationsPerHour = 20
				return c
			},
			req:     func() Request { return req("x_post_tweet") },
			usage:   map[string]float64{LimitKeyMaxMutationsPerHour: 20},
			outcome: Deny, ruleID: LimitKeyMaxMutationsPerHour, code: apperr.PolicyRateLimited,
			reset: hourStart.Add(time.Hour),
		},
		{
			name: "global limit with room left",
			cfg: func() Config {
				c := bare()
				c.MaxMutationsPerHour = 20
				return c
			},
			req:     func() Request { return req("x_post_tweet") },
			usage:   map[string]float64{LimitKeyMaxMutationsPerHour: 19},
			outcome: Allow,
		},
		{
			name: "per-tool limit exhausted",
			cfg: func() Config {
				c := bare()
				c.RateLimits = []Limit{{Key: "likes", Dimension: DimTool, MatchValue: "x_like_tweet", Max: 3, PeriodSeconds: 3600}}
				return c
			},
			req:     func() Request { return req("x_like_tweet") },
			usage:   map[string]float64{"likes": 3},
			outcome: Deny, ruleID: "likes", code: apperr.PolicyRateLimited, reset: hourStart.Add(time.Hour),
		},
		{
			name: "per-tool limit ignores other tools",
			cfg: func() Config {
				c := bare()
				c.RateLimits = []Limit{{Key: "likes", Dimension: DimTool, MatchValue: "x_like_tweet", Max: 3, PeriodSeconds: 3600}}
				return c
			},
			req:     func() Request { return req("x_follow_user") },
			usage:   map[string]float64{"likes": 3},
			outcome: Allow,
		},
		{
			name: "per-category limit exhausted",
			cfg: func() Config {
				c := bare()
				c.RateLimits = []Limit{{Key: "engage", Dimension: DimCategory, MatchValue: "engage", Max: 5, PeriodSeconds: 86400}}
				return c
			},
			req:     func() Request { return req("x_follow_user") },
			usage:   map[string]float64{"engage": 5},
			outcome: Deny, ruleID: "engage", code: apperr.PolicyRateLimited, reset: hourStart.Add(24 * time.Hour),
		},
		{
			name: "user rule routes to approval",
			cfg: func() Config {
				c := bare()
				c.Rules = []Rule{{ID: "user:review-replies", Priority: 200, Enabled: true,
					Conditions: Conditions{Tools: []string{"x_reply_to_tweet"}},
					Action:     Action{Type: ActionRequireApproval, Reason: "replies are reviewed"}}}
				return c
			},
			req:     func() Request { return req("x_reply_to_tweet") },
			outcome: RequireApproval, ruleID: "user:review-replies",
		},
		{
			name: "require_approval_for routes to approval",
			cfg: func() Config {
				c := bare()
				c.RequireApprovalFor = []string{"x_post_tweet"}
				return c
			},
			req:     func() Request { return req("x_post_tweet") },
			outcome: RequireApproval, ruleID: "compat:approval:x_post_tweet",
		},
		{
			name: "user dry-run rule",
			cfg: func() Config {
				c := bare()
				c.Rules = []Rule{{ID: "user:rehearse", Priority: 200, Enabled: true,
					Conditions: Conditions{Categories: []Category{CatEngage}}, Action: Action{Type: ActionDryRun}}}
				return c
			},
			req:     func() Request { return req("x_retweet") },
			outcome: DryRun, ruleID: "user:rehearse",
		},
		{
			name: "dry_run_mutations",
			cfg: func() Config {
				c := bare()
				c.DryRunMutations = true
				return c
			},
			req:     func() Request { return req("x_post") },
			outcome: DryRun, ruleID: RuleHardDryRun,
		},
		{
			name: "user deny rule",
			cfg: func() Config {
				c := bare()
				c.Rules = []Rule{{ID: "user:no-quotes", Priority: 250, Enabled: true,
					Conditions: Conditions{Tools: []string{"quote_tweet"}}, Action: Action{Type: ActionDeny, Reason: "no quotes"}}}
				return c
			},
			req:     func() Request { return req("x_quote_tweet") },
			outcome: Deny, ruleID: "user:no-quotes", code: apperr.PolicyUserRule,
		},
		{
			name:    "delete always needs approval",
			cfg:     bare,
			req:     func() Request { return req("x_delete_tweet") },
			outcome: RequireApproval, ruleID: RuleHardDeleteApproval,
		},
		{
			name: "universal x_delete on a tweet is categorised delete and needs approval",
			cfg: func() Config {
				c := bare()
				c.Template = TemplateGrowthAggressive
				return c
			},
			req: func() Request {
				r := req("x_delete")
				r.Category = CatDelete
				return r
			},
			outcome: RequireApproval, ruleID: RuleHardDeleteApproval,
		},
		{
			name: "composer mode sends everything to approval",
			cfg: func() Config {
				c := bare()
				c.Template = TemplateGrowthAggressive
				return c
			},
			req: func() Request {
				r := req("x_like_tweet")
				r.Mode = ModeComposer
				return r
			},
			outcome: RequireApproval, ruleID: RuleHardComposerApproval,
		},
	}
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e := mustEngine(t, tt.cfg())
				got := decideWith(t, db, e, tt.req(), tt.usage, hourStart)
				wantDecision(t, got, tt.outcome, tt.ruleID, tt.code)
				if !got.ResetAt.Equal(tt.reset) {
					t.Errorf("ResetAt = %v, want %v", got.ResetAt, tt.reset)
				}
				if got.Reason == "" {
					t.Error("decision has no reason")
				}
			})
		}
	})
}

func TestHardRulesBeatUserAllow(t *testing.T) {
	cfg := bare()
	cfg.Rules = []Rule{
		{ID: "user:allow-all", Priority: MinUserPriority, Enabled: true, Action: Action{Type: ActionAllow}},
		{ID: "user:allow-deletes", Priority: 200, Enabled: true,
			Conditions: Conditions{Tools: []string{"delete_tweet"}}, Action: Action{Type: ActionAllow}},
	}
	e := mustEngine(t, cfg)

	wantDecision(t, e.Decide(req("x_delete_tweet"), noUsage), RequireApproval, RuleHardDeleteApproval, "")
	composer := req("x_post_tweet")
	composer.Mode = ModeComposer
	wantDecision(t, e.Decide(composer, noUsage), RequireApproval, RuleHardComposerApproval, "")
	// The same allow rule does decide calls no hard rule covers.
	wantDecision(t, e.Decide(req("x_post_tweet"), noUsage), Allow, "user:allow-all", "")

	rules := e.Rules()
	if rules[0].ID != RuleHardDeleteApproval || rules[1].ID != RuleHardComposerApproval {
		t.Fatalf("hard rules are not first: %q, %q", rules[0].ID, rules[1].ID)
	}
	for _, r := range rules[:2] {
		if r.Source != SourceHard || r.Priority > HardBandMax {
			t.Errorf("hard rule %q: source %q priority %d", r.ID, r.Source, r.Priority)
		}
	}
}

func TestApprovalMode(t *testing.T) {
	allowLikes := Rule{ID: "user:likes-ok", Priority: 200, Enabled: true,
		Conditions: Conditions{Tools: []string{"x_like_tweet"}}, Action: Action{Type: ActionAllow}}
	tests := []struct {
		name     string
		cfg      func() Config
		req      func() Request
		outcome  Outcome
		ruleID   string
		reasonIn string
	}{
		{
			name: "unmatched mutation goes to approval",
			cfg:  bare,
			req: func() Request {
				r := req("x_retweet")
				r.ApprovalMode = true
				return r
			},
			outcome: RequireApproval, ruleID: RuleApprovalMode,
		},
		{
			name: "explicit allow rule passes",
			cfg: func() Config {
				c := bare()
				c.Rules = []Rule{allowLikes}
				return c
			},
			req: func() Request {
				r := req("x_like_tweet")
				r.ApprovalMode = true
				return r
			},
			outcome: Allow, ruleID: "user:likes-ok",
		},
		{
			name: "approval mode off allows unmatched",
			cfg:  bare,
			req:  func() Request { return req("x_retweet") },
			// default allow
			outcome: Allow,
		},
		{
			name: "approval mode stays on when enforcement is off",
			cfg: func() Config {
				c := bare()
				c.EnforceForMutations = false
				c.Rules = []Rule{allowLikes}
				return c
			},
			req: func() Request {
				r := req("x_like_tweet")
				r.ApprovalMode = true
				return r
			},
			outcome: RequireApproval, ruleID: RuleApprovalMode,
		},
		{
			name: "enforcement off without approval mode allows",
			cfg: func() Config {
				c := bare()
				c.EnforceForMutations = false
				return c
			},
			req:     func() Request { return req("x_post_tweet") },
			outcome: Allow, reasonIn: "enforcement is off",
		},
		{
			name: "deny rule wins over approval mode",
			cfg: func() Config {
				c := bare()
				c.BlockedTools = []string{"x_retweet"}
				return c
			},
			req: func() Request {
				r := req("x_retweet")
				r.ApprovalMode = true
				return r
			},
			outcome: Deny, ruleID: "compat:blocked:x_retweet",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustEngine(t, tt.cfg()).Decide(tt.req(), noUsage)
			if got.Outcome != tt.outcome || got.RuleID != tt.ruleID {
				t.Fatalf("got %s %q (%s), want %s %q", got.Outcome, got.RuleID, got.Reason, tt.outcome, tt.ruleID)
			}
			if !strings.Contains(got.Reason, tt.reasonIn) {
				t.Errorf("reason %q does not contain %q", got.Reason, tt.reasonIn)
			}
		})
	}
}

func TestAllowRuleStillPassesLimits(t *testing.T) {
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		cfg := bare()
		cfg.Template = TemplateGrowthAggressive // 150: allow everything
		e := mustEngine(t, cfg)
		start := base().Add(-time.Minute)
		got := decideWith(t, db, e, req("x_post_tweet"), map[string]float64{"mcp:global:hourly": 50}, start)
		wantDecision(t, got, Deny, "mcp:global:hourly", apperr.PolicyRateLimited)
		if got.Source != "template:growth_aggressive" {
			t.Errorf("Source = %q", got.Source)
		}
	})
}

func TestBypassApproval(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BlockedTools = []string{"x_retweet"}
	cfg.Rules = []Rule{{ID: "user:review-likes", Priority: 200, Enabled: true,
		Conditions: Conditions{Tools: []string{"x_like_tweet"}}, Action: Action{Type: ActionRequireApproval}}}
	e := mustEngine(t, cfg)
	start := base().Add(-time.Minute)

	replay := func(tool string, mode string) Request {
		r := req(tool)
		r.Mode, r.ApprovalMode, r.BypassApproval = mode, true, true
		return r
	}
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		// Every approval source is skipped on replay.
		wantDecision(t, decideWith(t, db, e, replay("x_like_tweet", ModeAutopilot), nil, start), Allow, "", "")
		wantDecision(t, decideWith(t, db, e, replay("x_post_tweet", ModeAutopilot), nil, start), Allow, "", "")
		wantDecision(t, decideWith(t, db, e, replay("x_delete_tweet", ModeAutopilot), nil, start), Allow, "", "")
		wantDecision(t, decideWith(t, db, e, replay("x_post_tweet", ModeComposer), nil, start), Allow, "", "")
		// Denials and limits are not.
		wantDecision(t, decideWith(t, db, e, replay("x_retweet", ModeAutopilot), nil, start), Deny, "compat:blocked:x_retweet", apperr.PolicyBlocked)
		full := map[string]float64{LimitKeyMaxMutationsPerHour: 20}
		wantDecision(t, decideWith(t, db, e, replay("x_post_tweet", ModeAutopilot), full, start), Deny, LimitKeyMaxMutationsPerHour, apperr.PolicyRateLimited)
	})
}

func TestDefaultConfigDecisions(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	for _, tool := range []string{"x_post_tweet", "x_reply_to_tweet", "x_quote_tweet", "x_post_thread", "x_follow_user", "x_like_tweet", "x_edit_tweet"} {
		wantDecision(t, e.Decide(req(tool), noUsage), RequireApproval, "compat:approval:"+tool, "")
	}
	wantDecision(t, e.Decide(req("x_unfollow_user"), noUsage), Allow, "", "")
	lim := e.Limits()
	if len(lim) != 1 || lim[0].Key != LimitKeyMaxMutationsPerHour || lim[0].Max != 20 || lim[0].PeriodSeconds != 3600 {
		t.Fatalf("default limits = %+v", lim)
	}
	if !e.EnforceForMutations() {
		t.Error("default config does not enforce")
	}
}

func TestScheduleWindow(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	night := Rule{ID: "user:no-follows-fri-night", Priority: 200, Enabled: true,
		Conditions: Conditions{Tools: []string{"x_follow_user"},
			Schedule: &Schedule{StartHour: 22, EndHour: 6, Timezone: "America/New_York", Days: []string{"fri"}}},
		Action: Action{Type: ActionDeny}}
	office := Rule{ID: "user:office-hours-mon", Priority: 201, Enabled: true,
		Conditions: Conditions{Tools: []string{"x_like_tweet"},
			Schedule: &Schedule{StartHour: 9, EndHour: 17, Timezone: "Europe/Berlin", Days: []string{"mon"}}},
		Action: Action{Type: ActionDeny}}
	anyDay := Rule{ID: "user:late-retweets", Priority: 202, Enabled: true,
		Conditions: Conditions{Tools: []string{"x_retweet"}, Schedule: &Schedule{StartHour: 23, EndHour: 1}},
		Action:     Action{Type: ActionDeny}}
	cfg := bare()
	cfg.Rules = []Rule{night, office, anyDay}
	e := mustEngine(t, cfg)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// 2026-03-06 is a Friday.
	tests := []struct {
		name string
		tool string
		at   time.Time
		deny bool
	}{
		{"friday 23:00 is inside", "x_follow_user", time.Date(2026, 3, 6, 23, 0, 0, 0, ny), true},
		{"friday 22:00 starts the window", "x_follow_user", time.Date(2026, 3, 6, 22, 0, 0, 0, ny), true},
		{"friday 21:59 is before", "x_follow_user", time.Date(2026, 3, 6, 21, 59, 0, 0, ny), false},
		{"saturday 02:00 belongs to friday night", "x_follow_user", time.Date(2026, 3, 7, 2, 0, 0, 0, ny), true},
		{"saturday 06:00 ends the window", "x_follow_user", time.Date(2026, 3, 7, 6, 0, 0, 0, ny), false},
		{"saturday 23:00 is a saturday night", "x_follow_user", time.Date(2026, 3, 7, 23, 0, 0, 0, ny), false},
		{"friday 02:00 belongs to thursday night", "x_follow_user", time.Date(2026, 3, 6, 2, 0, 0, 0, ny), false},
		{"timezone applies: friday 23:00 UTC is 18:00 in New York", "x_follow_user", time.Date(2026, 3, 6, 23, 0, 0, 0, time.UTC), false},
		{"timezone applies: saturday 03:30 UTC is friday 22:30 in New York", "x_follow_user", time.Date(2026, 3, 7, 3, 30, 0, 0, time.UTC), true},
		{"monday 09:00 starts office hours", "x_like_tweet", time.Date(2026, 3, 9, 9, 0, 0, 0, berlin), true},
		{"monday 17:00 ends office hours", "x_like_tweet", time.Date(2026, 3, 9, 17, 0, 0, 0, berlin), false},
		{"tuesday 10:00 is another day", "x_like_tweet", time.Date(2026, 3, 10, 10, 0, 0, 0, berlin), false},
		{"no days: 23:30 UTC any day", "x_retweet", time.Date(2026, 3, 3, 23, 30, 0, 0, time.UTC), true},
		{"no days: 00:30 UTC any day", "x_retweet", time.Date(2026, 3, 8, 0, 30, 0, 0, time.UTC), true},
		{"no days: 01:00 UTC is outside", "x_retweet", time.Date(2026, 3, 8, 1, 0, 0, 0, time.UTC), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req(tt.tool)
			r.Now = tt.at
			got := e.Decide(r, noUsage)
			if (got.Outcome == Deny) != tt.deny {
				t.Fatalf("at %s: outcome %s (%s), want deny=%v", tt.at, got.Outcome, got.RuleID, tt.deny)
			}
		})
	}
}

func TestModeCondition(t *testing.T) {
	cfg := bare()
	cfg.Rules = []Rule{{ID: "user:autopilot-only", Priority: 200, Enabled: true,
		Conditions: Conditions{Modes: []string{ModeAutopilot}}, Action: Action{Type: ActionDryRun}}}
	e := mustEngine(t, cfg)
	r := req("x_post_tweet")
	r.Mode = "" // empty means autopilot
	wantDecision(t, e.Decide(r, noUsage), DryRun, "user:autopilot-only", "")
}

func TestConditionsAndAcrossOrWithin(t *testing.T) {
	cfg := bare()
	cfg.Rules = []Rule{{ID: "user:engage-or-media-likes", Priority: 200, Enabled: true,
		Conditions: Conditions{
			Tools:      []string{"x_like_tweet", "x_upload_media"},
			Categories: []Category{CatEngage, CatMedia},
		},
		Action: Action{Type: ActionDeny}}}
	e := mustEngine(t, cfg)
	tests := []struct {
		tool string
		cat  Category
		deny bool
	}{
		{"x_like_tweet", CatEngage, true},
		{"x_upload_media", CatMedia, true},
		{"x_follow_user", CatEngage, false}, // category matches, tool does not
		{"x_like_tweet", CatWrite, false},   // tool matches, category does not
	}
	for _, tt := range tests {
		r := req(tt.tool)
		r.Category = tt.cat
		if got := e.Decide(r, noUsage); (got.Outcome == Deny) != tt.deny {
			t.Errorf("%s/%s: outcome %s, want deny=%v", tt.tool, tt.cat, got.Outcome, tt.deny)
		}
	}
}

func TestFirstMatchWinsStableByPriority(t *testing.T) {
	cfg := bare()
	cfg.Rules = []Rule{
		{ID: "user:b-deny", Priority: 200, Enabled: true, Action: Action{Type: ActionDeny}},
		{ID: "user:a-allow", Priority: 150, Enabled: true, Conditions: Conditions{Tools: []string{"x_retweet"}}, Action: Action{Type: ActionAllow}},
		{ID: "user:c-dry", Priority: 200, Enabled: true, Action: Action{Type: ActionDryRun}},
		{ID: "user:off", Priority: 120, Enabled: false, Action: Action{Type: ActionDeny}},
	}
	e := mustEngine(t, cfg)
	var ids []string
	for _, r := range e.Rules() {
		if r.Source == SourceUser {
			ids = append(ids, r.ID)
		}
	}
	if got, want := strings.Join(ids, ","), "user:a-allow,user:b-deny,user:c-dry"; got != want {
		t.Fatalf("user rule order = %s, want %s (disabled rules left out)", got, want)
	}
	wantDecision(t, e.Decide(req("x_retweet"), noUsage), Allow, "user:a-allow", "")
	wantDecision(t, e.Decide(req("x_like_tweet"), noUsage), Deny, "user:b-deny", apperr.PolicyUserRule)
}

func TestTemplates(t *testing.T) {
	tests := []struct {
		template string
		rules    []string
		limits   map[string]float64
	}{
		{TemplateSafeDefault,
			[]string{"template:safe_default:delete_approval", "template:safe_default:write_approval",
				"template:safe_default:thread_approval", "template:safe_default:engage_allow"},
			map[string]float64{"mcp:global:hourly": 20, "mcp:category:engage:daily": 50}},
		{TemplateGrowthAggressive,
			[]string{"template:growth_aggressive:delete_approval", "template:growth_aggressive:allow_all"},
			map[string]float64{"mcp:global:hourly": 50, "mcp:category:engage:daily": 100}},
		{TemplateAgencyMode,
			[]string{"template:agency_mode:delete_approval", "template:agency_mode:allow_all"},
			map[string]float64{"mcp:global:daily": 200, "mcp:tool:x_post_tweet:daily": 30,
				"mcp:tool:x_like_tweet:daily": 50, "mcp:tool:x_follow_user:daily": 20}},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			cfg := bare()
			cfg.Template = tt.template
			e := mustEngine(t, cfg)
			var ids []string
			for _, r := range e.Rules() {
				if r.Source == "template:"+tt.template {
					ids = append(ids, r.ID)
					if r.Priority < 100 || r.Priority > 199 {
						t.Errorf("template rule %s priority %d outside 100-199", r.ID, r.Priority)
					}
				}
			}
			if strings.Join(ids, ",") != strings.Join(tt.rules, ",") {
				t.Errorf("rules = %v, want %v", ids, tt.rules)
			}
			got := map[string]float64{}
			for _, l := range e.Limits() {
				if l.Source == "template:"+tt.template {
					got[l.Key] = l.Max
				}
			}
			if len(got) != len(tt.limits) {
				t.Errorf("limits = %v, want %v", got, tt.limits)
			}
			for k, v := range tt.limits {
				if got[k] != v {
					t.Errorf("limit %s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

// The original never read template limits; here they bind.
func TestTemplateLimitsApply(t *testing.T) {
	start := base().Add(-time.Hour)
	tests := []struct {
		template string
		tool     string
		usage    map[string]float64
		key      string
	}{
		{TemplateSafeDefault, "x_like_tweet", map[string]float64{"mcp:category:engage:daily": 50}, "mcp:category:engage:daily"},
		{TemplateSafeDefault, "x_follow_user", map[string]float64{"mcp:global:hourly": 20}, ""}, // hourly window elapsed
		{TemplateAgencyMode, "x_post_tweet", map[string]float64{"mcp:tool:x_post_tweet:daily": 30}, "mcp:tool:x_post_tweet:daily"},
		{TemplateAgencyMode, "x_follow_user", map[string]float64{"mcp:tool:x_follow_user:daily": 20}, "mcp:tool:x_follow_user:daily"},
		{TemplateAgencyMode, "x_retweet", map[string]float64{"mcp:tool:x_follow_user:daily": 20}, ""},
		{TemplateGrowthAggressive, "x_retweet", map[string]float64{"mcp:category:engage:daily": 100}, "mcp:category:engage:daily"},
	}
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		for _, tt := range tests {
			t.Run(tt.template+"/"+tt.tool, func(t *testing.T) {
				cfg := bare()
				cfg.Template = tt.template
				got := decideWith(t, db, mustEngine(t, cfg), req(tt.tool), tt.usage, start)
				if tt.key == "" {
					wantDecision(t, got, Allow, got.RuleID, "")
					return
				}
				wantDecision(t, got, Deny, tt.key, apperr.PolicyRateLimited)
			})
		}
	})
}

func TestUserLimitOverridesTemplateLimit(t *testing.T) {
	cfg := bare()
	cfg.Template = TemplateSafeDefault
	cfg.RateLimits = []Limit{{Key: "mcp:global:hourly", Dimension: DimGlobal, Max: 5, PeriodSeconds: 3600}}
	e := mustEngine(t, cfg)
	n := 0
	for _, l := range e.Limits() {
		if l.Key == "mcp:global:hourly" {
			n++
			if l.Max != 5 || l.Source != SourceUser || l.MatchValue != "*" {
				t.Errorf("overridden limit = %+v", l)
			}
		}
	}
	if n != 1 {
		t.Fatalf("limit mcp:global:hourly appears %d times", n)
	}
}

func TestLimitApplies(t *testing.T) {
	tests := []struct {
		dim, match string
		tool       string
		cat        Category
		want       bool
	}{
		{DimGlobal, "*", "x_post_tweet", CatWrite, true},
		{DimGlobal, "", "x_post_tweet", CatWrite, true},
		{DimTool, "*", "x_like_tweet", CatEngage, true},
		{DimTool, "", "x_like_tweet", CatEngage, true},
		{DimTool, "x_like_tweet", "x_like_tweet", CatEngage, true},
		{DimTool, "x_like_tweet", "x_follow_user", CatEngage, false},
		{DimCategory, "*", "x_post", CatUniversal, true},
		{DimCategory, "engage", "x_follow_user", CatEngage, true},
		{DimCategory, "engage", "x_post_tweet", CatWrite, false},
		{DimBudget, "*", "x_post", CatUniversal, true},
		{DimBudget, "x_post", "x_post", CatUniversal, true},
		{DimBudget, "universal_request", "x_put", CatUniversal, true},
		{DimBudget, "write", "x_put", CatUniversal, false},
		{"engagement_type", "*", "x_like_tweet", CatEngage, false},
	}
	for _, tt := range tests {
		l := Limit{Key: "k", Dimension: tt.dim, MatchValue: tt.match}
		if got := l.Applies(tt.tool, tt.cat); got != tt.want {
			t.Errorf("%s/%q applies to %s/%s = %v, want %v", tt.dim, tt.match, tt.tool, tt.cat, got, tt.want)
		}
	}
}

func TestStarMatchValueCounts(t *testing.T) {
	cfg := bare()
	cfg.RateLimits = []Limit{
		{Key: "any-tool", Dimension: DimTool, MatchValue: "*", Max: 2, PeriodSeconds: 60},
		{Key: "any-category", Dimension: DimCategory, MatchValue: "*", Max: 3, PeriodSeconds: 60},
	}
	e := mustEngine(t, cfg)
	start := base().Add(-time.Second)
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		wantDecision(t, decideWith(t, db, e, req("x_post"), map[string]float64{"any-tool": 2}, start), Deny, "any-tool", apperr.PolicyRateLimited)
		wantDecision(t, decideWith(t, db, e, req("x_upload_media"), map[string]float64{"any-category": 3}, start), Deny, "any-category", apperr.PolicyRateLimited)
		wantDecision(t, decideWith(t, db, e, req("x_upload_media"), map[string]float64{"any-category": 2, "any-tool": 1}, start), Allow, "", "")
	})
}

func TestLimitDenialReportsLatestReset(t *testing.T) {
	cfg := bare()
	cfg.RateLimits = []Limit{
		{Key: "minute", Dimension: DimGlobal, Max: 1, PeriodSeconds: 60},
		{Key: "day", Dimension: DimGlobal, Max: 1, PeriodSeconds: 86400},
		{Key: "hour", Dimension: DimGlobal, Max: 1, PeriodSeconds: 3600},
	}
	e := mustEngine(t, cfg)
	start := base().Add(-time.Second)
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		got := decideWith(t, db, e, req("x_post_tweet"), map[string]float64{"minute": 1, "day": 1, "hour": 1}, start)
		wantDecision(t, got, Deny, "day", apperr.PolicyRateLimited)
		if want := start.Add(24 * time.Hour); !got.ResetAt.Equal(want) {
			t.Errorf("ResetAt = %v, want %v", got.ResetAt, want)
		}
	})
}

func TestWindowResetInDecide(t *testing.T) {
	cfg := bare()
	cfg.MaxMutationsPerHour = 1
	e := mustEngine(t, cfg)
	start := base().Add(-time.Hour)
	usage := map[string]float64{LimitKeyMaxMutationsPerHour: 1}
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		// Exactly one period after the window start the window has elapsed.
		wantDecision(t, decideWith(t, db, e, req("x_post_tweet"), usage, start), Allow, "", "")
		r := req("x_post_tweet")
		r.Now = base().Add(-time.Nanosecond)
		wantDecision(t, decideWith(t, db, e, r, usage, start), Deny, LimitKeyMaxMutationsPerHour, apperr.PolicyRateLimited)
		// A window start in the future (clock stepped back) does not block.
		wantDecision(t, decideWith(t, db, e, req("x_post_tweet"), usage, base().Add(48*time.Hour)), Allow, "", "")
	})
}

func TestBudgetDecide(t *testing.T) {
	cfg := bare()
	cfg.EnforceForMutations = false // the spend cap holds regardless
	cfg.DailyBudgetUSD = 1
	e := mustEngine(t, cfg)
	start := base().Add(-2 * time.Hour)
	usage := map[string]float64{LimitKeyDailyBudget: 0.9}

	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		over := req("x_post")
		over.CostUSD = 0.2
		got := decideWith(t, db, e, over, usage, start)
		wantDecision(t, got, Deny, LimitKeyDailyBudget, apperr.PolicyBudget)
		if want := start.Add(24 * time.Hour); !got.ResetAt.Equal(want) {
			t.Errorf("ResetAt = %v, want %v", got.ResetAt, want)
		}
		exact := req("x_post")
		exact.CostUSD = 0.1 // 0.9+0.1 reaches the cap exactly despite float rounding
		wantDecision(t, decideWith(t, db, e, exact, usage, start), Allow, "", "")
		free := req("x_post")
		wantDecision(t, decideWith(t, db, e, free, map[string]float64{LimitKeyDailyBudget: 5}, start), Allow, "", "")
	})
}

func TestDecideFailsClosedOnBadRequest(t *testing.T) {
	e := mustEngine(t, bare())
	tests := []struct {
		name string
		mod  func(*Request)
	}{
		{"no tool", func(r *Request) { r.Tool = "" }},
		{"no time", func(r *Request) { r.Now = time.Time{} }},
		{"unknown mode", func(r *Request) { r.Mode = "yolo" }},
		{"negative cost", func(r *Request) { r.CostUSD = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req("x_post_tweet")
			tt.mod(&r)
			wantDecision(t, e.Decide(r, noUsage), Deny, "", apperr.PolicyError)
		})
	}
}

func TestDenyCodes(t *testing.T) {
	tests := []struct {
		source string
		want   apperr.Code
	}{
		{SourceHard, apperr.PolicyHardRule},
		{SourceCompat, apperr.PolicyBlocked},
		{SourceUser, apperr.PolicyUserRule},
		{"template:safe_default", apperr.PolicyUserRule},
	}
	for _, tt := range tests {
		if got := denyCode(tt.source); got != tt.want {
			t.Errorf("denyCode(%q) = %s, want %s", tt.source, got, tt.want)
		}
	}
}

func TestDecisionErr(t *testing.T) {
	if (Decision{Outcome: Allow}).Err() != nil {
		t.Error("allow has an error")
	}
	reset := time.Date(2026, 3, 4, 13, 0, 0, 0, time.UTC)
	err := Decision{Outcome: Deny, RuleID: "k", Reason: "limit", Code: apperr.PolicyRateLimited, ResetAt: reset}.Err()
	if err == nil || err.Code != apperr.PolicyRateLimited || err.Message != "limit" {
		t.Fatalf("Err() = %v", err)
	}
	if got := err.Extra["rate_limit_reset"]; got != "2026-03-04T13:00:00Z" {
		t.Errorf("rate_limit_reset = %v", got)
	}
	if got := err.Extra["rule_id"]; got != "k" {
		t.Errorf("rule_id = %v", got)
	}
}

func BenchmarkDecide(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Template = TemplateSafeDefault
	cfg.DailyBudgetUSD = 10
	cfg.BlockedTools = []string{"x_retweet"}
	cfg.Rules = []Rule{
		{ID: "user:night", Priority: 200, Enabled: true,
			Conditions: Conditions{Tools: []string{"x_follow_user"},
				Schedule: &Schedule{StartHour: 22, EndHour: 6, Timezone: "America/New_York", Days: []string{"fri", "sat"}}},
			Action: Action{Type: ActionDeny}},
		{ID: "user:media", Priority: 210, Enabled: true,
			Conditions: Conditions{Categories: []Category{CatMedia}}, Action: Action{Type: ActionAllow}},
	}
	cfg.RateLimits = []Limit{{Key: "media", Dimension: DimCategory, MatchValue: "media", Max: 100, PeriodSeconds: 3600}}
	e := mustEngine(b, cfg)
	start := base().Add(-time.Minute)
	usage := usageMap(map[string]float64{"mcp:global:hourly": 3, "media": 1, LimitKeyDailyBudget: 1}, start)
	r := req("x_upload_media")
	r.CostUSD = 0.01
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if d := e.Decide(r, usage); d.Outcome != Allow {
			b.Fatalf("unexpected %s %s", d.Outcome, d.RuleID)
		}
	}
}

// thread is an x_post_thread request of n posts: its first post is an
// x_post_tweet, the others are replies within the thread.
func thread(n int) Request {
	r := req("x_post_thread")
	r.Parts = []Part{{Identity: Identity{Tool: "x_post_tweet", Category: CatWrite}, Count: 1}}
	if n > 1 {
		r.Parts = append(r.Parts, Part{Identity: Identity{Tool: "x_reply_to_tweet", Category: CatWrite}, Count: n - 1})
	}
	return r
}

// TestThreadPostsCountAgainstTheirToolsLimits: a limit on a tool counts
// what is posted, however it is posted. A thread's first post counts
// against x_post_tweet limits and its other posts against
// x_reply_to_tweet limits, a category limit counts every post of that
// category, and a limit that names the call itself (its tool, its
// category, every tool, global) counts the call once.
func TestThreadPostsCountAgainstTheirToolsLimits(t *testing.T) {
	cfg := bare()
	cfg.RateLimits = []Limit{
		{Key: "posts", Dimension: DimTool, MatchValue: "x_post_tweet", Max: 2, PeriodSeconds: 3600},
		{Key: "replies", Dimension: DimTool, MatchValue: "x_reply_to_tweet", Max: 5, PeriodSeconds: 3600},
		{Key: "threads", Dimension: DimTool, MatchValue: "x_post_thread", Max: 10, PeriodSeconds: 3600},
		{Key: "writes", Dimension: DimCategory, MatchValue: "write", Max: 10, PeriodSeconds: 3600},
		{Key: "thread-category", Dimension: DimCategory, MatchValue: "thread", Max: 10, PeriodSeconds: 3600},
		{Key: "any-tool", Dimension: DimTool, MatchValue: "*", Max: 10, PeriodSeconds: 3600},
		{Key: "all", Dimension: DimGlobal, Max: 10, PeriodSeconds: 3600},
	}
	e := mustEngine(t, cfg)
	for _, tt := range []struct {
		posts int
		want  map[string]float64
	}{
		{1, map[string]float64{"posts": 1, "threads": 1, "writes": 1, "thread-category": 1, "any-tool": 1, "all": 1}},
		{3, map[string]float64{"posts": 1, "replies": 2, "threads": 1, "writes": 3, "thread-category": 1, "any-tool": 1, "all": 1}},
	} {
		charges, err := Charges(e.Limits(), thread(tt.posts))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, c := range charges {
			got[c.Limit.Key] = c.Amount
		}
		if !maps.Equal(got, tt.want) {
			t.Errorf("a thread of %d posts charges %v, want %v", tt.posts, got, tt.want)
		}
	}
	start := base().Add(-time.Second)
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		// 2 of 2 x_post_tweet used: a thread's first post does not fit.
		wantDecision(t, decideWith(t, db, e, thread(3), map[string]float64{"posts": 2}, start), Deny, "posts", apperr.PolicyRateLimited)
		wantDecision(t, decideWith(t, db, e, thread(1), map[string]float64{"posts": 2}, start), Deny, "posts", apperr.PolicyRateLimited)
		// 4 of 5 replies used: a thread of 3 has two, a thread of 2 one.
		wantDecision(t, decideWith(t, db, e, thread(3), map[string]float64{"replies": 4}, start), Deny, "replies", apperr.PolicyRateLimited)
		wantDecision(t, decideWith(t, db, e, thread(2), map[string]float64{"replies": 4}, start), Allow, "", "")
		// 8 of 10 writes used: three posts do not fit, two do.
		wantDecision(t, decideWith(t, db, e, thread(3), map[string]float64{"writes": 8}, start), Deny, "writes", apperr.PolicyRateLimited)
		wantDecision(t, decideWith(t, db, e, thread(2), map[string]float64{"writes": 8}, start), Allow, "", "")
		// A single post is counted by the limits that name it, as before.
		wantDecision(t, decideWith(t, db, e, req("x_post_tweet"), map[string]float64{"posts": 2}, start), Deny, "posts", apperr.PolicyRateLimited)
		wantDecision(t, decideWith(t, db, e, req("x_post_tweet"), map[string]float64{"replies": 5, "threads": 10}, start), Allow, "", "")
	})
}
