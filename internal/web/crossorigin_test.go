package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestBrowserFetchMetadataDecidesStateChanges: a state change is judged
// by the browser's own Sec-Fetch-Site first, as Go's cross-origin
// protection does: a post a browser marks cross-site or same-site (a page
// on another port of this machine is same-site) is refused even with the
// session's CSRF token and whatever Origin it carries, and the item stays
// pending. The page's own posts (same-origin) and a typed URL (none) pass.
func TestBrowserFetchMetadataDecidesStateChanges(t *testing.T) {
	s := newSite(t, nil)
	c, csrf := s.client()
	reject := func(header map[string]string) (int, string) {
		t.Helper()
		id := s.postTweet(s.mcpClient(), "judged by fetch metadata "+header["Sec-Fetch-Site"]+header["Origin"])
		req, _ := http.NewRequest(http.MethodPost, s.base+"/approvals/"+itoa(id)+"/reject", strings.NewReader(url.Values{"csrf": {csrf}, "shown": {shownOf(t, s.a.Gateway, id)}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		it, err := s.a.Gateway.Item(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, it.Status
	}
	for _, tt := range []struct {
		name   string
		header map[string]string
		want   string // the item's status afterwards
	}{
		{"cross-site claiming this origin", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": s.base}, "pending"},
		{"same-site without Origin", map[string]string{"Sec-Fetch-Site": "same-site"}, "pending"},
		{"same-site from another local port", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"}, "pending"},
		{"the page's own post", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": s.base}, "rejected"},
		{"no browser metadata", nil, "rejected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, status := reject(tt.header)
			if status != tt.want {
				t.Fatalf("status %d, item %s; want the item %s", code, status, tt.want)
			}
			if tt.want == "pending" && code != http.StatusForbidden {
				t.Errorf("refused with %d, want 403", code)
			}
		})
	}
}
