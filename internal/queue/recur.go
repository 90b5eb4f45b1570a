package queue

import (
	"fmt"
	"strings"
	"time"
)

// Units a recurrence counts in.
const (
	UnitDay  = "day"
	UnitWeek = "week"
)

// Recurrence is a repeating posting time: every N days or weeks from an
// anchor date, on some weekdays, at a wall-clock time in the account's
// timezone. Dates are civil dates (midnight UTC), so that counting days is
// exact whatever the timezone's daylight-saving changes.
type Recurrence struct {
	N    int
	Unit string
	// Days are the weekdays it falls on; for a daily unit an empty set
	// means every day, for a weekly unit the anchor's weekday.
	Days         [7]bool
	Hour, Minute int
	Anchor       time.Time
	// EndsOn is the last date an occurrence may fall on; zero for none.
	EndsOn time.Time
}

// Date is the civil date of t in loc, as midnight UTC.
func Date(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
}

// ParseDate reads a YYYY-MM-DD civil date.
func ParseDate(s string) (time.Time, error) {
	return time.Parse(time.DateOnly, s)
}

// ParseClock reads an HH:MM wall-clock time.
func ParseClock(s string) (hour, minute int, err error) {
	r, err := ParseSlot("daily " + s)
	if err != nil {
		return 0, 0, fmt.Errorf("%q is not an HH:MM time (00:00 to 23:59)", s)
	}
	return r.Hour, r.Minute, nil
}

// ParseWeekday reads mon..sun.
func ParseWeekday(s string) (time.Weekday, bool) {
	i, ok := dayIndex(strings.ToLower(strings.TrimSpace(s)))
	return time.Weekday(i), ok
}

// WeekdayName is the short name ParseWeekday reads.
func WeekdayName(d time.Weekday) string { return dayNames[d] }

func (r Recurrence) hasDays() bool {
	for _, d := range r.Days {
		if d {
			return true
		}
	}
	return false
}

func daysBetween(a, b time.Time) int { return int(b.Sub(a).Hours()) / 24 }

// monday is the Monday of d's week.
func monday(d time.Time) time.Time {
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

// On reports whether civil date d has an occurrence.
func (r Recurrence) On(d time.Time) bool {
	if d.Before(r.Anchor) || (!r.EndsOn.IsZero() && d.After(r.EndsOn)) || r.N < 1 {
		return false
	}
	switch r.Unit {
	case UnitDay:
		return daysBetween(r.Anchor, d)%r.N == 0 && (!r.hasDays() || r.Days[d.Weekday()])
	case UnitWeek:
		if daysBetween(monday(r.Anchor), monday(d))/7%r.N != 0 {
			return false
		}
		if !r.hasDays() {
			return d.Weekday() == r.Anchor.Weekday()
		}
		return r.Days[d.Weekday()]
	}
	return false
}

// At is the occurrence instant on civil date d: the wall-clock time read in
// loc (WallClock), so 09:00 stays 09:00 across a daylight-saving change.
func (r Recurrence) At(d time.Time, loc *time.Location) time.Time {
	return WallClock(d.Year(), d.Month(), d.Day(), r.Hour, r.Minute, loc)
}

// Between returns up to max occurrences in (after, until], earliest first;
// max <= 0 means no limit.
func (r Recurrence) Between(loc *time.Location, after, until time.Time, max int) []time.Time {
	var out []time.Time
	d := Date(after, loc).AddDate(0, 0, -1)
	if d.Before(r.Anchor) {
		d = r.Anchor
	}
	end := Date(until, loc).AddDate(0, 0, 1)
	for ; !d.After(end) && (max <= 0 || len(out) < max); d = d.AddDate(0, 0, 1) {
		if !r.On(d) {
			continue
		}
		at := r.At(d, loc)
		if at.After(after) && !at.After(until) {
			out = append(out, at)
		}
	}
	return out
}

// Period is how many days the pattern takes to repeat itself.
func (r Recurrence) Period() int {
	if r.Unit == UnitWeek {
		return 7 * r.N
	}
	if r.hasDays() {
		// Every N days on some weekdays repeats after lcm(N, 7) days.
		if r.N%7 == 0 {
			return r.N
		}
		return 7 * r.N
	}
	return r.N
}

// ShortestRepeat is the shortest time between occurrence i and occurrence
// i+k (the same text when k texts rotate), looking at the first limit
// occurrences after after (limit <= 0: as many as the pattern needs). ok is
// false when no occurrence repeats within them.
func (r Recurrence) ShortestRepeat(loc *time.Location, after time.Time, k, limit int) (gap time.Duration, ok bool) {
	// k+1 periods hold at least k+1 occurrences of any pattern that has
	// one per period; one more period covers where the first falls.
	span := (k + 2) * r.Period()
	occ := r.Between(loc, after, after.AddDate(0, 0, span), limit)
	for i := 0; i+k < len(occ); i++ {
		if g := occ[i+k].Sub(occ[i]); !ok || g < gap {
			gap, ok = g, true
		}
	}
	return gap, ok
}
