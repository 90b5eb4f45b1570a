package notify

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/store"
)

// The words every channel uses for a message; each channel escapes them
// for its own format, since the post text is whatever an agent wrote.

// Title is a message's one-line headline.
func Title(m Message) string {
	prefix := ""
	if m.Account != "" && m.Account != "default" {
		prefix = "[" + m.Account + "] "
	}
	if m.More > 0 {
		return fmt.Sprintf("%s%d more pending (the hourly notification cap was reached)", prefix, m.More)
	}
	if len(m.Items) > 1 {
		return fmt.Sprintf("%s%d items wait for your approval", prefix, len(m.Items))
	}
	it := m.Items[0]
	switch m.Event {
	case EventCreated:
		return prefix + "Approval needed: " + nameOf(it)
	case EventEdited:
		return prefix + "Edited, approval needed: " + nameOf(it)
	case EventExpiring:
		return prefix + "Expires soon, approval needed: " + nameOf(it)
	case EventDecided:
		return prefix + "Decided (" + it.Status + " by " + it.ReviewedBy + "): " + nameOf(it)
	case EventUnknown:
		return prefix + "Outcome unknown: " + it.Tool + " (check X, then resolve it)"
	case EventPubFailed:
		return prefix + "Scheduled post failed"
	case EventRescheduled:
		if it.ScheduledFor == "" {
			return prefix + "Scheduled post missed its time and went back to the drafts"
		}
		return prefix + "Scheduled post missed its slot and moved to the next free one"
	case EventPublished:
		return prefix + "Posted: " + it.Tool
	case EventHandOff:
		return prefix + "Do it on X: " + nameOf(it) + " (the API may not)"
	case EventTest:
		return prefix + "tuitbot test notification"
	}
	return prefix + m.Event + ": " + it.Tool
}

// nameOf is the item's action as the review page names it ("Like",
// "Delete post", "Thread").
func nameOf(it Item) string {
	return describe.Of(it.Tool, it.Equivalent, it.Params).Name
}

// Details is the line under an item's text: rule, caller and expiry.
func Details(it Item, now time.Time) string {
	var parts []string
	if it.Rule != "" {
		parts = append(parts, "rule "+it.Rule)
	}
	if it.Caller != "" {
		parts = append(parts, "asked by "+it.Caller)
	}
	if it.ExpiresAt != "" {
		if t, err := store.ParseTime(it.ExpiresAt); err == nil {
			parts = append(parts, "expires in "+roughly(t.Sub(now)))
		}
	}
	if it.ItemID != 0 {
		parts = append(parts, fmt.Sprintf("item %d", it.ItemID))
	}
	if it.HandOffID != 0 {
		parts = append(parts, fmt.Sprintf("hand-off %d", it.HandOffID))
	}
	if it.IntentURL != "" {
		parts = append(parts, "do it on X: "+it.IntentURL)
	}
	if it.CorrelationID != "" {
		parts = append(parts, "correlation "+it.CorrelationID)
	}
	if it.Error != "" {
		parts = append(parts, "error: "+it.Error)
	}
	switch {
	case it.MissedSlot != "" && it.ScheduledFor != "":
		parts = append(parts, "missed "+it.MissedSlot+", now "+it.ScheduledFor)
	case it.MissedSlot != "":
		parts = append(parts, "missed "+it.MissedSlot+", now a draft to schedule again")
	}
	return strings.Join(parts, " · ")
}

func roughly(d time.Duration) string {
	switch {
	case d <= 0:
		return "no time"
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	default:
		return fmt.Sprintf("%dh%02d", int(d.Hours()), int(d.Minutes())%60)
	}
}

// maxDigestItems bounds how many items a digest spells out.
const maxDigestItems = 10

// oneLine removes line breaks and other control characters, for places
// that must stay a single line (a title, a subject).
func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
