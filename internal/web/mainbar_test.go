package web

import (
	"net/http"
	"regexp"
	"testing"
)

// TestMainBarMarksItsPageAndKeepsTheAccount: the main bar marks the entry
// of the page shown (a detail page its list's entry) and only it, and on
// a second account every entry stays on that account.
func TestMainBarMarksItsPageAndKeepsTheAccount(t *testing.T) {
	s := newSite(t, nil)
	if _, err := s.a.ForAccount("brand_b"); err != nil {
		t.Fatal(err)
	}
	c, _ := s.client()
	id := s.postTweet(s.mcpClient(), "main bar check")
	link := regexp.MustCompile(`<a href="([^"]*)"( aria-current="page")?>(Approvals|Drafts|Audit|Analytics|Autopilot|Settings)</a>`)
	tests := []struct {
		path, current, query string
	}{
		{"/approvals", "Approvals", ""},
		{"/approvals/" + itoa(id), "Approvals", ""},
		{"/audit", "Audit", ""},
		{"/drafts", "Drafts", ""},
		{"/settings", "Settings", ""},
		{"/audit?account=brand_b", "Audit", "?account=brand_b"},
		{"/analytics?account=brand_b", "Analytics", "?account=brand_b"},
	}
	paths := map[string]string{"Approvals": "/approvals", "Drafts": "/drafts", "Audit": "/audit", "Analytics": "/analytics",
		"Autopilot": "/autopilot", "Settings": "/settings"}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body := s.get(c, tt.path)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d", tt.path, code)
			}
			found := link.FindAllStringSubmatch(body, -1)
			if len(found) != 6 {
				t.Fatalf("GET %s: %d main bar entries, want 6", tt.path, len(found))
			}
			for _, m := range found {
				if want := paths[m[3]] + tt.query; m[1] != want {
					t.Errorf("%s links to %q, want %q", m[3], m[1], want)
				}
				if marked := m[2] != ""; marked != (m[3] == tt.current) {
					t.Errorf("%s marked current: %t, want %t", m[3], marked, m[3] == tt.current)
				}
			}
		})
	}
}
