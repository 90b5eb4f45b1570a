package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserPagesShowPolls: in chromium at 1280 and 390 px, every page
// that shows a posted poll (a reply's card and its page, the post's page,
// the audit of the call that posted it, the phone link's pages) shows its
// choices with their votes, its state and its end, and a queued post and
// a scheduled draft with a poll its choices and duration; none scrolls sideways and axe-core
// finds nothing on any of them.
func TestBrowserPagesShowPolls(t *testing.T) {
	axe := axeSource(t)
	chromium(t)
	s := newSite(t, linksOn)
	p := seedPolls(t, s)
	type check struct{ path, sel, want string }
	var checks []check
	for _, path := range append(p.Pages, p.PhonePages...) {
		checks = append(checks, check{path, ".poll-result", "Go: 6 votes (60%)\nRust: 3 votes (30%)\nZig: 1 vote (10%)"})
	}
	checks = append(checks, check{fmt.Sprintf("/approvals/%d", p.Pending), "ul.post-options", "Poll: Noodles / Salad, 1 hour 30 minutes"},
		check{"/drafts", "ul.post-options", "Poll: Approvals / Drafts, 2 hours"})
	b := browser(t, 1280, 900)
	run(t, b, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.ID("main")))
	for _, width := range []int{1280, 390} {
		run(t, b, "viewport", chromedp.EmulateViewport(int64(width), 900))
		for _, c := range checks {
			run(t, b, c.path, chromedp.Navigate(s.base+c.path), chromedp.WaitReady(chromedp.CSS("body")),
				waitJS(`performance.getEntriesByType("navigation")[0].loadEventEnd > 0`))
			shown := get(t, b, c.path+": poll", chromedp.Evaluate[string](fmt.Sprintf(
				`Array.from(document.querySelectorAll(%q)).filter(e => e.checkVisibility()).map(e => e.innerText).join("\n")`, c.sel)))
			if !strings.Contains(shown, c.want) {
				t.Errorf("%s at %d px shows %q, want %q", c.path, width, shown, c.want)
			}
			if c.sel == ".poll-result" && (!strings.Contains(shown, "open") || !strings.Contains(shown, "10 votes") || !strings.Contains(shown, "open for 1 day") || !strings.Contains(shown, "ends in")) {
				t.Errorf("%s at %d px does not say the poll's state, total, duration and end: %q", c.path, width, shown)
			}
			if w := get(t, b, c.path+": width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > width {
				t.Errorf("%s at %d px: the page is %d px wide and scrolls sideways", c.path, width, w)
			}
			run(t, b, c.path+": load axe", chromedp.Evaluate[chromedp.Void](axe))
			vs := get(t, b, c.path+": axe", chromedp.Evaluate[[]axeViolation](runAxe, chromedp.EvalAwaitPromise))
			for _, v := range vs {
				t.Errorf("%s at %d px: axe %s (%s) on %d elements: %s %v", c.path, width, v.ID, v.Impact, v.Nodes, v.Help, v.Targets)
			}
			t.Logf("figures %-40s %4d px: axe %d violations", c.path, width, len(vs))
			shot(t, b, fmt.Sprintf("poll-%d-%s", width, strings.NewReplacer("/", "_").Replace(c.path)))
		}
	}
}
