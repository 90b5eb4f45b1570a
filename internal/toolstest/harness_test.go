// Package toolstest proves the MCP tools end to end: a real MCP client talks
// to the real server over an in-memory transport, the server runs the real
// services, X is the in-process emulator and the LLM is a local fake that
// speaks the OpenAI chat-completions wire format.
package toolstest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/safefetch"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// envOptions select how a test environment is configured.
type envOptions struct {
	// permissive lets mutations execute directly: approval mode off and no
	// compat rule requiring approval.
	permissive bool
	// composer switches the operating mode to composer.
	composer bool
	// llm starts a fake OpenAI-compatible server and configures it.
	llm bool
	// agentApproval registers approve_item, reject_item and approve_all.
	agentApproval bool
	// configure may adjust the configuration last.
	configure func(*config.Config)
	// onX, when set, puts a loopback proxy between the App and an emulator
	// the test starts itself, and runs before every request reaches it. The
	// App then reaches X through operator configuration (base URLs), not
	// through the sandbox.
	onX func(r *http.Request)
	// now is the App's clock (and the sandbox emulator's); nil means the
	// real one.
	now func() time.Time
	// getenv holds the secrets the configuration's *_env keys name.
	getenv func(string) string
	// mediaFetch adjusts how media is downloaded from URLs.
	mediaFetch func(*safefetch.Options)
	// logger, when set, receives the App's log.
	logger *slog.Logger
	// access is x_api.access. Empty means enterprise: most tests here
	// like, follow, quote and reply to strangers, which X allows only an
	// enterprise app; the tests of X's self-serve rules ask for
	// pay_per_use.
	access config.Access
	// aiRepliesUnapproved leaves x_api.ai_replies_approved false, so that
	// every reply an agent writes goes to a person. By default the tests
	// here declare X's approval: most of them reply and expect the reply
	// on X; the tests of the rule ask for it.
	aiRepliesUnapproved bool
}

// env is one running product: App (with its in-process emulator), MCP
// server and connected client.
type env struct {
	t    *testing.T
	ctx  context.Context
	Home string // what TUITBOT_HOME would be; the App lives in Home/sandbox
	Cfg  *config.Config
	App  *app.App
	Sim  *xsim.Server
	LLM  *fakeLLM
	// Media is a directory listed in media.allowed_dirs.
	Media string
	cs    *mcp.ClientSession
	ss    *mcp.ServerSession

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

// testKeywords are the business keywords discovery and scoring use; the
// demo world talks about both.
var testKeywords = []string{"golang", "AI agents"}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx := t.Context()
	home := t.TempDir()
	cfg := config.Default()
	cfg.Home = filepath.Join(home, "sandbox")
	cfg.Business.ProductName = "Tuitbot"
	cfg.Business.ProductDescription = "A safe way to let AI agents work an X account."
	cfg.Business.TargetAudience = "developers building with AI agents"
	cfg.Business.ProductKeywords = slices.Clone(testKeywords)
	cfg.Business.IndustryTopics = []string{"developer tools"}
	cfg.Business.ContentPillars = []string{"agent safety", "Go tooling"}
	// A generous window keeps sleeping retries out of the way; tests that
	// care about retries arm faults explicitly.
	cfg.XAPI.TimeoutSeconds = 10
	cfg.XAPI.Access = config.AccessEnterprise
	if o.access != "" {
		cfg.XAPI.Access = o.access
	}
	cfg.XAPI.AIRepliesApproved = !o.aiRepliesUnapproved
	media := filepath.Join(home, "media")
	mkdir(t, media)
	cfg.Media.AllowedDirs = []string{media}
	if o.permissive {
		cfg.ApprovalMode = false
		cfg.MCPPolicy.RequireApprovalFor = []string{}
		// Shared environments run many mutations; the hourly cap is
		// tested in the policy package.
		cfg.MCPPolicy.MaxMutationsPerHour = 0
	}
	if o.composer {
		cfg.Mode = "composer"
	}
	if o.agentApproval {
		cfg.MCPPolicy.AllowAgentApproval = true
	}
	e := &env{t: t, ctx: ctx, Home: home, Media: media}
	if o.llm {
		e.LLM = newFakeLLM(t)
		cfg.LLM = config.LLM{Provider: "openai", Model: "gpt-4o-mini", BaseURL: e.LLM.URL + "/v1", APIKey: fakeAPIKey,
			TimeoutSeconds: 10, MaxTokens: 256, Temperature: 0.7}
	}
	if o.configure != nil {
		o.configure(&cfg)
	}
	var sim *xsim.Server
	if o.onX != nil {
		sim = startProxiedEmulator(t, &cfg, o.onX)
	}
	a, err := app.New(ctx, &cfg, app.Options{Sandbox: o.onX == nil, Now: o.now, Getenv: o.getenv, MediaFetch: o.mediaFetch, Logger: o.logger})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("app.Close: %v", err)
		}
	})
	if sim == nil {
		if a.Sim == nil || a.Sim.Server == nil {
			t.Fatal("the sandbox App did not start its own emulator")
		}
		sim = a.Sim.Server
	}
	e.Cfg, e.App, e.Sim = &cfg, a, sim
	e.connect()
	return e
}

// startProxiedEmulator starts an emulator behind a hooking proxy, signs the
// demo account in and points the configuration at the proxy.
func startProxiedEmulator(t *testing.T, cfg *config.Config, hook func(*http.Request)) *xsim.Server {
	t.Helper()
	opts := xsim.DefaultOptions()
	opts.Seed = cfg.Sandbox.Seed
	sim := xsim.New(opts)
	base, err := sim.Start(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hook(r)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	cfg.XAPI.APIBaseURL, cfg.XAPI.UploadBaseURL, cfg.XAPI.LegacyUploadURL = proxy.URL, proxy.URL, proxy.URL
	cfg.XAPI.ClientID = xsim.DefaultClientID
	cfg.XAPI.AuthorizeURL = base + "/i/oauth2/authorize"
	cfg.XAPI.TokenURL = base + "/2/oauth2/token"
	access, refresh, ttl := sim.IssueToken(sim.DemoUserID(), sim.AllScopes())
	tok := &xauth.Token{AccessToken: access, RefreshToken: refresh, TokenType: "bearer", ExpiresAt: time.Now().Add(ttl), Scopes: sim.AllScopes()}
	// As `tuitbot auth` does, create the database (and its identity)
	// before the first token: a token file marks a home with history.
	db, err := store.Open(t.Context(), cfg.DBFile(), store.Options{})
	if err != nil {
		t.Fatalf("create the database: %v", err)
	}
	db.Close()
	if err := xauth.SaveToken(t.Context(), cfg.TokenFile(), tok); err != nil {
		t.Fatalf("save token: %v", err)
	}
	return sim
}

func (e *env) connect() {
	t := e.t
	srv, _, err := e.App.MCPServer(mcpserver.Options{Profile: mcpserver.Workflow})
	if err != nil {
		t.Fatalf("MCPServer: %v", err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(e.ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolstest", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.progress = append(e.progress, req.Params)
		},
	})
	cs, err := client.Connect(e.ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	e.cs, e.ss = cs, ss
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
}

// tools lists the registered tools.
func (e *env) tools() []*mcp.Tool {
	e.t.Helper()
	var out []*mcp.Tool
	for tool, err := range e.cs.Tools(e.ctx, nil) {
		if err != nil {
			e.t.Fatalf("tools/list: %v", err)
		}
		out = append(out, tool)
	}
	return out
}

// result is a decoded tool result.
type result struct {
	Success bool                `json:"success"`
	Data    json.RawMessage     `json:"data"`
	Error   *envelope.ErrorBody `json:"error"`
	Meta    meta                `json:"meta"`
	IsError bool                `json:"-"`
	tool    string
}

type meta struct {
	ToolVersion  string `json:"tool_version"`
	ElapsedMS    int64  `json:"elapsed_ms"`
	Mode         string `json:"mode"`
	ApprovalMode *bool  `json:"approval_mode"`
	// ApprovalOverriddenBy and DryRunMutations report what approval mode
	// really does.
	ApprovalOverriddenBy []string             `json:"approval_overridden_by"`
	DryRunMutations      bool                 `json:"dry_run_mutations"`
	CorrelationID        string               `json:"correlation_id"`
	Rollback             *envelope.Rollback   `json:"rollback"`
	Pagination           *envelope.Pagination `json:"pagination"`
	RetryCount           *int                 `json:"retry_count"`
	Notes                []string             `json:"notes"`
}

// call invokes a tool and checks the envelope contract every result keeps.
func (e *env) call(name string, args any) result {
	e.t.Helper()
	return e.callParams(&mcp.CallToolParams{Name: name, Arguments: args})
}

func (e *env) callParams(p *mcp.CallToolParams) result {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
	defer cancel()
	res, err := e.cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", p.Name, err)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("%s: structuredContent: %v", p.Name, err)
	}
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: structuredContent is not an envelope: %v: %.300s", p.Name, err, b)
	}
	r.IsError, r.tool = res.IsError, p.Name
	if r.IsError == r.Success {
		t.Fatalf("%s: isError=%t but success=%t", p.Name, r.IsError, r.Success)
	}
	if r.Meta.ToolVersion != envelope.ToolVersion {
		t.Fatalf("%s: meta.tool_version = %q", p.Name, r.Meta.ToolVersion)
	}
	if !r.Success {
		if r.Error == nil {
			t.Fatalf("%s: failure without error object: %s", p.Name, b)
		}
		if want := apperr.Lookup(r.Error.Code).Retryable; r.Error.Retryable != want {
			t.Fatalf("%s: error %s retryable=%t, the code table says %t", p.Name, r.Error.Code, r.Error.Retryable, want)
		}
	}
	return r
}

// ok requires success and decodes data into v (when v is not nil).
func (r result) ok(t *testing.T, v any) result {
	t.Helper()
	if !r.Success {
		t.Fatalf("%s failed: %s: %s", r.tool, r.Error.Code, r.Error.Message)
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			t.Fatalf("%s: decode data: %v: %.400s", r.tool, err, r.Data)
		}
	}
	return r
}

// fails requires failure with code and returns the result for more checks.
func (r result) fails(t *testing.T, code apperr.Code) result {
	t.Helper()
	if r.Success {
		t.Fatalf("%s succeeded, want %s: %.400s", r.tool, code, r.Data)
	}
	if r.Error.Code != code {
		t.Fatalf("%s: error %s (%s), want %s", r.tool, r.Error.Code, r.Error.Message, code)
	}
	return r
}

// mentions requires the error message to contain every part.
func (r result) mentions(t *testing.T, parts ...string) result {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(r.Error.Message, p) {
			t.Fatalf("%s: error message %q does not mention %q", r.tool, r.Error.Message, p)
		}
	}
	return r
}

// extra returns a code-specific error field.
func (r result) extra(key string) any {
	if r.Error == nil || r.Error.Extra == nil {
		return nil
	}
	return r.Error.Extra[key]
}

// requireV4 checks that id is an RFC 4122 version 4 UUID.
func requireV4(t *testing.T, id string) {
	t.Helper()
	u, err := uuid.Parse(id)
	if err != nil {
		t.Fatalf("correlation_id %q is not a UUID: %v", id, err)
	}
	if u.Version() != 4 || u.Variant() != uuid.RFC4122 {
		t.Fatalf("correlation_id %q is version %d variant %v, want an RFC 4122 v4 UUID", id, u.Version(), u.Variant())
	}
}

// counters snapshots the emulator's side-effect counters.
func (e *env) counters() map[string]int64 { return e.Sim.Counters() }

// requireDelta checks that exactly the listed counters moved by exactly the
// given amounts since before; every other counter must not have moved.
func (e *env) requireDelta(before map[string]int64, want map[string]int64) {
	e.t.Helper()
	after := e.counters()
	for k, v := range after {
		if d := v - before[k]; d != want[k] {
			e.t.Errorf("emulator counter %s moved by %d, want %d", k, d, want[k])
		}
	}
}

// takeProgress returns and clears the progress notifications received.
// Call syncNotifications first to have every notification the server has
// sent so far.
func (e *env) takeProgress() []*mcp.ProgressNotificationParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.progress
	e.progress = nil
	return out
}

// demoTweet returns a post by someone other than the demo account that is
// neither a reply nor a repost, optionally matching pred.
func (e *env) demoTweet(pred func(xsim.Tweet) bool) xsim.Tweet {
	e.t.Helper()
	w := e.Sim.World()
	for i := len(w.Tweets) - 1; i >= 0; i-- {
		tw := w.Tweets[i]
		if tw.AuthorID == w.DemoUserID || tw.RetweetOf != "" || tw.InReplyToTweetID != "" {
			continue
		}
		if pred == nil || pred(tw) {
			return tw
		}
	}
	e.t.Fatal("no suitable post in the emulator world")
	return xsim.Tweet{}
}

// otherUser returns an account the demo account does not follow.
func (e *env) otherUser(skip ...string) xsim.User {
	e.t.Helper()
	w := e.Sim.World()
	follows := map[string]bool{}
	for _, f := range w.Follows {
		if f.From == w.DemoUserID {
			follows[f.To] = true
		}
	}
	for _, u := range w.Users {
		if u.ID != w.DemoUserID && !follows[u.ID] && !u.Protected && !slices.Contains(skip, u.ID) {
			return u
		}
	}
	e.t.Fatal("no account the demo account does not follow")
	return xsim.User{}
}

// tweetByID finds a post in the emulator world.
func (e *env) tweetByID(id string) (xsim.Tweet, bool) {
	for _, tw := range e.Sim.World().Tweets {
		if tw.ID == id {
			return tw, true
		}
	}
	return xsim.Tweet{}, false
}

// syncNotifications returns once the client has handled every notification
// the server sent before it. A tool's notifications travel beside its result
// and may be handled just after the call returns; the client handles
// incoming messages in order, so a ping from the server is answered only
// after them.
func (e *env) syncNotifications() {
	e.t.Helper()
	if err := e.ss.Ping(e.ctx, nil); err != nil {
		e.t.Fatalf("ping the client: %v", err)
	}
}
