package queue

import (
	"sort"
	"time"
)

// Policy is one account's queue: its slots, in its timezone, and the
// limits that keep booked posts apart.
type Policy struct {
	Rules []Rule
	Loc   *time.Location
	// MinGap keeps a slot at least this far from any booked post; zero
	// still refuses a slot something is booked at exactly.
	MinGap time.Duration
	// MaxPerDay caps the posts booked on one local day; zero is no cap.
	MaxPerDay int
}

// Why a slot is not free; Free is the empty string.
const (
	Free     = ""
	Taken    = "taken"
	TooClose = "min_gap"
	DayFull  = "max_per_day"
)

func (p Policy) dayBounds(t time.Time) (time.Time, time.Time) {
	l := t.In(p.Loc)
	start := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, p.Loc)
	return start, time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, p.Loc)
}

// Needs returns the range of booked times Status must see to judge the
// slots in [from, to): whole local days, widened by the gap.
func (p Policy) Needs(from, to time.Time) (lo, hi time.Time) {
	lo, _ = p.dayBounds(from)
	_, hi = p.dayBounds(to)
	if t := from.Add(-p.MinGap); t.Before(lo) {
		lo = t
	}
	if t := to.Add(p.MinGap); t.After(hi) {
		hi = t
	}
	return lo, hi
}

// Status says why slot is not free, or Free. booked must be sorted
// earliest first and cover Needs of the slot.
func (p Policy) Status(slot time.Time, booked []time.Time) string {
	i := sort.Search(len(booked), func(i int) bool { return !booked[i].Before(slot) })
	if i < len(booked) && booked[i].Equal(slot) {
		return Taken
	}
	if p.MinGap > 0 {
		if i < len(booked) && booked[i].Sub(slot) < p.MinGap {
			return TooClose
		}
		if i > 0 && slot.Sub(booked[i-1]) < p.MinGap {
			return TooClose
		}
	}
	if p.MaxPerDay > 0 {
		start, end := p.dayBounds(slot)
		a := sort.Search(len(booked), func(i int) bool { return !booked[i].Before(start) })
		b := sort.Search(len(booked), func(i int) bool { return !booked[i].Before(end) })
		if b-a >= p.MaxPerDay {
			return DayFull
		}
	}
	return Free
}

// FreeSlots returns up to n free slots in [from, to), earliest first. Each
// one chosen counts as booked when judging the next, so the answer is a
// set of slots that can all be taken together.
func (p Policy) FreeSlots(from, to time.Time, booked []time.Time, n int) []time.Time {
	if n <= 0 {
		return nil
	}
	b := append([]time.Time(nil), booked...)
	var out []time.Time
	for _, s := range Expand(p.Rules, p.Loc, from, to) {
		if p.Status(s, b) != Free {
			continue
		}
		out = append(out, s)
		if len(out) == n {
			break
		}
		i := sort.Search(len(b), func(i int) bool { return !b[i].Before(s) })
		b = append(b, time.Time{})
		copy(b[i+1:], b[i:])
		b[i] = s
	}
	return out
}
