package web

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/notify"
)

const phoneBase = "https://phone.example.ts.net"

func linksOn(c *config.Config) {
	c.Notify.PublicBaseURL = phoneBase
	c.ApprovalLinks.Enabled = true
}

// linkReq sends a request for path as a phone reaching the public base URL
// does (its Host), and returns the status, headers and body.
func (s *site) linkReq(method, path string, form url.Values, origin string) (int, http.Header, string) {
	s.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Host = "phone.example.ts.net"
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// issue queues a post through MCP and issues its links for channel.
func (s *site) issue(cs *mcp.ClientSession, text, channel string) (int64, map[string]string) {
	s.t.Helper()
	id := s.postTweet(cs, text)
	it, err := s.a.Gateway.Item(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	l, err := s.a.Links().Links(context.Background(), "default", it, channel)
	if err != nil {
		s.t.Fatal(err)
	}
	path := func(u string) string {
		if !strings.HasPrefix(u, phoneBase+"/a/") {
			s.t.Fatalf("link %q is not under the public base URL", u)
		}
		return strings.TrimPrefix(u, phoneBase)
	}
	return id, map[string]string{"view": path(l.View), "approve": path(l.Approve), "reject": path(l.Reject),
		"approve_csrf": l.ApproveCSRF, "reject_csrf": l.RejectCSRF}
}

func hiddenCSRF(t *testing.T, page string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `name="csrf" value="`)
	if !ok {
		t.Fatalf("no CSRF field on the page:\n%s", page)
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// GET shows the post as the approvals page does and changes nothing; POST
// with the link's CSRF value decides once, as link:<channel>; the post then
// exists once on X, and a second tap says the link was used.
func TestLinkShowsThenDecidesOnce(t *testing.T) {
	s := newSite(t, linksOn)
	cs := s.mcpClient()
	id, l := s.issue(cs, "Shipping approvals from a phone #golang @gopher", "phone")
	item, _ := s.a.Gateway.Item(context.Background(), id)
	rule := item.MatchedRuleID
	if rule == "" {
		rule = "(approval mode)"
	}
	for i := 0; i < 2; i++ {
		status, h, page := s.linkReq("GET", l["view"], nil, "")
		if status != http.StatusOK {
			t.Fatalf("GET view: %d\n%s", status, page)
		}
		for k, want := range map[string]string{"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex",
			"Content-Security-Policy": "frame-ancestors 'none'"} {
			if !strings.Contains(h.Get(k), want) {
				t.Errorf("%s = %q, want %q in it", k, h.Get(k), want)
			}
		}
		if strings.Contains(h.Get("Content-Security-Policy"), "script-src") || strings.Contains(page, "<script") {
			t.Error("the link page allows or loads a script")
		}
		mustHave(t, "link page", page, "Shipping approvals from a phone", `class="hashtag"`, "/280", rule, "Asked by", "mcp", `id="approve"`, `id="reject"`)
	}
	if it, _ := s.a.Gateway.Item(context.Background(), id); it.Status != gateway.ApprovalPending {
		t.Fatalf("viewing changed the item: %s", it.Status)
	}
	_, _, page := s.linkReq("GET", l["view"], nil, "")
	csrf := hiddenCSRF(t, page)
	status, _, _ := s.linkReq("POST", l["view"], url.Values{"csrf": {"not-it"}, "decision": {"approve"}}, "null")
	if status != http.StatusForbidden {
		t.Fatalf("POST with a wrong CSRF value: %d", status)
	}
	status, _, page = s.linkReq("POST", l["view"], url.Values{"csrf": {csrf}, "decision": {"approve"}}, "null")
	if status != http.StatusOK || !strings.Contains(page, "Approved and done") {
		t.Fatalf("POST approve: %d\n%s", status, page)
	}
	it, _ := s.a.Gateway.Item(context.Background(), id)
	if it.Status != gateway.ApprovalExecuted || it.ReviewedBy != "link:phone" {
		t.Fatalf("item %s reviewed by %q", it.Status, it.ReviewedBy)
	}
	n := 0
	for _, tw := range s.a.Sim.Server.World().Tweets {
		if tw.Text == "Shipping approvals from a phone #golang @gopher" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the post exists %d times on X", n)
	}
	status, _, page = s.linkReq("POST", l["view"], url.Values{"csrf": {csrf}, "decision": {"approve"}}, "null")
	if status != http.StatusGone || !strings.Contains(page, "already used") {
		t.Fatalf("second tap: %d\n%s", status, page)
	}
	// The wait from queued to decided is in the Prometheus histogram,
	// under the link's channel and the account.
	var scrape strings.Builder
	if err := s.a.Metrics.Write(context.Background(), &scrape); err != nil {
		t.Fatal(err)
	}
	observed := -1
	for line := range strings.SplitSeq(scrape.String(), "\n") {
		if v, ok := strings.CutPrefix(line, `tuitbot_approval_latency_seconds_count{account="default",channel="link:phone"} `); ok {
			observed, _ = strconv.Atoi(v)
		}
	}
	if observed != 1 {
		t.Fatalf("approval latency observations for link:phone = %d, want 1", observed)
	}
	// And /analytics shows the channel's p50 and p90.
	c, _ := s.client()
	if status, page := s.get(c, "/analytics"); status != http.StatusOK || !strings.Contains(page, `id="latency-link:phone"`) {
		t.Fatalf("analytics: %d, no latency row for link:phone", status)
	}
	status, _, page = s.linkReq("POST", l["approve"], url.Values{"csrf": {l["approve_csrf"]}}, "")
	if status != http.StatusGone || !strings.Contains(page, "already decided") {
		t.Fatalf("the other device's approve link: %d\n%s", status, page)
	}
}

// Hostile cases: a forged MAC is 404, a link after an edit is 410 saying
// so, a foreign Origin or Host is refused, and a client that keeps
// failing gets 429.
func TestLinkRefusals(t *testing.T) {
	s := newSite(t, linksOn)
	cs := s.mcpClient()
	id, l := s.issue(cs, "before the edit", "phone")
	forged := l["approve"][:len(l["approve"])-3] + "AAA"
	if forged == l["approve"] {
		forged = l["approve"][:len(l["approve"])-3] + "BBB"
	}
	if status, _, _ := s.linkReq("GET", forged, nil, ""); status != http.StatusNotFound {
		t.Fatalf("forged MAC: %d, want 404", status)
	}
	if status, _, _ := s.linkReq("POST", forged, url.Values{"csrf": {l["approve_csrf"]}}, ""); status != http.StatusNotFound {
		t.Fatalf("forged MAC POST: %d, want 404", status)
	}
	if _, err := s.a.Gateway.Edit(context.Background(), id, "after the edit"); err != nil {
		t.Fatal(err)
	}
	status, _, page := s.linkReq("POST", l["approve"], url.Values{"csrf": {l["approve_csrf"]}}, "")
	if status != http.StatusGone || !strings.Contains(page, "edited") {
		t.Fatalf("link after an edit: %d\n%s", status, page)
	}
	if it, _ := s.a.Gateway.Item(context.Background(), id); it.Status != gateway.ApprovalPending {
		t.Fatalf("a link from before the edit decided the item: %s", it.Status)
	}
	_, l2 := s.issue(cs, "second post", "phone")
	if status, _, _ := s.linkReq("POST", l2["approve"], url.Values{"csrf": {l2["approve_csrf"]}}, "https://evil.example"); status != http.StatusForbidden {
		t.Fatalf("foreign Origin: %d", status)
	}
	req, _ := http.NewRequest("GET", s.base+l2["view"], nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("foreign Host: %d", resp.StatusCode)
	}
	// Two forgeries were counted; eight more use up the minute.
	for i := 0; i < 8; i++ {
		s.linkReq("GET", "/a/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil, "")
	}
	status, h, _ := s.linkReq("GET", l2["view"], nil, "")
	if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Fatalf("after 10 failures: %d, want 429 even for a good link", status)
	}
}

// No tool ever returns a link: the queue tools show the item, never /a/.
func TestNoToolOutputHoldsALink(t *testing.T) {
	s := newSite(t, linksOn)
	cs := s.mcpClient()
	id, _ := s.issue(cs, "tools must not see links", "phone")
	for _, call := range []mcp.CallToolParams{
		{Name: "list_pending_approvals", Arguments: map[string]any{}},
		{Name: "get_approval_item", Arguments: map[string]any{"id": id}},
	} {
		res, err := cs.CallTool(context.Background(), &call)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if strings.Contains(string(b), "/a/") || strings.Contains(string(b), phoneBase) {
			t.Fatalf("%s returns a link: %s", call.Name, b)
		}
	}
}

// The loop a phone closes: an agent posts over MCP, the webhook receiver
// gets the signed event with its links, the view link is opened and
// Approve tapped, the post exists once on X, and a second tap says used.
func TestPhoneLoopOverWebhook(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	t.Setenv("TUITBOT_TEST_HOOK_SECRET", secret)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 4)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := wh.Verify(b, r.Header); err != nil {
			t.Errorf("signature: %v", err)
		}
		got <- b
	}))
	defer rcv.Close()
	s := newSite(t, func(c *config.Config) {
		linksOn(c)
		c.Notify.BatchWindowSeconds = 0
		c.Notify.Channels = []config.NotifyChannel{{Name: "hook", Type: "webhook", URL: rcv.URL + "/in", SecretEnv: "TUITBOT_TEST_HOOK_SECRET"}}
	})
	if err := s.a.StartNotifications(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs := s.mcpClient()
	const text = "Approved from the phone, exactly once"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "x_post_tweet", Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); strings.Contains(string(b), "/a/") {
		t.Fatalf("the tool result holds a link: %s", b)
	}
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Text       string `json:"text"`
			ViewURL    string `json:"view_url"`
			ApproveURL string `json:"approve_url"`
			RejectURL  string `json:"reject_url"`
		} `json:"data"`
	}
	select {
	case b := <-got:
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the webhook got nothing")
	}
	if ev.Type != "approval.created" || ev.Data.Text != text || !strings.HasPrefix(ev.Data.ViewURL, phoneBase+"/a/") ||
		!strings.HasPrefix(ev.Data.ApproveURL, phoneBase+"/a/") || !strings.HasPrefix(ev.Data.RejectURL, phoneBase+"/a/") {
		t.Fatalf("event %+v", ev)
	}
	view := strings.TrimPrefix(ev.Data.ViewURL, phoneBase)
	status, _, page := s.linkReq("GET", view, nil, "")
	if status != http.StatusOK || !strings.Contains(page, text) {
		t.Fatalf("view: %d\n%s", status, page)
	}
	form := url.Values{"csrf": {hiddenCSRF(t, page)}, "decision": {"approve"}}
	if status, _, page := s.linkReq("POST", view, form, "null"); status != http.StatusOK || !strings.Contains(page, "Approved") {
		t.Fatalf("approve: %d\n%s", status, page)
	}
	if status, _, page := s.linkReq("POST", view, form, "null"); status != http.StatusGone || !strings.Contains(page, "already used") {
		t.Fatalf("second tap: %d\n%s", status, page)
	}
	n := 0
	for _, tw := range s.a.Sim.Server.World().Tweets {
		if tw.Text == text {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the post exists %d times", n)
	}
}

// The approvals page says when and through which channel an item's notice
// went out.
func TestApprovalsPageShowsNotifiedVia(t *testing.T) {
	t.Setenv("TUITBOT_TEST_HOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer rcv.Close()
	s := newSite(t, func(c *config.Config) {
		c.Notify.Channels = []config.NotifyChannel{{Name: "ops-hook", Type: "webhook", URL: rcv.URL, SecretEnv: "TUITBOT_TEST_HOOK_SECRET"}}
	})
	cs := s.mcpClient()
	id := s.postTweet(cs, "tell someone about me")
	other := s.postTweet(cs, "not delivered yet")
	chans, err := s.a.NotifyChannels()
	if err != nil {
		t.Fatal(err)
	}
	// One delivery, for the first item only.
	if err := notify.NewDispatcher(notify.DispatcherOptions{Outbox: s.a.Outbox(), Channels: chans}).Deliver(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	c, _ := s.client()
	status, page := s.get(c, "/approvals")
	if status != http.StatusOK {
		t.Fatalf("approvals: %d", status)
	}
	if !strings.Contains(page, `id="notified-`+itoa(id)+`">notified via ops-hook`) {
		t.Fatalf("no 'notified via ops-hook' for item %d:\n%s", id, page)
	}
	if strings.Contains(page, `id="notified-`+itoa(other)+`"`) {
		t.Fatal("an item whose notice did not go out shows as notified")
	}
}

// Behind a trusted proxy the client is the address it reports; from any
// other peer X-Forwarded-For is ignored, and so is X-Forwarded-Proto.
func TestClientAndSchemeBehindProxy(t *testing.T) {
	_, proxy, _ := net.ParseCIDR("127.0.0.1/32")
	s := &Server{o: Options{TrustedProxies: []*net.IPNet{proxy}}}
	req := func(remote, xff, proto string) *http.Request {
		r := httptest.NewRequest("GET", "/a/x", nil)
		r.RemoteAddr = remote
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		if proto != "" {
			r.Header.Set("X-Forwarded-Proto", proto)
		}
		return r
	}
	for _, tc := range []struct {
		remote, xff, proto string
		client, scheme     string
	}{
		{"127.0.0.1:5000", "203.0.113.9", "https", "203.0.113.9", "https"},
		{"127.0.0.1:5000", "198.51.100.1, 203.0.113.9", "", "203.0.113.9", "http"},
		{"127.0.0.1:5000", "203.0.113.9, 127.0.0.1", "https", "203.0.113.9", "https"},
		{"192.0.2.7:5000", "203.0.113.9", "https", "192.0.2.7", "http"},
		{"127.0.0.1:5000", "not-an-ip", "", "127.0.0.1", "http"},
	} {
		r := req(tc.remote, tc.xff, tc.proto)
		if got := s.clientOf(r); got != tc.client {
			t.Errorf("%s xff %q: client %q, want %q", tc.remote, tc.xff, got, tc.client)
		}
		if got := s.scheme(r); got != tc.scheme {
			t.Errorf("%s proto %q: scheme %q, want %q", tc.remote, tc.proto, got, tc.scheme)
		}
	}
}
