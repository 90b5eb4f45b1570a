package web

import (
	"net/http"
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
