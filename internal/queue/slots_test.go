package queue

import (
	"strings"
	"testing"
	"time"
)

func days(wds ...time.Weekday) (d [7]bool) {
	for _, w := range wds {
		d[w] = true
	}
	return d
}

func TestParseSlot(t *testing.T) {
	weekdays := days(time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday)
	all := days(0, 1, 2, 3, 4, 5, 6)
	tests := []struct {
		in      string
		want    Rule
		wantErr string
	}{
		{in: "mon-fri 09:00", want: Rule{Days: weekdays, Hour: 9}},
		{in: "sat,sun 11:00", want: Rule{Days: days(time.Saturday, time.Sunday), Hour: 11}},
		{in: "  SAT,Sun   11:30 ", want: Rule{Days: days(time.Saturday, time.Sunday), Hour: 11, Minute: 30}},
		{in: "fri-mon 23:59", want: Rule{Days: days(time.Friday, time.Saturday, time.Sunday, time.Monday), Hour: 23, Minute: 59}},
		{in: "daily 00:00", want: Rule{Days: all}},
		{in: "wed 07:05", want: Rule{Days: days(time.Wednesday), Hour: 7, Minute: 5}},
		{in: "mon-mon 08:00", want: Rule{Days: days(time.Monday), Hour: 8}},
		{in: "09:00", wantErr: "is not a slot"},
		{in: "", wantErr: "is not a slot"},
		{in: "mon fri 09:00", wantErr: "is not a slot"},
		{in: "monday 09:00", wantErr: `"monday" is not a day`},
		{in: "mon-xyz 09:00", wantErr: `"xyz" is not a day`},
		{in: "mon,,tue 09:00", wantErr: `"" is not a day`},
		{in: "mon 9:00", wantErr: "is not an HH:MM time"},
		{in: "mon 24:00", wantErr: "00:00 to 23:59"},
		{in: "mon 12:60", wantErr: "00:00 to 23:59"},
		{in: "mon +1:00", wantErr: "00:00 to 23:59"},
		{in: "mon 0900", wantErr: "is not an HH:MM time"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSlot(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSlot(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSlot(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseSlot(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseSlotsNamesTheBadOne(t *testing.T) {
	_, err := ParseSlots([]string{"mon 09:00", "tue 25:00"})
	if err == nil || !strings.HasPrefix(err.Error(), "slot 1: ") {
		t.Fatalf("ParseSlots error = %v, want it to name slot 1", err)
	}
}

func mustRules(t *testing.T, slots ...string) []Rule {
	t.Helper()
	r, err := ParseSlots(slots)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExpand(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// 2026-03-27 is a Friday; Berlin moves to summer time on Sunday 29th.
	fri := time.Date(2026, 3, 27, 0, 0, 0, 0, berlin)
	tests := []struct {
		name     string
		slots    []string
		from, to time.Time
		want     []string // RFC3339 in Berlin time
	}{
		{
			name: "weekdays and weekend over a DST change", slots: []string{"mon-fri 09:00", "sat,sun 11:00"},
			from: fri, to: fri.AddDate(0, 0, 4),
			want: []string{"2026-03-27T09:00:00+01:00", "2026-03-28T11:00:00+01:00", "2026-03-29T11:00:00+02:00", "2026-03-30T09:00:00+02:00"},
		},
		{
			name: "from is inclusive, to exclusive", slots: []string{"daily 09:00"},
			from: fri.Add(9 * time.Hour), to: fri.Add(24*time.Hour + 9*time.Hour),
			want: []string{"2026-03-27T09:00:00+01:00"},
		},
		{
			name: "a slot already past today is left out", slots: []string{"daily 09:00", "daily 18:30"},
			from: fri.Add(10 * time.Hour), to: fri.AddDate(0, 0, 1),
			want: []string{"2026-03-27T18:30:00+01:00"},
		},
		{
			name: "two rules naming one time give one slot", slots: []string{"fri 09:00", "mon-fri 09:00"},
			from: fri, to: fri.AddDate(0, 0, 1),
			want: []string{"2026-03-27T09:00:00+01:00"},
		},
		{
			name: "a time the clock skips moves forward", slots: []string{"sun 02:30"},
			from: fri, to: fri.AddDate(0, 0, 3),
			want: []string{"2026-03-29T03:30:00+02:00"},
		},
		{name: "no rules", slots: nil, from: fri, to: fri.AddDate(0, 0, 7), want: nil},
		{name: "empty range", slots: []string{"daily 09:00"}, from: fri, to: fri, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Expand(mustRules(t, tt.slots...), berlin, tt.from, tt.to)
			var s []string
			for _, g := range got {
				s = append(s, g.In(berlin).Format(time.RFC3339))
			}
			if strings.Join(s, " ") != strings.Join(tt.want, " ") {
				t.Errorf("Expand = %v, want %v", s, tt.want)
			}
		})
	}
}

// FuzzParseSlot checks that the parser never panics and that whatever it
// accepts renders to a canonical form it reads back to the same rule.
func FuzzParseSlot(f *testing.F) {
	for _, s := range []string{"mon-fri 09:00", "sat,sun 11:00", "daily 23:59", "fri-mon 00:00", "mon 9:00", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseSlot(s)
		if err != nil {
			return
		}
		if r.Hour < 0 || r.Hour > 23 || r.Minute < 0 || r.Minute > 59 {
			t.Fatalf("ParseSlot(%q) accepted %02d:%02d", s, r.Hour, r.Minute)
		}
		any := false
		for _, d := range r.Days {
			any = any || d
		}
		if !any {
			t.Fatalf("ParseSlot(%q) accepted a slot on no day", s)
		}
		back, err := ParseSlot(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseSlot(%q) = %+v renders %q, which reads back as %+v, %v", s, r, r.String(), back, err)
		}
	})
}
