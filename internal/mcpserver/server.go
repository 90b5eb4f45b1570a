package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// MaxArgumentBytes caps one call's arguments. The largest legitimate input
// is a universal request body (1 MiB).
const MaxArgumentBytes = 2 << 20

// Options select the tool surface.
type Options struct {
	// Registry is the rows to select from, for a caller that has built
	// them already (to check a selection before serving it); nil builds
	// them. Each build makes every row anew, so they are built once.
	Registry []*Tool
	Profile  Profile
	// Toolsets and Tools select what is listed (both empty = the whole
	// profile); ExcludeTools are never served; exclusions win. Nothing
	// here widens the profile.
	Toolsets     []string
	Tools        []string
	ExcludeTools []string
	// Dynamic says when a session finds toolsets on demand (see Dynamic).
	Dynamic Dynamic
	// Config decides config-gated tools; nil means the defaults.
	Config *config.Config
	// AccountConfigs are the configurations of the other accounts the
	// server acts for (through the account argument): a config-gated tool
	// is registered when Config or any of them enables it. New fills them
	// from the services when they are nil.
	AccountConfigs []*config.Config
	// Version is the product version the server and the manifest report.
	Version string
}

// Select returns the registry rows the options list, in registry order.
// Unknown tool or toolset names are errors: a typo must not silently
// widen or narrow the surface. The tools that enable toolsets on demand
// are not among them (see build).
func Select(reg []*Tool, o Options) ([]*Tool, error) {
	return selectTools(reg, o, false)
}

// selectTools is Select; reachable returns instead every tool a session
// may enable: the profile without the excluded tools, and the tools that
// enable them.
func selectTools(reg []*Tool, o Options, reachable bool) ([]*Tool, error) {
	in, err := Selection{Toolsets: o.Toolsets, Tools: o.Tools, ExcludeTools: o.ExcludeTools}.names()
	if err != nil {
		return nil, err
	}
	var out []*Tool
	for _, t := range reg {
		if !t.In(o.Profile) {
			continue
		}
		if t.Mutation && !o.Profile.Mutating() {
			// The registry must never put a mutation into a read-only
			// profile; refuse to start rather than expose it.
			return nil, fmt.Errorf("registry error: mutation tool %s listed in profile %s", t.Name, o.Profile)
		}
		if t.OnDemand {
			if !reachable {
				continue
			}
		} else if !reachable && in != nil && !in[t.Name] {
			continue
		}
		if slices.Contains(o.ExcludeTools, t.Name) {
			continue
		}
		if t.Enabled != nil && !enabledForAny(t, o) {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// enabledForAny reports whether some account the server acts for enables
// the config-gated tool t.
func enabledForAny(t *Tool, o Options) bool {
	cfg := o.Config
	if cfg == nil {
		d := config.Default()
		cfg = &d
	}
	if t.Enabled(cfg) {
		return true
	}
	return slices.ContainsFunc(o.AccountConfigs, t.Enabled)
}

// disabledFor is the refusal of a call of the config-gated tool t for the
// account of d, which does not enable it.
func disabledFor(t *Tool, d *Deps) error {
	key := t.EnabledBy
	if name := d.accountName(); name != config.DefaultAccountName {
		key = fmt.Sprintf("accounts.%s.%s (or, when the account leaves it out, the top-level %s)", name, t.EnabledBy, t.EnabledBy)
	}
	msg := fmt.Sprintf("%s may not act for account %s: %s is off for it", t.Name, d.accountName(), key)
	if t.DisabledHint != "" {
		msg += "; " + t.DisabledHint
	}
	return apperr.New(apperr.PolicyHardRule, "%s", msg)
}

// accountConfigs returns the configurations of the accounts other than
// d's own that d's server acts for.
func accountConfigs(d *Deps) ([]*config.Config, error) {
	if d.Accounts == nil || d.Account == nil {
		return nil, nil
	}
	var out []*config.Config
	for _, name := range d.Accounts() {
		ad, err := d.forAccount(name)
		if err != nil {
			return nil, fmt.Errorf("account %s: %w", name, err)
		}
		if ad != d {
			out = append(out, ad.Cfg)
		}
	}
	return out, nil
}

// New builds an MCP server on d's services with the selected tools.
func New(d Deps, o Options) (*mcp.Server, []*Tool, error) {
	if d.Cfg == nil {
		return nil, nil, errors.New("mcpserver: Deps.Cfg is required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	a := &d
	if o.AccountConfigs == nil {
		accs, err := accountConfigs(a)
		if err != nil {
			return nil, nil, err
		}
		o.AccountConfigs = accs
	}
	return build(a, o)
}

// build registers the selected tools on a server whose handlers read a's
// services when they are called, never before. The SDK is not handed the
// tools one by one: it marshals and decodes each tool it is given (with a
// 32 KB buffer per decode), which was a third of a spawned server's work
// before its first answer. The sessions' tools are listed and called
// through surfaces.middleware instead, from the registry's rows.
func build(a *Deps, o Options) (*mcp.Server, []*Tool, error) {
	if o.Config == nil {
		o.Config = a.Cfg
	}
	reg := o.Registry
	if reg == nil {
		reg = Registry()
	}
	tools, err := Select(reg, o)
	if err != nil {
		return nil, nil, err
	}
	// A server that may find toolsets on demand registers every tool a
	// session may enable; each session lists and calls its own part.
	registered := tools
	if o.Dynamic != DynamicOff {
		if registered, err = selectTools(reg, o, true); err != nil {
			return nil, nil, err
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "tuitbot", Title: "tuitbot", Version: o.Version}, &mcp.ServerOptions{
		Instructions: instructions(o.Profile),
		Logger:       a.Log,
		// The SDK's defaults (logging) and the tools, which it holds none
		// of (see above). Logging is deprecated from protocol 2026-07-28
		// but still what clients of earlier versions are told today.
		//lint:ignore SA1019 kept for clients of protocol versions before 2026-07-28, as the SDK's own default does
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	dyn := newSurfaces(o.Dynamic, registered, tools, len(o.Toolsets) > 0 || len(o.Tools) > 0)
	dyn.srv = srv
	surface := &Surface{Profile: o.Profile, Tools: tools, dyn: dyn}
	// tools/list answers with schemas that are JSON bytes, copied instead
	// of marshalled by reflection on every request; arguments are
	// validated against the same bytes, resolved on a tool's first call.
	dyn.tools = make(map[string]servedTool, len(registered))
	for _, t := range registered {
		schema, err := t.inputSchemaJSON()
		if err != nil {
			return nil, nil, err
		}
		// Resolving every schema up front would double the server's start-up
		// time; each is resolved on its tool's first call instead (the
		// snapshot tests prove every schema resolves).
		resolved := sync.OnceValues(func() (*jsonschema.Resolved, error) {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(schema), &s); err != nil {
				return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
			}
			return s.Resolve(nil)
		})
		dyn.tools[t.Name] = servedTool{
			listed: &mcp.Tool{
				Name:        t.Name,
				Title:       t.Title,
				Description: t.Description,
				InputSchema: schema,
				Annotations: t.Annotations(),
			},
			h: handler(a, t, resolved, surface),
		}
	}
	srv.AddReceivingMiddleware(dyn.middleware)
	// Resources read the database-backed services that only the mutating
	// profile starts; prompts appear when every tool they use is here.
	if o.Profile.Mutating() {
		addResources(srv, a)
	}
	addPrompts(srv, tools)
	return srv, tools, nil
}

func instructions(p Profile) string {
	s := "tuitbot works an X account safely. Every result is a JSON envelope {success, data, error, meta}. "
	if p.Mutating() {
		s += "Mutations pass a policy gateway: they may be routed to a human approval queue (data.routed_to_approval), " +
			"deduplicated (data.duplicate) or denied. Never retry a mutation whose outcome is unknown without reading X first."
	} else {
		s += "This profile is read-only: no tool here can change anything on X."
	}
	return s
}

func handler(a *Deps, t *Tool, resolved func() (*jsonschema.Resolved, error), surface *Surface) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		start := a.Now()
		call := &Call{Deps: a, Req: req, Surface: surface}
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		var code apperr.Code
		// The duration metric is wall time even when Now is a test clock.
		began := time.Now()
		defer func() {
			if r := recover(); r != nil {
				a.Log.Error("tool panicked", "tool", t.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				code = apperr.InternalError
				res = render(a, envelope.Fail(apperr.New(apperr.InternalError, "tool %s failed unexpectedly; the server keeps running", t.Name), mergeMeta(baseMeta(a, start), envelope.Meta{})))
			}
			if a.ObserveTool != nil {
				a.ObserveTool(t.Name, string(code), time.Since(began))
			}
		}()
		r, err := invoke(ctx, call, t, resolved, raw)
		// The meta (mode, approval mode) is the account's the call ran for.
		meta := mergeMeta(baseMeta(call.Deps, start), r.Meta)
		if err != nil {
			code = apperr.CodeOf(err)
			return render(a, envelope.Fail(err, meta)), nil
		}
		return render(a, envelope.OK(r.Data, meta)), nil
	}
}

func invoke(ctx context.Context, c *Call, t *Tool, resolve func() (*jsonschema.Resolved, error), raw json.RawMessage) (Result, error) {
	if len(raw) > MaxArgumentBytes {
		return Result{}, apperr.New(apperr.InvalidInput, "arguments are %d bytes; the limit is %d", len(raw), MaxArgumentBytes)
	}
	// Agents often send ids as JSON numbers; an id they cannot have
	// rounded becomes the string X uses, any other is refused.
	raw, err := argcheck.NumericIDs(raw, t.limits())
	if err != nil {
		return Result{}, err
	}
	// The account argument every account-scoped tool takes picks whose
	// services run the call; the tool itself never sees it.
	if t.TakesAccount() {
		name, rest, err := splitAccount(raw)
		if err != nil {
			return Result{}, err
		}
		d, err := c.Deps.forAccount(name)
		if err != nil {
			return Result{}, err
		}
		raw, c.Deps = rest, d
	}
	// A config-gated tool is registered when any account enables it; the
	// account this call acts for must enable it too.
	if t.Enabled != nil && !t.Enabled(c.Deps.Cfg) {
		return Result{}, disabledFor(t, c.Deps)
	}
	// Decoding enforces the declared limits with errors that name the
	// field; the schema then catches whatever else it states.
	in, err := t.parse(raw)
	if err != nil {
		return Result{}, err
	}
	if !t.noArgs || !isEmptyObject(raw) {
		var generic any = map[string]any{}
		if len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &generic); err != nil {
				return Result{}, apperr.New(apperr.InvalidInput, "arguments are not valid JSON: %v", err)
			}
		}
		resolved, err := resolve()
		if err != nil {
			return Result{}, apperr.Wrap(apperr.InternalError, err, "tool %s: input schema does not resolve", t.Name)
		}
		if err := resolved.Validate(generic); err != nil {
			return Result{}, apperr.New(apperr.InvalidInput, "arguments: %s", cleanSchemaError(err))
		}
	}
	return t.handle(ctx, c, in)
}

// isEmptyObject reports arguments that are absent, null or {}: for a tool
// without parameters there is nothing to validate then.
func isEmptyObject(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t == "" || t == "null" || t == "{}"
}

// cleanSchemaError keeps the validator's message, which names the property,
// but drops its internal schema-path prefix noise.
func cleanSchemaError(err error) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "validating root: ", "")
	msg = strings.ReplaceAll(msg, "validating /properties/", "")
	// The validator quotes the offending value; a huge argument must not
	// come back in the error.
	return tweettext.TruncateBytes(msg, 300)
}

func baseMeta(a *Deps, start time.Time) envelope.Meta {
	approval := a.Cfg.EffectiveApprovalMode()
	m := envelope.Meta{
		ToolVersion:     envelope.ToolVersion,
		ElapsedMS:       a.Now().Sub(start).Milliseconds(),
		Mode:            a.Cfg.Mode,
		ApprovalMode:    &approval,
		DryRunMutations: a.Cfg.MCPPolicy.DryRunMutations,
	}
	if approval && a.Policy != nil {
		m.ApprovalOverriddenBy = a.Policy.ApprovalOverrides(a.Cfg.Mode)
	}
	return m
}

func mergeMeta(base, extra envelope.Meta) *envelope.Meta {
	base.CorrelationID = extra.CorrelationID
	base.Rollback = extra.Rollback
	base.Pagination = extra.Pagination
	base.RetryCount = extra.RetryCount
	base.Notes = extra.Notes
	base.AuditIncomplete = extra.AuditIncomplete
	base.Warnings = extra.Warnings
	return &base
}

func render(a *Deps, env envelope.Envelope) *mcp.CallToolResult {
	b, err := json.Marshal(env)
	if err != nil {
		a.Log.Error("encode envelope", "error", err)
		env = envelope.Fail(apperr.New(apperr.SerializationError, "result could not be encoded: %v", err), env.Meta)
		b, _ = json.Marshal(env)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           !env.Success,
	}
}
