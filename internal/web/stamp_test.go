package web

import (
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
)

// TestExactIsTimeFormat: a time written exactly is what time.Format
// writes with the layout, in zones with and without names for their
// offsets, across daylight saving changes, and for years Format pads or
// lets run past four digits.
func TestExactIsTimeFormat(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+30*60), time.FixedZone("", -3600), time.FixedZone("XYZ", 3600)}
	for _, name := range []string{"America/New_York", "Europe/Berlin", "Asia/Kolkata", "Asia/Dubai", "America/Sao_Paulo", "Australia/Lord_Howe", "Pacific/Chatham"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatalf("zone %s: %v", name, err)
		}
		zones = append(zones, loc)
	}
	first, last := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(10001, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	var times []time.Time
	// A prime step lands on every hour, weekday and month in turn.
	for s := first; s < last; s += 15_485_863 * 7 {
		times = append(times, time.Unix(s, 0))
	}
	for _, at := range []string{"2026-03-29T00:59:59.999Z", "2026-03-29T01:00:00.000Z", "2026-11-01T05:30:00.000Z", "0999-12-31T23:59:59.000Z",
		"1000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.000Z"} {
		tm, err := store.ParseTime(at)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, tm)
	}
	for _, loc := range zones {
		for _, tm := range times {
			if got, want := exactIn(tm, loc), tm.In(loc).Format(exactLayout); got != want {
				t.Fatalf("%s in %s is written %q, time.Format writes %q", tm.UTC(), loc, got, want)
			}
		}
	}
}

// TestParseStoredReadsStoredTimes: a time as the store writes it is read
// without time.Parse, and anything else is left to it.
func TestParseStoredReadsStoredTimes(t *testing.T) {
	for _, tc := range []struct {
		at string
		ok bool
	}{
		{"2026-01-01T00:00:00.000Z", true},
		{"2024-02-29T23:59:59.999Z", true},
		{"0000-01-01T00:00:00.000Z", true},
		{"2000-02-29T00:00:00.000Z", true},
		{"2026-12-31T00:00:00.000Z", true},
		{"2026-02-29T00:00:00.000Z", false},
		{"1900-02-29T00:00:00.000Z", false},
		{"2026-06-31T00:00:00.000Z", false},
		{"2026-04-31T00:00:00.000Z", false},
		{"2026-13-01T00:00:00.000Z", false},
		{"2026-00-01T00:00:00.000Z", false},
		{"2026-01-00T00:00:00.000Z", false},
		{"2026-01-01T24:00:00.000Z", false},
		{"2026-01-01T00:60:00.000Z", false},
		{"2026-01-01T00:00:60.000Z", false},
		{"2026-01-01T00:00:00.00Z", false},
		{"2026-01-01T00:00:00.000+", false},
		{"2026-01-01 00:00:00.000Z", false},
		{"2026-01-01T00:00:00Z", false},
		{"-026-01-01T00:00:00.000Z", false},
		{"2026-01-01T0a:00:00.000Z", false},
		{"", false},
	} {
		got, ok := parseStored(tc.at)
		if ok != tc.ok {
			t.Errorf("%q: read %v, want %v", tc.at, ok, tc.ok)
			continue
		}
		if want, err := store.ParseTime(tc.at); ok && (err != nil || got != want) {
			t.Errorf("%q is read as %v, time.Parse reads %v (%v)", tc.at, got, want, err)
		}
	}
}

// FuzzParseStored: whatever the string, a time parseStored reads is the
// time time.Parse reads with the store's layout, to the location.
func FuzzParseStored(f *testing.F) {
	for _, at := range []string{"2026-01-01T00:00:00.000Z", "2024-02-29T12:34:56.789Z", "2026-02-29T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2026-01-01T00:00:00+01:00"} {
		f.Add(at)
	}
	f.Fuzz(func(t *testing.T, at string) {
		got, ok := parseStored(at)
		if !ok {
			return
		}
		want, err := store.ParseTime(at)
		if err != nil {
			t.Fatalf("%q is read as %v, time.Parse refuses it: %v", at, got, err)
		}
		if got != want {
			t.Fatalf("%q is read as %v, time.Parse reads %v", at, got, want)
		}
	})
}
