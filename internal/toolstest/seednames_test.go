package toolstest

import (
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
)

// TestRecentMutationsByToolName: get_recent_mutations filters by the name
// every row it returns carries, tool_name; tool is its alias, and the two
// may not disagree.
func TestRecentMutationsByToolName(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	executed(t, e.call("x_post_tweet", map[string]any{"text": "A post to filter out of the bookmarks."}), nil)
	executed(t, e.call("x_bookmark_tweet", map[string]any{"tweet_id": e.demoTweet(nil).ID}), nil)
	type rows struct {
		Mutations []struct {
			Tool string `json:"tool_name"`
		} `json:"mutations"`
		Count int `json:"count"`
	}
	for _, args := range []map[string]any{
		{"tool_name": "x_bookmark_tweet"},
		{"tool": "x_bookmark_tweet"},
		{"tool_name": "x_bookmark_tweet", "tool": "x_bookmark_tweet"},
	} {
		var got rows
		e.call("get_recent_mutations", args).ok(t, &got)
		if got.Count != 1 || len(got.Mutations) != 1 || got.Mutations[0].Tool != "x_bookmark_tweet" {
			t.Errorf("get_recent_mutations %v: %+v, want the one x_bookmark_tweet row", args, got)
		}
	}
	e.call("get_recent_mutations", map[string]any{"tool_name": "x_bookmark_tweet", "tool": "x_post_tweet"}).
		fails(t, apperr.InvalidInput).mentions(t, "tool_name")
	e.call("get_recent_mutations", map[string]any{"tool_name": "x_no_such_tool"}).
		fails(t, apperr.InvalidInput).mentions(t, "tool_name", "x_no_such_tool")
}

// TestCapabilitiesTierAndCanReply: get_capabilities carries the seed's
// tier (the X subscription /2/users/me reports for the account's user) and
// can_reply (x_reply_to_tweet usable now), for the server's account and
// for each account.
func TestCapabilitiesTierAndCanReply(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
		c.Accounts = map[string]map[string]any{"brand_b": {"mcp_policy": map[string]any{"blocked_tools": []string{"x_reply_to_tweet"}}}}
	}})
	tierOf := map[string]string{}
	for acc, id := range e.Sim.DemoAccounts() {
		for _, u := range e.Sim.World().Users {
			if u.ID == id {
				tierOf[acc] = "None"
				switch {
				case u.SubscriptionType != "":
					tierOf[acc] = u.SubscriptionType
				case u.Verified:
					tierOf[acc] = "Premium"
				}
			}
		}
	}
	var caps struct {
		Tier     *string `json:"tier"`
		CanReply *bool   `json:"can_reply"`
		Accounts []struct {
			Name     string `json:"name"`
			Tier     string `json:"tier"`
			CanReply bool   `json:"can_reply"`
		} `json:"accounts"`
	}
	e.call("get_capabilities", map[string]any{}).ok(t, &caps)
	if caps.Tier == nil || caps.CanReply == nil {
		t.Fatalf("get_capabilities has tier %v and can_reply %v; want both", caps.Tier, caps.CanReply)
	}
	if *caps.Tier != tierOf["default"] || !*caps.CanReply {
		t.Errorf("tier %q, can_reply %t; want %q and true", *caps.Tier, *caps.CanReply, tierOf["default"])
	}
	seen := 0
	for _, a := range caps.Accounts {
		want := a.Name != "brand_b" // brand_b blocks replies
		if a.Tier != tierOf[a.Name] || a.CanReply != want {
			t.Errorf("account %s: tier %q, can_reply %t; want %q and %t", a.Name, a.Tier, a.CanReply, tierOf[a.Name], want)
		}
		seen++
	}
	if seen < 2 {
		t.Fatalf("capabilities list %d accounts", seen)
	}
}
