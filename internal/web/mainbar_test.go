package web

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
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

// TestLayoutPrintedOnceIsTheTemplates: the main bar and the account
// switcher a page gets, printed when the server started, are what their
// templates print for that page and account, on every account, on an
// account that is none of them and under a path prefix.
func TestLayoutPrintedOnceIsTheTemplates(t *testing.T) {
	for _, prefix := range []string{"", "/ui"} {
		s := newSiteAt(t, nil, prefix)
		var names []string
		for _, a := range s.srv.accts {
			names = append(names, a.Name)
		}
		if len(names) < 2 {
			t.Fatalf("accounts %v: want several, for the switcher", names)
		}
		for _, acct := range append(names, "nobody") {
			for _, page := range []string{"approvals", "approval", "drafts", "audit", "auditdetail", "analytics", "autopilot", "settings", "error"} {
				p := s.srv.pageOf(httptest.NewRequest(http.MethodGet, "/x?account="+acct, nil), &session{}, page, "T", nil)
				q, chosen := "?account="+acct, acct
				if acct == names[0] || acct == "nobody" {
					q = ""
				}
				if acct == "nobody" {
					chosen = ""
				}
				var bar, opts strings.Builder
				if err := s.srv.tmpl.ExecuteTemplate(&bar, "navlinks", navBar{Links: s.srv.navLinksOf(q), Cur: navCurrentOf(page)}); err != nil {
					t.Fatal(err)
				}
				if err := s.srv.tmpl.ExecuteTemplate(&opts, "options", choices(names, chosen)); err != nil {
					t.Fatal(err)
				}
				if string(p.NavLinks) != bar.String() || string(p.AccountOptions) != opts.String() {
					t.Errorf("%s%s on %s: the layout has\n%s\n%s\nthe templates print\n%s\n%s", prefix, page, acct, p.NavLinks, p.AccountOptions, bar.String(), opts.String())
				}
			}
		}
	}
}
