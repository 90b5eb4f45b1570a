package policy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// dmConfig is an enforcing config in which x_send_dm must be named, as the
// registry marks it, with the daily cap at n.
func dmConfig(n int) Config {
	c := bare()
	c.ApprovalUnlessNamed = []string{"x_send_dm"}
	c.MaxDMsPerDay = &n
	return c
}

func allowRule(id string, cond Conditions) Rule {
	return Rule{ID: id, Priority: 200, Enabled: true, Conditions: cond, Action: Action{Type: ActionAllow}}
}

// TestDMsNeedApprovalUnlessARuleNamesThem: every way a configuration can
// let a call through without naming x_send_dm leaves a message to
// approval; only a rule that names it allows it, and the stricter
// outcomes (deny, dry run, composer mode) still win over that rule.
func TestDMsNeedApprovalUnlessARuleNamesThem(t *testing.T) {
	named := allowRule("dms_ok", Conditions{Tools: []string{"x_send_dm"}})
	tests := []struct {
		name    string
		cfg     func() Config
		req     func() Request
		outcome Outcome
		ruleID  string
	}{
		{"no rule at all", func() Config { return dmConfig(10) }, dmReq, RequireApproval, RuleApprovalUnlessNamed},
		{"a wildcard allow", withRules(allowRule("all", Conditions{})), dmReq, RequireApproval, RuleApprovalUnlessNamed},
		{"a category allow", withRules(allowRule("dm_cat", Conditions{Categories: []Category{CatDM}})), dmReq, RequireApproval, RuleApprovalUnlessNamed},
		{"a mode allow", withRules(allowRule("auto", Conditions{Modes: []string{ModeAutopilot}})), dmReq, RequireApproval, RuleApprovalUnlessNamed},
		{"an allow naming other tools", withRules(allowRule("posts", Conditions{Tools: []string{"x_post_tweet"}})), dmReq, RequireApproval, RuleApprovalUnlessNamed},
		{"the growth template's allow-all", func() Config { c := dmConfig(10); c.Template = TemplateGrowthAggressive; return c }, dmReq, RequireApproval, RuleApprovalUnlessNamed},
		{"a rule naming x_send_dm", withRules(named), dmReq, Allow, "dms_ok"},
		{"a rule naming it beats a later wildcard", withRules(named, Rule{ID: "all", Priority: 300, Enabled: true, Action: Action{Type: ActionAllow}}), dmReq, Allow, "dms_ok"},
		{"a wildcard before the named rule still decides first", withRules(Rule{ID: "all", Priority: 150, Enabled: true, Action: Action{Type: ActionAllow}}, named), dmReq, RequireApproval, RuleApprovalUnlessNamed},
		{"a rule naming it, with approval mode on", withRules(named), func() Request { r := dmReq(); r.ApprovalMode = true; return r }, Allow, "dms_ok"},
		{"approval mode on, no rule", func() Config { return dmConfig(10) }, func() Request { r := dmReq(); r.ApprovalMode = true; return r }, RequireApproval, RuleApprovalUnlessNamed},
		{"composer mode beats the named rule", withRules(named), func() Request { r := dmReq(); r.Mode = ModeComposer; return r }, RequireApproval, RuleHardComposerApproval},
		{"a deny rule beats the named rule", withRules(Rule{ID: "no_dms", Priority: 150, Enabled: true, Conditions: Conditions{Categories: []Category{CatDM}}, Action: Action{Type: ActionDeny}}, named), dmReq, Deny, "no_dms"},
		{"a dry_run rule beats it", withRules(Rule{ID: "try", Priority: 150, Enabled: true, Action: Action{Type: ActionDryRun}}, named), dmReq, DryRun, "try"},
		{"blocked_tools beats the named rule", func() Config { c := withRules(named)(); c.BlockedTools = []string{"x_send_dm"}; return c }, dmReq, Deny, "compat:blocked:x_send_dm"},
		{"enforcement off leaves it to approval", func() Config { c := withRules(named)(); c.EnforceForMutations = false; return c }, dmReq, RequireApproval, RuleApprovalUnlessNamed},
		{"the replay of an approved message goes out", func() Config { return dmConfig(10) }, func() Request { r := dmReq(); r.BypassApproval = true; return r }, Allow, ""},
		{"a universal request doing a DM's work", withRules(allowRule("raw", Conditions{Tools: []string{"x_post"}})), func() Request {
			r := req("x_post")
			r.Equivalent = []Identity{{Tool: "x_send_dm", Category: CatDM}}
			return r
		}, RequireApproval, RuleApprovalUnlessNamed},
		{"a post under a wildcard is still allowed", withRules(allowRule("all", Conditions{})), func() Request { return req("x_post_tweet") }, Allow, "all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEngine(t, tt.cfg())
			d := e.Decide(tt.req(), noUsage)
			if d.Outcome != tt.outcome || d.RuleID != tt.ruleID {
				t.Fatalf("decision = {%s %q} (%s), want {%s %q}", d.Outcome, d.RuleID, d.Reason, tt.outcome, tt.ruleID)
			}
		})
	}
}

func dmReq() Request { return req("x_send_dm") }

func withRules(rules ...Rule) func() Config {
	return func() Config {
		c := dmConfig(10)
		c.Rules = rules
		return c
	}
}

// TestDailyDMCap: limits.max_dms_per_day denies the message past the cap
// with the limit error naming the key, and counts nothing else.
func TestDailyDMCap(t *testing.T) {
	cfg := dmConfig(2)
	cfg.Rules = []Rule{allowRule("dms_ok", Conditions{Tools: []string{"x_send_dm"}})}
	e := mustEngine(t, cfg)
	start := base().Add(-time.Hour)
	d := e.Decide(dmReq(), usageMap(map[string]float64{LimitKeyMaxDMsPerDay: 1}, start))
	wantDecision(t, d, Allow, "dms_ok", "")
	d = e.Decide(dmReq(), usageMap(map[string]float64{LimitKeyMaxDMsPerDay: 2}, start))
	wantDecision(t, d, Deny, LimitKeyMaxDMsPerDay, apperr.PolicyRateLimited)
	if err := d.Err(); err == nil || !strings.Contains(err.Message, "limits.max_dms_per_day") {
		t.Errorf("denial %v does not name limits.max_dms_per_day", err)
	}
	if want := start.Add(24 * time.Hour); !d.ResetAt.Equal(want) {
		t.Errorf("reset at %v, want %v", d.ResetAt, want)
	}
	post := e.Decide(req("x_post_tweet"), usageMap(map[string]float64{LimitKeyMaxDMsPerDay: 2}, start))
	wantDecision(t, post, Allow, "", "")
	if _, err := NewEngine(dmConfig(-1), known); err == nil {
		t.Error("a negative limits.max_dms_per_day was accepted")
	} else {
		wantConfigError(t, err, "limits.max_dms_per_day")
	}
	bad := bare()
	bad.RateLimits = []Limit{{Key: "limits.mine", Dimension: DimGlobal, Max: 1, PeriodSeconds: 60}}
	_, err := NewEngine(bad, known)
	wantConfigError(t, err, "reserved")
}

// TestDailyDMCapOnEveryCounterBackend: the cap is charged and enforced on
// the stored counters of every backend, like every other limit: two
// messages reserve, the third is denied naming the key, and a day later
// there is room again.
func TestDailyDMCapOnEveryCounterBackend(t *testing.T) {
	forEachCounterBackend(t, func(t *testing.T, db CounterDB) {
		ctx := context.Background()
		cfg := dmConfig(2)
		cfg.Rules = []Rule{allowRule("dms_ok", Conditions{Tools: []string{"x_send_dm"}})}
		e := mustEngine(t, cfg)
		clk := &clock{t: base()}
		c := db.Counters(newAccount(), clk.now)
		reserve := func() Decision {
			t.Helper()
			var d Decision
			err := c.Update(ctx, func(tx CounterTx) error {
				r := dmReq()
				r.Now = clk.now()
				var err error
				d, _, err = e.ReserveTx(ctx, tx, r)
				return err
			})
			if err != nil {
				t.Fatalf("ReserveTx: %v", err)
			}
			return d
		}
		for i := 0; i < 2; i++ {
			wantDecision(t, reserve(), Allow, "dms_ok", "")
			clk.advance(time.Minute)
		}
		d := reserve()
		wantDecision(t, d, Deny, LimitKeyMaxDMsPerDay, apperr.PolicyRateLimited)
		if got := usedOf(t, c, LimitKeyMaxDMsPerDay); got != 2 {
			t.Errorf("%s used %v, want 2", LimitKeyMaxDMsPerDay, got)
		}
		clk.advance(24 * time.Hour)
		wantDecision(t, reserve(), Allow, "dms_ok", "")
	})
}
