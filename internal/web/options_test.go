package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestApprovalShowsPostOptions: a queued post's poll and reply settings are
// shown in words on the list and on the item's own page.
func TestApprovalShowsPostOptions(t *testing.T) {
	s := newSite(t, nil)
	id := s.postTweetWith(s.mcpClient(), map[string]any{"text": "Which do you use?",
		"options": map[string]any{"poll": map[string]any{"options": []string{"Go", "Rust"}, "duration_minutes": 1440},
			"reply_settings": "following"}})
	c, _ := s.client()
	for _, path := range []string{"/approvals", "/approvals/" + itoa(id)} {
		code, body := s.get(c, path)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", path, code)
		}
		for _, want := range []string{"<li>Poll: Go / Rust, 1 day</li>", "<li>Replies: people you follow</li>"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s does not show %q", path, want)
			}
		}
	}
}

// TestApprovalShowsAnEditsOldAndNewText: a queued edit's card names it an
// edit of the account's post and shows the text as it stands beside the
// new text.
func TestApprovalShowsAnEditsOldAndNewText(t *testing.T) {
	s := newSite(t, nil)
	sim := s.a.Sim.Server
	if sim == nil {
		t.Fatal("the site's sandbox runs no emulator of its own")
	}
	const before, after = "The launch is on Tuesday.", "The launch is on Wednesday."
	id, err := sim.PostAs(sim.DemoUserID(), before, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.mcpClient().CallTool(context.Background(), &mcp.CallToolParams{Name: "x_edit_tweet",
		Arguments: map[string]any{"tweet_id": id, "text": after}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.Content)
	if !strings.Contains(string(raw), `routed_to_approval`) {
		t.Fatalf("x_edit_tweet was not routed to approval: %s", raw)
	}
	c, _ := s.client()
	code, body := s.get(c, "/approvals")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{"Edit @" + xsim.DemoUsername + "&#39;s post", "The post as it stands, which this edits", before, after} {
		if !strings.Contains(body, want) {
			t.Errorf("the approvals page does not show %q", want)
		}
	}
}

// TestApprovalShowsADirectMessage: a queued x_send_dm reads as a message
// to its recipient, by handle, with its text and what approving does.
func TestApprovalShowsADirectMessage(t *testing.T) {
	s := newSite(t, nil)
	gabe := s.a.Sim.Server.UserIDByUsername("gopher_gabe")
	res, err := s.mcpClient().CallTool(context.Background(), &mcp.CallToolParams{Name: "x_send_dm",
		Arguments: map[string]any{"participant_id": gabe, "text": "Could we talk about your CLI?"}})
	if err != nil || res.IsError {
		t.Fatalf("x_send_dm: %v %+v", err, res)
	}
	c, _ := s.client()
	code, body := s.get(c, "/approvals")
	if code != http.StatusOK {
		t.Fatalf("/approvals: status %d", code)
	}
	for _, want := range []string{"Message @gopher_gabe", "Could we talk about your CLI?", "private direct message"} {
		if !strings.Contains(body, want) {
			t.Errorf("/approvals does not show %q", want)
		}
	}
}

// TestCountUsesTheAccountsPostLimit: the edit box counts against the post
// limit of the account it edits for: 25,000 for the Premium brand once X
// has told its subscription, 280 for the plain default account.
func TestCountUsesTheAccountsPostLimit(t *testing.T) {
	s := newSite(t, nil)
	b, err := s.a.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.PostLimit().Limit(t.Context()); err != nil {
		t.Fatal(err)
	}
	long := url.QueryEscape(strings.Repeat("word ", 200))
	c, _ := s.client()
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"text=" + long + "&account=brand_b", `{"max":25000,"valid":true,"weighted_length":1000}`},
		{"text=" + long, `{"max":280,"valid":false,"weighted_length":1000}`},
	} {
		code, body := s.get(c, "/count?"+tc.query)
		if code != http.StatusOK || strings.TrimSpace(body) != tc.want {
			t.Errorf("/count?%.40s…: %d %s, want %s", tc.query, code, body, tc.want)
		}
	}
	if code, _ := s.get(c, "/count?text=a&account=nobody"); code != http.StatusBadRequest {
		t.Errorf("an unknown account: status %d, want 400", code)
	}
}
