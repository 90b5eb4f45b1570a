package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// bearerRT adds the MCP bearer token to every request.
type bearerRT struct{ base http.RoundTripper }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+mcpToken)
	return b.base.RoundTrip(r)
}

// httpAgent connects an MCP client to the endpoint the site under a
// prefix is mounted beside: the same port, over Streamable HTTP.
func (s *site) httpAgent() *mcp.ClientSession {
	s.t.Helper()
	root := strings.TrimSuffix(s.base, s.srv.o.Prefix) + "/"
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: root, HTTPClient: &http.Client{Transport: bearerRT{http.DefaultTransport}}, MaxRetries: -1}, nil)
	if err != nil {
		s.t.Fatalf("connect over HTTP: %v", err)
	}
	s.t.Cleanup(func() { cs.Close() })
	return cs
}

// TestPrefixServesEverythingUnderIt: under /ui every link, form, asset,
// redirect and the cookie carry the prefix; paths outside it are not the
// site's; the login is the same one-time token.
func TestPrefixServesEverythingUnderIt(t *testing.T) {
	s := newSiteAt(t, nil, "/ui")
	if !strings.HasSuffix(s.base, "/ui") || !strings.Contains(s.login, "/ui/login?token=") {
		t.Fatalf("login URL %s is not under /ui", s.login)
	}
	id := s.postTweet(s.mcpClient(), "under a prefix @gopher")
	c, csrf := s.client()
	code, body := s.get(c, "/approvals")
	if code != http.StatusOK {
		t.Fatalf("/ui/approvals: %d", code)
	}
	for _, attr := range []string{"href", "action", "src"} {
		for _, rest := range strings.Split(body, attr+`="/`)[1:] {
			if !strings.HasPrefix(rest, "ui/") {
				t.Errorf("%s=\"/%s\" escapes the prefix", attr, tweettext.TruncateRunes(rest, 40))
			}
		}
	}
	mustHave(t, "approvals under /ui", body, `<meta name="base" content="/ui">`, fmt.Sprintf(`href="/ui/approvals/%d"`, id))
	if code, _ := s.get(c, "/static/app.js"); code != http.StatusOK {
		t.Errorf("/ui/static/app.js: %d", code)
	}
	// A POST answers with a redirect that stays under the prefix.
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(s.base+fmt.Sprintf("/approvals/%d/reject", id), url.Values{"csrf": {csrf}, "note": {"no"}, "shown": {shownOf(t, s.a.Gateway, id)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/ui/approvals" {
		t.Errorf("reject answered %d to %q, want 303 to /ui/approvals", resp.StatusCode, loc)
	}
	// Without the prefix there is no site (the MCP endpoint wants its
	// token), and the bare prefix leads into the site.
	root := strings.TrimSuffix(s.base, "/ui")
	for path, want := range map[string]int{"/approvals": http.StatusUnauthorized, "/uiapprovals": http.StatusUnauthorized, "/ui": http.StatusMovedPermanently} {
		resp, err := c.Get(root + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	// The CSRF and Origin checks hold under the prefix.
	resp, err = c.PostForm(s.base+"/approvals/bulk", url.Values{"action": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST without the CSRF token: %d, want 403", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, s.base+"/approvals/bulk", strings.NewReader(url.Values{"csrf": {csrf}, "action": {"approve"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST from another origin: %d, want 403", resp.StatusCode)
	}
}

// TestBrowserUnderMCPPort: in chromium, the review page under /ui of the
// MCP HTTP port shows an item an agent queues over that port without a
// reload, counts an edit live and approves, all without leaving /ui.
func TestBrowserUnderMCPPort(t *testing.T) {
	s := newSiteAt(t, nil, "/ui")
	ctx := browser(t, 1100, 900)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.ID("empty")),
		chromedp.Evaluate[chromedp.Void](`window.__noReload = 1`))
	if href := get(t, ctx, "url", chromedp.Evaluate[string](`location.pathname`)); href != "/ui/approvals" {
		t.Fatalf("after login the browser is at %s, want /ui/approvals", href)
	}
	text := "Queued over the MCP port @gopher"
	id := s.postTweet(s.httpAgent(), text)
	item := fmt.Sprintf("#item-%d", id)
	run(t, ctx, "new item appears", chromedp.WaitVisible(chromedp.CSS(item)))
	if get(t, ctx, "no reload", chromedp.Evaluate[int](`window.__noReload || 0`)) != 1 {
		t.Fatal("the page reloaded to show the new item")
	}
	added := " #golang"
	want := fmt.Sprintf("%d/280", tweettext.WeightedLength(text+added))
	run(t, ctx, "live count",
		chromedp.Click(chromedp.CSS(item+" button.edit-toggle")),
		chromedp.SendKeys(css("#text-input-%d", id), added),
		waitJS(fmt.Sprintf(`document.getElementById("live-count-%d").textContent === %q`, id, want)))
	shot(t, ctx, "approvals-under-ui")
	run(t, ctx, "approve", chromedp.Click(chromedp.CSS(item+` form[action$="/approve"] button`)), chromedp.WaitNotPresent(chromedp.CSS(item)),
		waitJS(`location.pathname === "/ui/approvals"`))
	it, err := s.a.Gateway.Item(context.Background(), id)
	if err != nil || it.Status != "executed" || it.ReviewedBy != Reviewer {
		t.Fatalf("after Approve: %+v %v", it, err)
	}
}
