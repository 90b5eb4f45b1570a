package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// guardedPipe is one server session over GuardedStdio, driven with raw
// lines the way a buggy or hostile client would write them.
type guardedPipe struct {
	w     *io.PipeWriter
	lines chan string
	done  chan error
	// ended is set once the server session has returned.
	ended  bool
	endErr error
}

func startGuarded(t testing.TB, srv *mcp.Server) *guardedPipe {
	t.Helper()
	serverR, clientW := io.Pipe()
	clientR, serverW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	g := &guardedPipe{w: clientW, lines: make(chan string, 64), done: make(chan error, 1)}
	go func() { g.done <- srv.Run(ctx, mcpserver.GuardedStdio(serverR, serverW)) }()
	go func() {
		defer close(g.lines)
		rd := bufio.NewReaderSize(clientR, 1<<16)
		for {
			l, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			g.lines <- l
		}
	}()
	t.Cleanup(func() {
		cancel()
		// Unblock writers stuck on a server that stopped reading.
		serverR.Close()
		clientW.Close()
		clientR.Close()
		serverW.Close()
	})
	g.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r, ok := g.next(10 * time.Second); !ok || !strings.Contains(r, `"init"`) {
		t.Fatalf("initialize: %q", r)
	}
	g.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	return g
}

// send writes without blocking the test: a server that stopped reading
// must show up as a missing reply, not a hung test.
func (g *guardedPipe) send(line string) {
	go func() { _, _ = io.WriteString(g.w, line+"\n") }()
}

// next returns the next output line; it gives up early when the server
// session has ended and nothing is left to read.
func (g *guardedPipe) next(d time.Duration) (string, bool) {
	timeout := time.After(d)
	for {
		select {
		case l, ok := <-g.lines:
			return l, ok
		case err := <-g.done:
			g.ended, g.endErr = true, err
			g.done = nil
		case <-timeout:
			return "", false
		}
		if g.ended {
			select {
			case l, ok := <-g.lines:
				return l, ok
			case <-time.After(200 * time.Millisecond):
				return "", false
			}
		}
	}
}

type wireReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// alive pings with a fresh id and wants the matching result; every line
// read on the way must be a JSON-RPC message.
func (g *guardedPipe) alive(id string, d time.Duration) (bool, string) {
	g.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}`)
	deadline := time.Now().Add(d)
	for {
		l, ok := g.next(time.Until(deadline))
		if !ok {
			if g.ended {
				return false, "server session ended: " + errString(g.endErr)
			}
			return false, "no reply to ping"
		}
		var r wireReply
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.JSONRPC != "2.0" {
			return false, "non JSON-RPC output line: " + l
		}
		if string(r.ID) == `"`+id+`"` {
			return r.Error == nil, l
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestGuardedStdioSurvivesBadLines(t *testing.T) {
	a := newApp(t, nil)
	srv, _, err := mcpserver.New(a, mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, line string
		// wantID is the id the error reply must carry ("null" when the
		// request's id cannot be read).
		wantID string
	}{
		{"not json", `this is not json`, "null"},
		{"truncated", `{"jsonrpc":"2.0","id":`, "null"},
		{"malformed arguments", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health_check","arguments":{bad}}`, "null"},
		{"string", `"hello"`, "null"},
		{"number", `42`, "null"},
		{"empty object", `{}`, "null"},
		{"empty batch", `[]`, "null"},
		{"wrong version", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, "3"},
		{"no method", `{"jsonrpc":"2.0","id":4}`, "4"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, "null"},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null"},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "null"},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, ""},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, ""},
		{"batch with a bad element", `[{}]`, ""},
		{"id out of range", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, "null"},
		{"non-object params", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":[1]}`, "8"},
		{"unknown method", `{"jsonrpc":"2.0","id":9,"method":"no/such"}`, "9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := startGuarded(t, srv)
			g.send(tc.line)
			if tc.wantID != "" {
				l, ok := g.next(10 * time.Second)
				if !ok {
					if g.ended {
						t.Fatalf("server session ended on %s: %s", tc.line, errString(g.endErr))
					}
					t.Fatalf("no error reply to %s", tc.line)
				}
				var r wireReply
				if err := json.Unmarshal([]byte(l), &r); err != nil || r.Error == nil {
					t.Fatalf("reply to %s is not a JSON-RPC error: %q", tc.line, l)
				}
				if string(r.ID) != tc.wantID {
					t.Errorf("error reply id %s, want %s", r.ID, tc.wantID)
				}
			}
			// Ask twice: a session can end shortly after answering the
			// next request.
			for _, id := range []string{"after-1", "after-2"} {
				if ok, why := g.alive(id, 10*time.Second); !ok {
					t.Fatalf("server stopped serving after %s: %s", tc.line, why)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

func TestGuardedStdioFractionalIDNotRewritten(t *testing.T) {
	a := newApp(t, nil)
	srv, _, err := mcpserver.New(a, mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	g := startGuarded(t, srv)
	g.send(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
	if l, ok := g.next(10 * time.Second); ok {
		var r wireReply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("reply %q", l)
		}
		// The client can only match a reply carrying its own id; a reply to
		// id 1 would answer a request it never sent.
		if id := string(r.ID); id != "1.5" && id != "null" {
			t.Errorf("request id 1.5 answered with id %s", id)
		}
	}
	if ok, why := g.alive("after", 10*time.Second); !ok {
		t.Fatal(why)
	}
}

func TestGuardedStdioOverlongLine(t *testing.T) {
	a := newApp(t, nil)
	srv, _, err := mcpserver.New(a, mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	g := startGuarded(t, srv)
	huge := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"` + strings.Repeat("a", mcpserver.MaxLineBytes) + `"}}`
	g.send(huge)
	l, ok := g.next(30 * time.Second)
	if !ok {
		t.Fatal("no reply to an over-long line")
	}
	var r wireReply
	if err := json.Unmarshal([]byte(l), &r); err != nil || r.Error == nil || len(l) > 4096 {
		t.Fatalf("over-long line reply: %.300q", l)
	}
	if ok, why := g.alive("after", 10*time.Second); !ok {
		t.Fatal(why)
	}
}

// FuzzGuardedStdio writes one arbitrary line to a stdio session. Whatever
// it is, the server answers only with JSON-RPC lines and keeps serving.
func FuzzGuardedStdio(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health_check","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`not json`, `{}`, `[]`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		"\xff\xfe", `{"jsonrpc":"2.0","id":-1,"method":"tools/list","params":{"cursor":"!!"}}`,
	} {
		f.Add(s)
	}
	a := newApp(f, nil)
	srv, _, err := mcpserver.New(a, mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.NewReplacer("\n", " ", "\r", " ").Replace(line)
		g := startGuarded(t, srv)
		g.send(line)
		// Two pings: a session can end just after answering the first.
		for _, id := range []string{"fuzz-ping-1", "fuzz-ping-2"} {
			if ok, why := g.alive(id, 10*time.Second); !ok {
				t.Fatalf("after %q: %s", line, why)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
