package autopilot

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/queue"
)

// schedule is the [schedule] section compiled: the active hours in their
// timezone and the preferred posting slots.
type schedule struct {
	loc        *time.Location
	start, end int
	days       map[time.Weekday]bool
	// slots are minutes after local midnight, sorted.
	slots []int
	// anyHour is set for the sandbox, which keeps no active hours.
	anyHour bool
}

var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

func newSchedule(s config.Schedule) (schedule, error) {
	tz := strings.TrimSpace(s.Timezone)
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return schedule{}, apperr.New(apperr.ConfigError, "schedule.timezone: %q is not an IANA timezone (e.g. UTC, Europe/Berlin)", s.Timezone)
	}
	if h := s.ActiveHoursStart; h < 0 || h > 23 {
		return schedule{}, apperr.New(apperr.ConfigError, "schedule.active_hours_start: must be an hour 0-23 (got %d)", h)
	}
	if h := s.ActiveHoursEnd; h < 0 || h > 24 {
		return schedule{}, apperr.New(apperr.ConfigError, "schedule.active_hours_end: must be an hour 0-24 (24 is midnight; got %d)", h)
	}
	out := schedule{loc: loc, start: s.ActiveHoursStart, end: s.ActiveHoursEnd, days: map[time.Weekday]bool{}}
	if out.end == 24 && out.start == 0 {
		// 0 to 24 is the whole day, which start == end already means.
		out.end = 0
	}
	for _, d := range s.ActiveDays {
		wd, ok := weekdays[strings.ToLower(strings.TrimSpace(d))]
		if !ok {
			return schedule{}, apperr.New(apperr.ConfigError, "schedule.active_days: %q is not a day; allowed values: mon, tue, wed, thu, fri, sat, sun", d)
		}
		out.days[wd] = true
	}
	for _, p := range s.PreferredTimes {
		t, err := time.Parse("15:04", strings.TrimSpace(p))
		if err != nil {
			return schedule{}, apperr.New(apperr.ConfigError, "schedule.preferred_times: %q is not an HH:MM time", p)
		}
		out.slots = append(out.slots, t.Hour()*60+t.Minute())
	}
	sort.Ints(out.slots)
	return out, nil
}

// withoutHours is s active every hour of every day; the preferred slots
// stay.
func (s schedule) withoutHours() schedule {
	s.start, s.end, s.anyHour = 0, 0, true
	s.days = map[time.Weekday]bool{}
	for _, d := range weekdays {
		s.days[d] = true
	}
	return s
}

// active reports whether t is inside the active hours. A window that wraps
// past midnight (22 to 6) belongs to the day it starts on; start == end
// means the whole of every active day.
func (s schedule) active(t time.Time) bool {
	l := t.In(s.loc)
	h := l.Hour()
	switch {
	case s.start == s.end:
		return s.days[l.Weekday()]
	case s.start < s.end:
		return h >= s.start && h < s.end && s.days[l.Weekday()]
	case h >= s.start:
		return s.days[l.Weekday()]
	case h < s.end:
		return s.days[l.AddDate(0, 0, -1).Weekday()]
	}
	return false
}

// nextActive is the earliest instant at or after t inside the active
// hours; the zero time when no day is active.
func (s schedule) nextActive(t time.Time) time.Time {
	if s.active(t) {
		return t
	}
	if len(s.days) == 0 {
		return time.Time{}
	}
	l := t.In(s.loc)
	hour := s.start
	if s.start == s.end {
		hour = 0
	}
	for i := 0; i <= 8; i++ {
		d := l.AddDate(0, 0, i)
		c := time.Date(d.Year(), d.Month(), d.Day(), hour, 0, 0, 0, s.loc)
		if c.After(t) && s.active(c) {
			return c
		}
	}
	return time.Time{}
}

// describe renders the active hours for status output.
func (s schedule) describe() string {
	if s.anyHour {
		return "all day, every day in the sandbox"
	}
	var days []string
	for _, n := range []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"} {
		if s.days[weekdays[n]] {
			days = append(days, n)
		}
	}
	if s.start == s.end {
		return fmt.Sprintf("all day %s on %s", s.loc, strings.Join(days, ","))
	}
	return fmt.Sprintf("%02d:00-%02d:00 %s on %s", s.start, s.end, s.loc, strings.Join(days, ","))
}

// slotAt is the local time of slot minute m on the local day of day.
func (s schedule) slotAt(day time.Time, m int) time.Time {
	l := day.In(s.loc)
	return queue.WallClock(l.Year(), l.Month(), l.Day(), m/60, m%60, s.loc)
}

// currentSlot is the latest preferred slot at or before t; ok is false
// without slots.
func (s schedule) currentSlot(t time.Time) (time.Time, bool) {
	if len(s.slots) == 0 {
		return time.Time{}, false
	}
	for i := 0; i <= 1; i++ {
		day := t.In(s.loc).AddDate(0, 0, -i)
		for j := len(s.slots) - 1; j >= 0; j-- {
			if c := s.slotAt(day, s.slots[j]); !c.After(t) {
				return c, true
			}
		}
	}
	return time.Time{}, false
}

// nextSlot is the earliest preferred slot after t.
func (s schedule) nextSlot(t time.Time) (time.Time, bool) {
	if len(s.slots) == 0 {
		return time.Time{}, false
	}
	for i := 0; i <= 1; i++ {
		day := t.In(s.loc).AddDate(0, 0, i)
		for _, m := range s.slots {
			if c := s.slotAt(day, m); c.After(t) {
				return c, true
			}
		}
	}
	return time.Time{}, false
}
