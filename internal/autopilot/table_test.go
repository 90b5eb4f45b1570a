package autopilot

import (
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

// TestLoopTableRows checks that each loop row is complete: a unique name
// that ParseLoop accepts, a runner, and a pace taken from its own
// [intervals] key (no two loops read the same key).
func TestLoopTableRows(t *testing.T) {
	seen := map[string]bool{}
	for i, l := range loopTable() {
		if l.name == "" || seen[l.name] {
			t.Fatalf("row %d: name %q is empty or repeated", i, l.name)
		}
		seen[l.name] = true
		if l.run == nil || l.seconds == nil {
			t.Errorf("loop %s: run and seconds are required", l.name)
		}
		if got, err := ParseLoop(l.name); err != nil || got != l.name {
			t.Errorf("ParseLoop(%q) = %q, %v", l.name, got, err)
		}
	}
	// Give each interval key a distinct value and check each loop reads its
	// own: a row wired to another loop's key shows up as a collision.
	var iv config.Intervals
	keys := []*int{&iv.DiscoverySeconds, &iv.MentionsSeconds, &iv.ContentSeconds, &iv.ThreadSeconds,
		&iv.TargetsSeconds, &iv.AnalyticsSeconds, &iv.PublisherSeconds, &iv.HousekeepingSeconds}
	for i, k := range keys {
		*k = 1000 + i
	}
	got := map[int]string{}
	for _, l := range loopTable() {
		s := l.seconds(iv)
		if s < 1000 {
			t.Errorf("loop %s reads no interval key", l.name)
		}
		if other, dup := got[s]; dup {
			t.Errorf("loops %s and %s read the same interval key", other, l.name)
		}
		got[s] = l.name
	}
	if len(got) != len(keys) {
		t.Errorf("%d loops read %d interval keys; every key belongs to one loop", len(got), len(keys))
	}
}
