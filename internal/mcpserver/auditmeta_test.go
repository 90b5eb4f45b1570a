package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestAuditIncompleteReachesTheEnvelope checks that a gateway answer whose
// outcome could not be recorded tells the agent, on success and on error.
func TestAuditIncompleteReachesTheEnvelope(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"executed", nil},
		{"failed on X", apperr.New(apperr.XOutcomeUnknown, "timed out")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := def(Spec{Name: "probe_audit", Title: "Probe", Description: "Test tool.", Category: "test",
				Profiles: []Profile{Workflow}, Hints: readLocal,
			}, func(context.Context, *Call, NoInput) (Result, error) {
				var m envelope.Meta
				auditMeta(&m, gateway.Response{Kind: gateway.Executed, AuditIncomplete: true})
				return Result{Data: map[string]any{"id": "1"}, Meta: m}, tc.err
			})
			h := handler(probeDeps(t), tool, resolvedOf(t, tool), &Surface{Profile: Workflow, Tools: []*Tool{tool}})
			res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Arguments: json.RawMessage(`{}`)}})
			if err != nil {
				t.Fatal(err)
			}
			var env envelope.Envelope
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
				t.Fatal(err)
			}
			if env.Meta == nil || !env.Meta.AuditIncomplete {
				t.Fatalf("meta %+v lacks audit_incomplete", env.Meta)
			}
			if len(env.Meta.Warnings) != 1 || env.Meta.Warnings[0] != gateway.AuditIncompleteWarning {
				t.Errorf("warnings %q, want the audit-incomplete warning", env.Meta.Warnings)
			}
		})
	}
}
