package autopilot

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
)

// FuzzParseLoop: a --loop value is either a loop, which parses to itself,
// or invalid_input naming the field and listing the loops.
func FuzzParseLoop(f *testing.F) {
	for _, s := range append(LoopNames(), "", "bogus", " Mentions ", "DISCOVERY", "threads\x00", "анализ") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := ParseLoop(name)
		if err != nil {
			e := apperr.As(err)
			if e.Code != apperr.InvalidInput || !strings.HasPrefix(e.Message, "loop: ") || !strings.Contains(e.Message, strings.Join(LoopNames(), ", ")) {
				t.Fatalf("ParseLoop(%q) error %v", name, err)
			}
			return
		}
		if !slices.Contains(LoopNames(), got) {
			t.Fatalf("ParseLoop(%q) = %q, not a loop", name, got)
		}
		if again, err := ParseLoop(got); err != nil || again != got {
			t.Fatalf("ParseLoop(%q) = %q, %v; not stable", got, again, err)
		}
	})
}

// FuzzSchedule: any [schedule] section either fails with config_error or
// yields a schedule whose answers are consistent: the next active instant
// is active and not in the past, the current slot is not in the future and
// the next slot is.
func FuzzSchedule(f *testing.F) {
	f.Add("UTC", 8, 22, "mon,tue,wed,thu,fri,sat,sun", "09:15,12:30", int64(1772438400))
	f.Add("Europe/Berlin", 22, 6, "fri,sat", "", int64(1774746000)) // the night clocks go forward
	f.Add("America/New_York", 0, 0, "sun", "00:00,23:59", int64(1793512800))
	f.Add("Mars/Olympus", 25, -1, "funday", "9am", int64(0))
	f.Add("", 5, 5, "", "24:00", int64(-62135596800))
	f.Fuzz(func(t *testing.T, tz string, start, end int, days, times string, unix int64) {
		s := config.Schedule{Timezone: tz, ActiveHoursStart: start, ActiveHoursEnd: end}
		if days != "" {
			s.ActiveDays = strings.Split(days, ",")
		}
		if times != "" {
			s.PreferredTimes = strings.Split(times, ",")
		}
		sc, err := newSchedule(s)
		if err != nil {
			if apperr.CodeOf(err) != apperr.ConfigError || !strings.Contains(apperr.As(err).Message, "schedule.") {
				t.Fatalf("newSchedule error %v does not name a schedule key", err)
			}
			return
		}
		// Keep the instant within years the time package handles exactly.
		at := time.Unix(unix%(200*365*24*3600), 0).UTC()
		if next := sc.nextActive(at); !next.IsZero() {
			if next.Before(at) || !sc.active(next) || next.Sub(at) > 9*24*time.Hour {
				t.Fatalf("nextActive(%s) = %s (active %t)", at, next, sc.active(next))
			}
		} else if len(sc.days) > 0 {
			t.Fatalf("nextActive(%s) found nothing with active days %v", at, sc.days)
		}
		if cur, ok := sc.currentSlot(at); ok && cur.After(at) {
			t.Fatalf("currentSlot(%s) = %s is in the future", at, cur)
		}
		if next, ok := sc.nextSlot(at); ok && !next.After(at) {
			t.Fatalf("nextSlot(%s) = %s is not in the future", at, next)
		}
		_ = sc.describe()
	})
}

// FuzzResetOf: whatever an error's extras hold, the reset is zero or
// derived from them.
func FuzzResetOf(f *testing.F) {
	f.Add(int64(90000), "2026-03-02T09:00:00Z", true)
	f.Add(int64(-5), "not a time", false)
	f.Add(int64(0), "", true)
	f.Fuzz(func(t *testing.T, ms int64, reset string, withMS bool) {
		now := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
		e := apperr.New(apperr.XRateLimited, "429").With("rate_limit_reset", reset)
		if withMS {
			e.With("retry_after_ms", ms)
		}
		got := resetOf(e, now)
		switch {
		case withMS:
			if want := now.Add(time.Duration(ms) * time.Millisecond); !got.Equal(want) {
				t.Fatalf("resetOf = %s, want %s", got, want)
			}
		default:
			want, err := time.Parse(time.RFC3339, reset)
			if err != nil {
				want = time.Time{}
			}
			if !got.Equal(want) {
				t.Fatalf("resetOf(%q) = %s, want %s", reset, got, want)
			}
		}
	})
}
