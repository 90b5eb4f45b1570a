package policy

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func TestNormalizeToolName(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  string
	}{
		{"x_post_tweet", "x_post_tweet", ""},
		{"post_tweet", "x_post_tweet", ""},
		{"like_tweet", "x_like_tweet", ""},
		{"delete_tweet", "x_delete_tweet", ""},
		{"follow_user", "x_follow_user", ""},
		{"compose_tweet", "compose_tweet", ""},
		{"tweet_everything", "", `unknown tool "tweet_everything"`},
		{"X_POST_TWEET", "", `unknown tool "X_POST_TWEET"`},
		{"", "", "empty tool name"},
	}
	for _, tt := range tests {
		got, err := NormalizeToolName(tt.in, known)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrUnknownTool) {
				t.Errorf("NormalizeToolName(%q) error = %v, want %q wrapping ErrUnknownTool", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizeToolName(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := NormalizeToolName("x_post_tweet", nil); err == nil {
		t.Error("nil lookup accepted")
	}
}

func TestAliasesNormalisedAtLoad(t *testing.T) {
	cfg := bare()
	cfg.BlockedTools = []string{"retweet"}
	cfg.RequireApprovalFor = []string{"post_tweet", "x_post_tweet"} // same tool twice
	cfg.Rules = []Rule{{ID: "user:r", Priority: 200, Enabled: true,
		Conditions: Conditions{Tools: []string{"like_tweet"}}, Action: Action{Type: ActionDeny}}}
	cfg.RateLimits = []Limit{{Key: "follows", Dimension: DimTool, MatchValue: "follow_user", Max: 1, PeriodSeconds: 60}}
	e := mustEngine(t, cfg)

	var compat []string
	for _, r := range e.Rules() {
		switch r.Source {
		case SourceCompat:
			compat = append(compat, r.ID)
		case SourceUser:
			if r.Conditions.Tools[0] != "x_like_tweet" {
				t.Errorf("user rule tool = %q", r.Conditions.Tools[0])
			}
		}
	}
	if got := strings.Join(compat, ","); got != "compat:blocked:x_retweet,compat:approval:x_post_tweet" {
		t.Errorf("compat rules = %s", got)
	}
	if l := e.Limits(); len(l) != 1 || l[0].MatchValue != "x_follow_user" {
		t.Errorf("limits = %+v", l)
	}
	// The caller's config is not modified by normalisation.
	if cfg.Rules[0].Conditions.Tools[0] != "like_tweet" {
		t.Error("NewEngine rewrote the caller's rule")
	}
}

func TestCompatRulePriorities(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Template = TemplateSafeDefault
	cfg.Rules = []Rule{{ID: "user:x", Priority: 200, Enabled: true, Action: Action{Type: ActionDryRun},
		Conditions: Conditions{Tools: []string{"x_put"}}}}
	cfg.BlockedTools = []string{"x_retweet"}
	cfg.DryRunMutations = true
	e := mustEngine(t, cfg)
	var compat []Rule
	for _, r := range e.Rules() {
		if r.Source == SourceCompat {
			compat = append(compat, r)
		}
	}
	// Compat rules are present even with a template and user rules;
	// dry_run_mutations is a hard rule, not a compat one.
	if len(compat) != 1+7 {
		t.Fatalf("compat rules = %d, want 8", len(compat))
	}
	if compat[0].ID != "compat:blocked:x_retweet" || compat[1].ID != "compat:approval:x_post_tweet" {
		t.Errorf("compat order = %s, %s", compat[0].ID, compat[1].ID)
	}
	// blocked_tools sits in the built-in band so no allow rule can lift it;
	// the other compat rules follow from 300.
	if compat[0].Priority != 50 {
		t.Errorf("%s priority = %d, want 50", compat[0].ID, compat[0].Priority)
	}
	for i, r := range compat[1:] {
		if r.Priority != 300+i {
			t.Errorf("%s priority = %d, want %d", r.ID, r.Priority, 300+i)
		}
	}
}

func TestBlockedToolBeatsAllowRules(t *testing.T) {
	for _, tmpl := range []string{TemplateGrowthAggressive, TemplateAgencyMode, TemplateSafeDefault} {
		cfg := DefaultConfig()
		cfg.Template = tmpl
		cfg.BlockedTools = []string{"x_like_tweet"}
		cfg.RequireApprovalFor = nil
		cfg.Rules = []Rule{{ID: "user:allow-likes", Priority: 200, Enabled: true,
			Conditions: Conditions{Tools: []string{"x_like_tweet"}}, Action: Action{Type: ActionAllow}}}
		e := mustEngine(t, cfg)
		d := e.Decide(Request{Tool: "x_like_tweet", Category: CatEngage, Mode: ModeAutopilot, Now: time.Now()},
			func(string) (float64, time.Time, bool) { return 0, time.Time{}, false })
		if d.Outcome != Deny || d.Code != apperr.PolicyBlocked {
			t.Errorf("%s: decision = %+v, want deny policy_denied_blocked", tmpl, d)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	rule := func(mod func(*Rule)) func(*Config) {
		return func(c *Config) {
			r := Rule{ID: "user:r", Priority: 200, Enabled: true, Action: Action{Type: ActionDeny}}
			mod(&r)
			c.Rules = append(c.Rules, r)
		}
	}
	limit := func(mod func(*Limit)) func(*Config) {
		return func(c *Config) {
			l := Limit{Key: "k", Dimension: DimGlobal, Max: 1, PeriodSeconds: 60}
			mod(&l)
			c.RateLimits = append(c.RateLimits, l)
		}
	}
	sched := func(s Schedule) func(*Config) {
		return rule(func(r *Rule) { r.Conditions.Schedule = &s })
	}
	tests := []struct {
		name string
		mod  func(*Config)
		want []string
	}{
		{"user priority in the hard band", rule(func(r *Rule) { r.ID, r.Priority = "user:early", 5 }),
			[]string{`rule "user:early"`, "priority 5", "reserved hard-rule band"}},
		{"user priority 99", rule(func(r *Rule) { r.Priority = 99 }), []string{`rule "user:r"`, "priority 99"}},
		{"negative priority", rule(func(r *Rule) { r.Priority = -1 }), []string{"priority -1"}},
		{"invalid timezone", sched(Schedule{StartHour: 22, EndHour: 6, Timezone: "Mars/Olympus_Mons"}),
			[]string{`rule "user:r"`, "schedule_window", `timezone "Mars/Olympus_Mons"`}},
		{"Local timezone", sched(Schedule{StartHour: 1, EndHour: 2, Timezone: "Local"}), []string{`timezone "Local"`}},
		{"capitalised day", sched(Schedule{StartHour: 1, EndHour: 2, Days: []string{"Mon"}}), []string{`days[0]: "Mon"`}},
		{"long day name", sched(Schedule{StartHour: 1, EndHour: 2, Days: []string{"mon", "tuesday"}}), []string{`days[1]: "tuesday"`}},
		{"hour out of range", sched(Schedule{StartHour: 24, EndHour: 2}), []string{"start_hour 24"}},
		{"end hour out of range", sched(Schedule{StartHour: 1, EndHour: -1}), []string{"end_hour -1"}},
		{"empty window", sched(Schedule{StartHour: 5, EndHour: 5}), []string{"both 5"}},
		{"missing id", rule(func(r *Rule) { r.ID = "" }), []string{"rules[0]: id is required"}},
		{"reserved id", rule(func(r *Rule) { r.ID = "hard:mine" }), []string{`rule "hard:mine"`, `"hard:" is reserved`}},
		{"template id", rule(func(r *Rule) { r.ID = "template:safe_default:x" }), []string{"reserved"}},
		{"duplicate id", func(c *Config) {
			rule(func(*Rule) {})(c)
			rule(func(*Rule) {})(c)
		}, []string{`rule "user:r": id is used twice`}},
		{"missing action", rule(func(r *Rule) { r.Action.Type = "" }), []string{"action.type is required"}},
		{"unknown action", rule(func(r *Rule) { r.Action.Type = "block" }), []string{`action.type "block"`}},
		{"unknown tool in rule", rule(func(r *Rule) { r.Conditions.Tools = []string{"x_nuke"} }),
			[]string{`conditions.tools[0]`, `unknown tool "x_nuke"`}},
		{"unknown category", rule(func(r *Rule) { r.Conditions.Categories = []Category{"enterprise_admin"} }),
			[]string{`conditions.categories[0]: unknown category "enterprise_admin"`}},
		{"unknown mode", rule(func(r *Rule) { r.Conditions.Modes = []string{"manual"} }), []string{`unknown mode "manual"`}},
		{"disabled rules are validated too", rule(func(r *Rule) { r.Enabled, r.Priority = false, 1 }), []string{"priority 1"}},
		{"unknown blocked tool", func(c *Config) { c.BlockedTools = []string{"x_like_tweet", "nuke"} },
			[]string{`blocked_tools[1]`, `unknown tool "nuke"`}},
		{"unknown approval tool", func(c *Config) { c.RequireApprovalFor = []string{"zap"} },
			[]string{`require_approval_for[0]`, `"zap"`}},
		{"blocked and approval", func(c *Config) {
			c.BlockedTools = []string{"post_tweet"}
			c.RequireApprovalFor = []string{"x_post_tweet"}
			c.RequireApprovalForSet = true
		}, []string{`tool "x_post_tweet" is in both blocked_tools and require_approval_for`}},
		{"unknown template", func(c *Config) { c.Template = "yolo" }, []string{"template", `"yolo"`}},
		{"negative hourly max", func(c *Config) { c.MaxMutationsPerHour = -1 }, []string{"max_mutations_per_hour"}},
		{"negative budget", func(c *Config) { c.DailyBudgetUSD = -1 }, []string{"daily_budget_usd"}},
		{"NaN budget", func(c *Config) { c.DailyBudgetUSD = math.NaN() }, []string{"daily_budget_usd"}},
		{"limit without key", limit(func(l *Limit) { l.Key = "" }), []string{"rate_limits[0]: key is required"}},
		{"reserved limit key", limit(func(l *Limit) { l.Key = "budget:mine" }), []string{`rate_limit "budget:mine"`, "reserved"}},
		{"duplicate limit key", func(c *Config) {
			limit(func(*Limit) {})(c)
			limit(func(*Limit) {})(c)
		}, []string{`rate_limit "k": key is used twice`}},
		{"negative max", limit(func(l *Limit) { l.Max = -2 }), []string{`rate_limit "k"`, "max -2"}},
		{"infinite max", limit(func(l *Limit) { l.Max = math.Inf(1) }), []string{"max +Inf"}},
		{"zero period", limit(func(l *Limit) { l.PeriodSeconds = 0 }), []string{"period_seconds 0"}},
		{"huge period", limit(func(l *Limit) { l.PeriodSeconds = 1 << 40 }), []string{"period_seconds"}},
		{"missing dimension", limit(func(l *Limit) { l.Dimension = "" }), []string{"dimension is required"}},
		{"original's engagement_type dimension", limit(func(l *Limit) { l.Dimension = "engagement_type" }),
			[]string{`dimension "engagement_type"`}},
		{"global with match value", limit(func(l *Limit) { l.MatchValue = "x_post_tweet" }), []string{`match_value "x_post_tweet"`}},
		{"tool limit unknown tool", limit(func(l *Limit) { l.Dimension, l.MatchValue = DimTool, "nope" }), []string{`unknown tool "nope"`}},
		{"category limit unknown category", limit(func(l *Limit) { l.Dimension, l.MatchValue = DimCategory, "likes" }),
			[]string{`unknown category "likes"`}},
		{"budget limit unknown target", limit(func(l *Limit) { l.Dimension, l.MatchValue = DimBudget, "likes" }),
			[]string{`match_value "likes" is neither`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := bare()
			tt.mod(&cfg)
			e, err := NewEngine(cfg, known)
			if e != nil {
				t.Error("engine returned alongside an error")
			}
			wantConfigError(t, err, tt.want...)
		})
	}
}

func TestConfigErrorsAreAllReported(t *testing.T) {
	cfg := bare()
	cfg.BlockedTools = []string{"nope"}
	cfg.Rules = []Rule{{ID: "user:a", Priority: 1, Enabled: true, Action: Action{Type: ActionAllow}}}
	_, err := NewEngine(cfg, known)
	wantConfigError(t, err, `"nope"`, `rule "user:a"`)
}

func TestNewEngineNeedsRegistry(t *testing.T) {
	_, err := NewEngine(DefaultConfig(), nil)
	wantConfigError(t, err, "registry")
}

func TestValidSchedulesAccepted(t *testing.T) {
	for _, s := range []Schedule{
		{StartHour: 0, EndHour: 23},
		{StartHour: 23, EndHour: 0, Timezone: "UTC"},
		{StartHour: 8, EndHour: 18, Timezone: "Asia/Kolkata", Days: []string{"mon", "tue", "wed", "thu", "fri"}},
		{StartHour: 20, EndHour: 2, Timezone: "Australia/Lord_Howe", Days: []string{"sat", "sun"}},
	} {
		cfg := bare()
		sc := s
		cfg.Rules = []Rule{{ID: "user:s", Priority: 200, Enabled: true, Conditions: Conditions{Schedule: &sc}, Action: Action{Type: ActionDeny}}}
		if _, err := NewEngine(cfg, known); err != nil {
			t.Errorf("schedule %+v rejected: %v", s, err)
		}
	}
}

func TestRulesAndLimitsAreCopies(t *testing.T) {
	cfg := bare()
	cfg.Rules = []Rule{{ID: "user:r", Priority: 200, Enabled: true,
		Conditions: Conditions{Tools: []string{"x_like_tweet"}, Schedule: &Schedule{StartHour: 1, EndHour: 2, Days: []string{"mon"}}},
		Action:     Action{Type: ActionDeny}}}
	cfg.MaxMutationsPerHour = 3
	e := mustEngine(t, cfg)
	rs := e.Rules()
	for i := range rs {
		if rs[i].ID == "user:r" {
			rs[i].Conditions.Tools[0] = "x_post_tweet"
			rs[i].Conditions.Schedule.Days[0] = "sun"
		}
		rs[i].Action.Type = ActionAllow
	}
	e.Limits()[0].Max = 1000
	for _, r := range e.Rules() {
		if r.ID == "user:r" && (r.Conditions.Tools[0] != "x_like_tweet" || r.Conditions.Schedule.Days[0] != "mon") {
			t.Error("Rules() exposes the engine's slices")
		}
		if r.Action.Type == ActionAllow {
			t.Errorf("rule %s was modified through Rules()", r.ID)
		}
	}
	if e.Limits()[0].Max != 3 {
		t.Error("Limits() exposes the engine's slice")
	}
}

func TestShadowWarnings(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Template = TemplateGrowthAggressive
	cfg.BlockedTools = []string{"x_retweet"}
	e := mustEngine(t, cfg)
	w := strings.Join(e.Warnings(), "\n")
	if strings.Contains(w, `"compat:blocked:x_retweet"`) || !strings.Contains(w, "template:growth_aggressive:allow_all") {
		t.Errorf("a blocked tool cannot be shadowed, approvals can:\n%s", w)
	}
	if got := len(e.Warnings()); got != 7 { // the seven default approvals
		t.Errorf("got %d warnings, want 7:\n%s", got, w)
	}

	cfg = bare()
	cfg.BlockedTools = []string{"x_retweet"}
	cfg.Rules = []Rule{{ID: "user:likes", Priority: 200, Enabled: true,
		Conditions: Conditions{Tools: []string{"x_like_tweet"}}, Action: Action{Type: ActionAllow}}}
	if w := mustEngine(t, cfg).Warnings(); len(w) != 0 {
		t.Errorf("unexpected warnings: %v", w)
	}
}
