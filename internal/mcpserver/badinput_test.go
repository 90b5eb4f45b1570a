package mcpserver_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// maxErrorMessage bounds an error message: a clear error names the problem,
// it does not echo a megabyte of input back.
const maxErrorMessage = 2048

// stillServes proves the session survived whatever came before.
func stillServes(t *testing.T, s *session) {
	t.Helper()
	if env := s.call(t, "health_check", nil); !*env.Success {
		t.Fatalf("health_check after bad input failed: %+v", env.Error)
	}
}

func wantInvalid(t *testing.T, name string, env envelopeOf, mentions ...string) {
	t.Helper()
	if *env.Success {
		t.Errorf("%s: bad input succeeded", name)
		return
	}
	if env.Error.Code != apperr.InvalidInput {
		t.Errorf("%s: code %s (%s), want invalid_input", name, env.Error.Code, env.Error.Message)
	}
	if len(env.Error.Message) > maxErrorMessage {
		t.Errorf("%s: error message is %d bytes; it must not echo the input", name, len(env.Error.Message))
	}
	for _, m := range mentions {
		if !strings.Contains(env.Error.Message, m) {
			t.Errorf("%s: message %q does not name %q", name, env.Error.Message, m)
		}
	}
}

func TestUnknownToolIsProtocolError(t *testing.T) {
	s := connect(t, newApp(t, nil), mcpserver.Options{Profile: mcpserver.Workflow})
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("unknown tool: err = %v, want a protocol error naming it", err)
	}
	stillServes(t, s)
}

// primaryType is the non-null JSON type a schema property declares.
func primaryType(p *jsonschema.Schema) string {
	if p.Type != "" {
		return p.Type
	}
	for _, ty := range p.Types {
		if ty != "null" {
			return ty
		}
	}
	return ""
}

// wrongValue is a value of a different JSON type than want. Strings are long
// so an error that quotes the value in full is caught.
func wrongValue(want string) any {
	switch want {
	case "string":
		// Not a number: an X id sent as an exact integer is accepted as
		// the id (agents send them so), so a number is not wrong for every
		// string property. A boolean is.
		return true
	case "integer", "number", "boolean", "array", "object":
		return strings.Repeat("x", 3*maxErrorMessage)
	}
	return nil
}

func TestWrongArgumentTypesNameTheField(t *testing.T) {
	a := newApp(t, map[string]string{"TUITBOT_MCP_POLICY__ALLOW_AGENT_APPROVAL": "true"})
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.Workflow})
	listed := toolNames(s.listTools(t))
	checked := 0
	for _, row := range mcpserver.Registry() {
		if !slices.Contains(listed, row.Name) {
			continue
		}
		schema, err := row.InputSchema()
		if err != nil {
			t.Fatal(err)
		}
		for prop, ps := range schema.Properties {
			v := wrongValue(primaryType(ps))
			if v == nil {
				continue
			}
			env := s.call(t, row.Name, map[string]any{prop: v})
			wantInvalid(t, row.Name+"."+prop, env, prop)
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no tool has a typed property; the test checked nothing")
	}
	stillServes(t, s)
}

func TestUnknownArgument(t *testing.T) {
	s := connect(t, newApp(t, nil), mcpserver.Options{Profile: mcpserver.Workflow})
	for _, tool := range s.listTools(t) {
		env := s.call(t, tool.Name, map[string]any{"zz_not_a_parameter": 1})
		wantInvalid(t, tool.Name, env, "zz_not_a_parameter")
	}
	stillServes(t, s)
}

func TestHugeArguments(t *testing.T) {
	a := newApp(t, nil)
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.Workflow})
	mb := strings.Repeat("A", 1<<20)
	marker := strings.Repeat("A", maxErrorMessage)

	check := func(name string, env envelopeOf) {
		t.Helper()
		if *env.Success {
			return
		}
		if len(env.Error.Message) > maxErrorMessage || strings.Contains(env.Error.Message, marker) {
			t.Errorf("%s: error message is %d bytes and echoes the input: %.120s", name, len(env.Error.Message), env.Error.Message)
		}
		if env.Error.Code == apperr.InternalError {
			t.Errorf("%s: 1 MB argument gave internal_error: %.200s", name, env.Error.Message)
		}
	}

	// A 1 MB unknown argument.
	env := s.call(t, "health_check", map[string]any{"zz_big": mb})
	wantInvalid(t, "1 MB unknown argument", env, "zz_big")

	// A 1 MB string in the first string parameter of a spread of tools
	// (sampled so the test stays fast as the registry grows): each answers
	// with a well-formed envelope whose error does not echo the megabyte.
	var withString []string
	props := map[string]string{}
	for _, row := range mcpserver.Registry() {
		if !row.In(mcpserver.Workflow) || row.OnDemand || (row.Enabled != nil && !row.Enabled(a.Cfg)) {
			continue
		}
		schema, err := row.InputSchema()
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(schema.Properties))
		for n := range schema.Properties {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if primaryType(schema.Properties[n]) == "string" {
				withString = append(withString, row.Name)
				props[row.Name] = n
				break
			}
		}
	}
	if len(withString) == 0 {
		t.Fatal("no tool takes a string; nothing to check")
	}
	step := max(1, len(withString)/8)
	for i := 0; i < len(withString); i += step {
		name := withString[i]
		check(name+"."+props[name], s.call(t, name, map[string]any{props[name]: mb}))
	}
	stillServes(t, s)

	// Beyond the cap the call is refused before decoding.
	over := strings.Repeat("B", mcpserver.MaxArgumentBytes+10)
	env = s.call(t, "health_check", map[string]any{"blob": over})
	wantInvalid(t, "over the cap", env, "limit")
	stillServes(t, s)
}

func TestMalformedArguments(t *testing.T) {
	rc := rawServe(t, newApp(t, nil), mcpserver.Options{Profile: mcpserver.Workflow})
	for _, args := range []string{`"a string"`, `[1,2,3]`, `42`, `true`, `[{}]`} {
		env := rc.callRaw(t, "health_check", args).envelope(t, "health_check "+args)
		wantInvalid(t, "arguments "+args, env, "object")
		if env := rc.callRaw(t, "health_check", `{}`).envelope(t, "health_check"); !*env.Success {
			t.Fatalf("call after %s failed", args)
		}
	}
	// Missing and null arguments mean "no arguments".
	for _, args := range []string{"", "null"} {
		if env := rc.callRaw(t, "health_check", args).envelope(t, "health_check"); !*env.Success {
			t.Errorf("arguments %q: %+v", args, env.Error)
		}
	}
	// Unknown tool over the raw pipe: a JSON-RPC error, and the pipe lives on.
	rep := rc.callRaw(t, "no_such_tool", `{}`)
	if rep.Error == nil || !strings.Contains(rep.Error.Message, "no_such_tool") {
		t.Errorf("unknown tool reply: %+v", rep)
	}
	if env := rc.callRaw(t, "health_check", `{}`).envelope(t, "health_check"); !*env.Success {
		t.Fatal("call after unknown tool failed")
	}
}
