package approvallink

import (
	"sync"
	"time"
)

// Limiter counts failed link verifications per client: past Max in a
// window the client is refused (429) until the window ends, so nobody can
// guess their way to a link.
type Limiter struct {
	Max    int
	Window time.Duration
	Now    func() time.Time

	mu      sync.Mutex
	clients map[string]*window
}

type window struct {
	start time.Time
	fails int
}

// maxClients bounds the memory a flood of addresses can take.
const maxClients = 10000

// NewLimiter refuses a client after 10 failures in a minute.
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{Max: 10, Window: time.Minute, Now: now, clients: map[string]*window{}}
}

func (l *Limiter) current(client string) *window {
	now := l.Now()
	w, ok := l.clients[client]
	if ok && now.Sub(w.start) < l.Window {
		return w
	}
	if len(l.clients) >= maxClients {
		for k, v := range l.clients {
			if now.Sub(v.start) >= l.Window {
				delete(l.clients, k)
			}
		}
	}
	w = &window{start: now}
	l.clients[client] = w
	return w
}

// Blocked reports whether client has used up its failures.
func (l *Limiter) Blocked(client string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current(client).fails >= l.Max
}

// Fail counts one failed verification by client.
func (l *Limiter) Fail(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current(client).fails++
}
