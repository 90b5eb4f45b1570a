package postlimit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/postlimit"
)

// fakeX answers subscription_type and counts the questions.
type fakeX struct {
	sub   string
	err   error
	asked int
}

func (f *fakeX) ask(context.Context) (string, error) {
	f.asked++
	return f.sub, f.err
}

var start = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

func TestTiers(t *testing.T) {
	for _, tc := range []struct {
		sub  string
		max  int
		word string
	}{
		{"Basic", 25000, "Basic"}, {"Premium", 25000, "Premium"}, {"PremiumPlus", 25000, "PremiumPlus"},
		{"None", 280, "None"}, {"", 280, "None"}, {"SomethingNew", 280, "SomethingNew"},
	} {
		l := postlimit.ForSubscription(tc.sub, start)
		if l.Max != tc.max || !strings.Contains(l.Reason, tc.word) || !strings.Contains(l.Reason, "checked 2026-11-26") {
			t.Errorf("%q: %+v, want %d naming %s and the day", tc.sub, l, tc.max, tc.word)
		}
	}
}

func TestFixedSettingsNeverAskX(t *testing.T) {
	x := &fakeX{sub: "Premium"}
	for setting, want := range map[string]int{postlimit.Short: 280, postlimit.Long: 25000} {
		r := &postlimit.Resolver{Setting: setting, Now: time.Now, Ask: x.ask}
		l, err := r.Limit(context.Background())
		if err != nil || l.Max != want || l.Reason != setting+": x_api.max_post_length" {
			t.Errorf("%s: %+v %v", setting, l, err)
		}
		if k := r.Known(); k != l {
			t.Errorf("%s: known %+v, limit %+v", setting, k, l)
		}
	}
	if x.asked != 0 {
		t.Fatalf("X asked %d times", x.asked)
	}
}

// TestAutoAsksOnceADay: auto asks X once, keeps the answer in a 0600 file
// that a new resolver (a restart) reads, asks again only once a day has
// passed on the clock, and falls back to the last answer when X cannot be
// asked.
func TestAutoAsksOnceADay(t *testing.T) {
	clk := clock.NewFake(start)
	x := &fakeX{sub: "Premium"}
	file := filepath.Join(t.TempDir(), "x-subscription", "default.json")
	r := &postlimit.Resolver{Setting: postlimit.Auto, File: file, Now: clk.Now, Ask: x.ask}
	if k := r.Known(); k.Max != 280 || !strings.Contains(k.Reason, "not known yet") {
		t.Fatalf("known before asking: %+v", k)
	}
	limit := func(r *postlimit.Resolver) postlimit.Limit {
		t.Helper()
		l, err := r.Limit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := limit(r); l.Max != 25000 || l.Reason != "25000: account is Premium (checked 2026-11-26)" || x.asked != 1 {
		t.Fatalf("first limit %+v after %d questions", l, x.asked)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file %v (%v), want mode 0600", fi, err)
	}

	x.sub = "None" // the plan lapses
	clk.Advance(23 * time.Hour)
	restarted := &postlimit.Resolver{Setting: postlimit.Auto, File: file, Now: clk.Now, Ask: x.ask}
	if l := limit(restarted); l.Max != 25000 || x.asked != 1 {
		t.Fatalf("within the day: %+v after %d questions, want the kept answer", l, x.asked)
	}
	if k := restarted.Known(); k.Max != 25000 {
		t.Fatalf("known within the day %+v", k)
	}
	clk.Advance(time.Hour)
	if l := limit(restarted); l.Max != 280 || l.Reason != "280: account is None, without an X subscription (checked 2026-11-27)" || x.asked != 2 {
		t.Fatalf("a day later: %+v after %d questions, want X asked again", l, x.asked)
	}

	clk.Advance(25 * time.Hour)
	x.err = errors.New("X is down")
	if l := limit(restarted); l.Max != 280 || !strings.Contains(l.Reason, "could not be asked again") {
		t.Fatalf("X down with an older answer: %+v", l)
	}
	cold := &postlimit.Resolver{Setting: postlimit.Auto, Now: clk.Now, Ask: x.ask}
	if _, err := cold.Limit(context.Background()); err == nil || !strings.Contains(err.Error(), "x_api.max_post_length") {
		t.Fatalf("X down without an answer: %v, want an error naming the key", err)
	}
}
