package toolstest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestSandboxAccounts: the sandbox serves three accounts, each logged in
// as its own user; get_capabilities lists them with the tools each can
// use, and a call picks its account with the account argument.
func TestSandboxAccounts(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
		// brand_c keeps a human in the loop; the others do not.
		c.Accounts = map[string]map[string]any{"brand_c": {"approval_mode": true}}
	}})
	users := e.Sim.DemoAccounts()
	if len(users) < 3 {
		t.Fatalf("sandbox demo accounts %v; want at least three", users)
	}

	var caps struct {
		Account  string `json:"account"`
		Accounts []struct {
			Name         string `json:"name"`
			ApprovalMode bool   `json:"approval_mode"`
			X            struct{ Status string }
			Tools        []string `json:"usable_tools"`
		} `json:"accounts"`
	}
	e.call("get_capabilities", map[string]any{}).ok(t, &caps)
	var names []string
	for _, a := range caps.Accounts {
		names = append(names, a.Name)
		if a.X.Status != "ok" || !slices.Contains(a.Tools, "x_like_tweet") {
			t.Errorf("account %s: x %q, usable tools %v; want X ok and x_like_tweet usable", a.Name, a.X.Status, a.Tools)
		}
		if a.ApprovalMode != (a.Name == "brand_c") {
			t.Errorf("account %s: approval_mode %t", a.Name, a.ApprovalMode)
		}
	}
	if caps.Account != "default" || !slices.Equal(names, []string{"default", "brand_b", "brand_c"}) {
		t.Fatalf("capabilities account %q, accounts %v; want default of [default brand_b brand_c]", caps.Account, names)
	}

	t.Run("each account posts its own text, once", func(t *testing.T) {
		texts := map[string]string{"default": "One message per brand: agents need audit trails.",
			"brand_b": "Brand B on agents: every action should leave a record you can read."}
		var p struct {
			ID string `json:"id"`
		}
		executed(t, e.call("x_post_tweet", map[string]any{"text": texts["default"]}), &p)
		executed(t, e.call("x_post_tweet", map[string]any{"text": texts["brand_b"], "account": "brand_b"}), &p)
		var dup struct {
			Duplicate bool `json:"duplicate"`
		}
		e.call("x_post_tweet", map[string]any{"text": texts["brand_b"], "account": "brand_b"}).ok(t, &dup)
		if !dup.Duplicate {
			t.Fatal("the same text again to brand_b was not answered as a duplicate")
		}
		// The other account's text is no duplicate of brand_b's own: X's
		// automation rules refuse it as a cross-account one.
		e.call("x_post_tweet", map[string]any{"text": texts["default"], "account": "brand_b"}).fails(t, apperr.CrossAccountDup)
		for acc, text := range texts {
			var authors []string
			for _, tw := range e.Sim.World().Tweets {
				if tw.Text == text {
					authors = append(authors, tw.AuthorID)
				}
			}
			if !slices.Equal(authors, []string{users[acc]}) {
				t.Fatalf("posts with %s's text by %v; want one by its user %s", acc, authors, users[acc])
			}
		}
		// Each account's audit trail holds its own post only.
		for _, acc := range []string{"default", "brand_b"} {
			var list struct {
				Items []struct {
					Tool    string `json:"tool_name"`
					Status  string `json:"status"`
					Account string `json:"account_id"`
				} `json:"mutations"`
			}
			e.call("get_recent_mutations", map[string]any{"account": acc}).ok(t, &list)
			posts := 0
			for _, it := range list.Items {
				if it.Account != acc {
					t.Errorf("account %s's audit shows a row of %s", acc, it.Account)
				}
				if it.Tool == "x_post_tweet" && it.Status == "success" {
					posts++
				}
			}
			if posts != 1 {
				t.Errorf("account %s: %d successful posts in its audit, want 1", acc, posts)
			}
		}
	})

	t.Run("an account's own approval mode", func(t *testing.T) {
		tw := e.demoTweet(func(tw xsim.Tweet) bool { return tw.AuthorID != users["brand_c"] && tw.RetweetOf == "" })
		var routed struct {
			Routed bool  `json:"routed_to_approval"`
			ID     int64 `json:"approval_queue_id"`
		}
		r := e.call("x_like_tweet", map[string]any{"tweet_id": tw.ID, "account": "brand_c"}).ok(t, &routed)
		if !routed.Routed || r.Meta.ApprovalMode == nil || !*r.Meta.ApprovalMode {
			t.Fatalf("brand_c like: %s; want it routed to approval with meta.approval_mode true", r.Data)
		}
		var count struct {
			Pending int `json:"pending"`
		}
		e.call("get_pending_count", map[string]any{"account": "brand_c"}).ok(t, &count)
		if count.Pending != 1 {
			t.Errorf("brand_c pending = %d, want 1", count.Pending)
		}
		e.call("get_pending_count", map[string]any{}).ok(t, &count)
		if count.Pending != 0 {
			t.Errorf("default pending = %d, want 0: brand_c's item is not default's", count.Pending)
		}
	})

	t.Run("unknown account", func(t *testing.T) {
		e.call("x_like_tweet", map[string]any{"tweet_id": "1", "account": "ghost"}).fails(t, apperr.InvalidInput).mentions(t, "ghost")
	})
}

// TestAccountCapsOverMCP: two accounts each capped at bookmarkCap bookmarks
// an hour, bookmarking concurrently through the MCP server, make exactly
// bookmarkCap bookmarks each on X.
func TestAccountCapsOverMCP(t *testing.T) {
	const bookmarkCap, perAccount = 2, 8
	e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
		c.MCPPolicy.RateLimits = []config.PolicyRate{{Key: "bookmarks", Dimension: "tool", MatchValue: "x_bookmark_tweet", MaxCount: bookmarkCap, PeriodSeconds: 3600}}
		c.Accounts = map[string]map[string]any{}
	}})
	users := e.Sim.DemoAccounts()
	ours := []string{users["default"], users["brand_b"]}
	// A post one of the accounts already bookmarked would take a bookmark
	// without adding one on X: the demo world may have some.
	marked := map[string]bool{}
	for _, l := range e.Sim.World().Bookmarks {
		if slices.Contains(ours, l.From) {
			marked[l.To] = true
		}
	}
	var targets []string
	for _, tw := range e.Sim.World().Tweets {
		if tw.RetweetOf == "" && !slices.Contains(ours, tw.AuthorID) && !marked[tw.ID] {
			targets = append(targets, tw.ID)
		}
		if len(targets) == perAccount {
			break
		}
	}
	before := bookmarksBy(e.Sim.World(), users)
	type answer struct {
		account string
		code    string
	}
	answers := make(chan answer, 2*perAccount)
	var wg sync.WaitGroup
	for _, acc := range []string{"default", "brand_b"} {
		for _, id := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
				defer cancel()
				res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "x_bookmark_tweet", Arguments: map[string]any{"tweet_id": id, "account": acc}})
				if err != nil {
					answers <- answer{acc, "protocol: " + err.Error()}
					return
				}
				var env struct {
					Success bool `json:"success"`
					Error   *struct {
						Code string `json:"code"`
					} `json:"error"`
				}
				b, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &env)
				if env.Success {
					answers <- answer{acc, ""}
					return
				}
				answers <- answer{acc, env.Error.Code}
			}()
		}
	}
	wg.Wait()
	close(answers)
	ok, limited := map[string]int{}, map[string]int{}
	for a := range answers {
		switch a.code {
		case "":
			ok[a.account]++
		case string(apperr.PolicyRateLimited):
			limited[a.account]++
		default:
			t.Errorf("%s: unexpected answer %s", a.account, a.code)
		}
	}
	after := bookmarksBy(e.Sim.World(), users)
	for _, acc := range []string{"default", "brand_b"} {
		if ok[acc] != bookmarkCap || limited[acc] != perAccount-bookmarkCap {
			t.Errorf("account %s: %d bookmarked, %d rate limited; want %d and %d", acc, ok[acc], limited[acc], bookmarkCap, perAccount-bookmarkCap)
		}
		if got := after[acc] - before[acc]; got != bookmarkCap {
			t.Errorf("account %s made %d bookmarks on X, want %d", acc, got, bookmarkCap)
		}
	}
}

// bookmarksBy counts the bookmarks each account's user has in w.
func bookmarksBy(w *xsim.World, users map[string]string) map[string]int {
	out := map[string]int{}
	for acc, id := range users {
		for _, l := range w.Bookmarks {
			if l.From == id {
				out[acc]++
			}
		}
	}
	return out
}
