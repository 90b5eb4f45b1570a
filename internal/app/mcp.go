package app

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/counters"
)

// MCPDeps gives the MCP tools the services they use.
func (a *App) MCPDeps() mcpserver.Deps {
	d := mcpserver.Deps{
		Cfg: a.Cfg, Log: a.Log, Now: a.Now,
		Gateway: a.RequireGateway, X: a.XClient, Workflow: a.Workflow, Discovery: a.Discovery,
		Composer: a.Composer, Replier: a.Replier, Generator: a.Generator, LLM: a.LLM, Profile: a.Profile,
		Keywords: a.Keywords, ScoringWeights: a.ScoringWeights,
		Health: func(ctx context.Context) []mcpserver.Check {
			var out []mcpserver.Check
			for _, c := range a.Health(ctx) {
				out = append(out, mcpserver.Check(c))
			}
			return out
		},
		ApprovalOverrides:  a.ApprovalOverrides,
		ValidateConfig:     ValidateAll,
		PolicyWarnings:     PolicyWarnings,
		AccountName:        a.Account,
		Accounts:           a.Accounts,
		XHealth:            func(ctx context.Context) mcpserver.Check { return mcpserver.Check(a.xCheck(ctx)) },
		XSubscription:      a.xSubscription,
		PostLimit:          a.PostLimit(),
		ObserveTool:        a.Metrics.ObserveTool,
		NotificationStatus: a.NotificationStatus,
		ExportData:         a.ExportToFile,
		RecordOptOut:       a.recordOptOut,
		CheckHandOffs:      func(ctx context.Context) ([]gateway.HandOff, error) { return a.CheckHandOffs(ctx, true) },
	}
	if len(a.Accounts()) > 1 {
		d.Account = func(name string) (*mcpserver.Deps, error) {
			v, err := a.ForAccount(name)
			if err != nil {
				return nil, err
			}
			ad := v.MCPDeps()
			return &ad, nil
		}
	}
	// Policy stays a nil interface without an engine, so the tools see
	// "no policy" rather than a value that fails on every call.
	if a.Policy != nil && a.Counters != nil {
		d.Policy = livePolicy{a.Policy, a.Counters}
	}
	return d
}

// MCPServer builds an MCP server on a's services, reporting this build's
// version unless o names one.
func (a *App) MCPServer(o mcpserver.Options) (*mcp.Server, []*mcpserver.Tool, error) {
	if o.Version == "" {
		o.Version = Version
	}
	return mcpserver.New(a.MCPDeps(), o)
}

// StartingMCPServer builds, from the configuration alone, the server
// MCPServer would build on the services of account, so that it can answer
// initialize and tools/list while New starts them; hand them over with
// Starting.Ready(a.MCPDeps()) from begin (see mcpserver.NewStarting).
// Call it before New: New adjusts cfg.
func StartingMCPServer(cfg *config.Config, account string, log *slog.Logger, o mcpserver.Options, begin func()) (*mcp.Server, []*mcpserver.Tool, *mcpserver.Starting, error) {
	if o.Version == "" {
		o.Version = Version
	}
	sel, err := cfg.SelectAccount(account)
	if err != nil {
		return nil, nil, nil, err
	}
	own, err := cfg.ForAccount(sel)
	if err != nil {
		return nil, nil, nil, err
	}
	// The config-gated tools are listed when any account the server acts
	// for enables them, as MCPDeps' Account would tell New.
	o.AccountConfigs = []*config.Config{}
	for _, name := range cfg.AccountNames() {
		if name == sel {
			continue
		}
		ac, err := cfg.ForAccount(name)
		if err != nil {
			return nil, nil, nil, err
		}
		o.AccountConfigs = append(o.AccountConfigs, ac)
	}
	return mcpserver.NewStarting(mcpserver.Deps{Cfg: own, Log: log}, o, begin)
}

// livePolicy joins the engine with its stored counters for the tools.
type livePolicy struct {
	*policy.Engine
	ctr *counters.Store
}

func (p livePolicy) Check(ctx context.Context, req policy.Request) (policy.Decision, error) {
	return p.Engine.Check(ctx, p.ctr, req)
}

func (p livePolicy) Snapshot(ctx context.Context) (map[string]policy.Usage, error) {
	return p.ctr.Snapshot(ctx)
}
