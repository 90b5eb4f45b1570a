package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// shownJSON finds a JSON object in a page's visible text.
var shownJSON = regexp.MustCompile(`[{\[]\s*"`)

// TestBrowserReviewPagesReadAndFit opens the review pages a newcomer meets
// with the demo data, a self-numbered thread (queued, edited, and as a
// draft), a long direct message and a phone link, at 1280 and 390 px: no
// page scrolls sideways, axe-core finds nothing, no visible text is a
// JSON object; the drafts calendar starts today, fits two screens at 1280
// × 900 and numbers a thread once; the sign-in pages have the site's
// layout. It logs each page's height and axe count.
func TestBrowserReviewPagesReadAndFit(t *testing.T) {
	axe := axeSource(t)
	chromium(t)
	s := newSite(t, linksOn)
	pages, sd := seededPages(t, s)
	ctx := context.Background()
	thread := []string{"1. Why we gate every post an agent writes", "2. The gateway checks policy, then asks you", "3. Then it posts exactly what you approved"}
	resp, err := s.a.Gateway.Do(ctx, gateway.Call{Tool: "x_post_thread", Caller: "mcp", Params: map[string]any{"tweets": thread}})
	if err != nil || resp.Kind != gateway.Routed {
		t.Fatalf("thread not queued: %+v %v", resp, err)
	}
	threadID := resp.ApprovalID
	edited := []string{thread[0], "2. The gateway checks policy first, then asks you", thread[2]}
	raw, _ := json.Marshal(edited)
	if _, err := s.a.Gateway.EditFields(ctx, threadID, gateway.Changes{Fields: map[string]json.RawMessage{"tweets": raw}}); err != nil {
		t.Errorf("edit the thread: %v", err)
	}
	dm := strings.Repeat("A long direct message. ", 15)[:329]
	s.queueRaw("x_send_dm", map[string]any{"participant_id": s.a.Sim.Server.UserIDByUsername("gopher_gabe"), "text": dm})
	comp, err := s.a.Composer()
	if err != nil {
		t.Fatal(err)
	}
	tomorrow := time.Now().Add(30 * time.Hour).Truncate(time.Hour)
	if _, err := comp.Compose(ctx, workflow.ComposeRequest{Tweets: thread, ScheduledFor: &tomorrow}); err != nil {
		t.Fatalf("thread draft: %v", err)
	}
	reply := s.queueReply(s.a.Gateway, sd.otherPost, "A reply reviewed from a phone")
	it, err := s.a.Gateway.Item(ctx, reply)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.a.Links().Links(ctx, "default", it, "phone")
	if err != nil {
		t.Fatal(err)
	}
	link := strings.TrimPrefix(l.View, phoneBase)
	var auditDetail string
	for _, p := range pages {
		if p.Name == "audit-detail" {
			auditDetail = p.Path
		}
	}
	u, _ := url.Parse(s.base)
	other := "http://localhost:" + u.Port() // the session's cookie belongs to 127.0.0.1
	checks := []struct {
		name, url string
		// mark is an element the page must show.
		mark string
	}{
		{"approvals", s.base + "/approvals", fmt.Sprintf("#thread-%d", threadID)},
		{"approval-thread", fmt.Sprintf("%s/approvals/%d", s.base, threadID), fmt.Sprintf("#thread-%d", threadID)},
		{"audit-detail", s.base + auditDetail, "#raw"},
		{"drafts", s.base + "/drafts", "#calendar"},
		{"login-error", other + "/login?token=wrong", "#door-title"},
		{"not-logged-in", other + "/approvals", "#door-title"},
		{"link", s.base + link, "a.target-link"},
		{"link-post", s.base + link + "/post", ".target-text"},
	}
	b := browser(t, 1280, 900)
	run(t, b, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.ID("main")))
	today := time.Now().In(time.Local).Format("2006-01-02")
	for _, width := range []int{1280, 390} {
		run(t, b, "viewport", chromedp.EmulateViewport(int64(width), 900))
		for _, c := range checks {
			run(t, b, c.name, chromedp.Navigate(c.url), chromedp.WaitReady(chromedp.CSS("body")),
				waitJS(`performance.getEntriesByType("navigation")[0].loadEventEnd > 0`))
			if n := get(t, b, c.name+": mark", chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, c.mark))); n == 0 {
				t.Errorf("%s at %d px: no %s on the page:\n%s", c.name, width, c.mark, pageText(b))
			}
			f := get(t, b, c.name+": measure", chromedp.Evaluate[struct{ ScrollW, Height int }](
				`({ScrollW: document.documentElement.scrollWidth, Height: document.documentElement.scrollHeight})`))
			if f.ScrollW > width {
				t.Errorf("%s at %d px: the page is %d px wide and scrolls sideways", c.name, width, f.ScrollW)
			}
			run(t, b, c.name+": load axe", chromedp.Evaluate[chromedp.Void](axe))
			vs := get(t, b, c.name+": axe", chromedp.Evaluate[[]axeViolation](runAxe, chromedp.EvalAwaitPromise))
			for _, v := range vs {
				t.Errorf("%s at %d px: axe %s (%s) on %d elements: %s %v", c.name, width, v.ID, v.Impact, v.Nodes, v.Help, v.Targets)
			}
			text := get(t, b, c.name+": text", chromedp.Evaluate[string](`document.body.innerText`))
			if m := shownJSON.FindString(text); m != "" {
				t.Errorf("%s at %d px: the page shows a JSON object (%q)", c.name, width, m)
			}
			t.Logf("figures %-16s %4d px: height %5d px, axe %d violations", c.name, width, f.Height, len(vs))
			shot(t, b, fmt.Sprintf("%s-%d", c.name, width))
			switch c.name {
			case "drafts":
				if first := get(t, b, "first day", chromedp.Evaluate[string](`document.querySelector("#calendar .day").id`)); first != "day-"+today {
					t.Errorf("at %d px the calendar starts at %s, not today (%s)", width, first, today)
				}
				nums := get(t, b, "thread numbers", chromedp.Evaluate[string](
					`Array.from(document.querySelectorAll("ol.thread li")).map(li => getComputedStyle(li).listStyleType + "|" + li.textContent).join("\n")`))
				if strings.Contains(nums, "decimal|1.") {
					t.Errorf("at %d px a thread written \"1. …\" is numbered twice", width)
				}
				visible := get(t, b, "draft buttons", chromedp.Evaluate[int](
					`Array.from(document.querySelectorAll(".draft button, .draft summary")).filter(e => e.checkVisibility()).length`))
				drafts := get(t, b, "drafts", chromedp.Evaluate[int](`document.querySelectorAll(".draft").length`))
				if visible > drafts {
					t.Errorf("at %d px %d drafts show %d controls, want one each", width, drafts, visible)
				}
				if width == 1280 && f.Height >= 1800 {
					t.Errorf("at 1280 × 900 the drafts page is %d px tall, want under two screens (1800)", f.Height)
				}
			case "approvals":
				if !hasText(t, b, "main", "329/10000") || hasText(t, b, "main", "329/280") {
					t.Errorf("at %d px the direct message is not counted against 10,000", width)
				}
			}
		}
	}
}
