package notify

import (
	"strings"
	"testing"
	"time"
)

// TestRescheduledSaysWhereThePostWent: publish.rescheduled names the slot
// the post missed and the one it holds now.
func TestRescheduledSaysWhereThePostWent(t *testing.T) {
	it := Item{Account: "brand_b", Tool: "scheduled_tweet", Text: "a queued post", DraftID: 7,
		MissedSlot: "2026-03-02T14:00:00.000Z", ScheduledFor: "2026-03-03T10:00:00.000Z"}
	m := Message{Event: EventRescheduled, Account: "brand_b", Items: []Item{it}}
	if got := Title(m); got != "[brand_b] Scheduled post missed its slot and moved to the next free one" {
		t.Errorf("Title = %q", got)
	}
	if got := Details(it, time.Now()); !strings.Contains(got, "missed 2026-03-02T14:00:00.000Z, now 2026-03-03T10:00:00.000Z") {
		t.Errorf("Details = %q", got)
	}
}

// TestRescheduledBackToDrafts: an occurrence with no slot to go to says
// it is a draft again, not that it moved to a slot.
func TestRescheduledBackToDrafts(t *testing.T) {
	it := Item{Tool: "scheduled_tweet", Text: "a recurring post", DraftID: 8, MissedSlot: "2026-03-02T10:00:00.000Z"}
	m := Message{Event: EventRescheduled, Items: []Item{it}}
	if got := Title(m); got != "Scheduled post missed its time and went back to the drafts" {
		t.Errorf("Title = %q", got)
	}
	if got := Details(it, time.Now()); !strings.Contains(got, "missed 2026-03-02T10:00:00.000Z, now a draft to schedule again") {
		t.Errorf("Details = %q", got)
	}
}
