package autopilot

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
)

func mustSchedule(t *testing.T, s config.Schedule) schedule {
	t.Helper()
	sc, err := newSchedule(s)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

var allDays = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

func TestActiveHours(t *testing.T) {
	// 2026-03-02 is a Monday.
	at := func(day, hour, min int) time.Time { return time.Date(2026, 3, day, hour, min, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name       string
		start, end int
		days       []string
		tz         string
		t          time.Time
		want       bool
	}{
		{"inside", 8, 22, allDays, "UTC", at(2, 8, 0), true},
		{"end is exclusive", 8, 22, allDays, "UTC", at(2, 22, 0), false},
		{"before start", 8, 22, allDays, "UTC", at(2, 7, 59), false},
		{"inactive day", 8, 22, []string{"tue"}, "UTC", at(2, 12, 0), false},
		{"active day", 8, 22, []string{"mon"}, "UTC", at(2, 12, 0), true},
		{"wrap: late evening", 22, 6, allDays, "UTC", at(2, 23, 0), true},
		{"wrap: early morning", 22, 6, allDays, "UTC", at(3, 5, 59), true},
		{"wrap: midday", 22, 6, allDays, "UTC", at(2, 12, 0), false},
		// Tuesday 02:00 belongs to Monday's night window.
		{"wrap: night of an active day", 22, 6, []string{"mon"}, "UTC", at(3, 2, 0), true},
		{"wrap: night of an inactive day", 22, 6, []string{"tue"}, "UTC", at(3, 2, 0), false},
		{"start == end is all day", 0, 0, []string{"mon"}, "UTC", at(2, 23, 59), true},
		{"start == end on an inactive day", 5, 5, []string{"tue"}, "UTC", at(2, 12, 0), false},
		// 07:30 UTC is 08:30 in Berlin in March (CET).
		{"timezone", 8, 22, allDays, "Europe/Berlin", at(2, 7, 30), true},
		{"timezone before start", 8, 22, allDays, "Europe/Berlin", at(2, 6, 30), false},
		{"no active days", 8, 22, nil, "UTC", at(2, 12, 0), false},
		{"end 24 runs to midnight", 8, 24, allDays, "UTC", at(2, 23, 59), true},
		{"end 24: before start", 8, 24, allDays, "UTC", at(2, 7, 59), false},
		{"0 to 24 is all day", 0, 24, []string{"mon"}, "UTC", at(2, 23, 59), true},
		{"0 to 24 at midnight", 0, 24, []string{"mon"}, "UTC", at(2, 0, 0), true},
		{"0 to 24 on an inactive day", 0, 24, []string{"tue"}, "UTC", at(2, 12, 0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustSchedule(t, config.Schedule{Timezone: tc.tz, ActiveHoursStart: tc.start, ActiveHoursEnd: tc.end, ActiveDays: tc.days})
			if got := s.active(tc.t); got != tc.want {
				t.Errorf("active(%s) = %t, want %t", tc.t.Format(time.RFC3339), got, tc.want)
			}
		})
	}
}

func TestNextActive(t *testing.T) {
	mon := func(hour int) time.Time { return time.Date(2026, 3, 2, hour, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name       string
		start, end int
		days       []string
		t, want    time.Time
	}{
		{"already active", 8, 22, allDays, mon(9), mon(9)},
		{"later today", 8, 22, allDays, mon(3), mon(8)},
		{"tomorrow", 8, 22, allDays, mon(23), mon(8).AddDate(0, 0, 1)},
		{"skips inactive days", 8, 22, []string{"thu"}, mon(9), mon(8).AddDate(0, 0, 3)},
		{"wrapping window", 22, 6, allDays, mon(12), mon(22)},
		{"all-day window on the next active day", 0, 0, []string{"wed"}, mon(12), mon(0).AddDate(0, 0, 2)},
		{"never", 8, 22, nil, mon(12), time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustSchedule(t, config.Schedule{Timezone: "UTC", ActiveHoursStart: tc.start, ActiveHoursEnd: tc.end, ActiveDays: tc.days})
			got := s.nextActive(tc.t)
			if !got.Equal(tc.want) {
				t.Fatalf("nextActive(%s) = %s, want %s", tc.t, got, tc.want)
			}
			if !got.IsZero() && !s.active(got) {
				t.Errorf("nextActive returned an inactive time %s", got)
			}
		})
	}
}

func TestPreferredSlots(t *testing.T) {
	s := mustSchedule(t, config.Schedule{Timezone: "UTC", ActiveHoursStart: 8, ActiveHoursEnd: 22, ActiveDays: allDays,
		PreferredTimes: []string{"17:00", "09:15", "12:30"}})
	at := func(day, h, m int) time.Time { return time.Date(2026, 3, day, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		t, cur, next time.Time
	}{
		{at(2, 10, 0), at(2, 9, 15), at(2, 12, 30)},
		{at(2, 9, 15), at(2, 9, 15), at(2, 12, 30)},
		{at(2, 8, 0), at(1, 17, 0), at(2, 9, 15)},
		{at(2, 18, 0), at(2, 17, 0), at(3, 9, 15)},
	} {
		cur, ok := s.currentSlot(tc.t)
		if !ok || !cur.Equal(tc.cur) {
			t.Errorf("currentSlot(%s) = %s, want %s", tc.t, cur, tc.cur)
		}
		next, ok := s.nextSlot(tc.t)
		if !ok || !next.Equal(tc.next) {
			t.Errorf("nextSlot(%s) = %s, want %s", tc.t, next, tc.next)
		}
	}
	none := mustSchedule(t, config.Schedule{Timezone: "UTC", ActiveDays: allDays})
	if _, ok := none.currentSlot(at(2, 10, 0)); ok {
		t.Error("currentSlot without preferred times")
	}
}

func TestScheduleRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		s   config.Schedule
		key string
	}{
		{config.Schedule{Timezone: "Mars/Olympus", ActiveDays: allDays}, "schedule.timezone"},
		{config.Schedule{Timezone: "UTC", ActiveHoursStart: 24}, "schedule.active_hours_start"},
		{config.Schedule{Timezone: "UTC", ActiveHoursEnd: -1}, "schedule.active_hours_end"},
		{config.Schedule{Timezone: "UTC", ActiveHoursEnd: 25}, "schedule.active_hours_end"},
		{config.Schedule{Timezone: "UTC", ActiveDays: []string{"funday"}}, "schedule.active_days"},
		{config.Schedule{Timezone: "UTC", PreferredTimes: []string{"25:61"}}, "schedule.preferred_times"},
	} {
		_, err := newSchedule(tc.s)
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.ConfigError || !strings.Contains(ae.Message, tc.key) {
			t.Errorf("newSchedule(%+v) = %v, want config_error naming %s", tc.s, err, tc.key)
		}
	}
}

func TestMayMentionKeepsTheRatio(t *testing.T) {
	for _, tc := range []struct {
		name              string
		product           string
		ratio             float64
		replies, mentions int
		want              bool
	}{
		{"first reply at 0.2 would be 100%", product, 0.2, 0, 0, false},
		{"fifth reply at 0.2 makes exactly 20%", product, 0.2, 4, 0, true},
		{"a second mention too early", product, 0.2, 5, 1, false},
		{"a second mention at 10 replies", product, 0.2, 9, 1, true},
		{"ratio 1 always", product, 1, 0, 0, true},
		{"ratio 0 never", product, 0, 100, 0, false},
		{"no product name", "", 1, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Business.ProductName = tc.product
			cfg.Limits.ProductMentionRatio = tc.ratio
			r := &Runner{cfg: &cfg}
			if got := r.mayMention(Counts{Replies: tc.replies, ProductMentions: tc.mentions}); got != tc.want {
				t.Errorf("mayMention = %t, want %t", got, tc.want)
			}
		})
	}
}

const product = "Tuitpilot"

func TestMentionsProduct(t *testing.T) {
	cfg := config.Default()
	cfg.Business.ProductName = product
	cfg.Business.ProductURL = "https://tuitpilot.example/"
	r := &Runner{cfg: &cfg}
	for text, want := range map[string]bool{
		"we use TUITPILOT for this":                true,
		"see tuitpilot.example/docs":               true,
		"nothing about it here":                    false,
		"tuit pilot is two words and not the name": false,
	} {
		if got := r.mentionsProduct(text); got != want {
			t.Errorf("mentionsProduct(%q) = %t, want %t", text, got, want)
		}
	}
}

func TestResetOf(t *testing.T) {
	now := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		err  error
		want time.Time
	}{
		{"retry_after_ms", apperr.New(apperr.XRateLimited, "429").With("retry_after_ms", int64(90_000)), now.Add(90 * time.Second)},
		{"reset timestamp", apperr.New(apperr.PolicyRateLimited, "limit").With("rate_limit_reset", "2026-03-02T09:00:00Z"), now.Add(time.Hour)},
		{"garbled reset", apperr.New(apperr.PolicyRateLimited, "limit").With("rate_limit_reset", "soon"), time.Time{}},
		{"no extras", apperr.New(apperr.XRateLimited, "429"), time.Time{}},
		{"plain error", errors.New("boom"), time.Time{}},
		{"nil", nil, time.Time{}},
	} {
		if got := resetOf(tc.err, now); !got.Equal(tc.want) {
			t.Errorf("%s: resetOf = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestBreakerState(t *testing.T) {
	now := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		errs   int
		paused time.Time
		want   string
	}{
		{0, time.Time{}, "closed"},
		{2, now.Add(time.Hour), "closed"}, // a rate-limit wait, not the breaker
		{3, now.Add(time.Hour), "open"},
		{3, now.Add(-time.Minute), "half-open"},
	} {
		st := &loopState{ConsecutiveErrors: tc.errs, PausedUntil: tc.paused}
		if got := breakerState(st, 3, now); got != tc.want {
			t.Errorf("errors %d paused %s: %s, want %s", tc.errs, tc.paused, got, tc.want)
		}
	}
}

func TestIDLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"9", "10", true}, {"10", "9", false}, {"123", "124", true}, {"124", "124", false},
	} {
		if got := idLess(tc.a, tc.b); got != tc.want {
			t.Errorf("idLess(%s, %s) = %t", tc.a, tc.b, got)
		}
	}
}
