package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// widest is the configuration that lists every tool: agent approval on.
var widest = map[string]string{"TUITBOT_MCP_POLICY__ALLOW_AGENT_APPROVAL": "true"}

// listedTools starts a server and returns the raw tools/list answer and
// its "tools" array as the wire carried them.
func listedTools(t *testing.T, p mcpserver.Profile) (answer []byte, tools json.RawMessage, selected []*mcpserver.Tool) {
	t.Helper()
	srv, selected, err := mcpserver.New(mcpserver.Deps{Cfg: testConfig(t, widest)}, mcpserver.Options{Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	answer = newRawSession(t, srv).call(t, toolsListLine)
	var msg struct {
		Result struct {
			Tools      json.RawMessage `json:"tools"`
			NextCursor string          `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &msg); err != nil {
		t.Fatalf("tools/list answer: %v: %.300s", err, answer)
	}
	if msg.Result.NextCursor != "" {
		t.Fatalf("tools/list is paged; the size budget would see one page only")
	}
	return answer, msg.Result.Tools, selected
}

// TestToolsListIsWhatReflectionWouldSend proves that listing from the
// schemas' JSON bytes, instead of marshalling each schema by reflection on
// every request, changes nothing a client reads: the tools array is byte
// for byte what marshalling the derived schemas gives.
func TestToolsListIsWhatReflectionWouldSend(t *testing.T) {
	for _, p := range allProfiles {
		t.Run(string(p), func(t *testing.T) {
			_, got, selected := listedTools(t, p)
			want := make([]*mcp.Tool, 0, len(selected))
			for _, row := range selected {
				s, err := row.InputSchema()
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, &mcp.Tool{Name: row.Name, Title: row.Title, Description: row.Description,
					InputSchema: s, Annotations: row.Annotations()})
			}
			wantJSON, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			// The SDK lists in name order.
			var gotTools, wantTools []json.RawMessage
			if err := json.Unmarshal(got, &gotTools); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(wantJSON, &wantTools); err != nil {
				t.Fatal(err)
			}
			if len(gotTools) != len(wantTools) {
				t.Fatalf("listed %d tools, want %d", len(gotTools), len(wantTools))
			}
			byName := map[string]string{}
			for _, w := range wantTools {
				byName[wireToolName(t, w)] = string(w)
			}
			for _, g := range gotTools {
				name := wireToolName(t, g)
				if byName[name] != string(g) {
					t.Errorf("%s differs on the wire:\n got %s\nwant %s", name, g, byName[name])
				}
			}
		})
	}
}

func wireToolName(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Name == "" {
		t.Fatalf("tool without a name: %v: %.200s", err, raw)
	}
	return v.Name
}

// toolsListBudget caps the tools/list answer of the widest surface. A
// client parses, and for some compiles, all of it before the agent can do
// anything; a new tool must not silently double that. Raised knowingly
// from 80 KiB when Lists, direct messages, edits and scheduling brought
// the list from 75 to 106 tools (96.8 KB, after dropping the duplicated
// annotation titles and shortening the descriptions every tool repeats);
// still under the 106 KB that 75 tools with output schemas sent.
const toolsListBudget = 100 << 10

func TestToolsListSizeBudget(t *testing.T) {
	for _, p := range allProfiles {
		t.Run(string(p), func(t *testing.T) {
			answer, _, selected := listedTools(t, p)
			if len(answer) > toolsListBudget {
				t.Errorf("tools/list of %s is %d bytes for %d tools; the budget is %d. Shorten descriptions or schemas, or raise the budget knowingly",
					p, len(answer), len(selected), toolsListBudget)
			}
			t.Logf("%s: %d tools, %d bytes", p, len(selected), len(answer))
		})
	}
}

// TestNoOutputSchema pins the absence of output schemas. Every tool's
// structuredContent is the same envelope; a schema per tool made clients
// compile one copy of it per tool at every start. Without a declared
// schema, the spec asks nothing of structuredContent's shape beyond being
// an object, which the envelope is.
func TestNoOutputSchema(t *testing.T) {
	_, tools, _ := listedTools(t, mcpserver.Workflow)
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(tools, &raw); err != nil {
		t.Fatal(err)
	}
	for _, tool := range raw {
		if s, ok := tool["outputSchema"]; ok {
			t.Errorf("%s: outputSchema on the wire (%d bytes)", tool["name"], len(s))
		}
	}
}

// TestNewDerivesNoSchema guards the start-up cost: New takes the input
// schemas from the generated table, so building a server allocates a
// less than deriving the schemas alone does (deriving them made New
// allocate three and a half times that).
func TestNewDerivesNoSchema(t *testing.T) {
	cfg := testConfig(t, widest)
	derive := testing.AllocsPerRun(3, func() {
		for _, row := range mcpserver.Registry() {
			if _, err := row.InputSchema(); err != nil {
				panic(fmt.Sprint(row.Name, err))
			}
		}
	})
	build := testing.AllocsPerRun(3, func() {
		if _, _, err := mcpserver.New(mcpserver.Deps{Cfg: cfg}, mcpserver.Options{Profile: mcpserver.Workflow}); err != nil {
			panic(err)
		}
	})
	if build >= derive {
		t.Errorf("New allocates %.0f times, deriving every schema %.0f; New should not derive schemas", build, derive)
	}
	t.Logf("New: %.0f allocs; deriving every schema: %.0f", build, derive)
}

// TestDocStaysOutOfToolsList: a tool's Doc (get_best_posting_times'
// algorithm) is in docs/tools.md and not in the tools/list answer.
func TestDocStaysOutOfToolsList(t *testing.T) {
	answer, _, _ := listedTools(t, mcpserver.Workflow)
	docs, err := mcpserver.Docs()
	if err != nil {
		t.Fatal(err)
	}
	const formula = "shrunk_b = (n · median_b + k · median_all) / (n + k)"
	if !strings.Contains(docs["docs/tools.md"], formula) {
		t.Error("docs/tools.md lacks get_best_posting_times' formula")
	}
	if strings.Contains(string(answer), "shrunk_b") {
		t.Error("tools/list carries get_best_posting_times' documentation")
	}
}
