package gateway

import (
	"context"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// AgentReviewer is the reviewer recorded when an agent decides an item
// (mcp_policy.allow_agent_approval): software, not a person.
const AgentReviewer = "mcp_agent"

// agentMayApprove refuses an agent's approval of an item that only a
// person may decide under X's automation rules (a like or a follow an
// agent asked for), before the item is claimed, so that it stays pending
// for a person. No setting lets an agent decide it.
func (g *Gateway) agentMayApprove(ctx context.Context, id int64, d Decision) error {
	if d.Reviewer != AgentReviewer || g.opts.Platform == nil {
		return nil
	}
	it, err := g.Item(ctx, id)
	if err != nil {
		return err
	}
	act, ok := g.actions[it.Tool]
	if !ok {
		// The replay says what is wrong with an item of no known tool.
		return nil
	}
	pc := platformCall(act, it.Params, it.EquivalentTool)
	pc.Caller = it.Caller
	return agentDecided(id, xrules.PersonOnly(pc))
}

// agentDecided is the refusal of an agent's approval of item id, which
// route sends to a person alone; nil when route is nil.
func agentDecided(id int64, route *xrules.ToPerson) error {
	if route == nil {
		return nil
	}
	return apperr.New(apperr.PolicyHardRule,
		"approval item %d: %s; an agent may not approve it, whatever mcp_policy.allow_agent_approval says; it stays pending", id, route.Reason).
		With("rule", route.RuleID()).
		WithHints(apperr.Hint{Do: "a person approves or rejects it: tuitbot approve, tuitbot web, or a notification's link"})
}
