// Package clock holds the two time helpers every long-running part shares:
// a context-aware sleep, and a manual clock that tests advance explicitly so
// windows, expiries and schedules are tested without waiting.
package clock

import (
	"context"
	"sync"
	"time"
)

// Sleep waits d, or until ctx is done, in which case it returns the context's
// error. A non-positive d returns at once with ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Fake is a clock that moves only when told to. It is safe for concurrent
// use, so a test can advance it while the code under test reads it.
type Fake struct {
	mu sync.Mutex
	t  time.Time
}

// NewFake returns a clock standing at t.
func NewFake(t time.Time) *Fake { return &Fake{t: t} }

// Now returns the clock's time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d (backwards when d is negative, to test clock
// steps).
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Fake) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// AdvanceTo moves the clock forward to t; a t at or before the clock's time
// leaves it where it is, so concurrent sleepers never move time backwards.
func (c *Fake) AdvanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}
