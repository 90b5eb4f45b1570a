package web

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// axeSource is axe-core's script, for the accessibility check. It is a
// test-only dependency, never part of the binary: TUITBOT_AXE_JS names the
// file, or `npm install` in testdata/a11y puts it where this looks.
// Without it the check skips, unless TUITBOT_REQUIRE_BROWSER is set.
func axeSource(t *testing.T) string {
	t.Helper()
	path := os.Getenv("TUITBOT_AXE_JS")
	if path == "" {
		path = filepath.Join("testdata", "a11y", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(path)
	if err == nil {
		return string(b)
	}
	if os.Getenv("TUITBOT_REQUIRE_BROWSER") != "" {
		t.Fatalf("axe-core is needed for the accessibility check: %v (run `npm install` in internal/web/testdata/a11y or set TUITBOT_AXE_JS)", err)
	}
	t.Skipf("axe-core is not installed (%v); run `npm install` in internal/web/testdata/a11y, or set TUITBOT_AXE_JS", err)
	return ""
}

// sitePage is one page of the site as a visitor reaches it.
type sitePage struct {
	Name, Path string
}

// seededPages gives the site something on every page (the demo world, a
// queued delete of the account's own post, a like and a follow of another
// person's post and account) and lists every page a visitor can open,
// with an unknown URL.
func seededPages(t *testing.T, s *site) ([]sitePage, seeded) {
	t.Helper()
	ctx := context.Background()
	if ok, err := SeedDemo(ctx, *s.srv.accts[0]); err != nil || !ok {
		t.Fatalf("demo world: %v %v", ok, err)
	}
	var sd seeded
	sd.ownText = "An old post of ours that the agent wants gone"
	sd.ownPost = s.post(xsim.DemoUsername, sd.ownText)
	sd.otherText = "Gabe's post about Go releases"
	sd.otherPost = s.post("gopher_gabe", sd.otherText)
	queue := func(tool string, params map[string]any) int64 {
		t.Helper()
		resp, err := s.a.Gateway.Do(ctx, gateway.Call{Tool: tool, Caller: "mcp", Params: params})
		if err != nil || resp.Kind != gateway.Routed {
			t.Fatalf("%s not queued: %+v %v", tool, resp, err)
		}
		return resp.ApprovalID
	}
	sd.deleteID = queue("x_delete_tweet", map[string]any{"tweet_id": sd.ownPost})
	sd.likeID = queue("x_like_tweet", map[string]any{"tweet_id": sd.otherPost})
	sd.followID = queue("x_follow_user", map[string]any{"target_user_id": s.a.Sim.Server.UserIDByUsername("gopher_gabe")})
	rows, err := s.a.Gateway.Recent(ctx, gateway.AuditFilter{Limit: 1})
	if err != nil || len(rows) == 0 {
		t.Fatalf("no audit row to open: %v", err)
	}
	return []sitePage{
		{"approvals", "/approvals"},
		{"approval-detail", fmt.Sprintf("/approvals/%d", sd.deleteID)},
		{"drafts", "/drafts"},
		{"audit", "/audit"},
		{"audit-detail", "/audit/" + rows[0].CorrelationID},
		{"analytics", "/analytics"},
		{"autopilot", "/autopilot"},
		{"settings", "/settings"},
		{"not-found", "/no-such-page"},
	}, sd
}

// seeded is what seededPages queued.
type seeded struct {
	ownPost, ownText, otherPost, otherText string
	deleteID, likeID, followID             int64
}

// pageFigures is one page load as the browser saw it.
type pageFigures struct {
	HTML       int     // bytes of the page itself
	Total      int     // bytes of every transfer of the load
	FirstPaint float64 // ms from navigation start to the first contentful paint
	ScrollW    int     // document.documentElement.scrollWidth
	InnerW     int
}

// measurePage waits (a few frames at most) for the first contentful
// paint, which may come after the load event.
const measurePage = `new Promise(resolve => {
  const n = performance.getEntriesByType("navigation")[0];
  let total = n.transferSize;
  for (const r of performance.getEntriesByType("resource")) total += r.transferSize;
  const done = fcp => resolve({HTML: n.encodedBodySize, Total: total, FirstPaint: fcp,
    ScrollW: document.documentElement.scrollWidth, InnerW: window.innerWidth});
  const give = setTimeout(() => done(-1), 3000);
  const look = () => {
    const e = performance.getEntriesByName("first-contentful-paint")[0];
    if (e) { clearTimeout(give); done(e.startTime); } else requestAnimationFrame(look);
  };
  look();
})`

// axeViolation is one failed axe rule on a page.
type axeViolation struct {
	ID, Impact, Help string
	Nodes            int
	Targets          []string
}

const runAxe = `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
  ID: v.id, Impact: v.impact || "", Help: v.help, Nodes: v.nodes.length,
  Targets: v.nodes.slice(0, 3).map(n => n.target.join(" "))})))`

// TestBrowserEveryPage opens every page at desktop (1366 px) and phone
// (390 px) width and checks that none scrolls sideways and that axe-core
// finds no serious or critical violation. It logs each page's weight and
// first paint and saves screenshots under $TUITBOT_SCREENSHOT_DIR.
func TestBrowserEveryPage(t *testing.T) {
	axe := axeSource(t)
	chromium(t)
	s := newSite(t, nil)
	pages, _ := seededPages(t, s)
	// One browser (the login link works once), its viewport set per width.
	ctx := browser(t, 1366, 900)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.ID("main")))
	for _, width := range []int{1366, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			run(t, ctx, "viewport", chromedp.EmulateViewport(int64(width), 900))
			for _, p := range pages {
				run(t, ctx, p.Name, chromedp.Navigate(s.base+p.Path), chromedp.WaitReady(chromedp.CSS("body")),
					waitJS(`performance.getEntriesByType("navigation")[0].loadEventEnd > 0`))
				f := get(t, ctx, p.Name+": measure", chromedp.Evaluate[pageFigures](measurePage, chromedp.EvalAwaitPromise))
				if f.InnerW != width {
					t.Fatalf("%s: the viewport is %d px wide, want %d", p.Name, f.InnerW, width)
				}
				if f.ScrollW > width {
					t.Errorf("%s at %d px: the page is %d px wide and scrolls sideways", p.Name, width, f.ScrollW)
				}
				run(t, ctx, p.Name+": load axe", chromedp.Evaluate[chromedp.Void](axe))
				vs := get(t, ctx, p.Name+": axe", chromedp.Evaluate[[]axeViolation](runAxe, chromedp.EvalAwaitPromise))
				serious := 0
				for _, v := range vs {
					if v.Impact == "serious" || v.Impact == "critical" {
						serious += v.Nodes
						b, _ := json.Marshal(v.Targets)
						t.Errorf("%s at %d px: axe %s (%s) on %d elements: %s %s", p.Name, width, v.ID, v.Impact, v.Nodes, v.Help, b)
					}
				}
				t.Logf("figures %-16s %4d px: page %6d B, all transfers %6d B, first paint %4.0f ms, axe %d violations (%d serious or critical nodes)",
					p.Name, width, f.HTML, f.Total, f.FirstPaint, len(vs), serious)
				shot(t, ctx, fmt.Sprintf("%s-%d", p.Name, width))
			}
		})
	}
}

// hasText reports whether the page's visible text holds want.
func hasText(t *testing.T, ctx context.Context, sel, want string) bool {
	t.Helper()
	txt := get(t, ctx, "read "+sel, chromedp.Text(chromedp.CSS(sel)))
	return strings.Contains(txt, want)
}
