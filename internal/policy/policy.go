// Package policy decides what the mutation gateway may do with a tool call:
// allow it, deny it, route it to human approval, or answer with a dry run.
//
// The decision itself (Engine.Decide) is pure: it reads only its arguments.
// Windowed limits (call counts and estimated X spend) are kept by the store
// side (internal/store/counters) and reached through the CounterReader and
// CounterTx interfaces, so this package runs no SQL. The gateway reserves a
// call's charge in the same write transaction that decides it
// (Engine.ReserveTx), so concurrent callers cannot together pass a limit,
// and releases it when the call provably did not take effect.
package policy

import (
	"errors"
	"fmt"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// Category groups tools for rules and limits. The tool registry assigns it;
// the policy never derives a category from a tool name.
type Category string

// The categories the registry uses.
const (
	CatRead   Category = "read"
	CatWrite  Category = "write"
	CatEngage Category = "engage"
	CatMedia  Category = "media"
	CatThread Category = "thread"
	CatDelete Category = "delete"
	// CatDM is direct messages: private, to one person, and never allowed
	// without approval by a rule that does not name the tool.
	CatDM        Category = "dm"
	CatUniversal Category = "universal_request"
	CatContent   Category = "content"
	CatApproval  Category = "approval"
)

// Categories returns every known category.
func Categories() []Category {
	return []Category{CatRead, CatWrite, CatEngage, CatMedia, CatThread, CatDelete, CatDM, CatUniversal, CatContent, CatApproval}
}

// ValidCategory reports whether c is one of Categories.
func ValidCategory(c Category) bool {
	for _, k := range Categories() {
		if k == c {
			return true
		}
	}
	return false
}

// Operating modes a request can run in.
const (
	ModeAutopilot = "autopilot"
	ModeComposer  = "composer"
)

// Action types.
const (
	ActionAllow           = "allow"
	ActionDeny            = "deny"
	ActionRequireApproval = "require_approval"
	ActionDryRun          = "dry_run"
)

// Limit dimensions.
const (
	DimGlobal   = "global"
	DimTool     = "tool"
	DimCategory = "category"
	// DimBudget limits the estimated X spend in USD rather than a call count.
	DimBudget = "budget"
)

// Rule sources, as reported in Rule.Source and Decision.Source.
const (
	SourceHard    = "hard"
	SourceUser    = "user"
	SourceCompat  = "compat"
	SourceBudget  = "budget"
	SourceMode    = "mode"
	SourceDefault = "default"
	// Template rules and limits use "template:<name>".
	sourceTemplatePrefix = "template:"
)

// IDs of the built-in rules and of the implicit approval-mode decision.
const (
	// RuleHardDryRun is dry_run_mutations: first of all rules, so a dry run
	// never reaches X and never enters the approval queue.
	RuleHardDryRun           = "hard:dry_run"
	RuleHardDeleteApproval   = "hard:delete_approval"
	RuleHardComposerApproval = "hard:composer_approval"
	RuleApprovalMode         = "mode:approval_mode"
	// RuleUnknownWrite is the conservative default for a universal request
	// no typed tool covers.
	RuleUnknownWrite = "default:unknown_write"
	// RuleHardUnlistedWrite sends a universal write to a route the
	// endpoint table does not list to a person, whatever the rules say.
	RuleHardUnlistedWrite = "hard:unlisted_write"
	// RuleApprovalUnlessNamed is the default for a tool in
	// Config.ApprovalUnlessNamed that no rule naming it allowed.
	RuleApprovalUnlessNamed = "default:approval_unless_named"
)

// Keys of the limits derived from top-level config values.
const (
	LimitKeyMaxMutationsPerHour = "compat:max_mutations_per_hour"
	LimitKeyDailyBudget         = "budget:daily_usd"
	// LimitKeyMaxDMsPerDay is limits.max_dms_per_day, named as the
	// configuration file spells it.
	LimitKeyMaxDMsPerDay = "limits.max_dms_per_day"
)

// Template names.
const (
	TemplateSafeDefault      = "safe_default"
	TemplateGrowthAggressive = "growth_aggressive"
	TemplateAgencyMode       = "agency_mode"
)

// Templates returns the names of the built-in templates.
func Templates() []string {
	return []string{TemplateSafeDefault, TemplateGrowthAggressive, TemplateAgencyMode}
}

// Priority bands. Hard rules own 0–99 so that nothing configurable can run
// before them.
const (
	HardBandMax         = 99
	MinUserPriority     = 100
	compatPriorityStart = 300
	// blockedPriorityStart places blocked_tools denials inside the built-in
	// band (below MinUserPriority), so no allow rule can lift them.
	blockedPriorityStart = 50
)

// Action is what a matching rule does.
type Action struct {
	Type   string `json:"type"` // allow | deny | require_approval | dry_run
	Reason string `json:"reason,omitempty"`
}

// Schedule limits a rule to an hour window on some days.
//
// The window is [StartHour, EndHour) in local time of Timezone (IANA name,
// empty means UTC). StartHour > EndHour wraps past midnight. Days are
// lowercase three-letter names ("mon" … "sun"); empty means every day. For a
// wrapping window the hours after midnight belong to the night that started
// the day before, so "fri 22–06" also covers Saturday 02:00.
type Schedule struct {
	StartHour int      `json:"start_hour"`
	EndHour   int      `json:"end_hour"`
	Timezone  string   `json:"timezone,omitempty"`
	Days      []string `json:"days,omitempty"`
}

// Conditions select requests. Dimensions are ANDed; values within one
// dimension are ORed; an empty list matches anything.
type Conditions struct {
	Tools      []string   `json:"tools,omitempty"`
	Categories []Category `json:"categories,omitempty"`
	Modes      []string   `json:"modes,omitempty"`
	Schedule   *Schedule  `json:"schedule_window,omitempty"`
}

// Rule is one policy rule.
type Rule struct {
	ID         string     `json:"id"`
	Priority   int        `json:"priority"`
	Label      string     `json:"label,omitempty"`
	Enabled    bool       `json:"enabled"`
	Conditions Conditions `json:"conditions"`
	Action     Action     `json:"action"`
	// Source is set by the engine: hard | template:<name> | user | compat.
	Source string `json:"source"`
}

// Limit is a windowed cap. For DimBudget, Max is USD; otherwise it is a
// number of executed calls.
type Limit struct {
	Key       string `json:"key"`
	Dimension string `json:"dimension"` // global | tool | category | budget
	// MatchValue selects the calls the limit counts: "" or "*" matches all;
	// otherwise a tool name (tool), a category (category), or either
	// (budget). Global limits always match everything.
	MatchValue    string  `json:"match_value"`
	Max           float64 `json:"max"`
	PeriodSeconds int64   `json:"period_seconds"`
	// Source is set by the engine: template:<name> | compat | user | budget.
	Source string `json:"source"`
}

// Config is the policy part of the product configuration. Start from
// DefaultConfig: the zero value has enforcement off.
type Config struct {
	// EnforceForMutations switches template, user and compat rules and the
	// count limits. Hard rules, approval mode and the spend budget apply
	// regardless.
	EnforceForMutations bool
	RequireApprovalFor  []string
	// RequireApprovalForSet says the user wrote RequireApprovalFor. Only
	// then does a tool in both it and BlockedTools conflict; a default list
	// simply loses the blocked tools, because blocked is the stricter wish.
	RequireApprovalForSet bool
	BlockedTools          []string
	// DryRunMutations is a hard rule: it outranks every other rule.
	DryRunMutations bool
	// MaxMutationsPerHour is a global hourly cap; 0 means no such cap.
	MaxMutationsPerHour int
	Template            string
	Rules               []Rule
	RateLimits          []Limit
	// DailyBudgetUSD caps the estimated X spend per 24 h; 0 means no cap.
	DailyBudgetUSD float64
	// ApprovalUnlessNamed are tools that need approval unless the rule that
	// allows them names them in its tools: an allow by category, by mode or
	// for everything leaves them to approval, as do approval mode off and
	// enforcement off. Direct messages are such a tool. The tool registry
	// supplies the list; it is not a setting.
	ApprovalUnlessNamed []string
	// MaxDMsPerDay caps the direct messages (category dm) sent per 24 h
	// when enforcement is on; nil means no cap, 0 that none may be sent.
	MaxDMsPerDay *int
}

// DefaultConfig is the configuration used when none is given.
func DefaultConfig() Config {
	return Config{
		EnforceForMutations: true,
		RequireApprovalFor: []string{
			"x_post_tweet", "x_reply_to_tweet", "x_quote_tweet",
			"x_post_thread", "x_follow_user", "x_like_tweet", "x_edit_tweet",
		},
		BlockedTools:        []string{},
		MaxMutationsPerHour: 20,
	}
}

// Identity is a name under which rules and limits see a call.
type Identity struct {
	Tool     string
	Category Category
}

// Part is an effect a call is made of, and how many times it has it.
type Part struct {
	Identity
	Count int
}

// Request describes one mutation for a decision.
type Request struct {
	Tool     string
	Category Category
	// Equivalent are further identities of the call: a universal request is
	// also the typed tool it does the work of. Rules are evaluated for each
	// identity and the strictest outcome wins (deny, then dry_run, then
	// require_approval, then allow); a limit that applies under any identity
	// is charged once.
	Equivalent []Identity
	// Parts are what the call posts when that is more than one effect of
	// another tool: a thread's first post is an x_post_tweet and each later
	// post an x_reply_to_tweet. Rules see only the call's own identities;
	// a count limit that names none of those but names a part's tool or
	// category counts the part, Count times (see Limit.amount).
	Parts []Part
	// UnknownWrite marks a universal write no typed tool covers. It needs
	// approval unless the rule that decides it names Tool explicitly.
	UnknownWrite bool
	// UnlistedWrite marks a universal write to a route the endpoint table
	// does not list at all: what it does on X is unknown (a message, a
	// delete?), so no rule can allow it. It needs approval like a delete;
	// deny and dry-run rules still apply, and an approved replay runs.
	UnlistedWrite bool
	// Mode is autopilot or composer; empty means autopilot.
	Mode string
	// ApprovalMode is the configured approval_mode flag. Composer mode turns
	// effective approval mode on regardless.
	ApprovalMode bool
	// Now is the decision time (schedules, windows). Check fills it from the
	// counters' clock when zero; Decide requires it.
	Now time.Time
	// CostUSD is the estimated X spend of the call, charged to budget limits.
	CostUSD float64
	// BypassApproval marks the replay of an approved item: approval outcomes
	// are skipped; deny, dry-run and limits still apply.
	BypassApproval bool
}

// Outcome is the gateway's next step.
type Outcome string

// Outcomes.
const (
	Allow           Outcome = "allow"
	Deny            Outcome = "deny"
	RequireApproval Outcome = "require_approval"
	DryRun          Outcome = "dry_run"
)

// Decision is the result of evaluating a request.
type Decision struct {
	Outcome Outcome
	// RuleID is the rule or limit key that decided; empty when nothing
	// matched and the call is allowed by default.
	RuleID string
	Reason string
	// Code is set for Deny.
	Code apperr.Code
	// ResetAt is set for limit denials: when the offending window ends.
	ResetAt time.Time
	// Source is the source of the deciding rule or limit.
	Source string
}

// Err turns a denial into the product error carried by the envelope; it is
// nil for other outcomes. Limit denials carry rate_limit_reset.
func (d Decision) Err() *apperr.Error {
	if d.Outcome != Deny {
		return nil
	}
	e := apperr.New(d.Code, "%s", d.Reason)
	if d.RuleID != "" {
		e.With("rule_id", d.RuleID)
	}
	if !d.ResetAt.IsZero() {
		e.With("rate_limit_reset", d.ResetAt.UTC().Format(time.RFC3339))
	}
	return e
}

// ErrUnknownTool is wrapped by NormalizeToolName for names the registry does
// not know.
var ErrUnknownTool = errors.New("unknown tool")

// NormalizeToolName maps a configured tool name to its MCP name: the name
// itself when known, else "x_"+name when that is known (the seeds' unprefixed
// aliases), else an error naming the tool.
func NormalizeToolName(name string, known func(string) bool) (string, error) {
	if name == "" {
		return "", fmt.Errorf("empty tool name: %w", ErrUnknownTool)
	}
	if known == nil {
		return "", errors.New("no tool registry to check tool names against")
	}
	if known(name) {
		return name, nil
	}
	if known("x_" + name) {
		return "x_" + name, nil
	}
	return "", fmt.Errorf("%w %q", ErrUnknownTool, name)
}
