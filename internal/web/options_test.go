package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
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
