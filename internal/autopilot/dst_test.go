package autopilot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// TestDailySlotsOnTheAutumnChange: on the day the clock goes back, in the
// account's timezone, each daily slot posts exactly once: a recurring
// post, a queue slot and a preferred content time, both for a time inside
// the hour that repeats and one outside it. A time inside the repeated
// hour posts the first time the clock shows it (as cron runs it), in
// every timezone. The publisher and the content loop run from cron every
// 10 minutes through the night.
func TestDailySlotsOnTheAutumnChange(t *testing.T) {
	cases := []struct {
		tz string
		// change is the local date the clock goes back, inside the local
		// wall-clock time of the repeated hour, first its first instant.
		change      string
		inside      string
		firstInside string // UTC
		outside     string // UTC instant of 09:00 that day
	}{
		{"America/New_York", "2026-11-01", "01:30", "2026-11-01T05:30:00Z", "2026-11-01T14:00:00Z"},
		{"Europe/Berlin", "2026-10-25", "02:30", "2026-10-25T00:30:00Z", "2026-10-25T08:00:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.tz, func(t *testing.T) {
			loc, err := time.LoadLocation(tc.tz)
			if err != nil {
				t.Fatal(err)
			}
			change, err := time.ParseInLocation(time.DateOnly, tc.change, loc)
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, func(c *config.Config) {
				c.Schedule.Timezone = tc.tz
				c.Schedule.ActiveHoursStart, c.Schedule.ActiveHoursEnd = 0, 0
				c.Schedule.PreferredTimes = []string{tc.inside, "09:00"}
				c.Queue.Slots = []string{"daily " + tc.inside, "daily 09:00"}
				c.Limits.MaxTweetsPerDay = 50
			})
			ctx := context.Background()
			s, err := e.app.Workflow()
			if err != nil {
				t.Fatal(err)
			}
			cp, err := e.app.Composer()
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.app.Cfg.QueuePolicy()
			if err != nil {
				t.Fatal(err)
			}
			// The day before the change, at noon local time.
			start := time.Date(change.Year(), change.Month(), change.Day()-1, 12, 0, 0, 0, loc)
			e.clock.AdvanceTo(start)
			for _, at := range []string{tc.inside, "09:00"} {
				var texts []string
				for i := range 7 {
					texts = append(texts, "Recurring at "+at+", note "+string(rune('A'+i))+".")
				}
				if _, err := s.CreateRecurring(ctx, loc, workflow.RecurringRequest{Content: texts[0], Every: workflow.Every{N: 1, Unit: "day"},
					Time: at, Vary: &workflow.Vary{Variants: texts[1:]}}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 4 {
				if _, err := cp.ScheduleInQueue(ctx, p, workflow.QueueRequest{Content: "Queued item " + string(rune('A'+i)) + " for the night.",
					Position: workflow.PositionLast}); err != nil {
					t.Fatal(err)
				}
			}
			end := time.Date(change.Year(), change.Month(), change.Day()+1, 12, 0, 0, 0, loc)
			first := start.UTC().Truncate(10 * time.Minute).Add(2 * time.Minute)
			for at := first; at.Before(end); at = at.Add(10 * time.Minute) {
				e.clock.AdvanceTo(at)
				tick(t, e.runner(e.app, autopilot.LoopPublisher, autopilot.LoopContent))
			}

			dayStart, dayEnd := change, time.Date(change.Year(), change.Month(), change.Day()+1, 0, 0, 0, 0, loc)
			if got := dayEnd.Sub(dayStart); got != 25*time.Hour {
				t.Fatalf("%s lasts %s in %s, want 25h", tc.change, got, tc.tz)
			}
			kinds := map[string]func(string) bool{
				"recurring " + tc.inside: func(s string) bool { return strings.HasPrefix(s, "Recurring at "+tc.inside) },
				"recurring 09:00":        func(s string) bool { return strings.HasPrefix(s, "Recurring at 09:00") },
				"queue slots":            func(s string) bool { return strings.HasPrefix(s, "Queued item") },
				"preferred times":        func(s string) bool { return strings.HasPrefix(s, "Tip ") },
			}
			// Each post comes at the first tick after its slot (a tick every
			// 10 minutes, plus the action delay): within 10 minutes of it.
			inside, _ := time.Parse(time.RFC3339, tc.firstInside)
			outside, _ := time.Parse(time.RFC3339, tc.outside)
			want := map[string][]time.Time{
				"recurring " + tc.inside: {inside},
				"recurring 09:00":        {outside},
				"queue slots":            {inside, outside},
				"preferred times":        {inside, outside},
			}
			for kind, is := range kinds {
				var got []time.Time
				for _, post := range e.ourPosts(dayStart, dayEnd) {
					if is(post.Text) {
						got = append(got, post.CreatedAt)
					}
				}
				ok := len(got) == len(want[kind])
				for i := 0; ok && i < len(got); i++ {
					ok = !got[i].Before(want[kind][i]) && got[i].Sub(want[kind][i]) < 10*time.Minute
				}
				if !ok {
					t.Errorf("%s on %s: posted at %v; want one post within 10 minutes after each of %v", kind, tc.change, utc(got), utc(want[kind]))
				}
			}
		})
	}
}

func utc(ts []time.Time) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.UTC().Format(time.RFC3339))
	}
	return out
}
