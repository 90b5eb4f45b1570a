package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestLoginTokenWorksOnce(t *testing.T) {
	s := newSite(t, nil)
	tests := []struct {
		name string
		url  string
		want int
	}{
		{"wrong token", s.base + "/login?token=" + strings.Repeat("0", 64), http.StatusForbidden},
		{"no token", s.base + "/login", http.StatusForbidden},
		{"right token", s.login, http.StatusOK},
		{"reused token", s.login, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar}
			resp, err := c.Get(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			u, _ := url.Parse(s.base)
			cookies := jar.Cookies(u)
			if tt.want != http.StatusOK {
				if len(cookies) != 0 {
					t.Fatalf("a refused login set cookies: %v", cookies)
				}
				return
			}
			if len(cookies) != 1 || cookies[0].Name != sessionCookie {
				t.Fatalf("cookies after login: %v", cookies)
			}
		})
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	s := newSite(t, nil)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(s.login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	set := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(set, want) {
			t.Errorf("Set-Cookie %q lacks %s", set, want)
		}
	}
	if loc := resp.Header.Get("Location"); strings.Contains(loc, "token") {
		t.Errorf("the redirect after login repeats the token: %s", loc)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q must allow only same-origin script files", csp)
	}
}

func TestPagesNeedASession(t *testing.T) {
	s := newSite(t, nil)
	for _, p := range []string{"/approvals", "/audit", "/analytics", "/autopilot", "/settings", "/events", "/count?text=a"} {
		resp, err := http.Get(s.base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without a session: %d, want 401", p, resp.StatusCode)
		}
	}
}

func TestStateChangesNeedTheCSRFToken(t *testing.T) {
	s := newSite(t, nil)
	id := s.postTweet(s.mcpClient(), "needs a human")
	c, csrf := s.client()
	path := s.base + "/approvals/" + itoa(id) + "/reject"
	for _, tt := range []struct {
		name string
		form url.Values
		want int
	}{
		{"no token", url.Values{"note": {"x"}}, http.StatusForbidden},
		{"wrong token", url.Values{"csrf": {strings.Repeat("a", len(csrf))}}, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.PostForm(path, tt.form)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			it, err := s.a.Gateway.Item(t.Context(), id)
			if err != nil || it.Status != "pending" {
				t.Fatalf("the item changed without a CSRF token: %+v, %v", it, err)
			}
		})
	}
	// A GET never changes anything: the routes are POST only.
	if code, _ := s.get(c, "/approvals/"+itoa(id)+"/reject"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET on a POST route: %d, want 405", code)
	}
	resp, err := c.PostForm(path, url.Values{"csrf": {csrf}, "note": {"no"}, "shown": {shownOf(t, s.a.Gateway, id)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if it, _ := s.a.Gateway.Item(t.Context(), id); it.Status != "rejected" || it.ReviewedBy != Reviewer {
		t.Fatalf("with the token the reject did not happen: %+v", it)
	}
}

func TestHostAndOriginAreChecked(t *testing.T) {
	s := newSite(t, nil)
	c, csrf := s.client()
	u, _ := url.Parse(s.base)
	tests := []struct {
		name, host, origin string
		want               int
	}{
		{"rebinding host", "evil.example:" + u.Port(), "", http.StatusMisdirectedRequest},
		{"other port", "127.0.0.1:1", "", http.StatusMisdirectedRequest},
		// Accepted as a host; the session cookie belongs to 127.0.0.1.
		{"localhost", "localhost:" + u.Port(), "", http.StatusUnauthorized},
		{"foreign origin", "", "http://evil.example", http.StatusForbidden},
		{"same origin", "", s.base, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, s.base+"/count?text=hi", nil)
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	// A cross-origin POST with the right token is still refused.
	req, _ := http.NewRequest(http.MethodPost, s.base+"/approvals/bulk", strings.NewReader(url.Values{"csrf": {csrf}, "action": {"reject"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin POST: %d, want 403", resp.StatusCode)
	}
}

func TestUntrustedTextIsEscaped(t *testing.T) {
	s := newSite(t, nil)
	s.postTweet(s.mcpClient(), `<script>alert(1)</script> & "quotes" @gopher`)
	c, _ := s.client()
	code, body := s.get(c, "/approvals")
	if code != http.StatusOK {
		t.Fatalf("approvals: %d", code)
	}
	if strings.Contains(body, "<script>alert") {
		t.Fatal("the queued text reached the page as markup")
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatal("the queued text is not shown escaped")
	}
	if !strings.Contains(body, `<span class="mention">@gopher</span>`) {
		t.Fatal("the mention is not highlighted")
	}
}

func TestSegments(t *testing.T) {
	tests := []struct {
		text string
		want string
	}{
		{"hi @bob and #go see https://go.dev/x ok", "text:hi |mention:@bob|text: and |hashtag:#go|text: see |url:https://go.dev/x|text: ok"},
		{"mail a@b.com #123 #a1", "text:mail a@b.com #123 |hashtag:#a1"},
		{"@abcdefghijklmnopq too long", "text:@abcdefghijklmnopq too long"},
	}
	for _, tt := range tests {
		var parts []string
		for _, sg := range segments(tt.text) {
			parts = append(parts, sg.Kind+":"+sg.Text)
		}
		if got := strings.Join(parts, "|"); got != tt.want {
			t.Errorf("segments(%q)\n got %s\nwant %s", tt.text, got, tt.want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestStaticAssetsAreGzipped: the stylesheet and script go gzipped to a
// browser that takes it, whole to one that does not; pages (which hold
// the CSRF token) are never compressed.
func TestStaticAssetsAreGzipped(t *testing.T) {
	s := newSite(t, nil)
	c, _ := s.client()
	want, err := staticFS.ReadFile("static/app.css")
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(path, enc string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
		// Set by hand, the header also stops the client from
		// decompressing on its own.
		req.Header.Set("Accept-Encoding", enc)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	for _, tc := range []struct {
		enc  string
		gzip bool
	}{{"gzip, deflate, br", true}, {"br;q=1, gzip;q=0.5", true}, {"gzip;q=0", false}, {"identity", false}, {"", false}} {
		resp, body := fetch("/static/app.css", tc.enc)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
			t.Fatalf("Accept-Encoding %q: %d %s", tc.enc, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tc.gzip {
			t.Fatalf("Accept-Encoding %q: gzipped %v, want %v", tc.enc, got, tc.gzip)
		}
		if tc.gzip {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(body, want) {
			t.Fatalf("Accept-Encoding %q: the body is not app.css", tc.enc)
		}
	}
	if resp, _ := fetch("/static/nope.js", "gzip"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown asset: %d, want 404", resp.StatusCode)
	}
	if resp, _ := fetch("/approvals", "gzip"); resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("a page went out compressed (%s)", resp.Header.Get("Content-Encoding"))
	}
}
