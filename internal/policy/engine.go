package policy

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	// Schedules name IANA zones; embedding the database keeps them valid on
	// hosts without a system zoneinfo.
	_ "time/tzdata"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// maxPeriodSeconds bounds a limit window (366 days) so window arithmetic
// cannot overflow and a typo like an extra zero is caught.
const maxPeriodSeconds = 366 * day

// Engine holds the validated, effective rule set and limits. It is immutable
// after NewEngine and safe for concurrent use.
type Engine struct {
	enforce  bool
	rules    []compiledRule
	limits   []Limit
	warnings []string
}

type compiledRule struct {
	Rule
	loc  *time.Location
	days [7]bool // indexed by time.Weekday; all false means every day
	// reason is the decision reason, built once so Decide does not format.
	reason string
}

// reservedRulePrefixes and reservedLimitPrefixes are the rule-id and
// limit-key prefixes configuration may not use, so that a user rule can never
// impersonate a built-in one.
func reservedRulePrefixes() []string {
	return []string{"hard:", "mode:", "compat:", sourceTemplatePrefix}
}

func reservedLimitPrefixes() []string { return []string{"compat:", "budget:"} }

// NewEngine validates cfg, normalises tool names through known (the tool
// registry's lookup) and builds the effective rule set: hard rules, template,
// user rules, compat rules, sorted by priority. Every problem found is
// reported in one *apperr.Error with code config_error naming the key or rule.
func NewEngine(cfg Config, known func(tool string) bool) (*Engine, error) {
	if known == nil {
		return nil, apperr.New(apperr.ConfigError, "policy: a tool registry lookup is required")
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	rules := hardRules()
	var limits []Limit

	if cfg.Template != "" {
		tr, tl, err := template(cfg.Template)
		if err != nil {
			fail("template: %v", err)
		}
		rules = append(rules, tr...)
		limits = append(limits, tl...)
	}

	seenIDs := map[string]bool{}
	for _, r := range rules {
		seenIDs[r.ID] = true
	}
	var user []Rule
	for i, r := range cfg.Rules {
		name := fmt.Sprintf("rules[%d]", i)
		if r.ID != "" {
			name = fmt.Sprintf("rule %q", r.ID)
		}
		nr, rerrs := normalizeUserRule(r, known, name)
		errs = append(errs, rerrs...)
		if r.ID != "" {
			if seenIDs[r.ID] {
				fail("%s: id is used twice", name)
			}
			seenIDs[r.ID] = true
		}
		user = append(user, nr)
	}
	rules = append(rules, user...)

	compat, cerrs := compatRules(cfg, known)
	errs = append(errs, cerrs...)
	rules = append(rules, compat...)

	if cfg.MaxMutationsPerHour < 0 {
		fail("max_mutations_per_hour: %d is negative (0 means no hourly cap)", cfg.MaxMutationsPerHour)
	} else if cfg.MaxMutationsPerHour > 0 {
		limits = append(limits, Limit{
			Key: LimitKeyMaxMutationsPerHour, Dimension: DimGlobal, MatchValue: "*",
			Max: float64(cfg.MaxMutationsPerHour), PeriodSeconds: hour, Source: SourceCompat,
		})
	}

	seenKeys := map[string]bool{}
	for i, l := range cfg.RateLimits {
		name := fmt.Sprintf("rate_limits[%d]", i)
		if l.Key != "" {
			name = fmt.Sprintf("rate_limit %q", l.Key)
		}
		nl, lerrs := normalizeUserLimit(l, known, name)
		errs = append(errs, lerrs...)
		if l.Key == "" {
			continue
		}
		if seenKeys[l.Key] {
			fail("%s: key is used twice", name)
			continue
		}
		seenKeys[l.Key] = true
		// A user limit with a template limit's key replaces it: that is how a
		// template's numbers are tuned.
		limits = slices.DeleteFunc(limits, func(t Limit) bool { return t.Key == l.Key })
		limits = append(limits, nl)
	}

	switch b := cfg.DailyBudgetUSD; {
	case math.IsNaN(b) || math.IsInf(b, 0) || b < 0:
		fail("daily_budget_usd: %v is not a non-negative amount (0 means no cap)", b)
	case b > 0:
		limits = append(limits, Limit{
			Key: LimitKeyDailyBudget, Dimension: DimBudget, MatchValue: "*",
			Max: b, PeriodSeconds: day, Source: SourceBudget,
		})
	}

	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return nil, apperr.New(apperr.ConfigError, "invalid policy config: %s", strings.Join(msgs, "; "))
	}

	// Hard rules are listed first, so at equal priority built-ins and
	// templates stay ahead of user and compat rules.
	sort.SliceStable(rules, func(a, b int) bool { return rules[a].Priority < rules[b].Priority })

	e := &Engine{enforce: cfg.EnforceForMutations, limits: limits}
	for _, r := range rules {
		if !r.Enabled {
			continue
		}
		cr, err := compile(r)
		if err != nil {
			// Every schedule was validated above; reaching this is a bug.
			return nil, apperr.Wrap(apperr.ConfigError, err, "rule %q", r.ID)
		}
		e.rules = append(e.rules, cr)
	}
	e.warnings = shadowWarnings(e.rules)
	return e, nil
}

// Rules returns the effective enabled rules in evaluation order.
func (e *Engine) Rules() []Rule {
	out := make([]Rule, len(e.rules))
	for i, r := range e.rules {
		out[i] = cloneRule(r.Rule)
	}
	return out
}

// Limits returns the effective limits: template, compat, user, budget.
func (e *Engine) Limits() []Limit { return slices.Clone(e.limits) }

// EnforceForMutations reports the master switch.
func (e *Engine) EnforceForMutations() bool { return e.enforce }

// Warnings lists configured compat rules that can never fire because an
// earlier allow rule matches the same calls first (for example blocked_tools
// under the growth_aggressive template). They are not errors: first match
// wins by design, but the user should see it in `config validate`.
func (e *Engine) Warnings() []string { return slices.Clone(e.warnings) }

func hardRules() []Rule {
	return []Rule{
		{
			ID: RuleHardDeleteApproval, Priority: 0, Label: "Deletes always need approval", Enabled: true,
			Conditions: Conditions{Categories: []Category{CatDelete}},
			Action:     Action{Type: ActionRequireApproval, Reason: "delete actions always require approval"},
			Source:     SourceHard,
		},
		{
			ID: RuleHardComposerApproval, Priority: 10, Label: "Composer mode sends every mutation to approval", Enabled: true,
			Conditions: Conditions{Modes: []string{ModeComposer}},
			Action:     Action{Type: ActionRequireApproval, Reason: "composer mode requires approval for all mutations"},
			Source:     SourceHard,
		},
	}
}

func normalizeUserRule(r Rule, known func(string) bool, name string) (Rule, []error) {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(name+": "+format, args...))
	}
	out := cloneRule(r)
	out.Source = SourceUser

	if r.ID == "" {
		fail("id is required")
	} else if strings.TrimSpace(r.ID) != r.ID {
		fail("id has leading or trailing spaces")
	}
	for _, p := range reservedRulePrefixes() {
		if strings.HasPrefix(r.ID, p) {
			fail("id prefix %q is reserved for built-in rules", p)
		}
	}
	if r.Priority < MinUserPriority {
		fail("priority %d is in the reserved hard-rule band 0-%d (use %d or more; 200+ recommended)",
			r.Priority, HardBandMax, MinUserPriority)
	}

	switch r.Action.Type {
	case ActionAllow, ActionDryRun:
	case ActionDeny:
		if out.Action.Reason == "" {
			out.Action.Reason = fmt.Sprintf("denied by rule %q", r.ID)
		}
	case ActionRequireApproval:
		if out.Action.Reason == "" {
			out.Action.Reason = fmt.Sprintf("rule %q requires approval", r.ID)
		}
	case "":
		fail("action.type is required (allow, deny, require_approval or dry_run)")
	default:
		fail("action.type %q is not one of allow, deny, require_approval, dry_run", r.Action.Type)
	}

	for i, t := range r.Conditions.Tools {
		n, err := NormalizeToolName(t, known)
		if err != nil {
			fail("conditions.tools[%d]: %v", i, err)
			continue
		}
		out.Conditions.Tools[i] = n
	}
	for i, c := range r.Conditions.Categories {
		if !ValidCategory(c) {
			fail("conditions.categories[%d]: unknown category %q (want one of %v)", i, c, Categories())
		}
	}
	for i, m := range r.Conditions.Modes {
		if m != ModeAutopilot && m != ModeComposer {
			fail("conditions.modes[%d]: unknown mode %q (want autopilot or composer)", i, m)
		}
	}
	if s := r.Conditions.Schedule; s != nil {
		if _, err := compileSchedule(*s); err != nil {
			fail("conditions.schedule_window: %v", err)
		}
	}
	return out, errs
}

func compatRules(cfg Config, known func(string) bool) ([]Rule, []error) {
	var errs []error
	norm := func(key string, names []string) []string {
		var out []string
		for i, t := range names {
			n, err := NormalizeToolName(t, known)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", key, i, err))
				continue
			}
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	}
	blocked := norm("blocked_tools", cfg.BlockedTools)
	approval := norm("require_approval_for", cfg.RequireApprovalFor)
	for _, t := range blocked {
		if slices.Contains(approval, t) {
			errs = append(errs, fmt.Errorf("tool %q is in both blocked_tools and require_approval_for; keep it in one", t))
		}
	}

	var rules []Rule
	// A blocked tool stays blocked whatever a template or user rule allows:
	// these denials sit in the built-in band, after the hard rules and
	// before every allow rule.
	for i, t := range blocked {
		rules = append(rules, Rule{ID: "compat:blocked:" + t, Label: "blocked_tools", Priority: blockedPriorityStart + i,
			Enabled: true, Source: SourceCompat, Conditions: Conditions{Tools: []string{t}},
			Action: Action{Type: ActionDeny, Reason: fmt.Sprintf("tool '%s' is blocked", t)}})
	}
	prio := compatPriorityStart
	add := func(r Rule) {
		r.Priority, r.Enabled, r.Source = prio, true, SourceCompat
		prio++
		rules = append(rules, r)
	}
	if cfg.DryRunMutations {
		add(Rule{ID: "compat:dry_run", Label: "dry_run_mutations",
			Action: Action{Type: ActionDryRun, Reason: "dry_run_mutations is on"}})
	}
	for _, t := range approval {
		add(Rule{ID: "compat:approval:" + t, Label: "require_approval_for",
			Conditions: Conditions{Tools: []string{t}},
			Action:     Action{Type: ActionRequireApproval, Reason: fmt.Sprintf("tool '%s' requires approval", t)}})
	}
	return rules, errs
}

func normalizeUserLimit(l Limit, known func(string) bool, name string) (Limit, []error) {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(name+": "+format, args...))
	}
	out := l
	out.Source = SourceUser
	if l.Key == "" {
		fail("key is required")
	}
	for _, p := range reservedLimitPrefixes() {
		if strings.HasPrefix(l.Key, p) {
			fail("key prefix %q is reserved", p)
		}
	}
	if math.IsNaN(l.Max) || math.IsInf(l.Max, 0) || l.Max < 0 {
		fail("max %v must be a non-negative number", l.Max)
	}
	if l.PeriodSeconds <= 0 || l.PeriodSeconds > maxPeriodSeconds {
		fail("period_seconds %d must be between 1 and %d", l.PeriodSeconds, maxPeriodSeconds)
	}
	all := l.MatchValue == "" || l.MatchValue == "*"
	if all {
		out.MatchValue = "*"
	}
	switch l.Dimension {
	case DimGlobal:
		if !all {
			fail("match_value %q: a global limit counts every call; use \"*\" or a tool/category dimension", l.MatchValue)
		}
	case DimTool:
		if !all {
			n, err := NormalizeToolName(l.MatchValue, known)
			if err != nil {
				fail("match_value: %v", err)
			}
			out.MatchValue = n
		}
	case DimCategory:
		if !all && !ValidCategory(Category(l.MatchValue)) {
			fail("match_value: unknown category %q (want one of %v)", l.MatchValue, Categories())
		}
	case DimBudget:
		if !all && !ValidCategory(Category(l.MatchValue)) {
			n, err := NormalizeToolName(l.MatchValue, known)
			if err != nil {
				fail("match_value %q is neither a category nor a known tool", l.MatchValue)
			}
			out.MatchValue = n
		}
	case "":
		fail("dimension is required (global, tool, category or budget)")
	default:
		fail("dimension %q is not one of global, tool, category, budget", l.Dimension)
	}
	return out, errs
}

func compile(r Rule) (compiledRule, error) {
	cr := compiledRule{Rule: r, reason: r.Action.Reason}
	switch {
	case r.Action.Type == ActionAllow:
		cr.reason = fmt.Sprintf("allowed by rule %q", r.ID)
	case cr.reason == "":
		cr.reason = fmt.Sprintf("%s by rule %q", r.Action.Type, r.ID)
	}
	if r.Conditions.Schedule != nil {
		cs, err := compileSchedule(*r.Conditions.Schedule)
		if err != nil {
			return cr, err
		}
		cr.loc, cr.days = cs.loc, cs.days
	}
	return cr, nil
}

type compiledSchedule struct {
	loc  *time.Location
	days [7]bool
}

func parseDay(d string) (time.Weekday, bool) {
	switch d {
	case "sun":
		return time.Sunday, true
	case "mon":
		return time.Monday, true
	case "tue":
		return time.Tuesday, true
	case "wed":
		return time.Wednesday, true
	case "thu":
		return time.Thursday, true
	case "fri":
		return time.Friday, true
	case "sat":
		return time.Saturday, true
	}
	return 0, false
}

func compileSchedule(s Schedule) (compiledSchedule, error) {
	var cs compiledSchedule
	if s.StartHour < 0 || s.StartHour > 23 {
		return cs, fmt.Errorf("start_hour %d must be 0-23", s.StartHour)
	}
	if s.EndHour < 0 || s.EndHour > 23 {
		return cs, fmt.Errorf("end_hour %d must be 0-23", s.EndHour)
	}
	if s.StartHour == s.EndHour {
		return cs, fmt.Errorf("start_hour and end_hour are both %d; the window would be empty (omit the schedule to match all day)", s.StartHour)
	}
	switch tz := s.Timezone; {
	case tz == "" || tz == "UTC":
		cs.loc = time.UTC
	case tz == "Local":
		// "Local" depends on the host, which makes a rule mean different
		// things on different machines.
		return cs, fmt.Errorf("timezone %q is not an IANA zone name (for example Europe/Berlin)", tz)
	default:
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return cs, fmt.Errorf("timezone %q is not a valid IANA zone name (for example America/New_York)", tz)
		}
		cs.loc = loc
	}
	for i, d := range s.Days {
		wd, ok := parseDay(d)
		if !ok {
			return cs, fmt.Errorf("days[%d]: %q is not a lowercase three-letter day name (mon, tue, wed, thu, fri, sat, sun)", i, d)
		}
		cs.days[wd] = true
	}
	return cs, nil
}

func cloneRule(r Rule) Rule {
	out := r
	out.Conditions.Tools = slices.Clone(r.Conditions.Tools)
	out.Conditions.Categories = slices.Clone(r.Conditions.Categories)
	out.Conditions.Modes = slices.Clone(r.Conditions.Modes)
	if r.Conditions.Schedule != nil {
		s := *r.Conditions.Schedule
		s.Days = slices.Clone(s.Days)
		out.Conditions.Schedule = &s
	}
	return out
}

// shadowWarnings finds compat rules that an earlier allow rule always
// pre-empts. Only allow rules whose sole condition is (at most) a tool list
// are considered: anything narrower may not cover the compat rule.
func shadowWarnings(rules []compiledRule) []string {
	var out []string
	for i, c := range rules {
		if c.Source != SourceCompat {
			continue
		}
		for _, a := range rules[:i] {
			if a.Action.Type != ActionAllow || len(a.Conditions.Categories) > 0 ||
				len(a.Conditions.Modes) > 0 || a.Conditions.Schedule != nil {
				continue
			}
			covers := len(a.Conditions.Tools) == 0
			if !covers && len(c.Conditions.Tools) > 0 {
				covers = true
				for _, t := range c.Conditions.Tools {
					if !slices.Contains(a.Conditions.Tools, t) {
						covers = false
					}
				}
			}
			if covers {
				out = append(out, fmt.Sprintf("rule %q (%s) never applies: allow rule %q (priority %d) matches first",
					c.ID, c.Label, a.ID, a.Priority))
				break
			}
		}
	}
	return out
}
