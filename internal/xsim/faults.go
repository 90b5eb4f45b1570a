package xsim

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// Fault describes misbehaviour injected into the routes matching a pattern.
// Counted faults ("...Next") fire on the next N matching calls and then stop;
// probabilities are drawn from the server's seeded RNG, so a run is
// reproducible. When several kinds are armed, a call gets at most one
// pre-processing fault, checked in this order: timeout, reset, 429, 5xx,
// client-not-enrolled; then at most one post-processing fault: apply-then-
// fail, truncate, malformed. Latency is added to every matching call.
type Fault struct {
	// Latency is added before the request is processed.
	Latency time.Duration
	// TimeoutNext calls hang without an answer until the client gives up
	// (request context done) or the server closes.
	TimeoutNext int
	// ResetNext calls have their connection closed with a TCP reset and no
	// HTTP answer; nothing is applied.
	ResetNext int
	// RateLimitNext calls answer X's 429 body; nothing is applied.
	RateLimitNext int
	// ErrorNext calls answer ErrorStatus; nothing is applied.
	ErrorNext int
	// ErrorProbability is the chance (0..1) that a call answers ErrorStatus
	// without applying anything.
	ErrorProbability float64
	// ErrorStatus is the 5xx status used by the error faults; zero means 503.
	ErrorStatus int
	// ApplyThenFailNext calls are processed normally (the side effect IS
	// applied, counters move) but the answer is ErrorStatus, or a connection
	// reset when ApplyThenReset is set.
	ApplyThenFailNext int
	ApplyThenReset    bool
	// TruncateNext calls are processed normally but the body is cut in half.
	TruncateNext int
	// MalformedNext calls are processed normally but the body is not JSON.
	MalformedNext int
	// ClientNotEnrolled makes matching calls answer X's 403
	// client-not-enrolled body (an endpoint outside the app's access level).
	ClientNotEnrolled bool
	// OnArrive, when set, is called with the request's context as each
	// matching call arrives (once authenticated and within its rate
	// limit), before the other faults act. It may block,
	// holding the call on the wire. A test seam: it tells a test that a
	// request is in flight, without sleeping.
	OnArrive func(ctx context.Context)
}

type faultKind int

const (
	faultNone faultKind = iota
	faultTimeout
	faultReset
	faultRateLimit
	faultServerError
	faultNotEnrolled
	faultApplyThenError
	faultApplyThenReset
	faultTruncate
	faultMalformed
)

type faultEntry struct {
	method string // "" or "*" matches any method
	segs   []string
	f      Fault
}

type faultPlan struct {
	arrive  []func(context.Context)
	latency time.Duration
	pre     faultKind
	post    faultKind
	status  int
}

// SetFault arms f for every route matching pattern, which is "METHOD /path"
// where a path segment written {name}, :name or * matches any one segment
// ("POST /2/tweets", "DELETE /2/users/:id/likes/:tweet_id", "* /2/users/*").
// A method of "*" or none matches every method. Setting a pattern again
// replaces its fault.
func (s *Server) SetFault(pattern string, f Fault) {
	method, path := "", pattern
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		method, path = strings.ToUpper(strings.TrimSpace(pattern[:i])), strings.TrimSpace(pattern[i+1:])
	}
	e := &faultEntry{method: method, segs: splitPath(path), f: f}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, old := range s.faults {
		if old.method == e.method && equalSegs(old.segs, e.segs) {
			s.faults[i] = e
			return
		}
	}
	s.faults = append(s.faults, e)
}

// ClearFaults disarms every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

func splitPath(p string) []string {
	return strings.Split(strings.Trim(p, "/"), "/")
}

func equalSegs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func isWildSeg(s string) bool {
	return s == "*" || strings.HasPrefix(s, ":") || (strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"))
}

func (e *faultEntry) matches(method, path string) bool {
	if e.method != "" && e.method != "*" && e.method != method {
		return false
	}
	segs := splitPath(path)
	if len(segs) != len(e.segs) {
		return false
	}
	for i, want := range e.segs {
		if isWildSeg(want) {
			continue
		}
		if want != segs[i] {
			return false
		}
	}
	return true
}

// planFaults decides, under s.mu, what the matching faults do to this call
// and consumes the counted ones.
func (s *Server) planFaults(rt *route, path string) faultPlan {
	var p faultPlan
	for _, e := range s.faults {
		// Match either the concrete path or the route's own pattern, so
		// "POST /2/users/{id}/likes" and "POST /2/users/123/likes" both work.
		if !e.matches(rt.method, path) && !e.matches(rt.method, rt.path) {
			continue
		}
		f := &e.f
		if f.OnArrive != nil {
			p.arrive = append(p.arrive, f.OnArrive)
		}
		p.latency += f.Latency
		status := f.ErrorStatus
		if status < 500 || status > 599 {
			status = http.StatusServiceUnavailable
		}
		if p.pre == faultNone {
			switch {
			case f.TimeoutNext > 0:
				f.TimeoutNext--
				p.pre = faultTimeout
			case f.ResetNext > 0:
				f.ResetNext--
				p.pre = faultReset
			case f.RateLimitNext > 0:
				f.RateLimitNext--
				p.pre = faultRateLimit
			case f.ErrorNext > 0:
				f.ErrorNext--
				p.pre, p.status = faultServerError, status
			case f.ErrorProbability > 0 && s.rng.Float64() < f.ErrorProbability:
				p.pre, p.status = faultServerError, status
			case f.ClientNotEnrolled:
				p.pre = faultNotEnrolled
			}
		}
		if p.pre != faultNone || p.post != faultNone {
			continue
		}
		switch {
		case f.ApplyThenFailNext > 0:
			f.ApplyThenFailNext--
			if f.ApplyThenReset {
				p.post = faultApplyThenReset
			} else {
				p.post, p.status = faultApplyThenError, status
			}
		case f.TruncateNext > 0:
			f.TruncateNext--
			p.post = faultTruncate
		case f.MalformedNext > 0:
			f.MalformedNext--
			p.post = faultMalformed
		}
	}
	return p
}
