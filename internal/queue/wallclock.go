package queue

import "time"

// WallClock is the instant the clock in loc first reads hour:minute on
// the given date. On the day the clock goes back a time inside the hour
// that repeats comes twice; the first is the one meant, as cron runs it
// (time.Date alone picks either, depending on the zone's offset sign). A
// time the clock skips moves forward as time.Date normalises it.
func WallClock(year int, month time.Month, day, hour, minute int, loc *time.Location) time.Time {
	t := time.Date(year, month, day, hour, minute, 0, 0, loc)
	_, off := t.Zone()
	// A zone's offset is the same within a day of t except across one
	// change; a larger offset before t means the same wall-clock time
	// came once already, that many seconds earlier.
	_, before := t.Add(-24 * time.Hour).Zone()
	if before > off {
		e := t.Add(-time.Duration(before-off) * time.Second)
		if sameClock(e.In(loc), t) {
			return e
		}
	}
	return t
}

func sameClock(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd && a.Hour() == b.Hour() && a.Minute() == b.Minute()
}
