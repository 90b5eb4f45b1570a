package web

import (
	"strconv"
	"time"
)

// exactLayout is how a page spells a time exactly (on hover, for a
// screen reader).
const exactLayout = "Mon 2 Jan 2006, 15:04:05 MST"

// A table's rows each show a time: read from its stored spelling and
// written exactly, which with time.Parse and time.Format cost as much as
// the rest of printing the row. parseStored and exactOf do the common
// case directly and leave every other to the time package;
// TestExactIsTimeFormat and FuzzParseStored hold them to it.

// parseStored reads at when it is spelled exactly as store.FormatTime
// writes a time ("2006-01-02T15:04:05.000Z") with every field in range,
// as time.Parse reads it with that layout; ok is false for anything
// else, which parseStamp then reads the long way.
func parseStored(at string) (t time.Time, ok bool) {
	if len(at) != 24 || at[4] != '-' || at[7] != '-' || at[10] != 'T' || at[13] != ':' || at[16] != ':' || at[19] != '.' || at[23] != 'Z' {
		return time.Time{}, false
	}
	// num is the number of at's digits i..j, -1 if one is not a digit.
	num := func(i, j int) int {
		n := 0
		for ; i < j; i++ {
			c := at[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d, h, mi, s, ms := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 23)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || ms < 0 {
		return time.Time{}, false
	}
	// time.Date would carry 31 April into May; time.Parse refuses it.
	if d > daysIn(mo, y) {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, ms*int(time.Millisecond), time.UTC), true
}

// daysIn is the number of days of month m (1 to 12) of year y.
func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// exactOf is t in the local zone as t.Local().Format(exactLayout)
// writes it.
func exactOf(t time.Time) string { return exactIn(t, time.Local) }

// exactIn is t in zone loc as t.In(loc).Format(exactLayout) writes it.
func exactIn(t time.Time, loc *time.Location) string {
	var buf [48]byte
	return string(appendExact(buf[:0], t, loc))
}

// appendExact appends t in zone loc to b as t.In(loc).Format(exactLayout)
// writes it.
func appendExact(b []byte, t time.Time, loc *time.Location) []byte {
	t = t.In(loc)
	zone, offset := t.Zone()
	// The wall clock in loc, as a time in UTC: read without looking the
	// zone up again for each of its fields.
	wall := t.UTC().Add(time.Duration(offset) * time.Second)
	y, mo, d := wall.Date()
	// Format pads a year to four digits and writes a zone without a name
	// as its offset: those it writes itself.
	if zone == "" || y < 1000 || y > 9999 {
		return t.AppendFormat(b, exactLayout)
	}
	h, mi, s := wall.Clock()
	b = append(b, wall.Weekday().String()[:3]...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(d), 10)
	b = append(b, ' ')
	b = append(b, mo.String()[:3]...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, ',', ' ', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10), ' ')
	return append(b, zone...)
}
