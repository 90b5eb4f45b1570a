package notify

import (
	"context"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/describe"
)

// targetTTL is how long a target read from X serves further messages:
// every channel's message about an item, and its retries, without a read
// (and an X charge) each.
const targetTTL = time.Minute

// targetTimeout bounds reading an item's target from X for a message.
const targetTimeout = 10 * time.Second

// targetCache shares target reads between the dispatcher's channel loops;
// a read in flight is waited for rather than made twice.
type targetCache struct {
	mu sync.Mutex
	m  map[string]*targetRead
}

type targetRead struct {
	done chan struct{}
	line string
	// at is when the read finished; zero while it is in flight.
	at time.Time
}

// line is target t of account's item in words, read through r at most
// once per targetTTL; "" when ctx ends first.
func (c *targetCache) line(ctx context.Context, r Targets, account string, t describe.Target, now time.Time) string {
	key := account + "\x00" + string(t.Kind) + "\x00" + t.ID
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*targetRead{}
	}
	if e, ok := c.m[key]; ok && (e.at.IsZero() || now.Sub(e.at) < targetTTL) {
		c.mu.Unlock()
		select {
		case <-e.done:
			return e.line
		case <-ctx.Done():
			return ""
		}
	}
	for k, e := range c.m {
		if !e.at.IsZero() && now.Sub(e.at) >= targetTTL {
			delete(c.m, k)
		}
	}
	e := &targetRead{done: make(chan struct{})}
	c.m[key] = e
	c.mu.Unlock()

	e.line = r.TargetLine(ctx, account, t)
	c.mu.Lock()
	e.at = now
	c.mu.Unlock()
	close(e.done)
	return e.line
}
