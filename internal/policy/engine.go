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
	dryRun   bool
	rules    []compiledRule
	limits   []Limit
	warnings []string
	// overrides are the rules that decide calls before approval mode can:
	// see ApprovalOverrides.
	overrides []Rule
	// namedOnly is Config.ApprovalUnlessNamed.
	namedOnly []string
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

func reservedLimitPrefixes() []string { return []string{"compat:", "budget:", "limits."} }

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

	rules := hardRules(cfg.DryRunMutations)
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

	if n := cfg.MaxDMsPerDay; n != nil {
		if *n < 0 {
			fail("limits.max_dms_per_day: %d is negative (0 means no direct message may be sent)", *n)
		} else {
			limits = append(limits, Limit{
				Key: LimitKeyMaxDMsPerDay, Dimension: DimCategory, MatchValue: string(CatDM),
				Max: float64(*n), PeriodSeconds: day, Source: SourceCompat,
			})
		}
	}
	var namedOnly []string
	for i, t := range cfg.ApprovalUnlessNamed {
		n, err := NormalizeToolName(t, known)
		if err != nil {
			fail("approval_unless_named[%d]: %v", i, err)
			continue
		}
		namedOnly = append(namedOnly, n)
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

	e := &Engine{enforce: cfg.EnforceForMutations, dryRun: cfg.DryRunMutations, limits: limits, namedOnly: namedOnly}
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
	shadowed := e.shadowed()
	e.warnings = e.buildWarnings(shadowed)
	for i, r := range e.rules {
		if _, dead := shadowed[i]; dead || (!e.enforce && r.Source != SourceHard) {
			continue
		}
		if r.Source != SourceHard && (r.Action.Type == ActionAllow || r.Action.Type == ActionDryRun) {
			e.overrides = append(e.overrides, r.Rule)
		}
	}
	return e, nil
}

// RuleRef names a rule with its source, as reported in overridden_by:
// "template:growth_aggressive:allow_all", "user:<id>", "hard:dry_run".
func RuleRef(r Rule) string {
	if r.Source == "" || strings.HasPrefix(r.ID, r.Source+":") {
		return r.ID
	}
	return r.Source + ":" + r.ID
}

// DryRun reports whether dry_run_mutations is on: every mutation answers
// with a dry run.
func (e *Engine) DryRun() bool { return e.dryRun }

// ApprovalOverrides lists the rules that decide calls before approval mode
// is consulted, so that with approval_mode on those calls still do not wait
// for a human: allow rules (the call executes) and dry_run rules (it
// answers with a dry run). Precedence is hard rules (dry_run_mutations
// among them), then blocked_tools, then template and user rules, then
// approval mode, then limits; approval mode therefore only routes what no
// rule decided. In composer mode the composer hard rule routes everything
// first, so only dry_run_mutations overrides it.
func (e *Engine) ApprovalOverrides(mode string) []string {
	if e.dryRun {
		return []string{RuleHardDryRun}
	}
	out := []string{}
	if mode == ModeComposer {
		return out
	}
	if mode == "" {
		mode = ModeAutopilot
	}
	for _, r := range e.overrides {
		if len(r.Conditions.Modes) == 0 || slices.Contains(r.Conditions.Modes, mode) {
			out = append(out, RuleRef(r))
		}
	}
	return out
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

// Warnings lists configuration that can never take effect: rules an earlier
// rule always pre-empts (for example require_approval_for under the
// growth_aggressive template), everything under dry_run_mutations, and
// everything configurable when enforcement is off. They are not errors:
// first match wins by design, but `config validate` and validate_config
// show them.
func (e *Engine) Warnings() []string { return slices.Clone(e.warnings) }

func hardRules(dryRun bool) []Rule {
	var rules []Rule
	if dryRun {
		// Listed first at the lowest priority: nothing may run before it,
		// not even the approval hard rules, since a dry run must neither
		// reach X nor enter the queue.
		rules = append(rules, Rule{
			ID: RuleHardDryRun, Priority: 0, Label: "dry_run_mutations: every mutation answers with a dry run", Enabled: true,
			Action: Action{Type: ActionDryRun, Reason: "dry_run_mutations is on: nothing is sent to X"},
			Source: SourceHard,
		})
	}
	return append(rules, []Rule{
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
	}...)
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
	if cfg.RequireApprovalForSet {
		for _, t := range blocked {
			if slices.Contains(approval, t) {
				errs = append(errs, fmt.Errorf("tool %q is in both blocked_tools and require_approval_for; keep it in one", t))
			}
		}
	} else {
		// The default list is not a wish the user expressed: blocking a
		// tool it names simply takes the tool out of it.
		approval = slices.DeleteFunc(approval, func(t string) bool { return slices.Contains(blocked, t) })
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

// shadowed maps each rule that can never decide a call to the earlier rule
// that always decides first. Rule a pre-empts rule c when every call c
// matches, a matches too, and a's decision is final: deny, dry_run and allow
// always are; require_approval is skipped on an approved replay, so it only
// pre-empts another require_approval rule. Only conditions are compared
// (tools, categories, modes, an identical schedule), which errs towards
// reporting less.
func (e *Engine) shadowed() map[int]int {
	out := map[int]int{}
	for i := range e.rules {
		c := &e.rules[i]
		for j := range e.rules[:i] {
			a := &e.rules[j]
			if _, dead := out[j]; dead || a.ID == RuleHardDryRun {
				// dry_run_mutations pre-empts everything; buildWarnings says
				// so once instead of once per rule.
				continue
			}
			if !e.enforce && a.Source != SourceHard {
				continue
			}
			if a.Action.Type == ActionRequireApproval && c.Action.Type != ActionRequireApproval {
				continue
			}
			if covers(a.Conditions, c.Conditions) {
				out[i] = j
				break
			}
		}
	}
	return out
}

// covers reports whether every call matching c also matches a.
func covers(a, c Conditions) bool {
	return subset(a.Tools, c.Tools) && subset(a.Categories, c.Categories) && subset(a.Modes, c.Modes) &&
		(a.Schedule == nil || (c.Schedule != nil && sameSchedule(*a.Schedule, *c.Schedule)))
}

// subset reports whether the values a condition list c admits are all
// admitted by a; an empty list admits everything.
func subset[T comparable](a, c []T) bool {
	if len(a) == 0 {
		return true
	}
	if len(c) == 0 {
		return false
	}
	for _, v := range c {
		if !slices.Contains(a, v) {
			return false
		}
	}
	return true
}

func sameSchedule(a, b Schedule) bool {
	return a.StartHour == b.StartHour && a.EndHour == b.EndHour && a.Timezone == b.Timezone && slices.Equal(a.Days, b.Days)
}

// buildWarnings describes configured rules that can never apply. Built-in
// redundancy (a template's delete approval under the hard one) is not the
// user's doing and is not reported.
func (e *Engine) buildWarnings(shadowed map[int]int) []string {
	var out []string
	if e.dryRun {
		out = append(out, "dry_run_mutations is on: every mutation answers with a dry run; no other rule, approval or limit applies until it is turned off")
	}
	if !e.enforce {
		n := 0
		for _, r := range e.rules {
			if r.Source != SourceHard {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("enforce_for_mutations is off: %d template, user and compat rules and every count limit never apply (hard rules and the spend budget still do)", n))
		}
	}
	for i, r := range e.rules {
		j, dead := shadowed[i]
		if !dead || r.Source == SourceHard || !e.enforce {
			continue
		}
		a := e.rules[j]
		if a.Source == SourceHard && strings.HasPrefix(r.Source, sourceTemplatePrefix) {
			continue
		}
		out = append(out, fmt.Sprintf("rule %q (%s) never applies: %s rule %q (priority %d) matches the same calls first",
			r.ID, ruleLabel(r.Rule), a.Action.Type, a.ID, a.Priority))
	}
	return out
}

func ruleLabel(r Rule) string {
	if r.Label != "" {
		return r.Label
	}
	return r.Source
}
