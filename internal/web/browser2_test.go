package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// TestBrowserDraftsCalendar: in chromium, a scheduled draft sits on its
// day of the calendar; editing it counts live and saves; rescheduling
// moves it to the new day; Send to approval queues it.
func TestBrowserDraftsCalendar(t *testing.T) {
	s := newSite(t, nil)
	comp, err := s.a.Composer()
	if err != nil {
		t.Fatal(err)
	}
	// Next week's Tuesday and Thursday: always in the future, one week.
	week := weekStart(time.Now()).AddDate(0, 0, 7)
	tue := week.AddDate(0, 0, 1).Add(10 * time.Hour)
	thu := week.AddDate(0, 0, 3).Add(15*time.Hour + 30*time.Minute)
	text := "Calendar post about #golang"
	res, err := comp.Compose(context.Background(), workflow.ComposeRequest{Content: text, ScheduledFor: &tue})
	if err != nil {
		t.Fatalf("compose: %v", err)
	}
	id := res.ID
	draft := fmt.Sprintf("#draft-%d", id)
	ctx := browser(t, 1100, 900)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.ID("main")))
	run(t, ctx, "calendar", chromedp.Navigate(s.base+"/drafts?week="+week.Format("2006-01-02")),
		chromedp.WaitVisible(css("#day-%s %s", tue.Format("2006-01-02"), draft)))
	shot(t, ctx, "drafts")

	added := " https://go.dev"
	want := fmt.Sprintf("%d/280", tweettext.WeightedLength(text+added))
	run(t, ctx, "edit with a live count",
		chromedp.Click(css("%s details.draft-edit summary", draft)),
		chromedp.WaitVisible(css("#draft-text-%d", id)),
		// Type at the end, as a person appending would.
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const a = document.getElementById("draft-text-%d"); a.focus(); a.setSelectionRange(a.value.length, a.value.length); })()`, id)),
		chromedp.SendKeys(css("#draft-text-%d", id), added),
		waitJS(fmt.Sprintf(`document.getElementById("draft-count-%d").textContent === %q`, id, want)))
	run(t, ctx, "save", markPage(),
		chromedp.Click(css("%s details.draft-edit button[type=submit]", draft)),
		newPage(), chromedp.WaitVisible(chromedp.ID("flash")))
	if got := get(t, ctx, "saved text", chromedp.Text(css("%s .draft-text", draft))); got != text+added {
		t.Fatalf("after Save the draft reads %q", got)
	}
	wf, _ := s.a.Workflow()
	if d, err := wf.Draft(context.Background(), id); err != nil || d.Text != text+added {
		t.Fatalf("the edit did not reach the draft: %+v %v", d, err)
	}

	run(t, ctx, "reschedule", markPage(),
		// Every action of a draft sits behind its one control.
		chromedp.Click(css("%s details.draft-edit summary", draft)), chromedp.WaitVisible(css("#draft-day-%d", id)),
		chromedp.SetValue(css("#draft-day-%d", id), thu.Format("2006-01-02")),
		chromedp.SetValue(css("#draft-time-%d", id), thu.Format("15:04")),
		chromedp.Click(css(`%s form.reschedule button[type=submit]`, draft)),
		newPage(), chromedp.WaitVisible(css("#day-%s %s", thu.Format("2006-01-02"), draft)))
	if n := get(t, ctx, "old day", chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll("#day-%s #draft-%d").length`, tue.Format("2006-01-02"), id))); n != 0 {
		t.Fatal("the draft is still on its old day")
	}
	if d, err := wf.Draft(context.Background(), id); err != nil || !strings.HasPrefix(d.ScheduledFor, thu.UTC().Format("2006-01-02T15:04")) {
		t.Fatalf("the new time did not reach the draft: %+v %v", d, err)
	}

	run(t, ctx, "send to approval", markPage(),
		chromedp.Click(css("%s details.draft-edit summary", draft)),
		chromedp.Click(css(`%s form[action$="/approval"] button`, draft)),
		newPage(), chromedp.WaitVisible(chromedp.ID("flash")))
	flash := get(t, ctx, "flash", chromedp.Text(chromedp.ID("flash")))
	var qid int64
	if i := strings.Index(flash, "#"); i < 0 {
		t.Fatalf("after Send to approval: %q", flash)
	} else if _, err := fmt.Sscanf(flash[i:], "#%d", &qid); err != nil {
		t.Fatalf("after Send to approval: %q: %v", flash, err)
	}
	it, err := s.a.Gateway.Item(context.Background(), qid)
	if err != nil || it.Status != "pending" || !strings.Contains(string(it.Params), "go.dev") {
		t.Fatalf("the draft is not queued as edited: %+v %v", it, err)
	}
}

// TestBrowserAccountSwitcher: in chromium, the account switcher shows the
// other account's queue, and the navigation then stays on that account.
func TestBrowserAccountSwitcher(t *testing.T) {
	s := newSite(t, nil)
	b, err := s.a.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.Gateway.Do(context.Background(), gateway.Call{Tool: "x_post_tweet", Caller: "mcp", Params: map[string]any{"text": "brand b only"}})
	if err != nil || resp.Kind != gateway.Routed {
		t.Fatalf("brand_b post not queued: %+v %v", resp, err)
	}
	ctx := browser(t, 1100, 900)
	item := fmt.Sprintf("#item-%d", resp.ApprovalID)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.ID("account-switch")))
	if n := get(t, ctx, "default queue", chromedp.Evaluate[int](`document.body.innerText.includes("brand b only") ? 1 : 0`)); n != 0 {
		t.Fatal("the default account's queue shows brand_b's item")
	}
	run(t, ctx, "switch", markPage(),
		chromedp.SetValue(chromedp.ID("account-switch"), "brand_b"),
		chromedp.Click(chromedp.CSS(`form.account-switch button[type=submit]`)),
		newPage(), chromedp.WaitVisible(chromedp.CSS(item)))
	if loc := get(t, ctx, "where", chromedp.Location()); !strings.HasSuffix(loc, "/approvals?account=brand_b") {
		t.Fatalf("the switcher led to %s", loc)
	}
	if sel := get(t, ctx, "selected", chromedp.Value(chromedp.ID("account-switch"))); sel != "brand_b" {
		t.Fatalf("the switcher shows %q after switching", sel)
	}
	shot(t, ctx, "account-switch")
	run(t, ctx, "nav keeps the account", markPage(),
		chromedp.Click(chromedp.CSS(`nav[aria-label="Main"] a[href^="/audit"]`)),
		newPage(), chromedp.WaitVisible(chromedp.ID("account-switch")))
	if loc := get(t, ctx, "where", chromedp.Location()); !strings.HasSuffix(loc, "/audit?account=brand_b") {
		t.Fatalf("the Audit link led to %s, off brand_b", loc)
	}
	if sel := get(t, ctx, "selected on audit", chromedp.Value(chromedp.ID("account-switch"))); sel != "brand_b" {
		t.Fatalf("the audit page shows account %q", sel)
	}
	// Switching back on another page stays on that page.
	run(t, ctx, "switch back", markPage(),
		chromedp.SetValue(chromedp.ID("account-switch"), "default"),
		chromedp.Click(chromedp.CSS(`form.account-switch button[type=submit]`)),
		newPage(), chromedp.WaitVisible(chromedp.ID("account-switch")))
	if loc := get(t, ctx, "where", chromedp.Location()); !strings.HasSuffix(loc, "/audit?account=default") {
		t.Fatalf("switching back led to %s", loc)
	}
}

// markPage marks the current document, so newPage can tell when the
// browser has replaced it (a script poll would race the navigation).
func markPage() chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`document.body.setAttribute("data-old", "1")`)
}

// newPage waits until the marked document is gone.
func newPage() chromedp.Action[chromedp.Void] {
	return chromedp.WaitNotPresent(chromedp.CSS("body[data-old]"))
}
