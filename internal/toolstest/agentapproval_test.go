package toolstest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// humanDecisionTools are the tools with which an agent decides what only a
// human decides otherwise.
var humanDecisionTools = []string{"approve_item", "reject_item", "approve_all", "resolve_mutation"}

// TestAgentApprovalIsTheAccountsOwn: whether an agent may decide for a
// human is the setting of the account the decision is for (its
// [accounts.NAME.mcp_policy] section, else the top-level one), never the
// setting of the account the server was started for. Every combination
// of the two settings, over MCP, on servers started for either account,
// for every tool that decides for a human, on SQLite and PostgreSQL.
func TestAgentApprovalIsTheAccountsOwn(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, top := range []bool{true, false} {
			for _, own := range []string{"true", "false", "unset"} {
				t.Run(fmt.Sprintf("top=%t,brand_b=%s", top, own), func(t *testing.T) {
					testAgentApprovalCase(t, top, own)
				})
			}
		}
	})
}

func testAgentApprovalCase(t *testing.T, top bool, own string) {
	e := newEnv(t, envOptions{configure: func(c *config.Config) {
		if storetest.BackendOf(t) == storetest.Postgres {
			c.Storage.DatabaseURL = storetest.Target(t)
		}
		// Bookmarks wait for a human; posts run at once, so one whose
		// answer is lost leaves an unknown outcome to resolve. (Not likes:
		// X's automation rules leave those to a person whatever the
		// setting.)
		c.ApprovalMode = false
		c.MCPPolicy.RequireApprovalFor = []string{"x_bookmark_tweet"}
		c.MCPPolicy.MaxMutationsPerHour = 0
		c.MCPPolicy.AllowAgentApproval = top
		section := map[string]any{}
		if own != "unset" {
			section["mcp_policy"] = map[string]any{"allow_agent_approval": own == "true"}
		}
		c.Accounts = map[string]map[string]any{"brand_b": section}
	}})
	allowed := map[string]bool{"default": top, "brand_b": top}
	if own != "unset" {
		allowed["brand_b"] = own == "true"
	}
	users := e.Sim.DemoAccounts()
	b, err := e.App.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]*env{"default": e, "brand_b": e.serverFor(b.MCPServer)}
	marked := e.unmarkedTweets(users["default"], users["brand_b"])
	for _, server := range []string{"default", "brand_b"} {
		s := servers[server]
		var listed []string
		for _, tool := range s.tools() {
			listed = append(listed, tool.Name)
		}
		for _, tool := range humanDecisionTools {
			// A tool some account may use is listed; a call for an
			// account that forbids it is refused.
			if got, want := slices.Contains(listed, tool), allowed["default"] || allowed["brand_b"]; got != want {
				t.Errorf("server for %s lists %s: %t, want %t", server, tool, got, want)
			}
		}
		if !allowed["default"] && !allowed["brand_b"] {
			continue
		}
		for _, acc := range []string{"default", "brand_b"} {
			for _, tool := range humanDecisionTools {
				if !slices.Contains(listed, tool) {
					continue // reported above
				}
				name := fmt.Sprintf("server %s, %s for %s", server, tool, acc)
				args := map[string]any{}
				// The server's own account is reached both ways: by
				// naming it and by naming none.
				if acc != server || tool == "approve_item" {
					args["account"] = acc
				}
				s.decide(t, name, tool, acc, args, allowed[acc], users[acc], marked)
			}
		}
	}
}

// serverFor connects a second client to a server that build makes, sharing
// e's App and emulator.
func (e *env) serverFor(build func(mcpserver.Options) (*mcp.Server, []*mcpserver.Tool, error)) *env {
	e.t.Helper()
	srv, _, err := build(mcpserver.Options{Profile: mcpserver.Workflow})
	if err != nil {
		e.t.Fatalf("MCPServer: %v", err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(e.ctx, st, nil)
	if err != nil {
		e.t.Fatalf("server connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "toolstest-2", Version: "1"}, nil).Connect(e.ctx, ct, nil)
	if err != nil {
		e.t.Fatalf("client connect: %v", err)
	}
	e.t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return &env{t: e.t, ctx: e.ctx, Home: e.Home, Cfg: e.Cfg, App: e.App, Sim: e.Sim, Media: e.Media, cs: cs, ss: ss}
}

// unmarkedTweets hands out posts that none of users bookmarked yet, one
// per call.
func (e *env) unmarkedTweets(users ...string) func() string {
	marked := map[string]bool{}
	for _, l := range e.Sim.World().Bookmarks {
		if slices.Contains(users, l.From) {
			marked[l.To] = true
		}
	}
	var ids []string
	for _, tw := range e.Sim.World().Tweets {
		if tw.RetweetOf == "" && !slices.Contains(users, tw.AuthorID) && !marked[tw.ID] {
			ids = append(ids, tw.ID)
		}
	}
	return func() string {
		e.t.Helper()
		if len(ids) == 0 {
			e.t.Fatal("no post left that the accounts did not bookmark")
		}
		id := ids[0]
		ids = ids[1:]
		return id
	}
}

// decide runs one human-decision tool for account acc and checks that it
// acted exactly when allowed: the item is decided (the bookmark is on X,
// the unknown outcome resolved) or left untouched for a human.
func (e *env) decide(t *testing.T, name, tool, acc string, args map[string]any, allowed bool, user string, unmarked func() string) {
	t.Helper()
	onX := func(tweet string) bool {
		for _, l := range e.Sim.World().Bookmarks {
			if l.From == user && l.To == tweet {
				return true
			}
		}
		return false
	}
	queue := func() (int64, string) {
		tweet := unmarked()
		var r routed
		e.call("x_bookmark_tweet", map[string]any{"tweet_id": tweet, "account": acc}).ok(t, &r)
		if !r.Routed {
			t.Fatalf("%s: the bookmark for %s was not queued", name, acc)
		}
		return r.ApprovalID, tweet
	}
	status := func(id int64) string {
		var it struct {
			Status string `json:"status"`
		}
		e.call("get_approval_item", map[string]any{"id": id, "account": acc}).ok(t, &it)
		return it.Status
	}
	refused := func(r result) {
		t.Helper()
		if r.Success {
			t.Errorf("%s: an agent decided for an account that forbids it: %.200s", name, r.Data)
			return
		}
		r.fails(t, apperr.PolicyHardRule).mentions(t, acc, "allow_agent_approval")
	}
	switch tool {
	case "approve_item", "reject_item", "approve_all":
		id, tweet := queue()
		if tool != "approve_all" {
			args["id"] = id
		}
		r := e.call(tool, args)
		want := map[string]string{"approve_item": "executed", "reject_item": "rejected", "approve_all": "executed"}[tool]
		if !allowed {
			refused(r)
			want = "pending"
		} else {
			r.ok(t, nil)
		}
		if got := status(id); got != want {
			t.Errorf("%s: item %d is %s, want %s", name, id, got, want)
		}
		if got := onX(tweet); got != (want == "executed") {
			t.Errorf("%s: the bookmark is on X: %t, want %t", name, got, want == "executed")
		}
	case "resolve_mutation":
		e.Sim.SetFault("POST /2/tweets", xsim.Fault{ErrorNext: 1, ErrorStatus: 503})
		first := e.call("x_post_tweet", map[string]any{"text": "Lost answer: " + name, "account": acc}).fails(t, apperr.XOutcomeUnknown)
		e.Sim.ClearFaults()
		args["correlation_id"], args["outcome"] = first.Meta.CorrelationID, "did_not_happen"
		r := e.call(tool, args)
		want := "did_not_happen"
		if !allowed {
			refused(r)
			want = ""
		} else {
			r.ok(t, nil)
		}
		var a struct {
			Resolution string `json:"resolution"`
		}
		e.call("get_mutation_detail", map[string]any{"correlation_id": first.Meta.CorrelationID, "account": acc}).ok(t, &a)
		if a.Resolution != want {
			t.Errorf("%s: resolution %q, want %q", name, a.Resolution, want)
		}
	}
}
