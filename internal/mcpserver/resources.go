package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
)

// Resource URIs. They are read-only views of what the matching tools
// return, for clients that show resources to the user.
const (
	ResourcePolicy    = "tuitbot://policy"
	ResourceToday     = "tuitbot://today"
	ResourceApprovals = "tuitbot://approvals/pending"
)

// Resource is one read-only resource.
type Resource struct {
	URI, Name, Title, Description string
	Read                          func(ctx context.Context, d *Deps) (any, error)
}

// TodayCaps are the configured caps today's counts are held to.
type TodayCaps struct {
	RepliesPerDay       int     `json:"replies_per_day"`
	TweetsPerDay        int     `json:"tweets_per_day"`
	ThreadsPerWeek      int     `json:"threads_per_week"`
	MaxMutationsPerHour int     `json:"max_mutations_per_hour"`
	DailyBudgetUSD      float64 `json:"daily_budget_usd"`
}

// Today is the tuitbot://today resource: the caps, what today used of
// them and today's estimated spend (UTC day).
type Today struct {
	Mode         string                  `json:"mode"`
	ApprovalMode bool                    `json:"approval_mode"`
	Caps         TodayCaps               `json:"caps"`
	RepliesToday int                     `json:"replies_today"`
	XCallsToday  int                     `json:"x_calls_today"`
	XSpendUSD    float64                 `json:"x_spend_today_usd"`
	LLMSpendUSD  float64                 `json:"llm_spend_today_usd"`
	Counters     map[string]policy.Usage `json:"policy_counters"`
}

// Resources lists the resources.
func Resources() []*Resource {
	return []*Resource{
		{URI: ResourcePolicy, Name: "policy", Title: "Effective policy",
			Description: "The effective mutation policy: mode, approval mode, rules with their sources, limits and live counters (as get_policy_status).",
			Read:        func(ctx context.Context, d *Deps) (any, error) { return policyStatus(ctx, d) }},
		{URI: ResourceToday, Name: "today", Title: "Today's caps and spend",
			Description: "Today's caps, the replies sent against them, X calls and estimated X and LLM spend in USD (UTC day), and the policy counters.",
			Read:        today},
		{URI: ResourceApprovals, Name: "pending_approvals", Title: "Pending approvals",
			Description: "The calls waiting for human approval, with the exact parameters approval would run (as list_pending_approvals).",
			Read: func(ctx context.Context, d *Deps) (any, error) {
				g, err := d.Gateway()
				if err != nil {
					return nil, err
				}
				items, err := g.Pending(ctx, 100)
				if err != nil {
					return nil, err
				}
				return ApprovalList{Items: items, Count: len(items)}, nil
			}},
	}
}

// policyStatus is get_policy_status' data.
func policyStatus(ctx context.Context, a *Deps) (PolicyStatus, error) {
	if a.Policy == nil {
		return PolicyStatus{}, apperr.New(apperr.PolicyError, "the policy engine is unavailable (no database)")
	}
	snap, err := a.Policy.Snapshot(ctx)
	if err != nil {
		return PolicyStatus{}, apperr.Wrap(apperr.DBError, err, "read policy counters: %v", err)
	}
	var overridden []string
	if a.ApprovalOverrides != nil {
		overridden = a.ApprovalOverrides()
	}
	return PolicyStatus{
		Mode: a.Cfg.Mode, ApprovalMode: a.Cfg.EffectiveApprovalMode(), OverriddenBy: overridden,
		DryRunMutations: a.Cfg.MCPPolicy.DryRunMutations, Warnings: append([]string{}, a.Policy.Warnings()...),
		EnforceForMutations: a.Cfg.MCPPolicy.EnforceForMutations, Template: a.Cfg.MCPPolicy.Template,
		Rules: a.Policy.Rules(), Limits: a.Policy.Limits(), Counters: snap,
	}, nil
}

func today(ctx context.Context, d *Deps) (any, error) {
	s, err := d.Workflow()
	if err != nil {
		return nil, err
	}
	c := d.Cfg
	t := Today{Mode: c.Mode, ApprovalMode: c.EffectiveApprovalMode(), Counters: map[string]policy.Usage{},
		Caps: TodayCaps{RepliesPerDay: c.Limits.MaxRepliesPerDay, TweetsPerDay: c.Limits.MaxTweetsPerDay,
			ThreadsPerWeek: c.Limits.MaxThreadsPerWeek, MaxMutationsPerHour: c.MCPPolicy.MaxMutationsPerHour,
			DailyBudgetUSD: c.MCPPolicy.DailyBudgetUSD}}
	if t.RepliesToday, err = s.ReplyCountToday(ctx); err != nil {
		return nil, err
	}
	x, err := s.XUsage(ctx, 1)
	if err != nil {
		return nil, err
	}
	t.XCallsToday, t.XSpendUSD = x.Calls, x.TotalUSD
	l, err := s.LLMUsage(ctx, 1)
	if err != nil {
		return nil, err
	}
	t.LLMSpendUSD = l.TotalUSD
	if d.Policy != nil {
		if t.Counters, err = d.Policy.Snapshot(ctx); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read policy counters: %v", err)
		}
	}
	return t, nil
}

// addResources registers the resources on a server that has the
// database-backed services (the workflow profile).
func addResources(srv *mcp.Server, d *Deps) []string {
	var added []string
	for _, r := range Resources() {
		srv.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: "application/json"},
			resourceHandler(d, r))
		added = append(added, r.URI)
	}
	return added
}

func resourceHandler(d *Deps, r *Resource) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		v, err := r.Read(ctx, d)
		if err != nil {
			e := apperr.As(err)
			return nil, fmt.Errorf("%s: %s: %s", r.URI, e.Code, e.Message)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: encode: %w", r.URI, err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.URI, MIMEType: "application/json", Text: string(b)}}}, nil
	}
}
