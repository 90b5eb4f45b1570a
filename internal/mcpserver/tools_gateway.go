package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/notify"
	"github.com/tuitbot/tuitbot/internal/policy"
)

// RecentMutationsInput filters get_recent_mutations. The filter is named
// after the field every row carries (tool_name); tool is its older
// spelling.
type RecentMutationsInput struct {
	ToolName string `json:"tool_name,omitempty" jsonschema:"only rows whose tool_name is this tool"`
	Tool     string `json:"tool,omitempty" jsonschema:"alias of tool_name"`
	Status   string `json:"status,omitempty" jsonschema:"pending, success, failure, unknown, interrupted or duplicate"`
	Since    string `json:"since,omitempty" jsonschema:"RFC 3339 time; only newer rows"`
	Limit    int    `json:"limit,omitempty" jsonschema:"1-100, default 20"`
}

// Limits declares the arguments' limits.
func (RecentMutationsInput) Limits() argcheck.Limits {
	return argcheck.Limits{"limit": argcheck.Between(1, 100)}
}

// CorrelationInput names one audit row.
type CorrelationInput struct {
	CorrelationID string `json:"correlation_id" jsonschema:"the correlation id from a mutation's meta"`
}

// ApprovalIDInput names one approval item.
type ApprovalIDInput struct {
	ID int64 `json:"id" jsonschema:"the approval_queue_id"`
}

// HandOffInput names one hand-off.
type HandOffInput struct {
	HandOffID int64 `json:"handoff_id" jsonschema:"the handoff_id of a refusal"`
	Check     bool  `json:"check,omitempty" jsonschema:"look on X now (owned reads, at most $0.06)"`
}

// Limits declares the arguments' limits.
func (HandOffInput) Limits() argcheck.Limits {
	return argcheck.Limits{"handoff_id": argcheck.Between(1, 1<<53)}
}

// ResolveInput resolves an unknown outcome.
type ResolveInput struct {
	CorrelationID string `json:"correlation_id" jsonschema:"the correlation id of the unknown or interrupted mutation"`
	Outcome       string `json:"outcome" jsonschema:"what X shows: happened or did_not_happen"`
}

// ReviewInput approves or rejects an item.
type ReviewInput struct {
	ID    int64  `json:"id" jsonschema:"the approval_queue_id"`
	Notes string `json:"notes,omitempty" jsonschema:"review notes stored on the item"`
	// ContentHash binds the decision to the content the caller read.
	ContentHash string `json:"content_hash,omitempty" jsonschema:"content_hash from list_pending_approvals or get_approval_item: decide only if the item is still exactly that (approval_changed otherwise)"`
}

// Limits bounds the content hash to a hash's length.
func (ReviewInput) Limits() argcheck.Limits {
	return argcheck.Limits{"content_hash": {MaxLength: 64}}
}

// decision is the MCP caller's decision on in's item.
func (in ReviewInput) decision(notes string) (gateway.Decision, error) {
	if in.ContentHash != "" && (len(in.ContentHash) != 64 || strings.Trim(in.ContentHash, "0123456789abcdef") != "") {
		return gateway.Decision{}, apperr.New(apperr.InvalidInput, "content_hash: %q is not a content hash (64 lowercase hex digits)", in.ContentHash)
	}
	return gateway.Decision{Reviewer: mcpReviewer, Notes: notes, Shown: in.ContentHash}, nil
}

// mcpReviewer is the reviewer an MCP caller's decision records: an
// agent's, which the gateway does not take for a person's.
const mcpReviewer = gateway.AgentReviewer

// MutationList is get_recent_mutations' data.
type MutationList struct {
	Mutations []gateway.AuditEntry `json:"mutations"`
	Count     int                  `json:"count"`
}

// ApprovalList is list_pending_approvals' data.
type ApprovalList struct {
	Items []gateway.ApprovalItem `json:"items"`
	Count int                    `json:"count"`
}

// PendingCount is get_pending_count's data.
type PendingCount struct {
	Pending int `json:"pending"`
}

// BatchApproval is approve_all's data.
type BatchApproval struct {
	Approved []int64          `json:"executed_ids"`
	Failed   []map[string]any `json:"failed"`
	MaxBatch int              `json:"max_batch"`
}

// PolicyStatus is get_policy_status' data.
type PolicyStatus struct {
	Mode                string                  `json:"mode"`
	ApprovalMode        bool                    `json:"approval_mode"`
	OverriddenBy        []string                `json:"overridden_by"`
	DryRunMutations     bool                    `json:"dry_run_mutations"`
	Warnings            []string                `json:"warnings"`
	EnforceForMutations bool                    `json:"enforce_for_mutations"`
	Template            string                  `json:"template,omitempty"`
	Rules               []policy.Rule           `json:"rules"`
	Limits              []policy.Limit          `json:"limits"`
	Counters            map[string]policy.Usage `json:"counters"`
}

// agentApproval gates the tools with which an agent decides what a human
// decides otherwise. The switch is the account's own: an account that
// forbids it is never decided for, whichever account the server runs for.
func agentApproval(c *config.Config) bool { return c != nil && c.MCPPolicy.AllowAgentApproval }

const (
	agentApprovalKey  = "mcp_policy.allow_agent_approval"
	agentApprovalHint = "a human decides for it (tuitbot approve, tuitbot audit resolve or tuitbot web)"
)

func gatewayTools() []*Tool {
	local := func(name, title, cat, desc string, out any, errs ...apperr.Code) Spec {
		return Spec{Name: name, Title: title, Category: cat, Description: desc, Needs: Needs{DB: true},
			Profiles: workflowOnly, Hints: readLocal, Errors: append(errs, apperr.DBError)}
	}
	approve := func(name, title, desc string, out any) Spec {
		return Spec{Name: name, Title: title, Category: "approval", Description: desc, Mutation: true,
			Needs: Needs{X: true, DB: true}, Profiles: workflowOnly, Hints: Hints{Destructive: true, OpenWorld: true},
			Errors:  mutationErrors(apperr.ApprovalNotPending, apperr.ApprovalChanged, apperr.NotFound),
			Enabled: agentApproval, EnabledBy: agentApprovalKey, DisabledHint: agentApprovalHint}
	}
	return []*Tool{
		def(local("get_recent_mutations", "Recent mutations", "analytics", "List recent mutation attempts from the audit trail, newest first.", MutationList{}),
			func(ctx context.Context, c *Call, in RecentMutationsInput) (Result, error) {
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				tool := in.ToolName
				switch {
				case tool == "":
					tool = in.Tool
				case in.Tool != "" && in.Tool != tool:
					return Result{}, apperr.New(apperr.InvalidInput, "tool: %q differs from tool_name %q; tool is an alias of tool_name, send one of them", in.Tool, tool)
				}
				f := gateway.AuditFilter{Tool: tool, Status: in.Status, Limit: in.Limit}
				if in.Since != "" {
					t, err := time.Parse(time.RFC3339, in.Since)
					if err != nil {
						return Result{}, apperr.New(apperr.InvalidInput, "since: %q is not an RFC 3339 time", in.Since)
					}
					f.Since = t
				}
				rows, err := g.Recent(ctx, f)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: MutationList{Mutations: rows, Count: len(rows)}}, nil
			}),
		def(local("get_mutation_detail", "Mutation detail", "analytics", "Return one audit row by correlation id: parameters summary, status, result, error and rollback guidance.", gateway.AuditEntry{}, apperr.NotFound),
			func(ctx context.Context, c *Call, in CorrelationInput) (Result, error) {
				if in.CorrelationID == "" {
					return Result{}, apperr.New(apperr.InvalidInput, "correlation_id: required")
				}
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				e, err := g.Detail(ctx, in.CorrelationID)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: e}, nil
			}),
		def(Spec{Name: "get_handoff", Title: "Hand-off", Category: "approval",
			Description: "Return a hand-off (a reply, like, follow or quote X's API refused, handed to a person to do on x.com): open, done_by_person (post_id or user_id) or not_done.",
			Needs:       Needs{DB: true}, Profiles: workflowOnly, Hints: Hints{ReadOnly: true, OpenWorld: true}, Errors: []apperr.Code{apperr.NotFound, apperr.DBError, apperr.XNotConfigured}},
			func(ctx context.Context, c *Call, in HandOffInput) (Result, error) {
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				if _, err := g.GetHandOff(ctx, in.HandOffID); err != nil {
					return Result{}, err
				}
				if in.Check && c.Deps.CheckHandOffs != nil {
					if _, err := c.Deps.CheckHandOffs(ctx); err != nil {
						return Result{}, err
					}
				}
				h, err := g.GetHandOff(ctx, in.HandOffID)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: h}, nil
			}),
		def(local("list_pending_approvals", "Pending approvals", "approval", "List the calls waiting for human approval, with the exact parameters that approval would run.", ApprovalList{}),
			func(ctx context.Context, c *Call, _ NoInput) (Result, error) {
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				items, err := g.Pending(ctx, 100)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: ApprovalList{Items: items, Count: len(items)}}, nil
			}),
		def(local("get_pending_count", "Pending approval count", "approval", "Count the calls waiting for human approval.", PendingCount{}),
			func(ctx context.Context, c *Call, _ NoInput) (Result, error) {
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				n, err := g.PendingCount(ctx)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: PendingCount{Pending: n}}, nil
			}),
		def(local("get_approval_item", "Approval item", "approval", "Return one approval item, including its outcome once decided.", gateway.ApprovalItem{}, apperr.NotFound),
			func(ctx context.Context, c *Call, in ApprovalIDInput) (Result, error) {
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				it, err := g.Item(ctx, in.ID)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: it}, nil
			}),
		def(local("get_notification_status", "Notification status", "approval",
			"Show the notification channels that tell a person an item waits (secrets masked, no links), with each one's last success, last error, and pending and failed deliveries. Read-only: no tool sends messages.",
			notify.Report{}),
			func(ctx context.Context, c *Call, _ NoInput) (Result, error) {
				if c.Deps.NotificationStatus == nil {
					return Result{Data: notify.Report{Channels: []notify.ChannelReport{}}}, nil
				}
				rep, err := c.Deps.NotificationStatus(ctx)
				if err != nil {
					return Result{}, apperr.Wrap(apperr.DBError, err, "read the notification outbox: %v", err)
				}
				return Result{Data: rep}, nil
			}),
		def(local("get_policy_status", "Policy status", "policy", "Show the effective policy rules (with where each came from), the limits and their live counters.", PolicyStatus{}, apperr.PolicyError),
			func(ctx context.Context, c *Call, _ NoInput) (Result, error) {
				ps, err := policyStatus(ctx, c.Deps)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: ps}, nil
			}),
		def(approve("approve_item", "Approve item", "Approve a queued call and run exactly it through the gateway. Only for an account whose mcp_policy.allow_agent_approval is true.", gateway.ApprovalItem{}),
			func(ctx context.Context, c *Call, in ReviewInput) (Result, error) {
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				d, err := in.decision(in.Notes)
				if err != nil {
					return Result{}, err
				}
				it, resp, err := g.ApproveWith(ctx, in.ID, d)
				r := Result{Data: it}
				r.Meta.CorrelationID, r.Meta.Rollback = resp.CorrelationID, resp.Rollback
				auditMeta(&r.Meta, resp)
				return r, err
			}),
		def(approve("reject_item", "Reject item", "Reject a queued call. Only for an account whose mcp_policy.allow_agent_approval is true.", gateway.ApprovalItem{}),
			func(ctx context.Context, c *Call, in ReviewInput) (Result, error) {
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				d, err := in.decision(in.Notes)
				if err != nil {
					return Result{}, err
				}
				it, err := g.RejectWith(ctx, in.ID, d)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: it}, nil
			}),
		def(Spec{Name: "resolve_mutation", Title: "Resolve unknown outcome", Category: "approval", Mutation: true,
			Description: "Resolve a mutation whose outcome is unknown or interrupted, after checking X: happened makes identical repeats answer as its duplicate, did_not_happen lets the call run again. Until then repeats are refused. Only for an account whose mcp_policy.allow_agent_approval is true.",
			Needs:       Needs{DB: true}, Profiles: workflowOnly, Hints: Hints{Destructive: true},
			Errors:  []apperr.Code{apperr.NotFound, apperr.ValidationError, apperr.PolicyHardRule, apperr.DBError},
			Enabled: agentApproval, EnabledBy: agentApprovalKey, DisabledHint: agentApprovalHint},
			func(ctx context.Context, c *Call, in ResolveInput) (Result, error) {
				if in.CorrelationID == "" {
					return Result{}, apperr.New(apperr.InvalidInput, "correlation_id: required")
				}
				if in.Outcome != gateway.ResolvedHappened && in.Outcome != gateway.ResolvedDidNotHappen {
					return Result{}, apperr.New(apperr.InvalidInput, "outcome: %q is not allowed; allowed values: happened, did_not_happen", in.Outcome)
				}
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				e, err := g.Resolve(ctx, in.CorrelationID, in.Outcome, gateway.ResolvedByMCP)
				if err != nil {
					return Result{}, err
				}
				return Result{Data: e}, nil
			}),
		def(approve("approve_all", "Approve all", "Approve and run the pending calls, oldest first, up to max_batch_approve. Only for an account whose mcp_policy.allow_agent_approval is true.", BatchApproval{}),
			func(ctx context.Context, c *Call, _ NoInput) (Result, error) {
				g, err := c.Deps.Gateway()
				if err != nil {
					return Result{}, err
				}
				max := c.Deps.Cfg.MaxBatchApprove
				items, err := g.Pending(ctx, max)
				if err != nil {
					return Result{}, err
				}
				out := BatchApproval{Approved: []int64{}, Failed: []map[string]any{}, MaxBatch: max}
				for _, it := range items {
					// Each as this listing read it: an item edited since is
					// not approved (approval_changed), whatever it became.
					d := gateway.Decision{Reviewer: mcpReviewer, Notes: "approve_all", Shown: it.ContentHash}
					if _, _, err := g.ApproveWith(ctx, it.ID, d); err != nil {
						e := apperr.As(err)
						out.Failed = append(out.Failed, map[string]any{"id": it.ID, "code": e.Code, "message": e.Message})
						continue
					}
					out.Approved = append(out.Approved, it.ID)
				}
				return Result{Data: out}, nil
			}),
	}
}
