package xsim

import (
	"runtime"
	"testing"
	"time"
)

// TestNewKeepsNoCopyOfTheWorldItWasGiven: the server's state is the world
// from the moment New returns; the World the caller passed (a sandbox
// loads it from its state file) must be collectable while the server
// lives, or every sandbox process holds the world twice.
func TestNewKeepsNoCopyOfTheWorldItWasGiven(t *testing.T) {
	for _, tc := range []struct {
		name  string
		world func() *World
	}{
		{"demo world", func() *World { return DemoWorldAt(7, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) }},
		{"empty world", func() *World { return &World{DemoUserID: "1"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.world()
			collected := make(chan struct{})
			runtime.AddCleanup(w, func(ch chan struct{}) { close(ch) }, collected)
			s := New(Options{World: w})
			w = nil
			if !collectedSoon(collected) {
				t.Fatal("the World passed to New is still reachable from the server")
			}
			// The server still answers from its own state.
			if got := s.DemoUserID(); got == "" {
				t.Fatal("the server lost its world: no demo user")
			}
			runtime.KeepAlive(s)
		})
	}
}

// collectedSoon runs the collector until done is closed by a cleanup, or
// gives up after a few seconds of cycles.
func collectedSoon(done <-chan struct{}) bool {
	deadline := time.After(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-done:
			return true
		case <-deadline:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}
