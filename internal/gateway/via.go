package gateway

import (
	"context"
	"database/sql"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
)

// Some mutation tools reach X only through other gateway calls:
// compose_tweet stores a draft and may queue its post, and
// propose_and_queue_replies sends one x_reply_to_tweet per item. Policy
// configuration may still name them (blocked_tools, rules, limits), so they
// are admitted here first, and the decision rides along on the inner calls
// (Call.Via), where the stricter of it and the inner tool's own decision
// applies.

// Admit evaluates the policy for a tool that acts through other gateway
// calls and, when it is allowed, takes its charge from the limits that name
// it at once (deciding and charging under one write lock, as for every
// call). A denial is returned as the error the gateway gives for any
// denied call. The approval-mode default is not a rule about the tool
// itself: it is reported as Allow, since the inner calls meet approval
// mode on their own, and escalating it would override rules that allow
// the inner tool.
func (g *Gateway) Admit(ctx context.Context, tool string, cat policy.Category) (policy.Decision, error) {
	mode, approval := g.opts.Mode()
	req := policy.Request{Tool: tool, Category: cat, Mode: mode, ApprovalMode: approval, Now: g.opts.Now()}
	var dec policy.Decision
	err := g.opts.DB.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		dec, _, err = g.opts.Policy.Reserve(ctx, tx, req)
		return err
	})
	if err != nil {
		return policy.Decision{}, apperr.Wrap(apperr.PolicyError, err, "policy evaluation failed: %v", err)
	}
	switch dec.Outcome {
	case policy.Deny:
		return dec, denied(tool, dec)
	case policy.RequireApproval:
		if dec.Source == policy.SourceMode {
			return policy.Decision{Outcome: policy.Allow, Reason: dec.Reason, Source: dec.Source}, nil
		}
	case policy.Allow, policy.DryRun:
	default:
		return dec, apperr.New(apperr.PolicyError, "unknown policy outcome %q", dec.Outcome)
	}
	return dec, nil
}

// denied is the error of a denied call.
func denied(tool string, dec policy.Decision) *apperr.Error {
	e := apperr.New(dec.Code, "policy denied %s: %s (rule %s)", tool, dec.Reason, dec.RuleID).
		With("policy_decision", "denied").With("matched_rule_id", dec.RuleID)
	if !dec.ResetAt.IsZero() {
		e.With("rate_limit_reset", dec.ResetAt.UTC().Format(time.RFC3339))
	}
	return e
}

// outcomeRank orders outcomes from most to least restrictive: a denial
// stops everything, a dry run never reaches X or the queue, approval waits
// for a human, allow runs.
func outcomeRank(o policy.Outcome) int {
	switch o {
	case policy.Deny:
		return 3
	case policy.DryRun:
		return 2
	case policy.RequireApproval:
		return 1
	}
	return 0
}

// stricter returns the more restrictive of the call's own decision and the
// decision of the tool it came through. An approved replay has passed the
// human already, so only a via denial or dry run can still stop it.
func stricter(own policy.Decision, via *policy.Decision, replay bool) policy.Decision {
	if via == nil || (replay && via.Outcome == policy.RequireApproval) {
		return own
	}
	if outcomeRank(via.Outcome) > outcomeRank(own.Outcome) {
		return *via
	}
	return own
}
