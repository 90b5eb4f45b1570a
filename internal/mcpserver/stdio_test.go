package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	return startGuardedOpts(t, srv, mcpserver.StdioOptions{})
}

func startGuardedOpts(t testing.TB, srv *mcp.Server, opts mcpserver.StdioOptions) *guardedPipe {
	t.Helper()
	serverR, clientW := io.Pipe()
	clientR, serverW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	g := &guardedPipe{w: clientW, lines: make(chan string, 64), done: make(chan error, 1)}
	go func() {
		err := srv.Run(ctx, mcpserver.GuardedStdio(serverR, serverW, opts))
		// Nothing is written once the session has returned: closing its
		// output lets the reader drain what is left and close lines, so
		// next never has to guess whether more output is coming.
		serverW.Close()
		g.done <- err
	}()
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

// endsOnEOF closes the client's side of the input and wants the session to
// end because of it, which proves it was still serving until then: a
// session that had died of an earlier line would have ended with that
// line's error.
func (g *guardedPipe) endsOnEOF(t testing.TB, d time.Duration) {
	t.Helper()
	g.w.Close()
	if !g.ended {
		select {
		case err := <-g.done:
			g.ended, g.endErr = true, err
			g.done = nil
		case <-time.After(d):
			t.Fatal("the session did not end when its input closed")
		}
	}
	if g.endErr != nil && !errors.Is(g.endErr, io.EOF) {
		t.Fatalf("the session ended with %v, want the end of its input", g.endErr)
	}
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
			l, ok := <-g.lines
			return l, ok
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
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
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
			for _, id := range []string{"after-1", "after-2"} {
				if ok, why := g.alive(id, 10*time.Second); !ok {
					t.Fatalf("server stopped serving after %s: %s", tc.line, why)
				}
			}
			// A session can end shortly after answering the next request;
			// it must have lived until its input closed.
			g.endsOnEOF(t, 10*time.Second)
		})
	}
}

func TestGuardedStdioFractionalIDNotRewritten(t *testing.T) {
	a := newApp(t, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
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

func TestGuardedStdioMessageLimit(t *testing.T) {
	a := newApp(t, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	ping := func(id string, size int) string {
		head := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"x":"`
		tail := `"}}`
		return head + strings.Repeat("a", size-len(head)-len(tail)) + tail
	}
	tests := []struct {
		name  string
		limit int64
		line  string
		// wantLimit is the limit the error must state; 0 means the line
		// is within the limit and gets an ordinary answer.
		wantLimit int64
		wantID    string
	}{
		{"default limit, 2 MiB", 0, ping("5", 2<<20), mcpserver.DefaultMaxMessageBytes, "5"},
		{"default limit, 9 MiB", 0, ping(`"big"`, 9<<20), mcpserver.DefaultMaxMessageBytes, `"big"`},
		{"default limit, exactly the limit", 0, ping("6", mcpserver.DefaultMaxMessageBytes), 0, "6"},
		{"configured limit", 4096, ping("7", 5000), 4096, "7"},
		{"configured limit, id after the cut", 4096, `{"jsonrpc":"2.0","method":"ping","params":{"x":"` + strings.Repeat("b", 200<<10) + `"},"id":8}`, 4096, "null"},
		{"configured limit, within", 4096, ping("9", 4000), 0, "9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := startGuardedOpts(t, srv, mcpserver.StdioOptions{MaxMessageBytes: tc.limit})
			g.send(tc.line)
			l, ok := g.next(30 * time.Second)
			if !ok {
				t.Fatalf("no reply (session ended: %t %s)", g.ended, errString(g.endErr))
			}
			var r wireReply
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("reply %.300q", l)
			}
			if string(r.ID) != tc.wantID {
				t.Errorf("reply id %s, want %s", r.ID, tc.wantID)
			}
			if tc.wantLimit == 0 {
				if r.Error != nil {
					t.Errorf("a message within the limit was refused: %+v", r.Error)
				}
			} else {
				if r.Error == nil || len(l) > 4096 {
					t.Fatalf("over-long message reply: %.300q", l)
				}
				if want := strconv.FormatInt(tc.wantLimit, 10) + "-byte limit"; !strings.Contains(r.Error.Message, want) {
					t.Errorf("error %q does not state the limit %q", r.Error.Message, want)
				}
			}
			if ok, why := g.alive("after", 10*time.Second); !ok {
				t.Fatal(why)
			}
		})
	}
}

// endless is a line of n bytes that is never held in memory as a whole.
type endless struct{ left int }

func (e *endless) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), e.left)
	for i := range p[:n] {
		p[i] = 'a'
	}
	e.left -= n
	if e.left == 0 {
		p[n-1] = '\n'
	}
	return n, nil
}

// TestGuardedStdioSkipsOverlongLineWithoutHoldingIt reads a 256 MiB line:
// the guard must answer it after reading no more than a small multiple of
// the limit into memory.
func TestGuardedStdioSkipsOverlongLineWithoutHoldingIt(t *testing.T) {
	const size = 256 << 20
	var out strings.Builder
	in := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`), &endless{left: size},
		strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"))
	conn, err := mcpserver.GuardedStdio(in, &out, mcpserver.StdioOptions{}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	msg, err := conn.Read(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("the message after an over-long line was not delivered: %v", err)
	}
	if req, ok := msg.(*jsonrpc.Request); !ok || req.ID.Raw() != int64(2) {
		t.Errorf("delivered %#v, want request 2", msg)
	}
	if !strings.Contains(out.String(), `"id":1`) || !strings.Contains(out.String(), "byte limit") {
		t.Errorf("error reply %q", out.String())
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8*mcpserver.DefaultMaxMessageBytes {
		t.Errorf("skipping a %d MiB line allocated %d MiB", size>>20, grew>>20)
	}
}

func TestGuardedStdioDeepNesting(t *testing.T) {
	a := newApp(t, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		depth     int
		wantError bool
	}{
		{mcpserver.MaxNestingDepth, false},
		{mcpserver.MaxNestingDepth + 1, true},
		{1000, true},
		{1001, true},
		{5000, true},
		{9999, true},
		{20000, true},
	}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.depth), func(t *testing.T) {
			g := startGuarded(t, srv)
			g.send(nested(`"n"`, tc.depth))
			l, ok := g.next(10 * time.Second)
			if !ok {
				t.Fatalf("no reply (session ended: %t %s)", g.ended, errString(g.endErr))
			}
			var r wireReply
			if err := json.Unmarshal([]byte(l), &r); err != nil || string(r.ID) != `"n"` {
				t.Fatalf("reply %.300q", l)
			}
			if gotError := r.Error != nil && strings.Contains(r.Error.Message, "nested"); gotError != tc.wantError {
				t.Errorf("depth %d: nesting error %t, want %t (%.300q)", tc.depth, gotError, tc.wantError, l)
			}
			if ok, why := g.alive("after", 10*time.Second); !ok {
				t.Fatal(why)
			}
		})
	}
}

// nested is a ping whose params nest depth levels in total, counting the
// message object itself.
func nested(id string, depth int) string {
	inner := max(depth-2, 0)
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"a":` +
		strings.Repeat("[", inner) + strings.Repeat("]", inner) + `}}`
}

// FuzzGuardAgainstDecoder feeds one line through the guarded connection.
// The property: whatever the guard passes, the SDK's decoder accepts (a
// line it refuses would end the whole session), and the message passed on
// is exactly the one the SDK's decoder makes of the line, though the guard
// decoded it itself; whatever the guard refuses gets exactly one JSON-RPC
// error reply.
func FuzzGuardAgainstDecoder(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"JSONRPC":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","ID":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","Params":{}}`,
		`{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"Ping","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1e999}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\ud800"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}   `,
		"\t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\u0000"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"s\":\"\xff\"}}",
		nested("1", 128), nested("1", 129), nested("1", 1000), nested("1", 1001), nested("1", 9999), nested("1", 10001),
		`not json`, `[]`, `{}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a\u0062","method":"p\u0069ng"}`,
		`{"jsonrpc":"2.0","id":"\u00e9té","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1, 2]}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1},"params":{"b":2}}`,
		`{ "params" : { "a" : [ ] } , "method" : "x" , "id" : "1" , "jsonrpc" : "2.0" }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.NewReplacer("\n", " ").Replace(line)
		var out strings.Builder
		conn, err := mcpserver.GuardedStdio(strings.NewReader(line+"\n"), &out, mcpserver.StdioOptions{}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		msg, err := conn.Read(context.Background())
		switch {
		case err == nil:
			if out.Len() != 0 {
				t.Fatalf("%q was both answered with an error (%q) and delivered", line, out.String())
			}
			if msg == nil {
				t.Fatalf("%q delivered a nil message", line)
			}
			want, err := jsonrpc.DecodeMessage([]byte(strings.TrimSpace(line)))
			if err != nil {
				t.Fatalf("the guard passed %q but the SDK decoder refuses it: %v", line, err)
			}
			if !reflect.DeepEqual(msg, want) {
				t.Fatalf("%q was passed on as %#v; the SDK decodes it as %#v", line, msg, want)
			}
		case errors.Is(err, io.EOF):
			replies := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if strings.TrimSpace(line) == "" {
				if out.Len() != 0 {
					t.Fatalf("a blank line was answered: %q", out.String())
				}
				return
			}
			if len(replies) != 1 {
				t.Fatalf("%q got %d replies: %q", line, len(replies), out.String())
			}
			var r wireReply
			if err := json.Unmarshal([]byte(replies[0]), &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil {
				t.Fatalf("%q got a reply that is not a JSON-RPC error: %q", line, replies[0])
			}
		default:
			t.Fatalf("the guard passed %q but the SDK decoder refused it: %v", line, err)
		}
	})
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
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.NewReplacer("\n", " ", "\r", " ").Replace(line)
		g := startGuarded(t, srv)
		g.send(line)
		for _, id := range []string{"fuzz-ping-1", "fuzz-ping-2"} {
			if ok, why := g.alive(id, 10*time.Second); !ok {
				t.Fatalf("after %q: %s", line, why)
			}
		}
		// A session can end just after answering a ping; it must have
		// lived until its input closed.
		g.endsOnEOF(t, 10*time.Second)
	})
}

// TestGuardedConnDecodesAPlainRequestOnce guards what a tool call costs
// the stdio transport: the guard's own decoding of a plain request is the
// only one. The SDK's stdio reader decoded each line twice more, each time
// with a fresh 32 KiB buffer, which was most of a call's garbage.
func TestGuardedConnDecodesAPlainRequestOnce(t *testing.T) {
	const runs = 200
	line := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health_check","arguments":{}}}` + "\n"
	in := strings.NewReader(strings.Repeat(line, runs+1))
	conn, err := mcpserver.GuardedStdio(in, io.Discard, mcpserver.StdioOptions{}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	if _, err := conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "tools/call" {
			t.Fatalf("read %#v", msg)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 16<<10 {
		t.Errorf("reading one plain request allocates %d bytes; want at most 16 KiB", per)
	}
}
