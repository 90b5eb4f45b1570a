package web

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// TestCalendarQueueSlots: the calendar shows the queue's empty slots
// dashed, each with a form (no script needed) that places a draft in it;
// a slot taken meanwhile refuses the next draft, and a form without the
// CSRF token changes nothing.
func TestCalendarQueueSlots(t *testing.T) {
	s := newSite(t, func(c *config.Config) {
		c.Mode = "autopilot"
		c.Queue.Slots = []string{"daily 10:00", "daily 16:00"}
		c.Queue.MinGapMinutes = 0
	})
	comp, err := s.a.Composer()
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, text := range []string{"a draft for a queue slot", "a second draft, too late for it"} {
		d, err := comp.Compose(t.Context(), workflow.ComposeRequest{Content: text})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	tomorrow := time.Now().In(time.Local).AddDate(0, 0, 1)
	slotAt := time.Date(tomorrow.Year(), tomorrow.Month(), tomorrow.Day(), 10, 0, 0, 0, time.UTC)
	slot := slotAt.Format(time.RFC3339)
	c, csrf := s.client()
	week := "/drafts?week=" + slotAt.In(time.Local).Format("2006-01-02")
	_, body := s.get(c, week)
	day := section(t, body, `id="day-`+slotAt.In(time.Local).Format("2006-01-02")+`"`)
	for _, want := range []string{`class="slot-free" data-slot="` + slot + `"`, `action="/drafts/slot"`, `name="slot" value="` + slot + `"`,
		`<option value="` + itoa(ids[0]) + `">`, "free queue slot"} {
		if !strings.Contains(html.UnescapeString(day), want) {
			t.Fatalf("the empty slot lacks %q:\n%s", want, day)
		}
	}

	// Without the CSRF token nothing changes.
	code, _ := s.postForm(c, "/drafts/slot", url.Values{"draft_id": {itoa(ids[0])}, "slot": {slot}})
	wf, _ := s.a.Workflow()
	if d, _ := wf.Draft(t.Context(), ids[0]); code != http.StatusForbidden || d.Status != "draft" {
		t.Fatalf("a form without its CSRF token: status %d, draft %s; want 403 and still a draft", code, d.Status)
	}

	_, body = s.postForm(c, "/drafts/slot", url.Values{"csrf": {csrf}, "draft_id": {itoa(ids[0])}, "slot": {slot}})
	if !strings.Contains(body, "placed in the queue slot") {
		t.Fatalf("placing the draft was not confirmed:\n%s", section(t, body, `<main`))
	}
	d, err := wf.Draft(t.Context(), ids[0])
	if err != nil || d.Status != workflow.DraftScheduled {
		t.Fatalf("after the drop: %+v %v", d, err)
	}
	if got, _ := time.Parse(time.RFC3339, d.ScheduledFor); !got.Equal(slotAt) {
		t.Fatalf("the draft holds %s, want the slot %s", d.ScheduledFor, slot)
	}
	_, body = s.get(c, week)
	day = section(t, body, `id="day-`+slotAt.In(time.Local).Format("2006-01-02")+`"`)
	if strings.Contains(day, `data-slot="`+slot+`"`) || !strings.Contains(day, "a draft for a queue slot") {
		t.Fatalf("the taken slot still shows as free, or the draft is not on its day:\n%s", day)
	}

	// The slot is taken: the second draft is refused and stays a draft.
	_, body = s.postForm(c, "/drafts/slot", url.Values{"csrf": {csrf}, "draft_id": {itoa(ids[1])}, "slot": {slot}})
	if !strings.Contains(body, "not placed") || !strings.Contains(body, "not a free slot") {
		t.Fatalf("a taken slot was not refused:\n%s", section(t, body, `<main`))
	}
	if d, _ := wf.Draft(t.Context(), ids[1]); d.Status != "draft" {
		t.Errorf("the refused draft is %s", d.Status)
	}
	// A time that is no slot is refused too.
	_, body = s.postForm(c, "/drafts/slot", url.Values{"csrf": {csrf}, "draft_id": {itoa(ids[1])}, "slot": {slotAt.Add(time.Hour).Format(time.RFC3339)}})
	if !strings.Contains(body, "not placed") {
		t.Errorf("a time between slots was not refused")
	}
}
