package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// TestEveryToolHasOneToolset: the toolset table names every registry row
// exactly once and nothing else, so no tool is unreachable by toolset.
func TestEveryToolHasOneToolset(t *testing.T) {
	count := map[string]int{}
	for _, ts := range mcpserver.Toolsets() {
		if ts.Name == "" || ts.Description == "" || len(ts.Tools) == 0 {
			t.Errorf("toolset %+v needs a name, a description and tools", ts)
		}
		for _, n := range ts.Tools {
			count[n]++
		}
	}
	reg := registryByName()
	for name := range reg {
		switch count[name] {
		case 0:
			t.Errorf("%s belongs to no toolset; add it to one in Toolsets()", name)
		case 1:
		default:
			t.Errorf("%s belongs to %d toolsets", name, count[name])
		}
	}
	for name := range count {
		if reg[name] == nil {
			t.Errorf("toolset table names %s, which is not a tool", name)
		}
	}
}

// selectionAnswer serves the selection to a raw client and returns the
// tools/list answer and the listed names.
func selectionAnswer(t *testing.T, o mcpserver.Options) ([]byte, []string) {
	t.Helper()
	srv, _, err := mcpserver.New(mcpserver.Deps{Cfg: testConfig(t, widest)}, o)
	if err != nil {
		t.Fatal(err)
	}
	return listAnswer(t, srv)
}

// startingAnswer is selectionAnswer from the server a spawned process
// serves before its services start.
func startingAnswer(t *testing.T, o mcpserver.Options) ([]byte, []string) {
	t.Helper()
	srv, _, _, err := mcpserver.NewStarting(mcpserver.Deps{Cfg: testConfig(t, widest)}, o, func() {})
	if err != nil {
		t.Fatal(err)
	}
	return listAnswer(t, srv)
}

func listAnswer(t *testing.T, srv *mcp.Server) ([]byte, []string) {
	t.Helper()
	answer := newRawSession(t, srv).call(t, toolsListLine)
	var msg struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &msg); err != nil {
		t.Fatalf("tools/list: %v: %.300s", err, answer)
	}
	var names []string
	for _, tool := range msg.Result.Tools {
		names = append(names, tool.Name)
	}
	return answer, names
}

// The default selection's limits: every client of mcp install holds it.
const (
	defaultMaxTools = 30
	defaultMaxBytes = 16 << 10
)

func TestDefaultSelectionBudget(t *testing.T) {
	for _, dyn := range []mcpserver.Dynamic{mcpserver.DynamicOff, mcpserver.DynamicOn} {
		answer, names := selectionAnswer(t, mcpserver.Options{Profile: mcpserver.Workflow, Toolsets: []string{"default"}, Dynamic: dyn})
		if len(names) > defaultMaxTools || len(answer) > defaultMaxBytes {
			t.Errorf("default selection (dynamic %q): %d tools, %d bytes; the budget is %d tools, %d bytes",
				dyn, len(names), len(answer), defaultMaxTools, defaultMaxBytes)
		}
		t.Logf("default (dynamic %q): %d tools, %d bytes", dyn, len(names), len(answer))
	}
}

// toolsetBudget is each toolset's tools/list budget in bytes, in the
// workflow profile with every config-gated tool on. Raise one knowingly.
// approvals: raised from 4,900 when approve_item and reject_item gained
// content_hash. engage: raised from 8,700 when get_handoff joined it (an
// agent whose like or reply is handed to a person reads the outcome there),
// then to 9,400 when each mutation's description said again, in 33 bytes,
// that it goes through the gateway (for clients that hide the server's
// instructions from the model).
var toolsetBudget = map[string]int{
	"meta": 4700, "compose": 20000, "approvals": 5300, "read": 10000, "engage": 9400, "dm": 3100,
	"lists": 5700, "content": 4500, "schedule": 14500, "discovery": 6700, "analytics": 6300, "raw": 5900,
	// The finding tools, measured beside health_check.
	"dynamic": 1900,
}

func TestToolsetBudgets(t *testing.T) {
	for _, ts := range mcpserver.Toolsets() {
		o := mcpserver.Options{Profile: mcpserver.Workflow, Toolsets: []string{ts.Name}}
		if ts.Name == "dynamic" {
			o = mcpserver.Options{Profile: mcpserver.Workflow, Tools: []string{"health_check"}, Dynamic: mcpserver.DynamicOn}
		}
		answer, names := selectionAnswer(t, o)
		budget, ok := toolsetBudget[ts.Name]
		if !ok {
			t.Errorf("toolset %s has no byte budget", ts.Name)
			continue
		}
		if len(answer) > budget {
			t.Errorf("toolset %s: tools/list is %d bytes for %d tools; the budget is %d", ts.Name, len(answer), len(names), budget)
		}
		t.Logf("%s: %d tools, %d bytes", ts.Name, len(names), len(answer))
	}
}

// TestSelectionListsOnlyIt: --toolsets and --tools list their union inside
// the profile; unknown names are refused with every one of them named.
func TestSelectionListsOnlyIt(t *testing.T) {
	_, names := selectionAnswer(t, mcpserver.Options{Profile: mcpserver.Workflow, Toolsets: []string{"dm"}, Tools: []string{"x_get_me"}})
	if want := []string{"x_delete_dm", "x_get_dm_events", "x_get_me", "x_send_dm"}; !slices.Equal(names, want) {
		t.Errorf("dm + x_get_me lists %v, want %v", names, want)
	}
	_, names = selectionAnswer(t, mcpserver.Options{Profile: mcpserver.Readonly, Toolsets: []string{"engage", "read"}})
	for _, n := range names {
		if mcpserver.ToolsetOf(n) != "read" {
			t.Errorf("readonly with engage,read lists %s: a toolset must not widen the profile", n)
		}
	}
	_, err := mcpserver.Select(mcpserver.Registry(), mcpserver.Options{Profile: mcpserver.Workflow, Toolsets: []string{"compose", "nope", "zap"}})
	if err == nil || !strings.Contains(err.Error(), `"nope", "zap"`) {
		t.Errorf("unknown toolsets: %v", err)
	}
}

// TestToolsListIsStable: the same selection answers tools/list with the
// same bytes, on every server and every time.
func TestToolsListIsStable(t *testing.T) {
	for _, o := range []mcpserver.Options{
		{Profile: mcpserver.Workflow},
		{Profile: mcpserver.Workflow, Toolsets: []string{"default"}},
		{Profile: mcpserver.Workflow, Toolsets: []string{"default"}, Dynamic: mcpserver.DynamicOn},
	} {
		first, _ := selectionAnswer(t, o)
		second, _ := selectionAnswer(t, o)
		if string(first) != string(second) {
			t.Errorf("%+v: tools/list differs between two servers:\n%.300s\n%.300s", o, first, second)
		}
		// A spawned server hands the SDK its tools as sessions need them;
		// what it lists is the same to the byte.
		if spawned, _ := startingAnswer(t, o); string(spawned) != string(first) {
			t.Errorf("%+v: tools/list of a spawned server differs:\n%.300s\n%.300s", o, spawned, first)
		}
	}
}

// dynamicSession connects a client that handles tools/list_changed and
// signals each notification on changed.
func dynamicSession(t *testing.T, o mcpserver.Options) (*session, chan struct{}) {
	t.Helper()
	srv, _, err := dynamicApp(t).MCPServer(o)
	if err != nil {
		t.Fatal(err)
	}
	return changesSession(t, srv)
}

// dynamicApp is an app whose X access lets it like posts, so what decides
// a like is the policy, not X's access level.
func dynamicApp(t *testing.T) *app.App {
	t.Helper()
	return newApp(t, map[string]string{"TUITBOT_X_API__ACCESS": "enterprise"})
}

// spawnedDynamicSession is dynamicSession on the server a spawned process
// serves (mcpserver.NewStarting), its services ready.
func spawnedDynamicSession(t *testing.T, o mcpserver.Options) (*mcp.Server, *session, chan struct{}) {
	t.Helper()
	a := dynamicApp(t)
	srv, _, st, err := mcpserver.NewStarting(mcpserver.Deps{Cfg: a.Cfg}, o, func() {})
	if err != nil {
		t.Fatal(err)
	}
	st.Ready(a.MCPDeps())
	s, changed := changesSession(t, srv)
	return srv, s, changed
}

// changesSession connects a client to srv that signals each
// notifications/tools/list_changed on changed.
func changesSession(t *testing.T, srv *mcp.Server) (*session, chan struct{}) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "dyn-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return &session{ClientSession: cs}, changed
}

func waitChanged(t *testing.T, changed chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
}

// TestEnableToolsetListsButDoesNotAllow: a dynamic session starts at the
// default selection and the three finding tools; enabling engage lists the
// like tool and says so, and a like still goes to the approval queue.
func TestEnableToolsetListsButDoesNotAllow(t *testing.T) {
	s, changed := dynamicSession(t, mcpserver.Options{Profile: mcpserver.Workflow, Dynamic: mcpserver.DynamicOn})
	listed := toolNames(s.listTools(t))
	for _, n := range []string{"list_toolsets", "find_tools", "enable_toolset", "x_post_tweet", "list_pending_approvals"} {
		if !slices.Contains(listed, n) {
			t.Errorf("a dynamic session does not start with %s: %v", n, listed)
		}
	}
	if slices.Contains(listed, "x_like_tweet") {
		t.Fatal("x_like_tweet listed before engage is enabled")
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "x_like_tweet", Arguments: map[string]any{"tweet_id": "20"}}); err == nil ||
		!strings.Contains(err.Error(), "enable_toolset") {
		t.Errorf("calling a tool of a toolset not enabled: %v, want a refusal naming enable_toolset", err)
	}

	found := s.call(t, "find_tools", map[string]any{"query": "schedule a post"})
	var f struct {
		Tools []mcpserver.FoundTool `json:"tools"`
	}
	if err := json.Unmarshal(found.Data, &f); err != nil || len(f.Tools) == 0 || f.Tools[0].Name != "schedule_in_queue" {
		t.Errorf("find_tools \"schedule a post\": %v %s, want schedule_in_queue first", err, found.Data)
	}

	env := s.call(t, "enable_toolset", map[string]any{"name": "engage"})
	if !*env.Success || !strings.Contains(string(env.Data), `"x_like_tweet"`) {
		t.Fatalf("enable_toolset engage: %s %+v", env.Data, env.Error)
	}
	waitChanged(t, changed)
	listed = toolNames(s.listTools(t))
	if !slices.Contains(listed, "x_like_tweet") {
		t.Fatalf("after enabling engage, tools/list lacks x_like_tweet: %v", listed)
	}
	like := s.call(t, "x_like_tweet", map[string]any{"tweet_id": "20"})
	if !*like.Success || !strings.Contains(string(like.Data), `"routed_to_approval":true`) {
		t.Errorf("a like after enable_toolset: %s %+v; want it routed to approval", like.Data, like.Error)
	}

	bad := s.call(t, "enable_toolset", map[string]any{"name": "everything"})
	if *bad.Success || !strings.Contains(bad.Error.Message, `"everything"`) {
		t.Errorf("enable_toolset everything: %+v", bad.Error)
	}
}

// TestEnableToolsetKeepsTheProfile: in a read-only profile, enabling
// engage lists nothing new and names what the profile leaves out.
func TestEnableToolsetKeepsTheProfile(t *testing.T) {
	s, _ := dynamicSession(t, mcpserver.Options{Profile: mcpserver.Readonly, Dynamic: mcpserver.DynamicOn})
	before := toolNames(s.listTools(t))
	env := s.call(t, "enable_toolset", map[string]any{"name": "engage"})
	var r mcpserver.ToolsetEnabled
	if err := json.Unmarshal(env.Data, &r); err != nil || len(r.Added) != 0 || !slices.Contains(r.NotServed, "x_like_tweet") {
		t.Errorf("enable_toolset engage in readonly: %v %s", err, env.Data)
	}
	if after := toolNames(s.listTools(t)); !slices.Equal(before, after) {
		t.Errorf("readonly listing changed: %v -> %v", before, after)
	}
}

// TestSpawnedServerListsEnabledToolsetsAtOnce: on the server a spawned
// process serves, a listing or call sent right after enable_toolset's
// answer, without waiting for notifications/tools/list_changed, already
// finds the toolset's tools, listed exactly as the HTTP server lists them,
// and a like still goes to the approval queue.
func TestSpawnedServerListsEnabledToolsetsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    mcpserver.Options
	}{
		{"default selection", mcpserver.Options{Profile: mcpserver.Workflow, Toolsets: []string{"default"}, Dynamic: mcpserver.DynamicOn}},
		{"no selection", mcpserver.Options{Profile: mcpserver.Workflow, Dynamic: mcpserver.DynamicOn}},
	} {
		o := tc.o
		t.Run(tc.name, func(t *testing.T) {
			_, s, _ := spawnedDynamicSession(t, o)
			eager, _ := dynamicSession(t, o)
			if listed := toolNames(s.listTools(t)); slices.Contains(listed, "x_like_tweet") || !slices.Contains(listed, "enable_toolset") {
				t.Fatalf("a spawned dynamic session starts with %v", listed)
			}
			for _, sess := range []*session{s, eager} {
				if env := sess.call(t, "enable_toolset", map[string]any{"name": "engage"}); !*env.Success {
					t.Fatalf("enable_toolset engage: %+v", env.Error)
				}
			}
			got, want := s.listTools(t), eager.listTools(t)
			if !slices.Contains(toolNames(got), "x_like_tweet") {
				t.Fatalf("right after enable_toolset engage, tools/list lacks x_like_tweet: %v", toolNames(got))
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(want)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("after enabling engage the spawned server lists\n%.400s\nwhere a server with every tool lists\n%.400s", gotJSON, wantJSON)
			}
			like := s.call(t, "x_like_tweet", map[string]any{"tweet_id": "20"})
			if !*like.Success || !strings.Contains(string(like.Data), `"routed_to_approval":true`) {
				t.Errorf("a like right after enable_toolset: %s %+v; want it routed to approval", like.Data, like.Error)
			}
		})
	}
}

// TestSpawnedServerEnablesConcurrently: sessions that enable toolsets,
// list and call at the same time each find their own tools (run with
// -race: they share the server's tables).
func TestSpawnedServerEnablesConcurrently(t *testing.T) {
	o := mcpserver.Options{Profile: mcpserver.Workflow, Toolsets: []string{"default"}, Dynamic: mcpserver.DynamicOn}
	srv, _, _ := spawnedDynamicSession(t, o)
	tests := []struct{ toolset, tool string }{
		{"schedule", "get_queue_slots"}, {"meta", "get_mode"}, {"analytics", "get_action_counts"},
		{"schedule", "list_evergreen"}, {"meta", "get_rate_limits"}, {"analytics", "get_stats"},
	}
	sessions := make([]*session, len(tests))
	for i := range tests {
		sessions[i], _ = changesSession(t, srv)
	}
	errs := make(chan error, len(tests))
	for i, tc := range tests {
		go func() {
			errs <- enableListCall(sessions[i], tc.toolset, tc.tool)
		}()
	}
	for range tests {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// enableListCall enables toolset in s, then lists and calls tool in it,
// returning what went wrong (t is not for other goroutines).
func enableListCall(s *session, toolset, tool string) error {
	ctx := context.Background()
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "enable_toolset", Arguments: map[string]any{"name": toolset}}); err != nil {
		return fmt.Errorf("enable_toolset %s: %w", toolset, err)
	}
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list after enabling %s: %w", toolset, err)
	}
	if !slices.Contains(toolNames(res.Tools), tool) {
		return fmt.Errorf("after enabling %s, tools/list lacks %s", toolset, tool)
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}); err != nil {
		return fmt.Errorf("%s after enabling %s: %w", tool, toolset, err)
	}
	return nil
}

// TestDynamicAutoFollowsTheClient: with auto, a client that subscribes to
// tools/list_changed starts at the default; one that does not lists the
// whole profile, as a server without a selection always has. The client
// opens its subscription without waiting for the server to take it, so a
// listing may come first; the server then says the list changed, and the
// client's next listing is the default.
func TestDynamicAutoFollowsTheClient(t *testing.T) {
	o := mcpserver.Options{Profile: mcpserver.Workflow, Dynamic: mcpserver.DynamicAuto}
	s, changed := dynamicSession(t, o)
	listed := toolNames(s.listTools(t))
	if slices.Contains(listed, "x_like_tweet") {
		waitChanged(t, changed)
		listed = toolNames(s.listTools(t))
	}
	if !slices.Contains(listed, "enable_toolset") || slices.Contains(listed, "x_like_tweet") {
		t.Errorf("a subscribing client lists %d tools: %v", len(listed), listed)
	}
	a := newApp(t, nil)
	plain := connect(t, a, o)
	if listed := toolNames(plain.listTools(t)); slices.Contains(listed, "enable_toolset") || !slices.Contains(listed, "x_like_tweet") {
		t.Errorf("a client that does not subscribe lists %d tools: %v", len(listed), listed)
	}
}

// withHeaders adds the bearer token and the given headers to every request.
type withHeaders struct {
	h    map[string]string
	base http.RoundTripper
}

func (w withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range w.h {
		r.Header.Set(k, v)
	}
	return w.base.RoundTrip(r)
}

// TestHTTPHeadersSelectTheSession: over HTTP each session may narrow its
// own listing by header, inside the profile; an unknown name is refused
// with the name.
func TestHTTPHeadersSelectTheSession(t *testing.T) {
	a := newApp(t, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.APIReadonly})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcpserver.HTTPHandler(srv, mcpserver.HTTPOptions{Token: testToken}))
	t.Cleanup(ts.Close)
	open := func(h map[string]string) (*mcp.ClientSession, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		t.Cleanup(cancel)
		client := mcp.NewClient(&mcp.Implementation{Name: "hdr-test", Version: "1"}, nil)
		return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL,
			HTTPClient: &http.Client{Transport: withHeaders{h: h, base: http.DefaultTransport}}, MaxRetries: -1}, nil)
	}
	tests := []struct {
		name   string
		header map[string]string
		check  func(names []string) bool
	}{
		{"meta toolset", map[string]string{mcpserver.HeaderToolsets: "meta"}, func(n []string) bool {
			return slices.Equal(n, []string{"get_capabilities", "get_config", "get_mode", "health_check", "validate_config"})
		}},
		{"tools and exclusions", map[string]string{mcpserver.HeaderToolsets: "meta", mcpserver.HeaderTools: "x_get_me", mcpserver.HeaderExcludeTools: "get_config,validate_config"},
			func(n []string) bool {
				return slices.Equal(n, []string{"get_capabilities", "get_mode", "health_check", "x_get_me"})
			}},
		{"engage stays outside a read-only profile", map[string]string{mcpserver.HeaderToolsets: "engage,meta"}, func(n []string) bool {
			return !slices.Contains(n, "x_like_tweet") && slices.Contains(n, "health_check")
		}},
		{"no header lists the profile", nil, func(n []string) bool { return slices.Contains(n, "x_get_followers") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := open(tc.header)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if names := toolNames(res.Tools); !tc.check(names) {
				t.Errorf("listed %v", names)
			}
		})
	}
	for _, h := range []map[string]string{
		{mcpserver.HeaderToolsets: "meta,nosuchset"},
		{mcpserver.HeaderTools: "x_like_tweet"},
	} {
		cs, err := open(h)
		if err == nil {
			cs.Close()
			t.Errorf("headers %v accepted", h)
			continue
		}
		for _, v := range h {
			name := v[strings.LastIndex(v, ",")+1:]
			if !strings.Contains(err.Error(), name) {
				t.Errorf("headers %v: error %q does not name %s", h, err, name)
			}
		}
	}
}

// TestToolsListSaysHowLongItKeeps: a fixed selection's tools/list may be
// cached by the client that asked for it for an hour; a dynamic session's
// changes as toolsets are enabled, so it is re-read each time.
func TestToolsListSaysHowLongItKeeps(t *testing.T) {
	fixed := connect(t, newApp(t, nil), mcpserver.Options{Profile: mcpserver.Workflow, Toolsets: []string{"default"}})
	res, err := fixed.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "private" || res.TTLMs != 3_600_000 {
		t.Errorf("a fixed selection's list: scope %q, ttl %d ms; want private, 3600000", res.CacheScope, res.TTLMs)
	}
	dyn, _ := dynamicSession(t, mcpserver.Options{Profile: mcpserver.Workflow, Dynamic: mcpserver.DynamicOn})
	res, err = dyn.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "private" || res.TTLMs != 0 {
		t.Errorf("a dynamic session's list: scope %q, ttl %d ms; want private, 0", res.CacheScope, res.TTLMs)
	}
}
