package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

func (s *session) promptNames(t *testing.T) []string {
	t.Helper()
	var out []string
	for p, err := range s.Prompts(context.Background(), nil) {
		if err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

func (s *session) resourceURIs(t *testing.T) []string {
	t.Helper()
	var out []string
	for r, err := range s.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		if r.MIMEType != "application/json" {
			t.Errorf("%s: mimeType %q", r.URI, r.MIMEType)
		}
		out = append(out, r.URI)
	}
	slices.Sort(out)
	return out
}

func TestPromptsAndResourcesPerProfile(t *testing.T) {
	a := newApp(t, nil)
	all := []string{"plan_a_thread", "reply_to_mentions_safely", "review_my_pending_approvals"}
	uris := []string{mcpserver.ResourceApprovals, mcpserver.ResourcePolicy, mcpserver.ResourceToday}
	slices.Sort(uris)
	tests := []struct {
		name        string
		o           mcpserver.Options
		wantPrompts []string
		wantURIs    []string
	}{
		{"workflow", mcpserver.Options{Profile: mcpserver.Workflow}, all, uris},
		{"readonly", mcpserver.Options{Profile: mcpserver.Readonly}, nil, nil},
		{"api-readonly", mcpserver.Options{Profile: mcpserver.APIReadonly}, nil, nil},
		// A prompt is offered only with every tool it tells the agent to use.
		{"without replies", mcpserver.Options{Profile: mcpserver.Workflow, ExcludeTools: []string{"x_reply_to_tweet"}},
			[]string{"plan_a_thread", "review_my_pending_approvals"}, uris},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := connect(t, a, tc.o)
			if got := s.promptNames(t); !slices.Equal(got, tc.wantPrompts) {
				t.Errorf("prompts %v, want %v", got, tc.wantPrompts)
			}
			if got := s.resourceURIs(t); !slices.Equal(got, tc.wantURIs) {
				t.Errorf("resources %v, want %v", got, tc.wantURIs)
			}
		})
	}
}

func TestPromptsRender(t *testing.T) {
	s := connect(t, newApp(t, nil), mcpserver.Options{Profile: mcpserver.Workflow})
	tools := map[string]bool{}
	for _, tool := range s.listTools(t) {
		tools[tool.Name] = true
	}
	byName := map[string]*mcpserver.Prompt{}
	for _, p := range mcpserver.Prompts() {
		byName[p.Name] = p
	}
	tests := []struct {
		name    string
		args    map[string]string
		want    []string
		wantErr string
	}{
		{"reply_to_mentions_safely", nil, []string{"at most 5 mentions", "reply-<mention id>"}, ""},
		{"reply_to_mentions_safely", map[string]string{"max_replies": "2", "tone": "dry humour"}, []string{"at most 2 mentions", "dry humour"}, ""},
		{"reply_to_mentions_safely", map[string]string{"max_replies": "lots"}, nil, "max_replies"},
		{"plan_a_thread", map[string]string{"topic": "SQLite in production", "posts": "4"}, []string{"4 posts about: SQLite in production", "explicit yes"}, ""},
		{"plan_a_thread", map[string]string{}, nil, "topic: required"},
		{"plan_a_thread", map[string]string{"topic": "x", "posts": "99"}, nil, "posts"},
		{"review_my_pending_approvals", nil, []string{"tuitbot approve approve <id>", "Do not approve or reject anything yourself"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: tc.name, Arguments: tc.args})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("GetPrompt(%v) error %v, want one naming %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("GetPrompt: %v", err)
			}
			if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
				t.Fatalf("messages %+v, want one user message", res.Messages)
			}
			text := res.Messages[0].Content.(*mcp.TextContent).Text
			// Every workflow states how to treat routed, duplicate and
			// unknown outcomes, and uses idempotency keys.
			for _, w := range append(tc.want, "routed_to_approval", "data.duplicate", "x_outcome_unknown", "Never retry it", "idempotency_key", "policy_denied") {
				if !strings.Contains(text, w) {
					t.Errorf("prompt text lacks %q", w)
				}
			}
			// Every tool the prompt declares is named in its text and is
			// on the server.
			for _, tool := range byName[tc.name].Tools {
				if !strings.Contains(text, tool) {
					t.Errorf("prompt text never names its tool %s", tool)
				}
				if !tools[tool] {
					t.Errorf("prompt uses %s, which the server does not offer", tool)
				}
			}
		})
	}
}

func readResource(t *testing.T, s *session, uri string) map[string]json.RawMessage {
	t.Helper()
	res, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil {
		t.Fatalf("read %s: not a JSON object: %v", uri, err)
	}
	return m
}

func TestResourcesRead(t *testing.T) {
	a := newApp(t, nil)
	s := connect(t, a, mcpserver.Options{Profile: mcpserver.Workflow})

	// The policy resource is exactly get_policy_status' data.
	pol := readResource(t, s, mcpserver.ResourcePolicy)
	env := s.call(t, "get_policy_status", map[string]any{})
	var fromTool, fromResource any
	if err := json.Unmarshal(env.Data, &fromTool); err != nil || fromTool == nil || !*env.Success {
		t.Fatalf("get_policy_status: %v %s", err, env.Data)
	}
	b, _ := json.Marshal(pol)
	json.Unmarshal(b, &fromResource)
	if !jsonEqual(fromTool, fromResource) {
		t.Errorf("policy resource differs from get_policy_status:\n%s\n%s", b, env.Data)
	}

	day := readResource(t, s, mcpserver.ResourceToday)
	var caps mcpserver.TodayCaps
	if err := json.Unmarshal(day["caps"], &caps); err != nil {
		t.Fatal(err)
	}
	if caps.RepliesPerDay != a.Cfg.Limits.MaxRepliesPerDay || caps.TweetsPerDay != a.Cfg.Limits.MaxTweetsPerDay ||
		caps.MaxMutationsPerHour != a.Cfg.MCPPolicy.MaxMutationsPerHour {
		t.Errorf("caps %+v do not match the configuration", caps)
	}
	for _, k := range []string{"replies_today", "x_calls_today", "x_spend_today_usd", "llm_spend_today_usd", "policy_counters", "approval_mode"} {
		if _, ok := day[k]; !ok {
			t.Errorf("today lacks %s", k)
		}
	}

	pending := readResource(t, s, mcpserver.ResourceApprovals)
	if string(pending["count"]) != "0" {
		t.Fatalf("pending count %s before anything was queued", pending["count"])
	}
	// Approval mode is on by default: a post is queued, and the resource
	// shows it.
	post := s.call(t, "x_post_tweet", map[string]any{"text": "queued for the resource test"})
	if !*post.Success || !strings.Contains(string(post.Data), `"routed_to_approval":true`) {
		t.Fatalf("post was not routed: %s", post.Data)
	}
	pending = readResource(t, s, mcpserver.ResourceApprovals)
	if string(pending["count"]) != "1" || !strings.Contains(string(pending["items"]), "queued for the resource test") {
		t.Errorf("pending approvals after one routed post: %s %s", pending["count"], pending["items"])
	}

	if _, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "tuitbot://nope"}); err == nil {
		t.Error("reading an unknown resource succeeded")
	}
}
