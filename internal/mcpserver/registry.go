// Package mcpserver is tuitbot's MCP server. One declarative table
// (Registry) is the single source for tool registration per profile, the
// manifest, get_capabilities and docs/tools.md.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/envelope"
)

// Profile names a tool surface.
type Profile string

// The profiles. Full is an alias of Workflow.
const (
	Workflow    Profile = "workflow"
	Readonly    Profile = "readonly"
	APIReadonly Profile = "api-readonly"
)

// ParseProfile accepts the profile names and the full alias.
func ParseProfile(s string) (Profile, error) {
	switch s {
	case "", "workflow", "full":
		return Workflow, nil
	case "readonly":
		return Readonly, nil
	case "api-readonly":
		return APIReadonly, nil
	}
	return "", fmt.Errorf("unknown profile %q; allowed values: workflow (alias full), readonly, api-readonly", s)
}

// Mutating reports whether a profile may carry mutation tools at all.
func (p Profile) Mutating() bool { return p == Workflow }

var (
	allProfiles  = []Profile{Workflow, Readonly, APIReadonly}
	apiProfiles  = []Profile{Workflow, APIReadonly}
	workflowOnly = []Profile{Workflow}
)

// Needs lists the services a tool depends on.
type Needs struct {
	X   bool `json:"x"`
	LLM bool `json:"llm"`
	DB  bool `json:"db"`
}

// Hints are the MCP annotations; every tool sets all four on purpose.
type Hints struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

var (
	// readLocal: reads our own database or config.
	readLocal = Hints{ReadOnly: true, Idempotent: true}
	// readX: reads X.
	readX = Hints{ReadOnly: true, Idempotent: true, OpenWorld: true}
)

// Result is what a handler returns on success.
type Result struct {
	Data any
	Meta envelope.Meta
}

// Call is the context a handler runs in.
type Call struct {
	Deps    *Deps
	Req     *mcp.CallToolRequest
	Surface *Surface
}

// Surface is the profile and tool set a server was built with: Tools is
// what a session lists when it names no selection of its own.
type Surface struct {
	Profile Profile
	Tools   []*Tool
	// dyn is what each session lists (see surfaces).
	dyn *surfaces
}

// Tool is one registry row.
type Tool struct {
	Name        string
	Title       string
	Description string
	// Doc is shown in docs/tools.md after Description, never on the wire.
	Doc      string
	Category string
	Mutation bool
	Needs    Needs
	Profiles []Profile
	Errors   []apperr.Code
	Hints    Hints
	// inputType is the input type (see InputType): a function, since a
	// mutation's is built by reflection, which every Registry call would
	// otherwise pay for every mutation.
	inputType func() reflect.Type
	// limitsOf is the type that declares the argument limits: the input
	// type, or a mutation's arguments' type. The schema shows them and
	// decoding enforces them (see limits).
	limitsOf   reflect.Type
	limitsOnce sync.Once
	limitsVal  argcheck.Limits
	// Enabled, when set, decides from an account's configuration whether
	// the tool may act for that account: the tool is registered when some
	// account the server acts for enables it, and each call is judged by
	// the configuration of the account it acts for (see invoke).
	Enabled func(*config.Config) bool
	// EnabledBy is the setting Enabled reads, as the configuration file
	// spells it at the top level; DisabledHint says what to do instead.
	// A refused call names both.
	EnabledBy, DisabledHint string
	// noArgs marks tools whose input has no fields.
	noArgs bool
	// OnDemand marks the tools that find and enable toolsets: a server
	// serves them only to a session that finds toolsets on demand.
	OnDemand bool

	// parse decodes the arguments strictly and enforces their limits;
	// handle runs the tool on what parse returned.
	parse  func(raw json.RawMessage) (any, error)
	handle func(ctx context.Context, c *Call, in any) (Result, error)
}

// InputType is the Go type the tool's arguments decode into; its JSON
// schema is the tool's input schema.
func (t *Tool) InputType() reflect.Type { return t.inputType() }

// In reports whether t belongs to p.
func (t *Tool) In(p Profile) bool { return slices.Contains(t.Profiles, p) }

// Spec is the declarative part of a row; def adds the typed handler.
type Spec struct {
	Name, Title, Description, Category string
	Mutation                           bool
	Needs                              Needs
	Profiles                           []Profile
	Errors                             []apperr.Code
	Hints                              Hints
	// Enabled gates the tool on the configuration of the account a call
	// acts for (see Tool.Enabled); EnabledBy and DisabledHint explain it.
	Enabled                 func(*config.Config) bool
	EnabledBy, DisabledHint string
	// Doc is further documentation for docs/tools.md only (an algorithm,
	// its formula): what a person reads once, kept out of the tools/list
	// answer every client parses.
	Doc string
	// OnDemand: see Tool.OnDemand.
	OnDemand bool
}

// def binds a typed handler to a spec. The input type drives the JSON
// schema, validation and decoding.
func def[In any](s Spec, h func(ctx context.Context, c *Call, in In) (Result, error)) *Tool {
	t := &Tool{
		Name: s.Name, Title: s.Title, Description: s.Description, Category: s.Category,
		Mutation: s.Mutation, Needs: s.Needs, Profiles: s.Profiles, Errors: s.Errors, Hints: s.Hints,
		Enabled: s.Enabled, EnabledBy: s.EnabledBy, DisabledHint: s.DisabledHint, Doc: s.Doc, OnDemand: s.OnDemand,
	}
	typ := reflect.TypeFor[In]()
	t.inputType = func() reflect.Type { return typ }
	t.noArgs = typ.Kind() == reflect.Struct && typ.NumField() == 0
	t.limitsOf = typ
	t.parse = func(raw json.RawMessage) (any, error) {
		var in In
		if err := decodeStrict(raw, &in); err != nil {
			return nil, err
		}
		return in, argcheck.Check(reflect.ValueOf(in), t.limits())
	}
	t.handle = func(ctx context.Context, c *Call, in any) (Result, error) { return h(ctx, c, in.(In)) }
	return t
}

// limits returns the tool's argument limits, built on its first call
// rather than for every tool at every start: a session calls a few.
func (t *Tool) limits() argcheck.Limits {
	t.limitsOnce.Do(func() { t.limitsVal = argcheck.Of(t.limitsOf) })
	return t.limitsVal
}

// decodeStrict decodes tool arguments, rejecting unknown fields and
// trailing data rather than guessing what the caller meant.
func decodeStrict(raw json.RawMessage, v any) error {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "{}":
		// No arguments leave v as it is: nothing to decode.
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return apperr.New(apperr.InvalidInput, "arguments: %s", describeJSONError(err))
	}
	if dec.More() {
		return apperr.New(apperr.InvalidInput, "arguments: trailing data after the JSON object")
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok {
		if te.Field == "" {
			// Every tool's input is an object; the Go type name means nothing to a caller.
			return fmt.Sprintf("must be a JSON object, got %s", te.Value)
		}
		return fmt.Sprintf("field %q must be %s, got %s", te.Field, te.Type.String(), te.Value)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + rest
	}
	return msg
}

func asType[T any](err error, target *T) bool {
	v, ok := err.(T)
	if ok {
		*target = v
	}
	return ok
}

// InputSchema derives the tool's JSON schema from its input type.
func (t *Tool) InputSchema() (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t.InputType(), &jsonschema.ForOptions{})
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	dropNullable(s)
	if err := argcheck.Schema(s, t.InputType(), t.limits()); err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	if t.TakesAccount() {
		if _, clash := s.Properties[accountArg]; clash {
			return nil, fmt.Errorf("tool %s: its input has a field %q, which every account-scoped tool takes", t.Name, accountArg)
		}
		s.Properties[accountArg] = &jsonschema.Schema{Type: "string", MaxLength: jsonschema.Ptr(32),
			Description: "the X account to act for (get_capabilities lists them)"}
	}
	return s, nil
}

// accountArg is the argument that names the account a call acts for.
const accountArg = "account"

// TakesAccount reports the tools that act for one account (everything
// that reads or changes X or the account's records) and so take the
// optional account argument. Configuration, health and capability tools
// describe the whole server.
func (t *Tool) TakesAccount() bool { return t.Needs.X || t.Needs.DB }

// splitAccount takes the account argument out of raw, returning the name
// ("" when absent) and the remaining arguments. Arguments without one are
// returned unchanged; malformed JSON is left for the tool's own decoding
// to report.
func splitAccount(raw json.RawMessage) (string, json.RawMessage, error) {
	if !bytes.Contains(raw, []byte(`"`+accountArg+`"`)) {
		return "", raw, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", raw, nil
	}
	v, ok := m[accountArg]
	if !ok {
		return "", raw, nil
	}
	var name string
	if err := json.Unmarshal(v, &name); err != nil {
		return "", nil, apperr.New(apperr.InvalidInput, "arguments: field %q must be a string", accountArg)
	}
	if len(name) > 32 {
		// Never echoed: an account name is at most 32 characters.
		return "", nil, apperr.New(apperr.InvalidInput, "arguments: field %q: at most 32 characters (got %d)", accountArg, len(name))
	}
	delete(m, accountArg)
	rest, err := json.Marshal(m)
	if err != nil {
		return "", nil, apperr.New(apperr.InvalidInput, "arguments: %v", err)
	}
	return name, rest, nil
}

// dropNullable turns Go's nullable slices and pointers (["null", "array"])
// into plain types: an absent argument already means "not given", and a
// single type is what every client dialect understands.
func dropNullable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && (s.Types[0] == "null" || s.Types[1] == "null") {
		t := s.Types[0]
		if t == "null" {
			t = s.Types[1]
		}
		s.Type, s.Types = t, nil
	}
	for _, p := range s.Properties {
		dropNullable(p)
	}
	dropNullable(s.Items)
}

// Annotations renders the hints for MCP.
func (t *Tool) Annotations() *mcp.ToolAnnotations {
	// The title is the tool's own, at the top level, where clients look
	// first; every hint is spelled out, so that a client that does not
	// apply the spec's defaults still reads a delete as destructive.
	d, o := t.Hints.Destructive, t.Hints.OpenWorld
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    t.Hints.ReadOnly,
		DestructiveHint: &d,
		IdempotentHint:  t.Hints.Idempotent,
		OpenWorldHint:   &o,
	}
}
