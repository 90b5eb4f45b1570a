package mcpserver

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// connLimiter caps the connections the HTTP server holds. When a new
// connection would pass the cap, the connection that has been waiting
// longest without a request in progress (one that never sent its headers,
// or a keep-alive connection between requests) is closed to make room; if
// every connection is busy serving a request, the new one is closed. Unlike
// blocking Accept at the cap, this keeps the server reachable for a client
// with the token while someone holds many silent connections.
type connLimiter struct {
	net.Listener
	max int

	mu    sync.Mutex
	conns map[net.Conn]*connUse
}

type connUse struct {
	state http.ConnState
	since time.Time
}

func newConnLimiter(ln net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: ln, max: max, conns: map[net.Conn]*connUse{}}
}

func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		victim, admit := l.admit(c)
		if victim != nil {
			_ = victim.Close()
		}
		if admit {
			return c, nil
		}
		_ = c.Close()
	}
}

// admit registers c, choosing a waiting connection to close when the cap
// is reached. It reports false when there is no room for c.
func (l *connLimiter) admit(c net.Conn) (victim net.Conn, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max {
		var oldest time.Time
		for vc, u := range l.conns {
			if u.state != http.StateNew && u.state != http.StateIdle {
				continue
			}
			if victim == nil || u.since.Before(oldest) {
				victim, oldest = vc, u.since
			}
		}
		if victim == nil {
			return nil, false
		}
		delete(l.conns, victim)
	}
	l.conns[c] = &connUse{state: http.StateNew, since: time.Now()}
	return victim, true
}

// track is the server's ConnState hook.
func (l *connLimiter) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u, ok := l.conns[c]
	if !ok {
		return
	}
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	default:
		u.state, u.since = st, time.Now()
	}
}

// closeUnstarted closes the connections that have not sent a request yet.
// http.Server.Shutdown waits up to five seconds for such a connection before
// it counts as idle; at shutdown no request on it has begun, so nothing is
// cut short by closing it at once.
func (l *connLimiter) closeUnstarted() {
	l.mu.Lock()
	var victims []net.Conn
	for c, u := range l.conns {
		if u.state == http.StateNew {
			victims = append(victims, c)
			delete(l.conns, c)
		}
	}
	l.mu.Unlock()
	for _, c := range victims {
		_ = c.Close()
	}
}
