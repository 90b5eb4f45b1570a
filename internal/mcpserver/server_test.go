package mcpserver_test

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

var allProfiles = []mcpserver.Profile{mcpserver.Workflow, mcpserver.Readonly, mcpserver.APIReadonly}

func TestHandshake(t *testing.T) {
	a := newApp(t, nil)
	for _, p := range allProfiles {
		t.Run(string(p), func(t *testing.T) {
			s := connect(t, a, mcpserver.Options{Profile: p})
			init := s.InitializeResult()
			if init == nil || init.ServerInfo == nil {
				t.Fatal("no initialize result")
			}
			if init.ServerInfo.Name != "tuitbot" || init.ServerInfo.Version != app.Version {
				t.Errorf("serverInfo = %+v, want tuitbot %s", init.ServerInfo, app.Version)
			}
			if init.Capabilities == nil || init.Capabilities.Tools == nil {
				t.Error("server does not announce the tools capability")
			}
			if !strings.Contains(init.Instructions, "envelope") {
				t.Errorf("instructions do not describe the envelope: %q", init.Instructions)
			}
			if readOnly := !p.Mutating(); readOnly != strings.Contains(init.Instructions, "read-only") {
				t.Errorf("profile %s: instructions %q", p, init.Instructions)
			}
			if err := s.Ping(context.Background(), nil); err != nil {
				t.Errorf("ping: %v", err)
			}
		})
	}
}

func TestParseProfile(t *testing.T) {
	for in, want := range map[string]mcpserver.Profile{
		"": mcpserver.Workflow, "workflow": mcpserver.Workflow, "full": mcpserver.Workflow,
		"readonly": mcpserver.Readonly, "api-readonly": mcpserver.APIReadonly,
	} {
		got, err := mcpserver.ParseProfile(in)
		if err != nil || got != want {
			t.Errorf("ParseProfile(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := mcpserver.ParseProfile("admin")
	if err == nil {
		t.Fatal("ParseProfile accepted admin")
	}
	for _, w := range []string{"admin", "workflow", "readonly", "api-readonly"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if mcpserver.Readonly.Mutating() || mcpserver.APIReadonly.Mutating() || !mcpserver.Workflow.Mutating() {
		t.Error("Mutating() is wrong for a profile")
	}
}

func TestToolsPerProfile(t *testing.T) {
	// Config-gated tools are switched on so the test sees them too.
	a := newApp(t, map[string]string{"TUITBOT_MCP_POLICY__ALLOW_AGENT_APPROVAL": "true"})
	reg := registryByName()
	for _, p := range allProfiles {
		t.Run(string(p), func(t *testing.T) {
			s := connect(t, a, mcpserver.Options{Profile: p})
			tools := s.listTools(t)
			got := toolNames(tools)
			if want := expectedTools(p, a.Cfg); !reflect.DeepEqual(got, want) {
				t.Errorf("profile %s lists\n %v\nwant\n %v", p, got, want)
			}
			if len(got) == 0 {
				t.Fatalf("profile %s lists no tools", p)
			}
			for _, tool := range tools {
				row := reg[tool.Name]
				if row == nil {
					t.Errorf("%s is listed but not in the registry", tool.Name)
					continue
				}
				if !row.In(p) {
					t.Errorf("%s listed in %s but its registry row does not have the profile", tool.Name, p)
				}
				if !p.Mutating() {
					if row.Mutation {
						t.Errorf("read-only profile %s lists mutation tool %s", p, tool.Name)
					}
					if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
						t.Errorf("read-only profile %s lists %s without readOnlyHint", p, tool.Name)
					}
				}
			}
		})
	}
}

func TestWorkflowHasEveryWorkflowTool(t *testing.T) {
	a := newApp(t, map[string]string{"TUITBOT_MCP_POLICY__ALLOW_AGENT_APPROVAL": "true"})
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.Workflow})
	listed := toolNames(s.listTools(t))
	for _, row := range mcpserver.Registry() {
		if !row.In(mcpserver.Workflow) || row.OnDemand {
			continue
		}
		if row.Enabled != nil && !row.Enabled(a.Cfg) {
			continue
		}
		if !slices.Contains(listed, row.Name) {
			t.Errorf("workflow profile misses %s", row.Name)
		}
	}
	// Every mutation belongs to the workflow profile only.
	for _, row := range mcpserver.Registry() {
		if row.Mutation && !reflect.DeepEqual(row.Profiles, []mcpserver.Profile{mcpserver.Workflow}) {
			t.Errorf("mutation %s has profiles %v, want only workflow", row.Name, row.Profiles)
		}
	}
}

func TestConfigGatedToolsFollowConfig(t *testing.T) {
	var gated []*mcpserver.Tool
	for _, row := range mcpserver.Registry() {
		if row.Enabled != nil {
			gated = append(gated, row)
		}
	}
	if len(gated) == 0 {
		t.Skip("no config-gated tools in the registry")
	}
	for _, val := range []string{"true", "false"} {
		a := newApp(t, map[string]string{"TUITBOT_MCP_POLICY__ALLOW_AGENT_APPROVAL": val})
		s := connect(t, a, mcpserver.Options{Profile: mcpserver.Workflow})
		listed := toolNames(s.listTools(t))
		for _, row := range gated {
			if got, want := slices.Contains(listed, row.Name), row.Enabled(a.Cfg) && row.In(mcpserver.Workflow); got != want {
				t.Errorf("allow_agent_approval=%s: %s listed=%t, want %t", val, row.Name, got, want)
			}
		}
	}
}

func TestSelectNarrowing(t *testing.T) {
	reg := mcpserver.Registry()
	wf := expectedDefault(mcpserver.Workflow)
	if len(wf) < 3 {
		t.Fatalf("need at least 3 workflow tools, have %v", wf)
	}
	a, b, c := wf[0], wf[1], wf[2]
	names := func(ts []*mcpserver.Tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name string
		o    mcpserver.Options
		want []string
		err  string
	}{
		{"only", mcpserver.Options{Profile: mcpserver.Workflow, Tools: []string{a, b}}, []string{a, b}, ""},
		{"exclusion wins", mcpserver.Options{Profile: mcpserver.Workflow, Tools: []string{a, b}, ExcludeTools: []string{b}}, []string{a}, ""},
		{"exclude from whole profile", mcpserver.Options{Profile: mcpserver.Workflow, ExcludeTools: []string{c}}, slices.DeleteFunc(slices.Clone(wf), func(s string) bool { return s == c }), ""},
		{"unknown tool", mcpserver.Options{Profile: mcpserver.Workflow, Tools: []string{a, "no_such_tool"}}, nil, "no_such_tool"},
		{"unknown exclusion", mcpserver.Options{Profile: mcpserver.Workflow, ExcludeTools: []string{"nope_tool"}}, nil, "nope_tool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mcpserver.Select(reg, tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(names(got), tc.want) {
				t.Errorf("selected %v, want %v", names(got), tc.want)
			}
		})
	}

	// Naming a tool of another profile never widens a read-only surface.
	var mutation string
	for _, row := range reg {
		if row.Mutation {
			mutation = row.Name
			break
		}
	}
	if mutation != "" {
		got, err := mcpserver.Select(reg, mcpserver.Options{Profile: mcpserver.Readonly, Tools: []string{mutation}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("--tools %s in readonly selected %v", mutation, names(got))
		}
	}
}

func TestSelectRefusesMutationInReadOnlyProfile(t *testing.T) {
	bad := []*mcpserver.Tool{{Name: "sneaky_post", Mutation: true, Profiles: []mcpserver.Profile{mcpserver.Workflow, mcpserver.Readonly}}}
	if _, err := mcpserver.Select(bad, mcpserver.Options{Profile: mcpserver.Readonly}); err == nil || !strings.Contains(err.Error(), "sneaky_post") {
		t.Errorf("Select = %v, want an error naming the mutation", err)
	}
}

func TestNarrowingOverMCP(t *testing.T) {
	a := newApp(t, nil)
	wf := expectedTools(mcpserver.Workflow, a.Cfg)
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.Workflow, Tools: []string{"health_check", wf[0]}, ExcludeTools: []string{wf[0]}})
	if got := toolNames(s.listTools(t)); !reflect.DeepEqual(got, []string{"health_check"}) {
		t.Errorf("listed %v, want only health_check", got)
	}
	// A tool that is not registered cannot be called.
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: wf[0], Arguments: map[string]any{}}); err == nil && wf[0] != "health_check" {
		t.Errorf("excluded tool %s was callable", wf[0])
	}
	if _, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Workflow, Tools: []string{"bogus_tool"}}); err == nil || !strings.Contains(err.Error(), "bogus_tool") {
		t.Errorf("New with unknown tool: %v", err)
	}
}

var toolName = regexp.MustCompile(`^[a-z][a-z0-9_]{2,63}$`)

func TestRegistryRows(t *testing.T) {
	seen := map[string]bool{}
	for _, row := range mcpserver.Registry() {
		if !toolName.MatchString(row.Name) {
			t.Errorf("tool name %q is not snake_case", row.Name)
		}
		if seen[row.Name] {
			t.Errorf("tool %s registered twice", row.Name)
		}
		seen[row.Name] = true
		if strings.TrimSpace(row.Description) == "" || strings.TrimSpace(row.Title) == "" || strings.TrimSpace(row.Category) == "" {
			t.Errorf("%s: description/title/category must be non-empty (%q, %q, %q)", row.Name, row.Description, row.Title, row.Category)
		}
		if len(row.Profiles) == 0 {
			t.Errorf("%s is in no profile", row.Name)
		}
		if row.Mutation && row.Hints.ReadOnly {
			t.Errorf("mutation %s claims readOnlyHint", row.Name)
		}
		if row.Hints.ReadOnly && row.Hints.Destructive {
			t.Errorf("%s is both read-only and destructive", row.Name)
		}
		for _, p := range row.Profiles {
			if !p.Mutating() && !row.Hints.ReadOnly {
				t.Errorf("%s is in read-only profile %s without readOnlyHint", row.Name, p)
			}
		}
		if row.Needs.X && !row.Hints.OpenWorld {
			t.Errorf("%s talks to X but openWorldHint is false", row.Name)
		}
		for _, c := range row.ErrorCodes() {
			if apperr.Lookup(c).Meaning == "unknown code" {
				t.Errorf("%s lists unknown error code %q", row.Name, c)
			}
		}
		s, err := row.InputSchema()
		if err != nil {
			t.Errorf("%s: %v", row.Name, err)
			continue
		}
		if s.Type != "object" {
			t.Errorf("%s: input schema type %q, want object", row.Name, s.Type)
		}
		if s.AdditionalProperties == nil {
			t.Errorf("%s: input schema allows unknown properties", row.Name)
		}
	}
}

func TestAnnotationsOnTheWire(t *testing.T) {
	a := newApp(t, map[string]string{"TUITBOT_MCP_POLICY__ALLOW_AGENT_APPROVAL": "true"})
	reg := registryByName()
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.Workflow})
	listed := s.listTools(t)

	var raw []map[string]json.RawMessage
	for _, res := range s.wire.results(t) {
		if tools, ok := res["tools"]; ok {
			var page []map[string]json.RawMessage
			if err := json.Unmarshal(tools, &page); err != nil {
				t.Fatal(err)
			}
			raw = append(raw, page...)
		}
	}
	if len(raw) != len(listed) {
		t.Fatalf("wire carried %d tools, client saw %d", len(raw), len(listed))
	}
	for _, tool := range raw {
		var name, title, desc string
		json.Unmarshal(tool["name"], &name)
		json.Unmarshal(tool["title"], &title)
		json.Unmarshal(tool["description"], &desc)
		row := reg[name]
		if row == nil {
			t.Errorf("unknown tool %s on the wire", name)
			continue
		}
		if title != row.Title || desc != row.Description {
			t.Errorf("%s: wire title/description %q/%q differ from the registry", name, title, desc)
		}
		if _, ok := tool["inputSchema"]; !ok {
			t.Errorf("%s: no inputSchema on the wire", name)
		}
		var ann map[string]json.RawMessage
		if err := json.Unmarshal(tool["annotations"], &ann); err != nil || ann == nil {
			t.Errorf("%s: no annotations object on the wire", name)
			continue
		}
		want := map[string]bool{
			"readOnlyHint": row.Hints.ReadOnly, "destructiveHint": row.Hints.Destructive,
			"idempotentHint": row.Hints.Idempotent, "openWorldHint": row.Hints.OpenWorld,
		}
		for key, wantVal := range want {
			v, ok := ann[key]
			if !ok {
				t.Errorf("%s: annotation %s missing on the wire", name, key)
				continue
			}
			var got bool
			if err := json.Unmarshal(v, &got); err != nil {
				t.Errorf("%s: %s = %s is not a boolean", name, key, v)
				continue
			}
			if got != wantVal {
				t.Errorf("%s: %s = %t, registry says %t", name, key, got, wantVal)
			}
		}
	}
}

// noSideEffects are argument sets every tool must answer with an envelope
// without touching anything outside the process: the test configuration
// points X at a closed loopback port and holds no tokens.
func TestEveryToolAnswersWithAnEnvelope(t *testing.T) {
	a := newApp(t, map[string]string{"TUITBOT_MCP_POLICY__ALLOW_AGENT_APPROVAL": "true"})
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.Workflow})
	for _, tool := range s.listTools(t) {
		env := s.call(t, tool.Name, map[string]any{})
		if !*env.Success && env.Error.Code == apperr.InternalError {
			t.Errorf("%s with {} failed with internal_error: %s", tool.Name, env.Error.Message)
		}
	}
}

func TestMetaToolsSucceed(t *testing.T) {
	a := newApp(t, nil)
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.Workflow})
	for _, name := range []string{"health_check", "get_config", "validate_config", "get_mode", "get_capabilities"} {
		if _, ok := registryByName()[name]; !ok {
			continue
		}
		env := s.call(t, name, nil)
		if !*env.Success {
			t.Errorf("%s failed: %+v", name, env.Error)
		}
		if *env.Meta.ApprovalMode != a.Cfg.EffectiveApprovalMode() || env.Meta.Mode != a.Cfg.Mode {
			t.Errorf("%s: meta mode=%s approval=%t, config says %s/%t", name, env.Meta.Mode, *env.Meta.ApprovalMode, a.Cfg.Mode, a.Cfg.EffectiveApprovalMode())
		}
	}

	var health struct {
		Status   string            `json:"status"`
		Services map[string]string `json:"services"`
	}
	env := s.call(t, "health_check", map[string]any{})
	if err := json.Unmarshal(env.Data, &health); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config", "database", "token", "llm", "x"} {
		if _, ok := health.Services[name]; !ok {
			t.Errorf("health_check does not report %s: %v", name, health.Services)
		}
	}
	if health.Services["database"] != "ok" {
		t.Errorf("database = %q, want ok", health.Services["database"])
	}
	if health.Status != "degraded" {
		// No token and no LLM in the test home: health must say so.
		t.Errorf("status = %q, want degraded without X token or LLM", health.Status)
	}
}

func TestCapabilitiesMatchSurface(t *testing.T) {
	if _, ok := registryByName()["get_capabilities"]; !ok {
		t.Skip("no get_capabilities tool")
	}
	a := newApp(t, nil)
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.APIReadonly})
	env := s.call(t, "get_capabilities", nil)
	var caps struct {
		Profile   string   `json:"profile"`
		ToolCount int      `json:"tool_count"`
		Mutations []string `json:"mutation_tools"`
	}
	if err := json.Unmarshal(env.Data, &caps); err != nil {
		t.Fatal(err)
	}
	if caps.Profile != string(mcpserver.APIReadonly) || caps.ToolCount != len(s.listTools(t)) || len(caps.Mutations) != 0 {
		t.Errorf("capabilities = %+v; want api-readonly, %d tools, no mutations", caps, len(s.listTools(t)))
	}
}

func TestGetConfigMasksSecrets(t *testing.T) {
	const secret = "sk-test-should-never-leak-9d1"
	// Gemini's OpenAI-compatible endpoint takes its key in the query.
	a := newApp(t, map[string]string{"TUITBOT_LLM__API_KEY": secret, "TUITBOT_X_API__CLIENT_SECRET": secret + "x",
		"TUITBOT_LLM__BASE_URL": "https://generativelanguage.example/v1beta/openai?key=" + secret + "q"})
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.Readonly})
	for _, name := range []string{"get_config", "health_check", "validate_config"} {
		s.call(t, name, nil)
	}
	s.wire.mu.Lock()
	defer s.wire.mu.Unlock()
	if strings.Contains(s.wire.buf.String(), secret) {
		t.Error("a secret appeared on the wire")
	}
	if !strings.Contains(s.wire.buf.String(), "generativelanguage.example/v1beta/openai?key=******") {
		t.Error("get_config does not show the masked base URL")
	}
}
