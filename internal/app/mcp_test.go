package app_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// The server that answers before its services start lists exactly what
// the server built on the started services lists, for every account it
// may act for: the tools a config gates follow every account's setting.
func TestStartingServerListsWhatTheStartedOneLists(t *testing.T) {
	type accounts struct{ top, brandB string } // "true", "false" or "unset"
	for _, acc := range []accounts{{"false", "true"}, {"true", "unset"}, {"true", "false"}, {"false", "unset"}} {
		for _, serve := range []string{"", "brand_b"} {
			t.Run(fmt.Sprintf("top=%s,brand_b=%s,serving=%q", acc.top, acc.brandB, serve), func(t *testing.T) {
				cfg := testConfig(t, t.TempDir())
				cfg.MCPPolicy.AllowAgentApproval = acc.top == "true"
				section := map[string]any{}
				if acc.brandB != "unset" {
					section["mcp_policy"] = map[string]any{"allow_agent_approval": acc.brandB == "true"}
				}
				cfg.Accounts = map[string]map[string]any{"brand_b": section}
				o := mcpserver.Options{Profile: mcpserver.Workflow}
				_, early, _, err := app.StartingMCPServer(cfg, serve, nil, o, func() {})
				if err != nil {
					t.Fatal(err)
				}
				a, err := newApp(t, cfg, app.Options{}).ForAccount(serve)
				if err != nil {
					t.Fatal(err)
				}
				_, started, err := a.MCPServer(o)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := names(early), names(started); !slices.Equal(got, want) {
					t.Errorf("listed before the services start:\n%v\nafter:\n%v", got, want)
				}
			})
		}
	}
}

func names(tools []*mcpserver.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
