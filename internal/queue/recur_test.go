package queue

import (
	"strings"
	"testing"
	"time"
)

func TestRecurrenceKeepsWallClockAcrossDST(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	anchor := time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		r    Recurrence
		span time.Duration
		want []string // UTC
	}{
		{"daily 09:00 over the spring change", Recurrence{N: 1, Unit: UnitDay, Hour: 9, Anchor: anchor}, 4 * 24 * time.Hour,
			[]string{"2026-03-27T08:00:00Z", "2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"}},
		{"a time the change skips moves forward", Recurrence{N: 1, Unit: UnitDay, Hour: 2, Minute: 30, Anchor: anchor}, 4 * 24 * time.Hour,
			[]string{"2026-03-27T01:30:00Z", "2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"}},
		{"every other day on weekdays", Recurrence{N: 2, Unit: UnitDay, Hour: 9, Anchor: anchor, Days: [7]bool{time.Friday: true, time.Sunday: true, time.Monday: true}}, 14 * 24 * time.Hour,
			[]string{"2026-03-27T08:00:00Z", "2026-03-29T07:00:00Z", "2026-04-06T07:00:00Z"}},
		{"every two weeks, default day", Recurrence{N: 2, Unit: UnitWeek, Hour: 9, Anchor: anchor}, 30 * 24 * time.Hour,
			[]string{"2026-03-27T08:00:00Z", "2026-04-10T07:00:00Z", "2026-04-24T07:00:00Z"}},
		{"ends on", Recurrence{N: 1, Unit: UnitDay, Hour: 9, Anchor: anchor, EndsOn: anchor.AddDate(0, 0, 1)}, 10 * 24 * time.Hour,
			[]string{"2026-03-27T08:00:00Z", "2026-03-28T08:00:00Z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from := time.Date(2026, 3, 26, 23, 0, 0, 0, time.UTC)
			var s []string
			for _, g := range tc.r.Between(berlin, from, from.Add(tc.span), 0) {
				s = append(s, g.UTC().Format(time.RFC3339))
			}
			if len(s) != len(tc.want) {
				t.Fatalf("got %v, want %v", s, tc.want)
			}
			for i := range s {
				if s[i] != tc.want[i] {
					t.Errorf("occurrence %d: %s, want %s", i, s[i], tc.want[i])
				}
			}
		})
	}
}

func TestShortestRepeat(t *testing.T) {
	anchor := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // a Monday
	now := anchor.Add(12 * time.Hour)
	cases := []struct {
		name  string
		r     Recurrence
		k     int
		limit int
		want  time.Duration
		ok    bool
	}{
		{"daily, one text", Recurrence{N: 1, Unit: UnitDay, Hour: 9, Anchor: anchor}, 1, 0, 24 * time.Hour, true},
		{"daily, seven texts", Recurrence{N: 1, Unit: UnitDay, Hour: 9, Anchor: anchor}, 7, 0, 7 * 24 * time.Hour, true},
		{"mon and thu, two texts", Recurrence{N: 1, Unit: UnitWeek, Hour: 9, Anchor: anchor, Days: [7]bool{time.Monday: true, time.Thursday: true}}, 2, 0, 7 * 24 * time.Hour, true},
		{"mon and thu, one text", Recurrence{N: 1, Unit: UnitWeek, Hour: 9, Anchor: anchor, Days: [7]bool{time.Monday: true, time.Thursday: true}}, 1, 0, 3 * 24 * time.Hour, true},
		{"daily, ends after the texts run out", Recurrence{N: 1, Unit: UnitDay, Hour: 9, Anchor: anchor}, 2, 2, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.r.ShortestRepeat(time.UTC, now, tc.k, tc.limit)
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %s %v, want %s %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestOccurrencesOnTheAutumnChange: on the day the clock goes back a daily
// occurrence comes once, a time inside the repeated hour at its first
// instance (before the change), in zones west and east of UTC.
func TestOccurrencesOnTheAutumnChange(t *testing.T) {
	cases := []struct {
		tz          string
		day         time.Time // the date the clock goes back
		hour, min   int
		wantOnDay   string // UTC instant of that day's occurrence
		wantBefore  string // the day before
		wantAfter   string // the day after
		description string
	}{
		{"America/New_York", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 1, 30,
			"2026-11-01T05:30:00Z", "2026-10-31T05:30:00Z", "2026-11-02T06:30:00Z", "inside the repeated hour"},
		{"America/New_York", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 9, 0,
			"2026-11-01T14:00:00Z", "2026-10-31T13:00:00Z", "2026-11-02T14:00:00Z", "outside it"},
		{"Europe/Berlin", time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), 2, 30,
			"2026-10-25T00:30:00Z", "2026-10-24T00:30:00Z", "2026-10-26T01:30:00Z", "inside the repeated hour"},
		{"Europe/Berlin", time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), 9, 0,
			"2026-10-25T08:00:00Z", "2026-10-24T07:00:00Z", "2026-10-26T08:00:00Z", "outside it"},
	}
	for _, tc := range cases {
		t.Run(tc.tz+" "+tc.description, func(t *testing.T) {
			loc, err := time.LoadLocation(tc.tz)
			if err != nil {
				t.Fatal(err)
			}
			r := Recurrence{N: 1, Unit: UnitDay, Hour: tc.hour, Minute: tc.min, Anchor: tc.day.AddDate(0, 0, -7)}
			from := time.Date(tc.day.Year(), tc.day.Month(), tc.day.Day()-1, 0, 0, 0, 0, loc)
			to := time.Date(tc.day.Year(), tc.day.Month(), tc.day.Day()+2, 0, 0, 0, 0, loc)
			var got []string
			for _, g := range r.Between(loc, from, to, 0) {
				got = append(got, g.UTC().Format(time.RFC3339))
			}
			want := []string{tc.wantBefore, tc.wantOnDay, tc.wantAfter}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("occurrences %v, want %v", got, want)
			}
			slots := Expand([]Rule{{Days: [7]bool{true, true, true, true, true, true, true}, Hour: tc.hour, Minute: tc.min}}, loc, from, to)
			var gs []string
			for _, s := range slots {
				gs = append(gs, s.UTC().Format(time.RFC3339))
			}
			if strings.Join(gs, " ") != strings.Join(want, " ") {
				t.Errorf("queue slots %v, want %v", gs, want)
			}
		})
	}
}
