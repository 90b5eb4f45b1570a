package queue

import (
	"strings"
	"testing"
	"time"
)

func TestStatusAndFreeSlots(t *testing.T) {
	mon := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // a Monday
	at := func(day, h, m int) time.Time {
		return mon.AddDate(0, 0, day).Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
	}
	rules := mustRules(t, "daily 09:00", "daily 12:00", "daily 18:00")
	tests := []struct {
		name      string
		gap       time.Duration
		maxPerDay int
		booked    []time.Time
		n         int
		want      []time.Time
		status    map[time.Time]string
	}{
		{
			name: "a booked slot is taken", booked: []time.Time{at(0, 9, 0)}, n: 2,
			want:   []time.Time{at(0, 12, 0), at(0, 18, 0)},
			status: map[time.Time]string{at(0, 9, 0): Taken, at(0, 12, 0): Free},
		},
		{
			name: "the gap keeps slots away from a post scheduled by hand", gap: 4 * time.Hour,
			booked: []time.Time{at(0, 10, 0)}, n: 2,
			want:   []time.Time{at(0, 18, 0), at(1, 9, 0)},
			status: map[time.Time]string{at(0, 9, 0): TooClose, at(0, 12, 0): TooClose, at(0, 18, 0): Free},
		},
		{
			name: "the gap applies between the slots chosen together", gap: 4 * time.Hour, n: 3,
			want: []time.Time{at(0, 9, 0), at(0, 18, 0), at(1, 9, 0)},
		},
		{
			name: "a full day is skipped", maxPerDay: 2, booked: []time.Time{at(0, 7, 0), at(0, 20, 0)}, n: 1,
			want:   []time.Time{at(1, 9, 0)},
			status: map[time.Time]string{at(0, 9, 0): DayFull, at(1, 9, 0): Free},
		},
		{
			name: "the cap applies to the slots chosen together", maxPerDay: 1, n: 3,
			want: []time.Time{at(0, 9, 0), at(1, 9, 0), at(2, 9, 0)},
		},
		{name: "count zero", n: 0, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Policy{Rules: rules, Loc: time.UTC, MinGap: tt.gap, MaxPerDay: tt.maxPerDay}
			got := p.FreeSlots(mon, mon.AddDate(0, 0, 7), tt.booked, tt.n)
			if fmtTimes(got) != fmtTimes(tt.want) {
				t.Errorf("FreeSlots = %s, want %s", fmtTimes(got), fmtTimes(tt.want))
			}
			for slot, want := range tt.status {
				if got := p.Status(slot, tt.booked); got != want {
					t.Errorf("Status(%s) = %q, want %q", slot.Format(time.RFC3339), got, want)
				}
			}
		})
	}
}

func TestNeedsCoversLocalDaysAndGap(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{Loc: ny, MinGap: 36 * time.Hour}
	from := time.Date(2026, 3, 4, 15, 0, 0, 0, ny)
	lo, hi := p.Needs(from, from.Add(time.Hour))
	if want := from.Add(-36 * time.Hour); !lo.Equal(want) {
		t.Errorf("lo = %s, want %s", lo, want)
	}
	if want := from.Add(37 * time.Hour); !hi.Equal(want) {
		t.Errorf("hi = %s, want %s", hi, want)
	}
	p.MinGap = 0
	lo, hi = p.Needs(from, from.Add(time.Hour))
	if want := time.Date(2026, 3, 4, 0, 0, 0, 0, ny); !lo.Equal(want) {
		t.Errorf("lo without gap = %s, want local midnight %s", lo, want)
	}
	if want := time.Date(2026, 3, 5, 0, 0, 0, 0, ny); !hi.Equal(want) {
		t.Errorf("hi without gap = %s, want next local midnight %s", hi, want)
	}
}

func fmtTimes(ts []time.Time) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.UTC().Format(time.RFC3339))
	}
	return "[" + strings.Join(s, " ") + "]"
}
