package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// NoInput is the input of tools that take no arguments.
type NoInput struct{}

// Capabilities is get_capabilities' data.
type Capabilities struct {
	// Tier and CanReply are the account's (see AccountSummary).
	Tier         string              `json:"tier"`
	CanReply     bool                `json:"can_reply"`
	Profile      string              `json:"profile"`
	Mode         string              `json:"mode"`
	ApprovalMode bool                `json:"approval_mode"`
	Services     map[string]Check    `json:"services"`
	ToolCount    int                 `json:"tool_count"`
	Categories   map[string][]string `json:"categories"`
	Mutations    []string            `json:"mutation_tools"`
	DirectTools  []DirectTool        `json:"direct_tools"`
	Guidance     []string            `json:"guidance"`
	// Account is the account a call that names none acts for; Accounts
	// are every account of the home, each with the X tools it can use now
	// (its own token, mode and policy decide).
	Account  string           `json:"account"`
	Accounts []AccountSummary `json:"accounts"`
}

// AccountSummary is one account in get_capabilities.
type AccountSummary struct {
	Name         string `json:"name"`
	Default      bool   `json:"default"`
	Mode         string `json:"mode"`
	ApprovalMode bool   `json:"approval_mode"`
	X            Check  `json:"x"`
	// Tier is the X subscription of the account's user as /2/users/me
	// tells it (Basic, Premium, PremiumPlus or None); empty when X cannot
	// be asked. X bills its API per use, so there is no API access tier to
	// report. CanReply says whether x_reply_to_tweet can be used now.
	Tier        string       `json:"tier"`
	CanReply    bool         `json:"can_reply"`
	Tools       []string     `json:"usable_tools"`
	DirectTools []DirectTool `json:"direct_tools"`
	// Access is the account's X API access level (x_api.access): what it
	// allows, the tools it refuses before X and the prices in force.
	Access xrules.Level `json:"x_access"`
}

// DirectTool says whether one X tool can be used right now, and why not.
type DirectTool struct {
	Name      string `json:"tool"`
	Mutation  bool   `json:"mutation"`
	Available bool   `json:"available"`
	// Reason says why the tool is unavailable, or how policy treats an
	// available mutation (routed to approval, dry run).
	Reason string `json:"reason,omitempty"`
	// Policy is the policy's current answer for a mutation: allow,
	// require_approval, dry_run or deny.
	Policy string `json:"policy,omitempty"`
}

func getCapabilities(ctx context.Context, c *Call, _ NoInput) (Result, error) {
	cfg := c.Deps.Cfg
	caps := Capabilities{
		Profile:      string(c.Surface.Profile),
		Mode:         cfg.Mode,
		ApprovalMode: cfg.EffectiveApprovalMode(),
		Services:     map[string]Check{},
		ToolCount:    len(c.Surface.Tools),
		Categories:   map[string][]string{},
		Mutations:    []string{},
	}
	for _, chk := range c.Deps.Health(ctx) {
		caps.Services[chk.Name] = chk
	}
	for _, t := range c.Surface.Tools {
		caps.Categories[t.Category] = append(caps.Categories[t.Category], t.Name)
		if t.Mutation {
			caps.Mutations = append(caps.Mutations, t.Name)
		}
	}
	caps.DirectTools = directTools(ctx, c, caps.Services["x"])
	caps.Guidance = guidance(c.Surface.Profile, caps)
	caps.Account = c.Deps.accountName()
	accs, err := accountSummaries(ctx, c, caps)
	if err != nil {
		return Result{}, err
	}
	caps.Accounts = accs
	for _, a := range accs {
		if a.Name == caps.Account {
			caps.Tier, caps.CanReply = a.Tier, a.CanReply
		}
	}
	if len(accs) > 1 {
		caps.Guidance = append(caps.Guidance, fmt.Sprintf("This server acts for %d accounts; X and approval tools take an optional account argument (default %s).", len(accs), caps.Account))
	}
	return Result{Data: caps}, nil
}

// accountSummaries describes every account: its mode and which direct X
// tools it can use now.
func accountSummaries(ctx context.Context, c *Call, caps Capabilities) ([]AccountSummary, error) {
	names := []string{c.Deps.accountName()}
	if c.Deps.Accounts != nil {
		names = c.Deps.Accounts()
	}
	out := make([]AccountSummary, 0, len(names))
	for _, n := range names {
		d, err := c.Deps.forAccount(n)
		if err != nil {
			return nil, err
		}
		x := caps.Services["x"]
		direct := caps.DirectTools
		if d != c.Deps {
			if d.XHealth != nil {
				x = d.XHealth(ctx)
			}
			direct = directTools(ctx, &Call{Deps: d, Req: c.Req, Surface: c.Surface}, x)
		}
		usable := []string{}
		for _, t := range direct {
			if t.Available {
				usable = append(usable, t.Name)
			}
		}
		tier := ""
		if d.XSubscription != nil && x.Status == "ok" {
			tier = d.XSubscription(ctx)
		}
		out = append(out, AccountSummary{Name: n, Default: n == c.Deps.accountName(), Mode: d.Cfg.Mode,
			ApprovalMode: d.Cfg.EffectiveApprovalMode(), X: x, Tier: tier, CanReply: slices.Contains(usable, "x_reply_to_tweet"),
			Tools: usable, DirectTools: direct, Access: xrules.Describe(xrules.Access(d.Cfg.XAPI.Access))})
	}
	return out, nil
}

// isDirectX reports the tools that map onto X API calls one to one: the
// typed X tools and the universal requests (not the workflows that use X,
// nor the approval tools).
func isDirectX(t *Tool) bool {
	return t.Needs.X && !t.Needs.LLM && t.Category != "approval" && (strings.HasPrefix(t.Name, "x_") || t.Name == "get_tweet_by_id")
}

// directTools reports every direct X tool of the registry: unavailable
// when this server does not carry it, when X is not usable, or when the
// policy denies it now.
func directTools(ctx context.Context, c *Call, x Check) []DirectTool {
	on := map[string]bool{}
	for _, t := range c.Surface.Tools {
		on[t.Name] = true
	}
	cfg := c.Deps.Cfg
	payPerUse := xrules.Access(cfg.XAPI.Access) == xrules.PayPerUse
	out := []DirectTool{}
	for _, t := range Registry() {
		if !isDirectX(t) {
			continue
		}
		d := DirectTool{Name: t.Name, Mutation: t.Mutation, Available: true}
		switch {
		case !on[t.Name] && !t.In(c.Surface.Profile):
			d.Available, d.Reason = false, fmt.Sprintf("not in the %s profile", c.Surface.Profile)
		case !on[t.Name]:
			d.Available, d.Reason = false, "not registered on this server (tools, exclude_tools or configuration)"
		case x.Status != "ok":
			d.Available, d.Reason = false, "X is not available: "+x.Message
		case payPerUse && slices.Contains(xrules.Unavailable(), t.Name):
			d.Available, d.Reason = false, "x_api.access is pay_per_use: X removed likes, follows and quote posts from self-serve API access; "+
				"the call is refused before X (x_feature_unavailable) with a link to do it on x.com by hand"
		}
		if d.Available && t.Mutation && c.Deps.Policy != nil {
			dec, err := c.Deps.Policy.Check(ctx, policy.Request{Tool: t.Name, Category: policy.Category(t.Category),
				Mode: cfg.Mode, ApprovalMode: cfg.EffectiveApprovalMode(), Now: c.Deps.Now()})
			switch {
			case err != nil:
				d.Reason = "policy could not be evaluated: " + err.Error()
			case dec.Outcome == policy.Deny:
				d.Available, d.Policy, d.Reason = false, string(dec.Outcome), fmt.Sprintf("denied by policy: %s (rule %s)", dec.Reason, dec.RuleID)
			case dec.Outcome != policy.Allow:
				d.Policy, d.Reason = string(dec.Outcome), fmt.Sprintf("%s: %s (rule %s)", dec.Outcome, dec.Reason, dec.RuleID)
			default:
				d.Policy = string(dec.Outcome)
			}
		}
		if d.Available && payPerUse && t.Name == "x_reply_to_tweet" {
			only := "x_api.access is pay_per_use: only to a post that summoned the account (@mentions it or quotes one of its posts); others are refused before X (reply_not_summoned)"
			if d.Reason != "" {
				only = d.Reason + "; " + only
			}
			d.Reason = only
		}
		out = append(out, d)
	}
	return out
}

func guidance(p Profile, caps Capabilities) []string {
	var g []string
	if !p.Mutating() {
		g = append(g, "This profile cannot change anything on X; use the workflow profile for mutations.")
	}
	if caps.ApprovalMode {
		g = append(g, "Approval mode is on: mutations not explicitly allowed by policy are queued for a human; check get_pending_count.")
	}
	if s := caps.Services["x"]; s.Status != "ok" {
		g = append(g, "X is not available ("+s.Message+"); X tools will return x_not_configured.")
	}
	if s := caps.Services["llm"]; s.Status != "ok" {
		g = append(g, "No working LLM ("+s.Message+"); content tools will return llm_not_configured, but you may pass your own text.")
	}
	return g
}

// HealthReport is health_check's data: statuses only, so agents can poll
// it cheaply; get_capabilities and `tuitbot doctor` give each service's
// reason and next step.
type HealthReport struct {
	Status   string            `json:"status"` // ok or degraded
	Services map[string]string `json:"services"`
}

func healthCheck(ctx context.Context, c *Call, _ NoInput) (Result, error) {
	rep := HealthReport{Status: "ok", Services: map[string]string{}}
	for _, ch := range c.Deps.Health(ctx) {
		rep.Services[ch.Name] = ch.Status
		if ch.Status != "ok" {
			rep.Status = "degraded"
		}
	}
	return Result{Data: rep}, nil
}

func getConfig(_ context.Context, c *Call, _ NoInput) (Result, error) {
	return Result{Data: config.Masked(c.Deps.Cfg)}, nil
}

// ValidationReport is validate_config's data.
type ValidationReport struct {
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors"`
	// Warnings name configuration that is valid but can never take effect
	// (a rule another rule always pre-empts, everything under
	// dry_run_mutations).
	Warnings []string `json:"warnings"`
}

func validateConfig(_ context.Context, c *Call, _ NoInput) (Result, error) {
	rep := ValidationReport{Valid: true, Errors: []string{}, Warnings: []string{}}
	cfg := *c.Deps.Cfg
	rep.Warnings = append(rep.Warnings, c.Deps.PolicyWarnings(&cfg)...)
	if err := c.Deps.ValidateConfig(&cfg); err != nil {
		rep.Valid = false
		if es, ok := config.AsErrors(err); ok {
			for _, e := range es {
				rep.Errors = append(rep.Errors, e.Error())
			}
		} else {
			rep.Errors = append(rep.Errors, err.Error())
		}
	}
	return Result{Data: rep}, nil
}

// ModeInfo is get_mode's data.
type ModeInfo struct {
	Mode         string `json:"mode"`
	ApprovalMode bool   `json:"approval_mode"`
	// OverriddenBy names the rules that decide calls before approval mode
	// does: calls they match run (allow) or answer a dry run without
	// waiting for a human. Empty when approval mode is off.
	OverriddenBy []string `json:"overridden_by"`
	// DryRunMutations is the hard dry-run rule: when true nothing reaches X
	// or the approval queue.
	DryRunMutations bool `json:"dry_run_mutations"`
}

func getMode(_ context.Context, c *Call, _ NoInput) (Result, error) {
	return Result{Data: ModeInfo{Mode: c.Deps.Cfg.Mode, ApprovalMode: c.Deps.Cfg.EffectiveApprovalMode(),
		OverriddenBy: c.Deps.ApprovalOverrides(), DryRunMutations: c.Deps.Cfg.MCPPolicy.DryRunMutations}}, nil
}

// metaTools are the config, health and capability tools.
func metaTools() []*Tool {
	return []*Tool{
		def(Spec{
			Name: "get_capabilities", Title: "Get capabilities", Category: "meta",
			Description: "Describe what this server can do right now: profile, mode, approval mode, which services (database, X, LLM) work, and the tools by category. " +
				"tier is the X subscription of the account's user, the subscription_type /2/users/me reports (Basic, Premium, PremiumPlus or None; empty when X cannot be asked): X bills its API per use, so there is no API access tier to report. " +
				"can_reply says whether x_reply_to_tweet can be used now (carried by this server, X reachable, not denied by policy). Each entry of accounts carries both for its account.",
			Profiles: apiProfiles, Hints: readLocal,
		}, getCapabilities),
		def(Spec{
			Name: "health_check", Title: "Health check", Category: "health",
			Description: "Check the configuration, database, token, LLM and X: one status each (ok, degraded, not_configured or error); degraded services are reported, not hidden. get_capabilities gives each service's reason and next step.",
			Profiles:    allProfiles, Hints: readLocal,
		}, healthCheck),
		def(Spec{
			Name: "get_config", Title: "Get configuration", Category: "config",
			Description: "Return the effective configuration with every secret masked.",
			Profiles:    allProfiles, Hints: readLocal,
		}, getConfig),
		def(Spec{
			Name: "validate_config", Title: "Validate configuration", Category: "config",
			Description: "Validate the effective configuration, including policy rules, and list every problem with the key it concerns, plus warnings for policy rules that can never apply.",
			Profiles:    allProfiles, Hints: readLocal, Errors: []apperr.Code{apperr.ConfigError},
		}, validateConfig),
		def(Spec{
			Name: "get_mode", Title: "Get operating mode", Category: "meta",
			Description: "Return the operating mode (autopilot or composer), the effective approval mode (always on in composer), the rules that decide calls before approval mode does (overridden_by), and whether dry_run_mutations is on.",
			Profiles:    apiProfiles, Hints: readLocal,
		}, getMode),
	}
}
