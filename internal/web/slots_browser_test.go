package web

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// TestBrowserDropDraftOnQueueSlot: in chromium, next week's empty queue
// slots are drawn dashed; dragging a draft onto one places it there, and
// the slot's own form places another.
func TestBrowserDropDraftOnQueueSlot(t *testing.T) {
	s := newSite(t, func(c *config.Config) {
		c.Mode = "autopilot"
		c.Schedule.Timezone = "UTC"
		c.Queue.Slots = []string{"daily 10:00"}
		c.Queue.MinGapMinutes = 0
	})
	comp, err := s.a.Composer()
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, text := range []string{"Dragged onto Tuesday's slot", "Placed on Wednesday through the form"} {
		d, err := comp.Compose(context.Background(), workflow.ComposeRequest{Content: text})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	week := weekStart(time.Now()).AddDate(0, 0, 7)
	slotOn := func(d int) time.Time {
		day := week.AddDate(0, 0, d)
		return time.Date(day.Year(), day.Month(), day.Day(), 10, 0, 0, 0, time.UTC)
	}
	tue, wed := slotOn(1), slotOn(2)
	slotSel := func(at time.Time) string { return fmt.Sprintf(`.slot-free[data-slot=%q]`, at.Format(time.RFC3339)) }
	ctx := browser(t, 1100, 900)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.ID("main")))
	run(t, ctx, "calendar", chromedp.Navigate(s.base+"/drafts?week="+week.Format("2006-01-02")),
		chromedp.WaitVisible(css("%s", slotSel(tue))))
	if style := get(t, ctx, "slot border", chromedp.Evaluate[string](fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).borderTopStyle`, slotSel(tue)))); style != "dashed" {
		t.Errorf("an empty slot's border is %q, want dashed", style)
	}
	shot(t, ctx, "drafts-queue-slots")

	// Chromium's input layer cannot drag between elements headless; the
	// page's own drag events carry the draft, as a mouse drag would.
	drag := fmt.Sprintf(`(() => {
		const dt = new DataTransfer();
		document.getElementById("draft-%d").dispatchEvent(new DragEvent("dragstart", {bubbles: true, dataTransfer: dt}));
		const slot = document.querySelector(%q);
		slot.dispatchEvent(new DragEvent("dragover", {bubbles: true, cancelable: true, dataTransfer: dt}));
		slot.dispatchEvent(new DragEvent("drop", {bubbles: true, cancelable: true, dataTransfer: dt}));
	})()`, ids[0], slotSel(tue))
	run(t, ctx, "drag a draft onto a slot", markPage(), chromedp.Evaluate[chromedp.Void](drag),
		newPage(), chromedp.WaitVisible(css("#day-%s #draft-%d", tue.Format("2006-01-02"), ids[0])))
	wf, _ := s.a.Workflow()
	if d, err := wf.Draft(context.Background(), ids[0]); err != nil || d.ScheduledFor != store.FormatTime(tue) {
		t.Fatalf("after the drop: %+v %v; want scheduled at %s", d, err, tue)
	}

	run(t, ctx, "place through the slot's form", markPage(),
		chromedp.SetValue(css("%s select", slotSel(wed)), fmt.Sprint(ids[1])),
		chromedp.Click(css("%s button[type=submit]", slotSel(wed))),
		newPage(), chromedp.WaitVisible(css("#day-%s #draft-%d", wed.Format("2006-01-02"), ids[1])))
	if d, err := wf.Draft(context.Background(), ids[1]); err != nil || d.ScheduledFor != store.FormatTime(wed) {
		t.Fatalf("after the form: %+v %v; want scheduled at %s", d, err, wed)
	}
}
