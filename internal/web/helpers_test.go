package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/store"
)

// site is a sandbox App (approval mode on, as shipped), its review page
// on a loopback port and, on demand, an MCP client of the same App.
type site struct {
	t   testing.TB
	a   *app.App
	srv *Server
	// base is http://127.0.0.1:PORT; login the one-time URL.
	base, login string
}

func newSite(t testing.TB, configure func(*config.Config)) *site {
	t.Helper()
	return newSiteAt(t, configure, "")
}

// mcpToken is the bearer token of the MCP endpoint a site under a prefix
// is mounted beside.
const mcpToken = "0123456789abcdef0123456789abcdef"

// newSiteAt is newSite under a path prefix: the site is mounted there
// beside the App's MCP endpoint, on one port, as `mcp serve --transport
// http --web` serves it.
func newSiteAt(t testing.TB, configure func(*config.Config), prefix string) *site {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := config.Default()
	cfg.Home = filepath.Join(t.TempDir(), "sandbox")
	// The pages are shown with likes, follows, quotes and replies to
	// strangers, which X allows only an enterprise app.
	cfg.XAPI.Access = config.AccessEnterprise
	if configure != nil {
		configure(&cfg)
	}
	a, err := app.New(ctx, &cfg, app.Options{Sandbox: true, RequireDB: true})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	d := Deps{Now: a.Now, Settings: "mode = \"autopilot\"", Links: a.Links(), PublicBaseURL: cfg.Notify.PublicBaseURL, SandboxURL: a.Sim.URL}
	if o := a.Outbox(); o != nil {
		d.Notified = o.LastNotified
	}
	// Every account of the sandbox home (the demo brands too), as
	// `tuitbot web` serves them.
	for _, name := range a.Accounts() {
		acc, err := a.ForAccount(name)
		if err != nil {
			t.Fatalf("ForAccount(%s): %v", name, err)
		}
		d.Accounts = append(d.Accounts, testAccount(acc))
	}
	srv, err := New(d, Options{PollEvery: 50 * time.Millisecond, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	if prefix == "" {
		go func() {
			defer close(done)
			_ = srv.Serve(ctx, ln)
		}()
	} else {
		ms, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Workflow})
		if err != nil {
			t.Fatalf("MCPServer: %v", err)
		}
		mounts := map[string]http.Handler{prefix: srv.Within(ctx)}
		if d.Links != nil {
			mounts["/a"] = srv.LinkHandler()
		}
		h := mcpserver.HTTPHandler(ms, mcpserver.HTTPOptions{Token: mcpToken, Mounts: mounts})
		hs := &http.Server{Handler: h}
		go func() {
			defer close(done)
			_ = hs.Serve(ln)
		}()
		// Within ends the site's event streams with ctx; Shutdown then
		// finds every connection idle.
		context.AfterFunc(ctx, func() { _ = hs.Shutdown(context.Background()) })
	}
	t.Cleanup(func() {
		cancel()
		<-done
		a.Close()
	})
	login := srv.LoginURL()
	return &site{t: t, a: a, srv: srv, base: strings.TrimSuffix(login[:strings.Index(login, "/login")], "/"), login: login}
}

// testAccount is one account's services, as cmd/tuitbot's webAccount
// builds them.
func testAccount(a *app.App) Account {
	acc := Account{Name: a.Account, Gateway: a.Gateway, DailyBudgetUSD: a.Cfg.MCPPolicy.DailyBudgetUSD}
	if wf, err := a.Workflow(); err == nil {
		acc.Workflow = wf
	}
	if c, err := a.Composer(); err == nil {
		acc.Composer = c
	}
	acc.Queue = a.Cfg.QueuePolicy
	if r, err := a.Autopilot(autopilot.Options{}); err == nil {
		acc.Autopilot, acc.Hold = r.Status, r.Hold
	}
	disc, _ := a.Discovery()
	acc.Posts = LookupPosts(disc, a.XClient)
	acc.Users = LookupUsers(a.XClient)
	acc.Sandbox = a.Sim != nil
	acc.CheckHandOffs = func(ctx context.Context) ([]gateway.HandOff, error) { return a.CheckHandOffs(ctx, true) }
	acc.Access = a.XAccessLevel()
	acc.OptOuts = a.OptOutList
	acc.XLogin = a.XLoginProblem
	acc.Policy = PolicyInfo{Rules: a.Policy.Rules(), Limits: a.Policy.Limits(), Usage: a.Counters.Snapshot}
	return acc
}

// mcpClient connects an MCP client to the App's server, as an agent would.
func (s *site) mcpClient() *mcp.ClientSession {
	s.t.Helper()
	srv, _, err := s.a.MCPServer(mcpserver.Options{Profile: mcpserver.Workflow})
	if err != nil {
		s.t.Fatalf("MCPServer: %v", err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		s.t.Fatalf("server connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		s.t.Fatalf("client connect: %v", err)
	}
	s.t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// postTweet has the agent call x_post_tweet and returns the approval item
// the policy queued it as.
func (s *site) postTweet(cs *mcp.ClientSession, text string) int64 {
	s.t.Helper()
	return s.postTweetWith(cs, map[string]any{"text": text})
}

// postTweetWith is postTweet with any arguments.
func (s *site) postTweetWith(cs *mcp.ClientSession, args map[string]any) int64 {
	s.t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "x_post_tweet", Arguments: args})
	if err != nil {
		s.t.Fatalf("x_post_tweet: %v", err)
	}
	var raw string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			raw += tc.Text
		}
	}
	var env struct {
		Success bool `json:"success"`
		Data    struct {
			Routed bool  `json:"routed_to_approval"`
			ID     int64 `json:"approval_queue_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err != nil || !env.Success || !env.Data.Routed || env.Data.ID == 0 {
		s.t.Fatalf("x_post_tweet was not queued for approval: %s", raw)
	}
	return env.Data.ID
}

// fillQueue puts n pending x_post_tweet items in the queue directly; the
// gateway's own path is proven elsewhere and would take minutes for 10,000.
func (s *site) fillQueue(n int) {
	s.t.Helper()
	now := time.Now()
	_, err := s.a.DB.ExecContext(context.Background(), `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM seq WHERE i < ?)
		INSERT INTO approval_queue (account_id, tool_name, params_json, original_params, params_hash, matched_rule_id, reason, caller,
			status, created_at, expires_at)
		SELECT 'default', 'x_post_tweet', json_object('text', 'queued post number ' || i || ' for @gopher #golang'),
			json_object('text', 'queued post number ' || i || ' for @gopher #golang'), 'h' || i, 'approval_mode', 'approval mode is on', 'mcp',
			'pending', ?, ? FROM seq`, n, store.FormatTime(now), store.FormatTime(now.Add(24*time.Hour)))
	if err != nil {
		s.t.Fatalf("fill the queue: %v", err)
	}
}

// client is a logged-in HTTP client of the site and its CSRF token.
func (s *site) client() (*http.Client, string) {
	s.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(s.login)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != s.srv.o.Prefix+"/approvals" {
		s.t.Fatalf("login: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	u, _ := url.Parse(s.base)
	for _, ck := range jar.Cookies(u) {
		if ck.Name == sessionCookie {
			s.srv.mu.Lock()
			defer s.srv.mu.Unlock()
			return c, s.srv.sessions[ck.Value].csrf
		}
	}
	s.t.Fatal("no session cookie after login")
	return nil, ""
}

func (s *site) get(c *http.Client, path string) (int, string) {
	s.t.Helper()
	resp, err := c.Get(s.base + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// shownOf is the content hash of item id of g as the approvals page shows
// it, which its decision forms post back.
func shownOf(t testing.TB, g *gateway.Gateway, id int64) string {
	t.Helper()
	it, err := g.Item(context.Background(), id)
	if err != nil {
		t.Fatalf("read item %d: %v", id, err)
	}
	return it.ContentHash
}
