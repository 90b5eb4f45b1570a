package mcpserver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// startingServer is a server whose services have not started, and the
// signal its begin hook sends when something starts them.
type startingServer struct {
	s     *rawSession
	st    *mcpserver.Starting
	begun chan struct{}
}

func newStartingServer(t *testing.T) *startingServer {
	t.Helper()
	cfg := testConfig(t, nil)
	// A service used before Ready would be this one: the test fails.
	early := mcpserver.Deps{Cfg: cfg, Health: func(context.Context) []mcpserver.Check {
		t.Error("a tool ran before the services were ready")
		return nil
	}}
	begun := make(chan struct{})
	srv, _, st, err := mcpserver.NewStarting(early, mcpserver.Options{Profile: mcpserver.Workflow}, func() { close(begun) })
	if err != nil {
		t.Fatal(err)
	}
	// newRawSession has initialize answered: nothing is ready yet.
	s := newRawSession(t, srv)
	// Whatever the test left unread must not hold the server's writes
	// while the session closes.
	t.Cleanup(func() { go io.Copy(io.Discard, s.rd) })
	return &startingServer{s: s, st: st, begun: begun}
}

func (ss *startingServer) waitBegun(t *testing.T, after string) {
	t.Helper()
	select {
	case <-ss.begun:
	case <-time.After(5 * time.Second):
		t.Fatalf("the services were not started after %s", after)
	}
}

// send writes a request line without waiting for its answer.
func (ss *startingServer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(ss.s.w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (ss *startingServer) answer(t *testing.T) string {
	t.Helper()
	b, err := ss.s.rd.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const healthCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"health_check","arguments":{}}}`

// A spawned server answers initialize and tools/list before its services
// (database, emulator, gateway) have started; listing the tools starts them.
func TestStartingServerListsBeforeItsServices(t *testing.T) {
	ss := newStartingServer(t)
	ans := ss.s.call(t, toolsListLine)
	if !strings.Contains(string(ans), `"name":"health_check"`) {
		t.Fatalf("tools/list before the services started: %.300s", ans)
	}
	ss.waitBegun(t, "tools/list was answered")
	ss.st.Ready(mcpserver.Deps{Cfg: testConfig(t, nil), Health: okHealth})
	if got := ss.s.call(t, healthCall); !strings.Contains(string(got), `started_service`) {
		t.Fatalf("health_check after Ready: %s", got)
	}
}

// A tool call that arrives first starts the services and waits for them:
// it never runs on services that are not there.
func TestStartingServerCallWaitsForItsServices(t *testing.T) {
	ss := newStartingServer(t)
	ss.send(t, healthCall)
	ss.waitBegun(t, "a tool was called")
	ss.st.Ready(mcpserver.Deps{Cfg: testConfig(t, nil), Health: okHealth})
	if got := ss.answer(t); !strings.Contains(got, `started_service`) || !strings.Contains(got, `"id":7`) {
		t.Fatalf("health_check held until Ready: %s", got)
	}
}

// Services that cannot start refuse every call with the reason.
func TestStartingServerRefusesCallsWhenServicesFail(t *testing.T) {
	ss := newStartingServer(t)
	ss.send(t, healthCall)
	ss.waitBegun(t, "a tool was called")
	ss.st.Fail(errors.New("cannot open the database: refused on purpose"))
	got := ss.answer(t)
	if !strings.Contains(got, `"error"`) || !strings.Contains(got, "refused on purpose") {
		t.Fatalf("health_check after Fail: %s", got)
	}
}

func okHealth(context.Context) []mcpserver.Check {
	return []mcpserver.Check{{Name: "started_service", Status: "ok"}}
}

// Services that cannot start for now (the database is unreachable) leave
// the server serving: a waiting call and every later one get db_error at
// once, and once Ready the same call runs.
func TestStartingServerAnswersDBErrorWhileUnavailable(t *testing.T) {
	ss := newStartingServer(t)
	ss.send(t, healthCall)
	ss.waitBegun(t, "a tool was called")
	ss.st.Unavailable(apperr.New(apperr.DBError, "the database cannot be reached on purpose"))
	for i, got := range []string{ss.answer(t), string(ss.s.call(t, healthCall))} {
		if !strings.Contains(got, `"code":"db_error"`) || !strings.Contains(got, "on purpose") || !strings.Contains(got, `"isError":true`) {
			t.Fatalf("call %d while unavailable: %s", i+1, got)
		}
	}
	ss.st.Ready(mcpserver.Deps{Cfg: testConfig(t, nil), Health: okHealth})
	if got := ss.s.call(t, healthCall); !strings.Contains(string(got), `started_service`) {
		t.Fatalf("health_check after Ready: %s", got)
	}
}

// TestStartingWait: a health check asks Wait how the services are, without
// starting them: it hears the reason they are unavailable, then nil once
// they are ready, the reason they could not start, or its own deadline.
func TestStartingWait(t *testing.T) {
	unreachable := apperr.New(apperr.DBError, "the database cannot be reached on purpose")
	tests := []struct {
		name string
		then func(*mcpserver.Starting)
		want string // "" is nil
	}{
		{"nothing yet", func(*mcpserver.Starting) {}, context.DeadlineExceeded.Error()},
		{"unavailable", func(st *mcpserver.Starting) { st.Unavailable(unreachable) }, "on purpose"},
		{"ready after unavailable", func(st *mcpserver.Starting) {
			st.Unavailable(unreachable)
			st.Ready(mcpserver.Deps{Cfg: testConfig(t, nil), Health: okHealth})
		}, ""},
		{"failed", func(st *mcpserver.Starting) { st.Fail(errors.New("migration refused on purpose")) }, "could not start: migration refused on purpose"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss := newStartingServer(t)
			tt.then(ss.st)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			err := ss.st.Wait(ctx)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Wait: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Wait: %v, want %q", err, tt.want)
			}
			select {
			case <-ss.begun:
				t.Fatal("Wait started the services")
			default:
			}
		})
	}
}

// recordingWriter keeps a copy of what passes through it.
type recordingWriter struct {
	w   io.Writer
	mu  sync.Mutex
	out bytes.Buffer
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.out.Write(p)
	r.mu.Unlock()
	return r.w.Write(p)
}

func (r *recordingWriter) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Contains(r.out.String(), s)
}

// Over stdio the services start once the answer to tools/list has been
// written, not while it is being written: their start would take the
// CPU from the answer the client waits for.
func TestStartingServerBeginsOnceTheListIsWritten(t *testing.T) {
	// begun says whether the answer to tools/list was out when the
	// services began.
	begun := make(chan bool, 1)
	startingSession(t, testConfig(t, nil), func(out *recordingWriter) { begun <- out.has(`"id":"the-list"`) },
		`{"jsonrpc":"2.0","id":"the-list","method":"tools/list"}`)
	select {
	case written := <-begun:
		if !written {
			t.Error("the services began before the answer to tools/list was written")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the services did not begin after tools/list")
	}
}

// Work the services leave for after their start (handing memory back)
// runs once the answer to the call that waited for them has been written,
// not while it is being computed or written.
func TestStartingRunsAfterAnswerOnceTheWaitingCallIsAnswered(t *testing.T) {
	cfg := testConfig(t, nil)
	// ran says whether the call's answer was out when the work ran.
	ran := make(chan bool, 1)
	started := make(chan struct{})
	out, st := startingSession(t, cfg, func(*recordingWriter) { close(started) }, healthCall)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not start the services")
	}
	st.AfterAnswer(func() { ran <- out.has(`"id":7`) }, time.Hour)
	if out.has(`"id":7`) {
		t.Fatal("the call was answered before its services were ready")
	}
	st.Ready(mcpserver.Deps{Cfg: cfg, Health: func(context.Context) []mcpserver.Check {
		return []mcpserver.Check{{Name: "database", Status: "ok"}}
	}})
	select {
	case answered := <-ran:
		if !answered {
			t.Error("the work ran before the answer to the waiting call was written")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the work did not run after the waiting call was answered")
	}
}

// startingSession runs a starting server with the workflow profile over
// guarded stdio until the test ends, begin being its services' start (given
// what the server has written), and sends it initialize, initialized and
// then call. It returns what the server wrote and its start.
func startingSession(t *testing.T, cfg *config.Config, begin func(*recordingWriter), call string) (*recordingWriter, *mcpserver.Starting) {
	t.Helper()
	serverR, clientW := io.Pipe()
	clientR, serverW := io.Pipe()
	out := &recordingWriter{w: serverW}
	srv, _, st, err := mcpserver.NewStarting(mcpserver.Deps{Cfg: cfg}, mcpserver.Options{Profile: mcpserver.Workflow}, func() { begin(out) })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Run(ctx, mcpserver.GuardedStdio(serverR, out, mcpserver.StdioOptions{Written: st.Written()}))
	}()
	go func() { _, _ = io.Copy(io.Discard, clientR) }()
	t.Cleanup(func() {
		cancel()
		clientW.Close()
		serverW.Close()
		<-done
	})
	go func() {
		_, _ = io.WriteString(clientW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+call+"\n")
	}()
	return out, st
}
