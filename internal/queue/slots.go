// Package queue holds the posting queue's pure arithmetic: parsing the
// configured slots ("mon-fri 09:00"), expanding them into instants in the
// account's timezone, and choosing free slots around what is already
// booked. It runs no SQL and no X calls; the workflow package feeds it the
// booked times it reads from the drafts table.
package queue

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

var dayNames = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Rule is one parsed slot: the weekdays it applies to and a wall-clock
// time in the queue's timezone.
type Rule struct {
	Days         [7]bool // indexed by time.Weekday
	Hour, Minute int
}

// String renders r in the canonical form ParseSlot reads back.
func (r Rule) String() string {
	var days []string
	for _, wd := range []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
		if r.Days[wd] {
			days = append(days, dayNames[wd])
		}
	}
	return fmt.Sprintf("%s %02d:%02d", strings.Join(days, ","), r.Hour, r.Minute)
}

func dayIndex(s string) (int, bool) {
	for i, n := range dayNames {
		if s == n {
			return i, true
		}
	}
	return 0, false
}

// ParseSlot reads one slot: a day list and an HH:MM time separated by
// spaces. The day list is "daily" or comma-separated days (mon..sun) and
// ranges ("mon-fri"; "fri-mon" wraps over the weekend).
func ParseSlot(s string) (Rule, error) {
	var r Rule
	fields := strings.Fields(strings.ToLower(s))
	if len(fields) != 2 {
		return r, fmt.Errorf("%q is not a slot; write days and a time, e.g. \"mon-fri 09:00\"", s)
	}
	if fields[0] == "daily" {
		for i := range r.Days {
			r.Days[i] = true
		}
	} else {
		for _, part := range strings.Split(fields[0], ",") {
			from, to, isRange := strings.Cut(part, "-")
			a, ok := dayIndex(from)
			if !ok {
				return r, fmt.Errorf("%q: %q is not a day (mon, tue, wed, thu, fri, sat, sun or daily)", s, from)
			}
			b := a
			if isRange {
				if b, ok = dayIndex(to); !ok {
					return r, fmt.Errorf("%q: %q is not a day (mon, tue, wed, thu, fri, sat, sun)", s, to)
				}
			}
			for i := a; ; i = (i + 1) % 7 {
				r.Days[i] = true
				if i == b {
					break
				}
			}
		}
	}
	hh, mm, ok := strings.Cut(fields[1], ":")
	if !ok || len(hh) != 2 || len(mm) != 2 {
		return r, fmt.Errorf("%q: %q is not an HH:MM time", s, fields[1])
	}
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if err1 != nil || err2 != nil || h < 0 || h > 23 || m < 0 || m > 59 || hh[0] == '+' || hh[0] == '-' || mm[0] == '+' || mm[0] == '-' {
		return r, fmt.Errorf("%q: %q is not an HH:MM time (00:00 to 23:59)", s, fields[1])
	}
	r.Hour, r.Minute = h, m
	return r, nil
}

// ParseSlots reads every slot, naming the first bad one by its index.
func ParseSlots(slots []string) ([]Rule, error) {
	out := make([]Rule, 0, len(slots))
	for i, s := range slots {
		r, err := ParseSlot(s)
		if err != nil {
			return nil, fmt.Errorf("slot %d: %w", i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Expand returns the slot instants in [from, to), earliest first and
// without duplicates. Wall-clock times are read in loc (WallClock), so
// "09:00" stays 09:00 across a daylight-saving change, a time in the hour
// that repeats is its first instance, and a time the change skips moves
// forward.
func Expand(rules []Rule, loc *time.Location, from, to time.Time) []time.Time {
	if len(rules) == 0 || !from.Before(to) {
		return nil
	}
	var out []time.Time
	lf := from.In(loc)
	// A day before from's local date covers a slot that normalisation
	// moved across midnight.
	day := time.Date(lf.Year(), lf.Month(), lf.Day()-1, 0, 0, 0, 0, loc)
	for ; day.Before(to); day = time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, loc) {
		for _, r := range rules {
			if !r.Days[day.Weekday()] {
				continue
			}
			at := WallClock(day.Year(), day.Month(), day.Day(), r.Hour, r.Minute, loc)
			if !at.Before(from) && at.Before(to) {
				out = append(out, at)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	dedup := out[:0]
	for i, t := range out {
		if i == 0 || !t.Equal(out[i-1]) {
			dedup = append(dedup, t)
		}
	}
	return dedup
}
