package policy

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// limitEpsilon absorbs float rounding when USD amounts are summed, so that a
// budget spent to the cent is not reported as exceeded.
const limitEpsilon = 1e-9

// Decide evaluates req against the effective rules and limits. It is pure:
// usage reports a limit's stored use and window start (ok false when the
// limit has no row yet), and nothing else is read.
//
// Order: hard rules always (dry_run_mutations first of all, then the
// delete and composer approvals), then blocked_tools, then template, user
// and compat rules only when enforcement is on; first matching rule wins
// (deny, require_approval and dry_run decide at once, allow skips the
// remaining rules). With effective approval mode on (req.ApprovalMode or
// composer mode) a call no rule decided goes to approval. A call that got
// this far must then fit every matching limit: count limits when
// enforcement is on, spend budgets always. A call with equivalent
// identities is decided under each; the strictest outcome wins.
func (e *Engine) Decide(req Request, usage func(limitKey string) (used float64, windowStart time.Time, ok bool)) Decision {
	d := e.decideRules(req)
	if d.Outcome != Allow {
		return d
	}
	if deny, ok := e.checkLimits(req, usage); ok {
		return deny
	}
	return d
}

// decideRules is Decide without the limits. A call with equivalent
// identities is decided under each and the strictest outcome wins, so a
// universal request is never treated more leniently than the typed tool it
// does the work of, nor than x_post's own rules say.
func (e *Engine) decideRules(req Request) Decision {
	if err := validateRequest(req); err != nil {
		// Fail closed: a malformed request is a programming error upstream,
		// and guessing here could let a mutation through.
		return Decision{Outcome: Deny, Code: apperr.PolicyError, Reason: err.Error(), Source: SourceDefault}
	}
	mode := req.Mode
	if mode == "" {
		mode = ModeAutopilot
	}
	d := e.decideIdentity(req, Identity{Tool: req.Tool, Category: req.Category}, mode, req.UnknownWrite)
	for _, id := range req.Equivalent {
		if o := e.decideIdentity(req, id, mode, false); strictness(o.Outcome) > strictness(d.Outcome) {
			d = o
		}
	}
	return d
}

// strictness orders outcomes for combining identities. Deny is strictest. A
// dry run comes next: it sends nothing, and an approved replay would meet
// the same dry_run rule again and still send nothing. Approval is stricter
// than allow.
func strictness(o Outcome) int {
	switch o {
	case Deny:
		return 3
	case DryRun:
		return 2
	case RequireApproval:
		return 1
	}
	return 0
}

// decideIdentity runs the rules, approval mode and the defaults for one
// identity of the call. unknownWrite applies the conservative default for a
// write no typed tool covers: approval, unless the deciding rule names the
// tool explicitly.
func (e *Engine) decideIdentity(req Request, id Identity, mode string, unknownWrite bool) Decision {
	var decided *compiledRule
rules:
	for i := range e.rules {
		r := &e.rules[i]
		if !e.enforce && r.Source != SourceHard {
			continue
		}
		if !r.matches(id, mode, req.Now) {
			continue
		}
		switch r.Action.Type {
		case ActionDeny:
			return Decision{Outcome: Deny, RuleID: r.ID, Reason: r.reason, Code: denyCode(r.Source), Source: r.Source}
		case ActionRequireApproval:
			if req.BypassApproval {
				continue
			}
			return Decision{Outcome: RequireApproval, RuleID: r.ID, Reason: r.reason, Source: r.Source}
		case ActionDryRun:
			return Decision{Outcome: DryRun, RuleID: r.ID, Reason: r.reason, Source: r.Source}
		case ActionAllow:
			decided = r
			break rules
		}
	}
	namedAllow := decided != nil && slices.Contains(decided.Conditions.Tools, id.Tool)
	if unknownWrite && req.UnlistedWrite && !req.BypassApproval {
		return Decision{Outcome: RequireApproval, RuleID: RuleHardUnlistedWrite, Source: SourceHard,
			Reason: fmt.Sprintf("%s names a route the endpoint table does not list, so what it does on X is unknown: a person decides, whatever the rules say", id.Tool)}
	}
	if unknownWrite && !req.BypassApproval && !namedAllow {
		return Decision{Outcome: RequireApproval, RuleID: RuleUnknownWrite, Source: SourceDefault,
			Reason: fmt.Sprintf("%s names no endpoint a typed tool covers; such writes need approval unless a rule names %s explicitly", id.Tool, id.Tool)}
	}
	// A tool that must be named (a direct message) is not let through by
	// an allow that covers it only by category, mode or wildcard, nor by
	// approval mode being off: only a rule naming it allows it.
	if slices.Contains(e.namedOnly, id.Tool) && !req.BypassApproval && !namedAllow {
		return Decision{Outcome: RequireApproval, RuleID: RuleApprovalUnlessNamed, Source: SourceDefault,
			Reason: fmt.Sprintf("%s always needs approval unless a policy rule names %s explicitly", id.Tool, id.Tool)}
	}
	if decided != nil {
		return Decision{Outcome: Allow, RuleID: decided.ID, Reason: decided.reason, Source: decided.Source}
	}
	if (req.ApprovalMode || mode == ModeComposer) && !req.BypassApproval {
		return Decision{Outcome: RequireApproval, RuleID: RuleApprovalMode,
			Reason: "approval mode is on: mutations that no policy rule allows need approval", Source: SourceMode}
	}
	if !e.enforce {
		return Decision{Outcome: Allow, Reason: "policy enforcement is off", Source: SourceDefault}
	}
	return Decision{Outcome: Allow, Reason: "no policy rule matched", Source: SourceDefault}
}

func validateRequest(req Request) error {
	switch {
	case req.Tool == "":
		return fmt.Errorf("policy request has no tool name")
	case slices.ContainsFunc(req.Equivalent, func(id Identity) bool { return id.Tool == "" }):
		return fmt.Errorf("policy request for %s has an equivalent identity with no tool name", req.Tool)
	case req.UnlistedWrite && !req.UnknownWrite:
		return fmt.Errorf("policy request for %s is an unlisted write but not an unknown one", req.Tool)
	case req.Now.IsZero():
		return fmt.Errorf("policy request for %s has no time", req.Tool)
	case req.Mode != "" && req.Mode != ModeAutopilot && req.Mode != ModeComposer:
		return fmt.Errorf("policy request for %s has unknown mode %q", req.Tool, req.Mode)
	case math.IsNaN(req.CostUSD) || math.IsInf(req.CostUSD, 0) || req.CostUSD < 0:
		return fmt.Errorf("policy request for %s has invalid cost_usd %v", req.Tool, req.CostUSD)
	}
	return nil
}

func denyCode(source string) apperr.Code {
	switch source {
	case SourceHard:
		return apperr.PolicyHardRule
	case SourceCompat:
		return apperr.PolicyBlocked
	}
	return apperr.PolicyUserRule
}

func (r *compiledRule) matches(id Identity, mode string, now time.Time) bool {
	c := &r.Conditions
	if len(c.Tools) > 0 && !slices.Contains(c.Tools, id.Tool) {
		return false
	}
	if len(c.Categories) > 0 && !slices.Contains(c.Categories, id.Category) {
		return false
	}
	if len(c.Modes) > 0 && !slices.Contains(c.Modes, mode) {
		return false
	}
	if c.Schedule != nil && !r.inSchedule(now) {
		return false
	}
	return true
}

func (r *compiledRule) inSchedule(now time.Time) bool {
	s := r.Conditions.Schedule
	t := now.In(r.loc)
	h, day := t.Hour(), t.Weekday()
	switch {
	case s.StartHour < s.EndHour:
		if h < s.StartHour || h >= s.EndHour {
			return false
		}
	case h >= s.StartHour:
	case h < s.EndHour:
		// Early hours of a wrapping window belong to the previous day's night.
		day = (day + 6) % 7
	default:
		return false
	}
	return len(s.Days) == 0 || r.days[day]
}

// Applies reports whether the limit counts a call to tool in category cat.
func (l Limit) Applies(tool string, cat Category) bool {
	all := l.MatchValue == "" || l.MatchValue == "*"
	switch l.Dimension {
	case DimGlobal:
		return true
	case DimTool:
		return all || l.MatchValue == tool
	case DimCategory:
		return all || l.MatchValue == string(cat)
	case DimBudget:
		return all || l.MatchValue == tool || l.MatchValue == string(cat)
	}
	return false
}

// appliesTo reports whether the limit counts req under any of its
// identities or parts.
func (l Limit) appliesTo(req Request) bool {
	return l.countsCall(req) || l.partsOf(req) > 0
}

// countsCall reports whether the limit names the call itself: its tool, a
// tool it is equivalent to, or their category.
func (l Limit) countsCall(req Request) bool {
	if l.Applies(req.Tool, req.Category) {
		return true
	}
	for _, id := range req.Equivalent {
		if l.Applies(id.Tool, id.Category) {
			return true
		}
	}
	return false
}

// partsOf is how many of req's parts the limit names.
func (l Limit) partsOf(req Request) float64 {
	var n float64
	for _, p := range req.Parts {
		if p.Count > 0 && l.Dimension != DimGlobal && l.Applies(p.Tool, p.Category) {
			n += float64(p.Count)
		}
	}
	return n
}

// amount is what a call adds to the limit: its cost for budgets; one call
// for a limit that names the call itself; otherwise the parts it names
// (a limit on x_post_tweet counts a thread's first post, one on
// x_reply_to_tweet the posts after it, one on the write category all of
// them), so a tool's limit counts what is posted, however it is posted.
func (l Limit) amount(req Request) float64 {
	switch {
	case l.Dimension == DimBudget:
		return req.CostUSD
	case l.countsCall(req):
		return 1
	}
	return l.partsOf(req)
}

func (l Limit) period() time.Duration { return time.Duration(l.PeriodSeconds) * time.Second }

// window returns the use and window start in effect at now: a window that has
// elapsed counts as fresh, starting now. So does one starting in the future,
// which only a clock step back produces; otherwise it would block for as long
// as the step.
func (l Limit) window(used float64, start time.Time, ok bool, now time.Time) (float64, time.Time) {
	if !ok || start.After(now) || !now.Before(start.Add(l.period())) {
		return 0, now
	}
	return used, start
}

// checkLimits returns a denial when req does not fit a matching limit. When
// several are exhausted it reports the one that resets last, so the reset
// time shown is when the call can succeed.
func (e *Engine) checkLimits(req Request, usage func(string) (float64, time.Time, bool)) (Decision, bool) {
	var worst Decision
	denied := false
	for _, l := range e.limits {
		if (!e.enforce && l.Dimension != DimBudget) || !l.appliesTo(req) {
			continue
		}
		amt := l.amount(req)
		if amt == 0 {
			continue
		}
		var (
			used  float64
			start time.Time
			ok    bool
		)
		if usage != nil {
			used, start, ok = usage(l.Key)
		}
		used, start = l.window(used, start, ok, req.Now)
		if used+amt <= l.Max+limitEpsilon {
			continue
		}
		d := limitDenial(l, used, amt, start.Add(l.period()))
		if !denied || d.ResetAt.After(worst.ResetAt) {
			worst, denied = d, true
		}
	}
	return worst, denied
}

func limitDenial(l Limit, used, amt float64, reset time.Time) Decision {
	d := Decision{Outcome: Deny, RuleID: l.Key, ResetAt: reset, Source: l.Source}
	at := reset.UTC().Format(time.RFC3339)
	if l.Dimension == DimBudget {
		d.Code = apperr.PolicyBudget
		d.Reason = fmt.Sprintf("X spend budget %q: $%.4f of $%.4f used, this call is estimated at $%.4f; resets at %s",
			l.Key, used, l.Max, amt, at)
		return d
	}
	d.Code = apperr.PolicyRateLimited
	d.Reason = fmt.Sprintf("mutation limit %q reached: %g of %g in %s; resets at %s", l.Key, used, l.Max, l.period(), at)
	return d
}
