package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// FindToolsInput is find_tools' input.
type FindToolsInput struct {
	Query string `json:"query" jsonschema:"what you want to do, in a few words"`
}

// EnableToolsetInput is enable_toolset's input.
type EnableToolsetInput struct {
	Name string `json:"name" jsonschema:"the toolset, as list_toolsets names it"`
}

// dynamicTools find and enable toolsets in a session that finds them on
// demand. Enabling lists tools; it never widens the profile, and every
// call still passes the policy gateway.
func dynamicTools() []*Tool {
	return []*Tool{
		def(Spec{Name: "list_toolsets", Title: "List toolsets",
			Description: "The toolsets this server serves, their tools and whether this session lists them.",
			Category:    "meta", Profiles: allProfiles, Hints: readLocal, OnDemand: true},
			func(_ context.Context, c *Call, _ NoInput) (Result, error) {
				return Result{Data: map[string]any{"toolsets": c.Surface.dyn.toolsetsOf(sessionOf(c))}}, nil
			}),
		def(Spec{Name: "find_tools", Title: "Find tools",
			Description: "Find tools for a task, best match first, with the toolset that enable_toolset lists them by.",
			Category:    "meta", Profiles: allProfiles, Hints: readLocal, OnDemand: true},
			func(_ context.Context, c *Call, in FindToolsInput) (Result, error) {
				if len(queryWords(in.Query)) == 0 {
					return Result{}, apperr.New(apperr.InvalidInput, "query: give a few words, such as \"schedule a post\"")
				}
				return Result{Data: map[string]any{"tools": c.Surface.dyn.find(sessionOf(c), in.Query, 8)}}, nil
			}),
		def(Spec{Name: "enable_toolset", Title: "Enable toolset",
			Description: "List a toolset's tools in this session (sends tools/list_changed). Policy and approval still decide every call.",
			Category:    "meta", Profiles: allProfiles, Hints: readLocal, OnDemand: true},
			func(_ context.Context, c *Call, in EnableToolsetInput) (Result, error) {
				r, err := c.Surface.dyn.enable(sessionOf(c), in.Name)
				return Result{Data: r}, err
			}),
	}
}

// sessionOf is the session a call came in on (nil outside one).
func sessionOf(c *Call) *mcp.ServerSession {
	if c.Req == nil {
		return nil
	}
	return c.Req.Session
}
