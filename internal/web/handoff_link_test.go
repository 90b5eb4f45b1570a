package web

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/notify"
)

func payPerUseLinks(c *config.Config) {
	linksOn(c)
	c.XAPI.Access = config.AccessPayPerUse
}

// handOffLink has the agent like a stranger's post (refused on
// pay-per-use, handed to a person) and issues the hand-off's phone link.
func (s *site) handOffLink(t *testing.T, cs *mcp.ClientSession) (int64, string, string) {
	t.Helper()
	_, srv := s.a.Sim.Current()
	post := strangerPost(t, srv)
	id := s.callForHandOff(cs, "x_like_tweet", map[string]any{"tweet_id": post.ID}, "x_feature_unavailable")
	l, err := s.a.Links().HandOffLink(context.Background(), "default", id, "phone")
	if err != nil {
		s.t.Fatal(err)
	}
	if !strings.HasPrefix(l, phoneBase+"/a/") {
		s.t.Fatalf("link %q is not under the public base URL", l)
	}
	return id, strings.TrimPrefix(l, phoneBase), post.ID
}

// TestHandOffLinkOnPhone: a hand-off's phone link shows the same card as
// the approvals page with Do it on X (X's intent, prefilled) and no
// Approve; a forged one is 404; an approve or reject POST decides
// nothing; "I did it" needs the link's CSRF value, says "not seen yet"
// before the person acts, and once they pressed Like on the intent page
// records done_by_person, after which the link answers 410. No tool
// output holds the link.
func TestHandOffLinkOnPhone(t *testing.T) {
	s := newSite(t, payPerUseLinks)
	cs := s.mcpClient()
	id, link, post := s.handOffLink(t, cs)
	h, err := s.a.Gateway.GetHandOff(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	status, hdr, page := s.linkReq("GET", link, nil, "")
	if status != http.StatusOK {
		t.Fatalf("GET: %d\n%s", status, page)
	}
	for k, want := range map[string]string{"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "Content-Security-Policy": "frame-ancestors 'none'"} {
		if !strings.Contains(hdr.Get(k), want) {
			t.Errorf("%s = %q, want %q in it", k, hdr.Get(k), want)
		}
	}
	mustHave(t, "hand-off link page", page, `class="button primary do-on-x" href="`+html.EscapeString(h.IntentURL)+`"`, `id="check-handoff"`, "x_like_tweet", "Asked by")
	if strings.Contains(page, `id="approve"`) || strings.Contains(page, `id="reject"`) || strings.Contains(page, "<script") {
		t.Fatalf("the hand-off page offers Approve or Reject, or runs a script:\n%s", page)
	}
	csrf := hiddenCSRF(t, page)

	forged := link[:len(link)-3] + "AAA"
	if forged == link {
		forged = link[:len(link)-3] + "BBB"
	}
	if status, _, _ := s.linkReq("GET", forged, nil, ""); status != http.StatusNotFound {
		t.Fatalf("forged: %d, want 404", status)
	}
	for _, d := range []string{"approve", "reject"} {
		if status, _, page := s.linkReq("POST", link, url.Values{"csrf": {csrf}, "decision": {d}}, "null"); status != http.StatusBadRequest {
			t.Fatalf("POST %s on a hand-off link: %d\n%s", d, status, page)
		}
	}
	if status, _, _ := s.linkReq("POST", link, url.Values{"csrf": {"not-it"}, "decision": {"check"}}, "null"); status != http.StatusForbidden {
		t.Fatalf("check with a wrong CSRF value: %d", status)
	}
	if status, _, page := s.linkReq("POST", link, url.Values{"csrf": {csrf}, "decision": {"check"}}, "null"); status != http.StatusOK || !strings.Contains(page, "Not seen on X yet") {
		t.Fatalf("check before the person acts: %d\n%s", status, page)
	}

	// The person presses Like on X's (the emulator's) page.
	res, err := http.PostForm(h.IntentURL, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the intent page answered %d", res.StatusCode)
	}
	if status, _, page := s.linkReq("POST", link, url.Values{"csrf": {csrf}, "decision": {"check"}}, "null"); status != http.StatusOK || !strings.Contains(page, "Done on X") {
		t.Fatalf("check after the person acts: %d\n%s", status, page)
	}
	if h, err = s.a.Gateway.GetHandOff(context.Background(), id); err != nil || h.Status != gateway.HandOffDone || h.PostID != post {
		t.Fatalf("hand-off after the check: %+v %v", h, err)
	}
	if status, _, page := s.linkReq("GET", link, nil, ""); status != http.StatusGone {
		t.Fatalf("the link after it was done: %d\n%s", status, page)
	}
	res2, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_handoff", Arguments: map[string]any{"handoff_id": id}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res2); strings.Contains(string(b), "/a/") || strings.Contains(string(b), phoneBase) {
		t.Fatalf("get_handoff returns a link: %s", b)
	}
}

// TestBrowserHandOffLinkFits opens a hand-off's phone link in chromium
// at 390 px: the site's layout, nothing scrolls sideways, axe-core finds
// nothing, and Do it on X leads to the emulator's intent page.
func TestBrowserHandOffLinkFits(t *testing.T) {
	axe := axeSource(t)
	chromium(t)
	s := newSite(t, payPerUseLinks)
	_, link, post := s.handOffLink(t, s.mcpClient())
	b := browser(t, 390, 844)
	run(t, b, "open", chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+link), chromedp.WaitVisible("a.do-on-x"))
	f := get(t, b, "measure", chromedp.Evaluate[struct{ ScrollW, InnerW int }](`({ScrollW: document.documentElement.scrollWidth, InnerW: window.innerWidth})`))
	if f.InnerW != 390 || f.ScrollW > 390 {
		t.Fatalf("the page is %d px wide in a %d px window", f.ScrollW, f.InnerW)
	}
	if css := get(t, b, "layout", chromedp.Evaluate[int](`document.querySelectorAll('link[rel=stylesheet][href$="/static/app.css"]').length`)); css != 1 {
		t.Fatal("the hand-off page does not use the site's layout")
	}
	run(t, b, "load axe", chromedp.Evaluate[chromedp.Void](axe))
	for _, v := range get(t, b, "axe", chromedp.Evaluate[[]axeViolation](runAxe, chromedp.EvalAwaitPromise)) {
		t.Errorf("axe %s (%s) on %d elements: %s %v", v.ID, v.Impact, v.Nodes, v.Help, v.Targets)
	}
	shot(t, b, "handoff-link-390")
	run(t, b, "Do it on X", chromedp.Evaluate[chromedp.Void](`document.querySelector("a.do-on-x").removeAttribute("target")`),
		chromedp.Click(chromedp.CSS("a.do-on-x")), chromedp.WaitVisible(chromedp.ID("intent-button")))
	if got := get(t, b, "target", chromedp.Evaluate[string](`location.search`)); !strings.Contains(got, "tweet_id="+post) {
		t.Fatalf("Do it on X opened %q, not the like of %s", got, post)
	}
}

// siteHandOffs is what the hand-off sweep reads of the site's account.
type siteHandOffs struct{ s *site }

func (h siteHandOffs) Accounts() []string { return []string{"default"} }
func (h siteHandOffs) Pending(context.Context, string) ([]gateway.ApprovalItem, error) {
	return nil, nil
}
func (h siteHandOffs) Mutations(context.Context, string, string, time.Time) ([]gateway.AuditEntry, error) {
	return nil, nil
}
func (h siteHandOffs) PublishFailures(context.Context, string, time.Time) ([]notify.Item, error) {
	return nil, nil
}
func (h siteHandOffs) HandOffs(ctx context.Context, _ string) ([]gateway.HandOff, error) {
	return h.s.a.Gateway.HandOffs(ctx, gateway.HandOffOpen, 100)
}

// TestHandOffNoticeErrorsKeepNoLinkToken: a hand-off's notice carries its
// phone link to the webhook; a receiver whose error answer quotes it, in
// any spelling, leaves no token in the outbox's last_error, in `notify
// status` or in get_notification_status.
func TestHandOffNoticeErrorsKeepNoLinkToken(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	t.Setenv("TUITBOT_TEST_HOOK_SECRET", secret)
	var mu sync.Mutex
	var token string
	quote := func(view string) string { return view }
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev struct {
			Data struct {
				ViewURL   string `json:"view_url"`
				IntentURL string `json:"intent_url"`
			} `json:"data"`
		}
		_ = json.Unmarshal(b, &ev)
		mu.Lock()
		_, token, _ = strings.Cut(ev.Data.ViewURL, "/a/")
		q := quote
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, q(ev.Data.ViewURL))
	}))
	t.Cleanup(rcv.Close)
	s := newSite(t, func(c *config.Config) {
		payPerUseLinks(c)
		c.Notify.BatchWindowSeconds = 0
		c.Notify.Channels = []config.NotifyChannel{{Name: "hook", Type: "webhook", URL: rcv.URL + "/in", SecretEnv: "TUITBOT_TEST_HOOK_SECRET"}}
	})
	chans, err := s.a.NotifyChannels()
	if err != nil {
		t.Fatal(err)
	}
	out := s.a.Outbox()
	d := notify.NewDispatcher(notify.DispatcherOptions{Outbox: out, Channels: chans, Items: siteItems{s}, Links: s.a.Links()})
	cs := s.mcpClient()
	_, srv := s.a.Sim.Current()
	w := srv.World()
	var posts []string
	for i := len(w.Tweets) - 1; i >= 0 && len(posts) < 3; i-- {
		if p := w.Tweets[i]; p.AuthorID != srv.DemoUserID() && p.RetweetOf == "" {
			posts = append(posts, p.ID)
		}
	}
	for i, tc := range []struct {
		name  string
		quote func(string) string
	}{
		{"plain", func(v string) string { return "500 upstream error for " + v }},
		{"JSON \\/", func(v string) string { return `{"error":"for ` + strings.ReplaceAll(v, "/", `\/`) + `"}` }},
		{"token alone", func(v string) string { return "unknown token " + v[strings.LastIndex(v, "/")+1:] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			quote = tc.quote
			mu.Unlock()
			s.callForHandOff(cs, "x_like_tweet", map[string]any{"tweet_id": posts[i]}, "x_feature_unavailable")
			for _, sw := range notify.Sweeps(out, siteHandOffs{s}, time.Hour) {
				if err := sw(context.Background(), out, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := d.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			tok := token
			mu.Unlock()
			if len(tok) < 16 {
				t.Fatalf("the receiver got no hand-off link (%q)", tok)
			}
			rows, err := out.List(context.Background(), notify.Filter{Limit: 1})
			if err != nil || len(rows) != 1 || rows[0].Event != notify.EventHandOff || rows[0].LastError == "" {
				t.Fatalf("no failed hand-off delivery recorded: %+v %v", rows, err)
			}
			rep, err := out.Report(context.Background(), s.a.Cfg.Notify, true)
			if err != nil {
				t.Fatal(err)
			}
			repJSON, _ := json.Marshal(rep)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_notification_status", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			tool, _ := json.Marshal(res)
			for name, got := range map[string]string{"outbox row": rows[0].LastError, "notify status": string(repJSON), "get_notification_status": string(tool)} {
				if strings.Contains(got, tok[4:20]) {
					t.Errorf("%s holds the hand-off link's token: %s", name, got)
				}
			}
		})
	}
}
