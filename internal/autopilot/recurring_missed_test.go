package autopilot_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/notify"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// cronTicks runs the publisher as cron would: one tick every 10 minutes,
// at :02, :12, ..., in [from, to), with nothing in between, except while
// the machine is down ([down[0], down[1])).
func (e *env) cronTicks(from, to time.Time, down ...[2]time.Time) {
	e.t.Helper()
	first := from.Truncate(10 * time.Minute).Add(2 * time.Minute)
	if first.Before(from) {
		first = first.Add(10 * time.Minute)
	}
	for at := first; at.Before(to); at = at.Add(10 * time.Minute) {
		off := false
		for _, d := range down {
			off = off || (!at.Before(d[0]) && at.Before(d[1]))
		}
		if off {
			continue
		}
		e.clock.AdvanceTo(at)
		tick(e.t, e.runner(e.app, autopilot.LoopPublisher))
	}
}

// rescheduledNotices are the publish.rescheduled notices recorded, as
// the channels receive them.
func (e *env) rescheduledNotices() []notify.Item {
	e.t.Helper()
	rows, err := e.db().Query(`SELECT payload FROM notify_outbox WHERE event = ? ORDER BY id`, notify.EventRescheduled)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []notify.Item
	for rows.Next() {
		var payload string
		var it notify.Item
		if err := rows.Scan(&payload); err != nil {
			e.t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(payload), &it); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// TestRecurringOccurrenceIsNeverLost: an occurrence of a recurring post
// that was announced (its next_at shown) is published or moved, never
// dropped, when the publisher runs from cron: created two minutes before
// its first occurrence it posts at the next tick; a tick late within
// late_grace_minutes posts late; past the grace the occurrence (made
// ahead, or not made yet) is moved with publish.rescheduled: to the next
// free queue slot, or back to the drafts when the queue has no slot.
func TestRecurringOccurrenceIsNeverLost(t *testing.T) {
	texts := []string{"Morning note 1: ship small.", "Morning note 2: test first.", "Morning note 3: read the logs.",
		"Morning note 4: name things well.", "Morning note 5: delete code.", "Morning note 6: measure.", "Morning note 7: rest."}
	cases := []struct {
		name  string
		slots []string
		// the missed occurrences end up here: a draft status and time
		status, at string
	}{
		{"no queue slots: kept as a draft", nil, "draft", ""},
		{"queue slots: the next free one", []string{"daily 18:00"}, workflow.DraftScheduled, "18:00"},
	}
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t, func(c *config.Config) {
					c.Queue.Slots = tc.slots
					c.Queue.LateGraceMinutes = 15
					c.Notify.Channels = []config.NotifyChannel{{Name: "phone", Type: config.ChannelNtfy, Server: "http://127.0.0.1:9", Topic: "tuitbot"}}
				})
				ctx := context.Background()
				s, err := e.app.Workflow()
				if err != nil {
					t.Fatal(err)
				}
				day := func(d int, h, m int) time.Time {
					return day0.AddDate(0, 0, d).Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
				}
				posted := func(from, to time.Time) []string {
					var out []string
					for _, p := range e.ourPosts(from, to) {
						out = append(out, p.CreatedAt.UTC().Format("2006-01-02 15:04")+" "+p.Text)
					}
					return out
				}

				// Day 0: created at 09:58 for 10:00; cron's next tick is 10:02.
				e.clock.AdvanceTo(day(0, 9, 58))
				rule, err := s.CreateRecurring(ctx, time.UTC, workflow.RecurringRequest{Content: texts[0], Every: workflow.Every{N: 1, Unit: "day"},
					Time: "10:00", Vary: &workflow.Vary{Variants: texts[1:]}})
				if err != nil {
					t.Fatal(err)
				}
				if want := "2026-03-02T10:00:00Z"; rule.NextAt != want {
					t.Fatalf("next_at %s, want %s", rule.NextAt, want)
				}
				e.cronTicks(day(0, 9, 58), day(0, 11, 0))
				if got := posted(day(0, 0, 0), day(1, 0, 0)); len(got) != 1 || got[0] != "2026-03-02 10:02 "+texts[0] {
					t.Fatalf("day 0 (created two minutes before its first occurrence): posted %q; want the first text at 10:02", got)
				}

				// Day 1: the machine is down 09:50-10:10; the 10:12 tick is 12
				// minutes late, within the grace: it posts then.
				e.cronTicks(day(1, 9, 0), day(1, 11, 0), [2]time.Time{day(1, 9, 50), day(1, 10, 10)})
				if got := posted(day(1, 0, 0), day(2, 0, 0)); len(got) != 1 || got[0] != "2026-03-03 10:12 "+texts[1] {
					t.Fatalf("day 1 (a tick 12 minutes late): posted %q; want the second text at 10:12", got)
				}
				if n := len(e.rescheduledNotices()); n != 0 {
					t.Fatalf("%d publish.rescheduled notices before any occurrence was missed", n)
				}

				// Day 2: down 09:50-10:20; the 10:22 tick is past the grace. A
				// second rule created at 09:48 announced 10:00 too and was
				// never made into a draft.
				e.clock.AdvanceTo(day(2, 9, 48))
				second, err := s.CreateRecurring(ctx, time.UTC, workflow.RecurringRequest{Content: "Weekly review: what shipped.", Every: workflow.Every{N: 1, Unit: "week"}, Time: "10:00"})
				if err != nil {
					t.Fatal(err)
				}
				if want := "2026-03-04T10:00:00Z"; second.NextAt != want {
					t.Fatalf("second rule: next_at %s, want %s", second.NextAt, want)
				}
				e.cronTicks(day(2, 9, 49), day(2, 12, 0), [2]time.Time{day(2, 9, 50), day(2, 10, 20)})
				if got := posted(day(2, 0, 0), day(2, 12, 0)); len(got) != 0 {
					t.Fatalf("day 2 (no tick until 22 minutes past): posted %q; want nothing posted that late", got)
				}
				notices := e.rescheduledNotices()
				if len(notices) != 2 {
					t.Fatalf("%d publish.rescheduled notices, want 2 (one per missed occurrence): %+v", len(notices), notices)
				}
				for _, rid := range []int64{rule.ID, second.ID} {
					var id int64
					var status, sched string
					err := e.db().QueryRow(`SELECT id, status, COALESCE(scheduled_for, '') FROM drafts WHERE recurring_id = ? AND occurrence_at = ?`,
						rid, store.FormatTime(day(2, 10, 0))).Scan(&id, &status, &sched)
					if err != nil {
						t.Fatalf("rule %d: the missed occurrence of day 2 is gone: %v", rid, err)
					}
					// With a queue the two go to two free slots at 18:00 (today's
					// and tomorrow's); without one they wait, unscheduled.
					okAt := sched == ""
					if tc.at != "" {
						okAt = sched == store.FormatTime(day(2, 18, 0)) || sched == store.FormatTime(day(3, 18, 0))
					}
					if status != tc.status || !okAt {
						t.Errorf("rule %d: the missed occurrence is %s at %q; want %s at %s", rid, status, sched, tc.status, orNone(tc.at))
					}
					found := false
					for _, n := range notices {
						found = found || (n.DraftID == id && n.MissedSlot == store.FormatTime(day(2, 10, 0)))
					}
					if !found {
						t.Errorf("rule %d: no notice names draft %d and its missed time", rid, id)
					}
				}
				if tc.at != "" {
					// At the queue slot one of them posts; the other goes to
					// the next free slot, the day after.
					e.cronTicks(day(2, 17, 55), day(2, 18, 30))
					if got := posted(day(2, 12, 0), day(3, 0, 0)); len(got) != 1 {
						t.Errorf("at the 18:00 slot: posted %q; want one missed occurrence", got)
					}
				}
				// The next day's occurrence is unaffected.
				e.cronTicks(day(3, 9, 55), day(3, 10, 30))
				if got := posted(day(3, 0, 0), day(4, 0, 0)); len(got) != 1 || got[0] != "2026-03-05 10:02 "+texts[3] {
					t.Errorf("day 3: posted %q; want the fourth text at 10:02", got)
				}

				// Days 4-5: down from day 4 09:50 until day 5 10:20, so two
				// occurrences of the daily rule are missed. Neither posts late
				// nor vanishes: the older waits in the drafts (a slot would
				// put it after its successor), the latest takes a slot when
				// the queue has one before the next occurrence.
				before := len(e.rescheduledNotices())
				e.cronTicks(day(3, 10, 30), day(5, 11, 0), [2]time.Time{day(4, 9, 50), day(5, 10, 20)})
				if got := posted(day(4, 9, 50), day(5, 11, 0)); len(got) != 0 {
					t.Errorf("days 4-5: posted %q during and after the outage; want nothing that late", got)
				}
				latest := ""
				if tc.at != "" {
					latest = store.FormatTime(day(5, 18, 0))
				}
				for _, c := range []struct {
					occurrence    time.Time
					status, sched string
				}{
					{day(4, 10, 0), "draft", ""},
					{day(5, 10, 0), tc.status, latest},
				} {
					var status, sched string
					err := e.db().QueryRow(`SELECT status, COALESCE(scheduled_for, '') FROM drafts WHERE recurring_id = ? AND occurrence_at = ?`,
						rule.ID, store.FormatTime(c.occurrence)).Scan(&status, &sched)
					if err != nil {
						t.Fatalf("the occurrence of %s is gone: %v", c.occurrence.Format(time.RFC3339), err)
					}
					if status != c.status || sched != c.sched {
						t.Errorf("the occurrence of %s is %s at %q; want %s at %q", c.occurrence.Format(time.RFC3339), status, sched, c.status, c.sched)
					}
				}
				if n := len(e.rescheduledNotices()) - before; n != 2 {
					t.Errorf("%d publish.rescheduled notices for the two occurrences missed in the outage, want 2", n)
				}
			})
		}
	})
}

func orNone(s string) string {
	if s == "" {
		return "no time"
	}
	return s
}
