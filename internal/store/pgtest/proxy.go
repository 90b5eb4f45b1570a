package pgtest

import (
	"bytes"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a loopback TCP proxy in front of a PostgreSQL server that breaks
// connections on demand, the way a flaky network or a restarting server
// does: it refuses connections, or cuts one as its client sends a chosen
// statement.
type Proxy struct {
	ln     net.Listener
	target string
	url    string

	refusing atomic.Bool
	refused  atomic.Int64
	cut      atomic.Int64

	// cuts are the statements to cut connections on, each with how many
	// connections are still to be cut.
	cutMu sync.Mutex
	cuts  []cutRule

	// forwarded is told of each connection forwarded to the server.
	forwarded chan struct{}

	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// NewProxy starts a proxy to the server of the database URL raw; URL is
// raw through it. It stops when the test ends.
func NewProxy(t testing.TB, raw string) *Proxy {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("pgtest proxy: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgtest proxy: %v", err)
	}
	p := &Proxy{ln: ln, target: u.Host, conns: map[net.Conn]bool{}, forwarded: make(chan struct{}, 1)}
	u.Host = ln.Addr().String()
	p.url = u.String()
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// URL is the database URL through the proxy.
func (p *Proxy) URL() string { return p.url }

// Refuse makes the proxy close every new connection at once while on is
// true: the server cannot be reached.
func (p *Proxy) Refuse(on bool) { p.refusing.Store(on) }

// cutRule cuts the next left connections that send statement.
type cutRule struct {
	statement []byte
	left      int
}

// CutOn makes the proxy cut, before forwarding it, each of the next n
// connections whose client sends a message holding statement. Each call
// adds a statement to those set before, so one start can lose a
// connection at several of its steps.
func (p *Proxy) CutOn(statement string, n int) {
	p.cutMu.Lock()
	defer p.cutMu.Unlock()
	p.cuts = append(p.cuts, cutRule{statement: []byte(statement), left: n})
}

// cutsOn reports whether msg holds a statement whose connection is still
// to be cut, counting it.
func (p *Proxy) cutsOn(msg []byte) bool {
	p.cutMu.Lock()
	defer p.cutMu.Unlock()
	for i := range p.cuts {
		if r := &p.cuts[i]; r.left > 0 && bytes.Contains(msg, r.statement) {
			r.left--
			p.cut.Add(1)
			return true
		}
	}
	return false
}

// Forwarded receives (at most one pending value) after a connection is
// forwarded to the server: a test waiting for a client to come back
// waits on it.
func (p *Proxy) Forwarded() <-chan struct{} { return p.forwarded }

// Refused is how many connections were refused.
func (p *Proxy) Refused() int { return int(p.refused.Load()) }

// Cut is how many connections CutOn has cut.
func (p *Proxy) Cut() int { return int(p.cut.Load()) }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.refusing.Load() {
			p.refused.Add(1)
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			return
		}
		select {
		case p.forwarded <- struct{}{}:
		default:
		}
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			p.forward(s, c)
			closeBoth(c, s)
		}()
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(c, s)
			closeBoth(c, s)
		}()
	}
}

// forward copies the client's bytes to the server, cutting the
// connection instead when they hold the statement to cut on.
func (p *Proxy) forward(server, client net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			if p.cutsOn(buf[:n]) {
				return
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	return true
}

func closeBoth(a, b net.Conn) {
	a.Close()
	b.Close()
}

func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
