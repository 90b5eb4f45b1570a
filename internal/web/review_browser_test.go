package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserItemsShowWhatTheyDo: in chromium, a queued delete shows the
// post it removes (author, text, age) and says plainly that it removes
// it; a like shows the post it likes and a follow the account, each
// titled in words with the tool name small beside it; the post link
// opens the sandbox's view of the post.
func TestBrowserItemsShowWhatTheyDo(t *testing.T) {
	s := newSite(t, nil)
	_, sd := seededPages(t, s)
	ctx := browser(t, 1366, 900)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(css("#item-%d", sd.deleteID)))
	del := fmt.Sprintf("#item-%d", sd.deleteID)
	for _, c := range []struct{ sel, want string }{
		{del + " h2", "Delete post"},
		{del + " .tool", "x_delete_tweet"},
		{del + " .effect", "Removes this post from X for good"},
		{del + " .target-text", sd.ownText},
		{del + " .target-post .author", "@tuitbot_demo"},
		{del + " .target-post .author time", "just now"},
		{fmt.Sprintf("#item-%d h2", sd.likeID), "Like @gopher_gabe's post"},
		{fmt.Sprintf("#item-%d .target-text", sd.likeID), sd.otherText},
		{fmt.Sprintf("#item-%d h2", sd.followID), "Follow @gopher_gabe"},
		{fmt.Sprintf("#item-%d .target-user", sd.followID), "Gabe Lindqvist"},
	} {
		if !hasText(t, ctx, c.sel, c.want) {
			t.Errorf("%s does not show %q: %q", c.sel, c.want, get(t, ctx, c.sel, chromedp.Text(chromedp.CSS(c.sel))))
		}
	}
	if raw := get(t, ctx, "raw params", chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll("%s pre.params").length`, del))); raw != 0 {
		t.Error("the delete card still shows its raw parameters")
	}
	if title := get(t, ctx, "exact time", chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector("%s .target-post time").title`, del))); !strings.Contains(title, "20") {
		t.Errorf("the post's age has no exact time on hover: %q", title)
	}
	shot(t, ctx, "delete-card")
	// The README's picture: the queue from its top to the delete, as a
	// reviewer meets it.
	run(t, ctx, "picture size", chromedp.EmulateViewport(1100, 1320))
	viewShot(t, ctx, "readme-review")
	run(t, ctx, "window size", chromedp.EmulateViewport(1366, 900))
	run(t, ctx, "open the post", markPage(), chromedp.Click(chromedp.CSS(del+" a.target-link")), newPage(),
		chromedp.WaitVisible(chromedp.CSS(".target-text")))
	if loc := get(t, ctx, "where", chromedp.Location()); !strings.HasSuffix(loc, "/posts/"+sd.ownPost) {
		t.Fatalf("the post link led to %s", loc)
	}
	if !hasText(t, ctx, "main", sd.ownText) || !hasText(t, ctx, "main", "emulator") {
		t.Fatal("the sandbox's post page does not show the post")
	}
	run(t, ctx, "detail page", chromedp.Navigate(fmt.Sprintf("%s/approvals/%d", s.base, sd.deleteID)), chromedp.WaitVisible(chromedp.CSS(".target-text")))
	if !hasText(t, ctx, "h1", "Delete post") || !hasText(t, ctx, ".target-text", sd.ownText) {
		t.Fatal("the delete's detail page does not show the post it removes")
	}
}

// TestBrowserChartsHaveAxes: in chromium, every chart drawn on the
// analytics page has axis values and labelled bars or points as SVG text,
// and a summary; a chart with one point says so instead of drawing it.
func TestBrowserChartsHaveAxes(t *testing.T) {
	s := newSite(t, nil)
	seededPages(t, s)
	ctx := browser(t, 1366, 900)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.ID("main")))
	run(t, ctx, "analytics", chromedp.Navigate(s.base+"/analytics"), chromedp.WaitVisible(chromedp.CSS("figure.chart")))
	type fig struct {
		ID, Summary, Note string
		Ticks, Values     []string
		Labels, Marks     int
	}
	figs := get(t, ctx, "charts", chromedp.Evaluate[[]fig](`Array.from(document.querySelectorAll("figure.chart")).map(f => ({
	  ID: f.id, Summary: (f.querySelector(".summary") || {}).textContent || "",
	  Note: (f.querySelector(".chart-note") || {}).textContent || "",
	  Ticks: Array.from(f.querySelectorAll("svg text.tick")).map(t => t.textContent),
	  Values: Array.from(f.querySelectorAll("svg text.val")).map(t => t.textContent).filter(v => v),
	  Labels: f.querySelectorAll("svg text.lbl").length,
	  Marks: f.querySelectorAll("svg rect.bar, svg circle.dot").length}))`))
	if len(figs) < 5 {
		t.Fatalf("%d charts on the page, want 5", len(figs))
	}
	drawn := 0
	for _, f := range figs {
		if f.Summary == "" {
			t.Errorf("%s has no summary", f.ID)
		}
		if f.Note != "" {
			if f.Marks != 0 {
				t.Errorf("%s says %q but draws %d marks", f.ID, f.Note, f.Marks)
			}
			continue
		}
		drawn++
		digits := 0
		for _, tk := range f.Ticks {
			if strings.ContainsAny(tk, "0123456789") {
				digits++
			}
		}
		if digits < 2 {
			t.Errorf("%s: axis values %v, want at least two numbers", f.ID, f.Ticks)
		}
		if f.Labels == 0 {
			t.Errorf("%s: no bar or point is labelled", f.ID)
		}
		if f.Marks > 0 && strings.Contains(f.ID, "actions") && len(f.Values) == 0 {
			t.Errorf("%s: the bars carry no values", f.ID)
		}
	}
	if drawn < 3 {
		t.Errorf("%d charts drawn, want the actions and both spends", drawn)
	}
	var followers *fig
	for i := range figs {
		if figs[i].ID == "chart-followers" {
			followers = &figs[i]
		}
	}
	if followers == nil || !strings.Contains(followers.Note, "One count so far") || followers.Marks != 0 {
		t.Errorf("the one-point follower chart: %+v", followers)
	}
	shot(t, ctx, "charts")
}

// TestBrowserApproveConfirmsAndKeepsThePlace: in chromium, Approve says
// what was posted with a link to it, and the page comes back at the item
// that took the approved one's place, focused.
func TestBrowserApproveConfirmsAndKeepsThePlace(t *testing.T) {
	s := newSite(t, nil)
	agent := s.mcpClient()
	var ids []int64
	for i := range 4 {
		ids = append(ids, s.postTweet(agent, fmt.Sprintf("queued post %d for the confirmation", i)))
	}
	ctx := browser(t, 1366, 500)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(css("#item-%d", ids[3])))
	run(t, ctx, "approve the second", markPage(), chromedp.Click(css(`#item-%d form.approve button`, ids[1])), newPage(),
		chromedp.WaitVisible(chromedp.ID("flash")))
	flash := get(t, ctx, "flash", chromedp.Text(chromedp.ID("flash")))
	it, err := s.a.Gateway.Item(context.Background(), ids[1])
	if err != nil || it.Status != "executed" {
		t.Fatalf("not approved: %+v %v", it, err)
	}
	posted := postedID(it.Result)
	if posted == "" || flash != "Approved: posted as post "+posted {
		t.Fatalf("flash %q, want the post %q", flash, posted)
	}
	if href := get(t, ctx, "link", chromedp.Evaluate[string](`document.getElementById("flash-link").getAttribute("href")`)); href != "/posts/"+posted {
		t.Fatalf("the confirmation links to %q", href)
	}
	next := fmt.Sprintf("item-%d", ids[2])
	if hash := get(t, ctx, "hash", chromedp.Evaluate[string](`location.hash`)); hash != "#"+next {
		t.Fatalf("the page came back at %q, want #%s", hash, next)
	}
	if focus := get(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.id`)); focus != next {
		t.Fatalf("focus is on %q, want %s", focus, next)
	}
	shot(t, ctx, "approved")
}

// TestBrowserKeyboardReview: in chromium, j and k move a visible focus
// between items, a approves the focused one (through its form, CSRF token
// and all), r rejects, and ? opens the help.
func TestBrowserKeyboardReview(t *testing.T) {
	s := newSite(t, nil)
	agent := s.mcpClient()
	var ids []int64
	for i := range 3 {
		ids = append(ids, s.postTweet(agent, fmt.Sprintf("keyboard post %d", i)))
	}
	ctx := browser(t, 1366, 900)
	focused := func() string {
		return get(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.id`))
	}
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(css("#item-%d", ids[2])))
	run(t, ctx, "j j k j", chromedp.KeyEvent("jjkj"))
	if f := focused(); f != fmt.Sprintf("item-%d", ids[1]) {
		t.Fatalf("after j j k j the focus is on %q, want the second item", f)
	}
	if outline := get(t, ctx, "outline", chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`)); outline == "none" {
		t.Fatal("the focused item has no visible focus")
	}
	run(t, ctx, "help", chromedp.KeyEvent("?"), chromedp.WaitVisible(chromedp.ID("keys")))
	run(t, ctx, "a approves", markPage(), chromedp.KeyEvent("a"), newPage(), chromedp.WaitVisible(chromedp.ID("flash")))
	if it, err := s.a.Gateway.Item(context.Background(), ids[1]); err != nil || it.Status != "executed" || it.ReviewedBy != Reviewer {
		t.Fatalf("a did not approve the focused item: %+v %v", it, err)
	}
	for _, other := range []int64{ids[0], ids[2]} {
		if it, _ := s.a.Gateway.Item(context.Background(), other); it.Status != "pending" {
			t.Fatalf("a decided #%d too: %s", other, it.Status)
		}
	}
	if f := focused(); f != fmt.Sprintf("item-%d", ids[2]) {
		t.Fatalf("after approving, the focus is on %q, want the next item", f)
	}
	run(t, ctx, "r rejects", markPage(), chromedp.KeyEvent("r"), newPage(), chromedp.WaitVisible(chromedp.ID("flash")))
	if it, _ := s.a.Gateway.Item(context.Background(), ids[2]); it.Status != "rejected" {
		t.Fatalf("r did not reject the focused item: %s", it.Status)
	}
	// Typing in a field is text, not a command.
	run(t, ctx, "type in the note", chromedp.Click(css(`#item-%d form.reject input[name=note]`, ids[0])),
		chromedp.SendKeys(css(`#item-%d form.reject input[name=note]`, ids[0]), "a r"+kb.Tab))
	if it, _ := s.a.Gateway.Item(context.Background(), ids[0]); it.Status != "pending" {
		t.Fatalf("typing a note decided the item: %s", it.Status)
	}
}

// TestBrowserLiveUpdatesCounts: in chromium, an item an agent queues
// while the page is open updates the total, the footer and the filter's
// counts without a reload.
func TestBrowserLiveUpdatesCounts(t *testing.T) {
	s := newSite(t, nil)
	agent := s.mcpClient()
	first := s.postTweet(agent, "already waiting")
	s.postTweet(agent, "also waiting")
	ctx := browser(t, 1366, 900)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(css("#item-%d", first)),
		chromedp.Evaluate[chromedp.Void](`window.__noReload = 1`))
	if got := get(t, ctx, "footer", chromedp.Text(chromedp.ID("pager-range"))); got != "items 1–2 of 2" {
		t.Fatalf("footer %q before", got)
	}
	id := s.postTweet(agent, "arrives while the page is open")
	run(t, ctx, "live item", chromedp.WaitVisible(css("#item-%d", id)),
		waitJS(`document.getElementById("pager-range").textContent === "items 1–3 of 3"`))
	if mark := get(t, ctx, "no reload", chromedp.Evaluate[int](`window.__noReload || 0`)); mark != 1 {
		t.Fatal("the page reloaded")
	}
	if total := get(t, ctx, "total", chromedp.Text(chromedp.ID("pending-total"))); total != "3" {
		t.Fatalf("total %q", total)
	}
	opt := get(t, ctx, "filter count", chromedp.Evaluate[string](`document.querySelector('#filter-tool option[value="x_post_tweet"]').textContent`))
	if opt != "Posts (3)" {
		t.Fatalf("the action filter reads %q, want Posts (3)", opt)
	}
	caller := get(t, ctx, "caller count", chromedp.Evaluate[string](`document.querySelector('#filter-caller option[value="mcp"]').textContent`))
	if caller != "mcp (3)" {
		t.Fatalf("the caller filter reads %q, want mcp (3)", caller)
	}
}
