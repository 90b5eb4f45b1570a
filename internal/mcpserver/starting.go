package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/envelope"
)

// Starting is a server whose services are still starting. A client that
// spawns the server waits for initialize and tools/list before its agent
// can do anything, and neither needs the database, the emulator or X; so
// they are answered at once, while every other request (a tool call, a
// resource read, a prompt) waits until the services are up. A request
// therefore never runs before the checks that opening the database and
// starting the gateway make, and none runs at all when they fail.
type Starting struct {
	deps  *Deps
	ready chan struct{}
	once  sync.Once
	err   error
	// begin starts the services; it runs once, when the answer to
	// tools/list has been written or a request needs them, whichever comes
	// first (Begin starts it from outside), so that starting them takes no
	// CPU from the first answers.
	begin     func()
	beginOnce sync.Once
	// writes is set once the transport reports its writes (Written):
	// tools/list's answer then starts the services once it is written,
	// and listAnswered says it has been answered.
	writes, listAnswered atomic.Bool
	// afterAnswer runs once the next message has been written (see
	// AfterAnswer).
	afterAnswer atomic.Pointer[func()]
	// base is the configuration-only Deps the server was built on, kept
	// apart from deps (which Ready replaces) to answer while unavailable.
	base Deps
	// unavailable, once closed, answers the requests that need the
	// services with unavailableErr until Ready.
	mu             sync.Mutex
	unavailable    chan struct{}
	unavailableErr error
}

// answeredWhileStarting are the methods that read nothing but the tool
// surface, which is fixed before the services start.
var answeredWhileStarting = map[string]bool{
	"initialize":                       true,
	"ping":                             true,
	"tools/list":                       true,
	"prompts/list":                     true,
	"resources/list":                   true,
	"resources/templates/list":         true,
	"notifications/initialized":        true,
	"notifications/cancelled":          true,
	"notifications/roots/list_changed": true,
}

// NewStarting builds the server New would build on d, before d's
// services exist: d needs only Cfg and Log, and o.AccountConfigs must
// name the other accounts' configurations (the services are not there to
// ask). begin starts the services, which then call Ready with them, or
// Fail when they cannot start.
func NewStarting(d Deps, o Options, begin func()) (*mcp.Server, []*Tool, *Starting, error) {
	if d.Cfg == nil {
		return nil, nil, nil, errors.New("mcpserver: Deps.Cfg is required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	s := &Starting{deps: &d, ready: make(chan struct{}), begin: begin, unavailable: make(chan struct{})}
	srv, tools, err := build(s.deps, o)
	if err != nil {
		return nil, nil, nil, err
	}
	s.base = *s.deps
	srv.AddReceivingMiddleware(s.gate)
	return srv, tools, s, nil
}

// Begin starts the services now if nothing has started them yet.
func (s *Starting) Begin() { s.beginOnce.Do(s.begin) }

// Written returns what a transport that reports its writes calls after
// writing each message (StdioOptions.Written). On such a transport the
// services start once the answer to tools/list has been written: begun
// before it is out, their start takes the CPU from writing it, which is
// what the client waits for. On any other they start when tools/list has
// been answered.
func (s *Starting) Written() func() {
	s.writes.Store(true)
	return s.written
}

func (s *Starting) written() {
	if f := s.afterAnswer.Swap(nil); f != nil {
		go (*f)()
	}
	if s.listAnswered.Load() {
		s.Begin()
	}
}

// AfterAnswer runs f in the background once the transport has written its
// next message, or once within has passed, whichever comes first; at once
// on a transport that does not report its writes. Work that no request
// waits for (handing memory back after the start) is called here from
// Ready's caller, so that it takes no CPU from the answer to the request
// that waited for the services.
func (s *Starting) AfterAnswer(f func(), within time.Duration) {
	var once sync.Once
	run := func() { once.Do(f) }
	if !s.writes.Load() {
		go run()
		return
	}
	s.afterAnswer.Store(&run)
	time.AfterFunc(within, func() {
		if g := s.afterAnswer.Swap(nil); g != nil {
			(*g)()
		}
	})
}

// Ready hands the started services to the waiting and later requests. Only
// the first of Ready and Fail counts.
func (s *Starting) Ready(d Deps) {
	s.once.Do(func() {
		if d.Now == nil {
			d.Now = time.Now
		}
		if d.Log == nil {
			d.Log = s.deps.Log
		}
		*s.deps = d
		close(s.ready)
	})
}

// Fail refuses every waiting and later request with err.
func (s *Starting) Fail(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.ready)
	})
}

// Unavailable says that the services cannot start for now (the database
// cannot be reached) while they are tried again: until Ready or Fail, a
// request that needs them is answered at once, a tool call with err's
// envelope (db_error), instead of waiting. The server keeps serving.
func (s *Starting) Unavailable(err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unavailableErr == nil {
		close(s.unavailable)
	}
	s.unavailableErr = err
}

func (s *Starting) whyUnavailable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unavailableErr
}

// refuse answers a request while the services are unavailable.
func (s *Starting) refuse(method string, err error) (mcp.Result, error) {
	if method != "tools/call" {
		return nil, fmt.Errorf("the server's services are not available yet: %w", err)
	}
	d := &s.base
	meta := baseMeta(d, d.Now())
	return render(d, envelope.Fail(apperr.As(err), &meta)), nil
}

// Wait waits until the services have started (nil), cannot start (the
// reason Fail gave), are unavailable for now (the reason Unavailable
// gave), or ctx ends (its error). It starts nothing: a health check asks
// through it without starting the services.
func (s *Starting) Wait(ctx context.Context) error {
	unavailable, err := s.await(ctx)
	if unavailable != nil {
		return unavailable
	}
	return err
}

// await is Wait telling an unavailable database apart from everything
// else.
func (s *Starting) await(ctx context.Context) (unavailable, err error) {
	select {
	case <-s.ready:
	case <-s.unavailable:
		// Ready may have come meanwhile.
		select {
		case <-s.ready:
		default:
			return s.whyUnavailable(), nil
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.err != nil {
		return nil, fmt.Errorf("the server could not start: %w", s.err)
	}
	return nil, nil
}

func (s *Starting) gate(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !answeredWhileStarting[method] {
			s.Begin()
			unavailable, err := s.await(ctx)
			if unavailable != nil {
				return s.refuse(method, unavailable)
			}
			if err != nil {
				return nil, err
			}
		}
		res, err := next(ctx, method, req)
		if method == "tools/list" {
			if s.writes.Load() {
				s.listAnswered.Store(true)
			} else {
				s.Begin()
			}
		}
		return res, err
	}
}
