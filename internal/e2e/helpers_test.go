//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// lockedBuffer collects log output from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sim is an emulator started by the test itself, so the test controls its
// options (a duplicate-content window short enough that a double post would
// really land twice, no rate limits, faults).
type sim struct {
	*xsim.Server
	url string
}

func startSim(t *testing.T, mutate func(*xsim.Options)) *sim {
	t.Helper()
	opts := xsim.DefaultOptions()
	opts.Seed = 3
	opts.RateLimits = false
	// X itself refuses a repeated text; the emulator must not, or it would
	// hide a double post by the gateway.
	opts.DuplicateWindow = time.Nanosecond
	if mutate != nil {
		mutate(&opts)
	}
	s := xsim.New(opts)
	url, err := s.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return &sim{Server: s, url: url}
}

// postsWithText counts the live and deleted posts carrying text.
func (s *sim) postsByText() map[string]int {
	out := map[string]int{}
	for _, tw := range s.World().Tweets {
		out[tw.Text]++
	}
	return out
}

// foreignTweets returns ids of posts by other users.
func (s *sim) foreignTweets(t *testing.T, n int) []string {
	t.Helper()
	me := s.DemoUserID()
	var out []string
	for _, tw := range s.World().Tweets {
		if tw.AuthorID != me && tw.RetweetOf == "" {
			out = append(out, tw.ID)
			if len(out) == n {
				return out
			}
		}
	}
	t.Fatalf("the demo world has fewer than %d foreign posts", n)
	return nil
}

// permissive is a configuration that lets mutations run directly.
func permissive(home string) config.Config {
	cfg := config.Default()
	cfg.Home = home
	// These proofs like, follow, quote and reply to strangers, which X
	// allows only an enterprise app.
	cfg.XAPI.Access = config.AccessEnterprise
	cfg.ApprovalMode = false
	cfg.MCPPolicy.RequireApprovalFor = []string{}
	cfg.MCPPolicy.MaxMutationsPerHour = 0
	cfg.Logging.Level = "debug"
	return cfg
}

// pointAt sends every X host and the OAuth endpoints to the emulator and
// stores a token for its demo user, as `tuitbot auth` would.
func pointAt(t *testing.T, cfg *config.Config, s *sim) (access, refresh string) {
	t.Helper()
	cfg.XAPI.APIBaseURL, cfg.XAPI.UploadBaseURL, cfg.XAPI.LegacyUploadURL = s.url, s.url, s.url
	cfg.XAPI.ClientID = xsim.DefaultClientID
	cfg.XAPI.AuthorizeURL = s.url + "/i/oauth2/authorize"
	cfg.XAPI.TokenURL = s.url + "/2/oauth2/token"
	access, refresh, ttl := s.IssueToken(s.DemoUserID(), s.AllScopes())
	tok := &xauth.Token{AccessToken: access, RefreshToken: refresh, TokenType: "bearer", ExpiresAt: time.Now().Add(ttl), Scopes: s.AllScopes()}
	// As `tuitbot auth` does, create the database (and its identity)
	// before the first token: a token file marks a home with history.
	db, err := store.Open(context.Background(), cfg.DBFile(), store.Options{})
	if err != nil {
		t.Fatalf("create the database: %v", err)
	}
	db.Close()
	if err := xauth.SaveToken(context.Background(), cfg.TokenFile(), tok); err != nil {
		t.Fatalf("save token: %v", err)
	}
	return access, refresh
}

// harness is an app and its MCP server with captured logs.
type harness struct {
	t    *testing.T
	ctx  context.Context
	a    *app.App
	srv  *mcp.Server
	logs *lockedBuffer
}

func newHarness(t *testing.T, cfg *config.Config, opts app.Options) *harness {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test configuration is invalid: %v", err)
	}
	logs := &lockedBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	a, err := app.New(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	if a.Gateway == nil {
		t.Fatalf("gateway unavailable: %v", a.GatewayErr)
	}
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Workflow})
	if err != nil {
		t.Fatalf("MCPServer: %v", err)
	}
	return &harness{t: t, ctx: ctx, a: a, srv: srv, logs: logs}
}

// connect opens one MCP client session over in-memory transports.
func (h *harness) connect() *mcp.ClientSession {
	h.t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := h.srv.Connect(h.ctx, st, nil)
	if err != nil {
		h.t.Fatalf("server connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(h.ctx, ct, nil)
	if err != nil {
		h.t.Fatalf("client connect: %v", err)
	}
	h.t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// env is a decoded tool result.
type env struct {
	Success bool                `json:"success"`
	Data    json.RawMessage     `json:"data"`
	Error   *envelope.ErrorBody `json:"error"`
	Meta    envelope.Meta       `json:"meta"`
	raw     string
	isError bool
}

func (e env) code() apperr.Code {
	if e.Error == nil {
		return ""
	}
	return e.Error.Code
}

// data decodes Data into a map.
func (e env) data(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.Data, &m); err != nil {
		t.Fatalf("data is not an object: %v: %s", err, e.Data)
	}
	return m
}

// call runs one tool and decodes its envelope; a transport failure is
// returned as an error.
func call(ctx context.Context, cs *mcp.ClientSession, tool string, args any) (env, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return env{}, err
	}
	if len(res.Content) == 0 {
		return env{}, fmt.Errorf("%s: no content", tool)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return env{}, fmt.Errorf("%s: content is %T", tool, res.Content[0])
	}
	var e env
	if err := json.Unmarshal([]byte(text.Text), &e); err != nil {
		return env{}, fmt.Errorf("%s: envelope: %w: %s", tool, err, text.Text)
	}
	e.raw, e.isError = text.Text, res.IsError
	if e.isError == e.Success {
		return e, fmt.Errorf("%s: isError %v disagrees with success %v", tool, res.IsError, e.Success)
	}
	if e.Error != nil && e.Error.Retryable != apperr.Lookup(e.Error.Code).Retryable {
		return e, fmt.Errorf("%s: error %s has retryable %v, the table says %v", tool, e.Error.Code, e.Error.Retryable, apperr.Lookup(e.Error.Code).Retryable)
	}
	return e, nil
}

func mustCall(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args any) env {
	t.Helper()
	e, err := call(ctx, cs, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return e
}

// auditStatus returns the audit status per correlation id.
func auditStatus(t *testing.T, ctx context.Context, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT correlation_id, status FROM mutation_audit`)
	if err != nil {
		t.Fatalf("read audit: %v", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var c, s string
		if err := rows.Scan(&c, &s); err != nil {
			t.Fatal(err)
		}
		out[c] = s
	}
	return out
}
