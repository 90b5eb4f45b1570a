package mcpserver

import (
	"container/list"
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionIDHeader is the Streamable HTTP session header.
const sessionIDHeader = "Mcp-Session-Id"

// sessionLRU caps the number of HTTP sessions. The SDK keeps every session
// until its client deletes it or it idles out, so a client that initializes
// in a loop would grow the server without bound; past the cap the least
// recently used session is closed, and its client gets 404 (the spec's
// "session gone") and can initialize again.
type sessionLRU struct {
	srv *mcp.Server
	max int
	log *slog.Logger

	mu    sync.Mutex
	order *list.List // of *sessionUse, most recently used first
	byID  map[string]*list.Element
}

type sessionUse struct {
	id string
	// inflight counts requests being served, so a session in the middle of
	// a call or holding a stream is closed only when no idle one is left.
	inflight int
}

func newSessionLRU(srv *mcp.Server, max int, log *slog.Logger) *sessionLRU {
	return &sessionLRU{srv: srv, max: max, log: log, order: list.New(), byID: map[string]*list.Element{}}
}

func (s *sessionLRU) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(sessionIDHeader); id != "" {
			s.begin(id)
			defer s.end(id, r.Method == http.MethodDelete)
			next.ServeHTTP(w, r)
			return
		}
		rec := &sessionRecorder{ResponseWriter: w, lru: s}
		next.ServeHTTP(rec, r)
		rec.finish()
	})
}

// begin marks a request of a known session; unknown ids are left to the
// SDK, which answers 404.
func (s *sessionLRU) begin(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byID[id]; ok {
		e.Value.(*sessionUse).inflight++
		s.order.MoveToFront(e)
	}
}

func (s *sessionLRU) end(id string, deleted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	if !ok {
		return
	}
	u := e.Value.(*sessionUse)
	u.inflight--
	if deleted && u.inflight <= 0 {
		s.order.Remove(e)
		delete(s.byID, id)
	}
}

// add records a session the SDK just created and closes the least recently
// used ones past the cap. The new session is in flight (its initialize is
// being answered), so it is never the one closed.
func (s *sessionLRU) add(id string) {
	s.mu.Lock()
	if _, ok := s.byID[id]; ok {
		s.mu.Unlock()
		return
	}
	s.byID[id] = s.order.PushFront(&sessionUse{id: id, inflight: 1})
	var victims []*mcp.ServerSession
	if s.order.Len() > s.max {
		victims = s.evictLocked()
	}
	s.mu.Unlock()
	for _, ss := range victims {
		// Close removes the session from the SDK's table, so its next
		// request is answered 404.
		_ = ss.Close()
	}
	if len(victims) > 0 {
		s.log.Info("closed least recently used MCP sessions", "closed", len(victims), "mcp.max_sessions", s.max)
	}
}

// evictLocked forgets sessions the SDK already closed (idle timeout, DELETE)
// and picks the least recently used live ones until the cap holds,
// preferring sessions with no request in flight.
func (s *sessionLRU) evictLocked() []*mcp.ServerSession {
	live := map[string]*mcp.ServerSession{}
	for ss := range s.srv.Sessions() {
		live[ss.ID()] = ss
	}
	for e := s.order.Back(); e != nil; {
		prev := e.Prev()
		// A session with a request in flight is live even if the SDK has
		// not listed it yet (the one being initialized right now).
		if u := e.Value.(*sessionUse); u.inflight <= 0 && live[u.id] == nil {
			id := u.id
			s.order.Remove(e)
			delete(s.byID, id)
		}
		e = prev
	}
	var victims []*mcp.ServerSession
	for _, idleOnly := range []bool{true, false} {
		for e := s.order.Back(); e != nil && s.order.Len() > s.max; {
			prev := e.Prev()
			u := e.Value.(*sessionUse)
			if !idleOnly || u.inflight <= 0 {
				s.order.Remove(e)
				delete(s.byID, u.id)
				if ss := live[u.id]; ss != nil {
					victims = append(victims, ss)
				}
			}
			e = prev
		}
	}
	return victims
}

// sessionRecorder notices the session id the SDK assigns in its answer to
// an initialize request.
type sessionRecorder struct {
	http.ResponseWriter
	lru  *sessionLRU
	id   string
	seen bool
}

func (r *sessionRecorder) note(status int) {
	if r.seen {
		return
	}
	r.seen = true
	if id := r.Header().Get(sessionIDHeader); id != "" && status >= 200 && status < 300 {
		r.id = id
		r.lru.add(id)
	}
}

func (r *sessionRecorder) WriteHeader(status int) {
	r.note(status)
	r.ResponseWriter.WriteHeader(status)
}

func (r *sessionRecorder) Write(p []byte) (int, error) {
	r.note(http.StatusOK)
	return r.ResponseWriter.Write(p)
}

func (r *sessionRecorder) Flush() {
	r.note(http.StatusOK)
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

func (r *sessionRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// finish ends the initialize request's own use of its session.
func (r *sessionRecorder) finish() {
	if r.id != "" {
		r.lru.end(r.id, false)
	}
}
