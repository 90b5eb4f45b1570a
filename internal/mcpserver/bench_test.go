package mcpserver_test

import (
	"bufio"
	"context"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// pipeTransports connects a server and a client over two io.Pipes with the
// newline-delimited JSON framing stdio uses, so both benchmarks below pay
// the same transport cost and differ only in the server.
func pipeTransports() (server, client *mcp.IOTransport) {
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	return &mcp.IOTransport{Reader: sr, Writer: sw}, &mcp.IOTransport{Reader: cr, Writer: cw}
}

func benchSession(b *testing.B, srv *mcp.Server) *mcp.ClientSession {
	b.Helper()
	ctx := context.Background()
	st, ct := pipeTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func benchCalls(b *testing.B, cs *mcp.ClientSession, name string, args any) {
	b.Helper()
	ctx := context.Background()
	// One warm-up call so schema caches and the first DB connection are not
	// billed to the loop.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError {
			b.Fatalf("%s failed: %v", name, res.Content)
		}
	}
}

// BenchmarkStdioHealthCheck is one health_check round trip against the
// product server (database open, every check run).
func BenchmarkStdioHealthCheck(b *testing.B) {
	a := newApp(b, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Workflow})
	if err != nil {
		b.Fatal(err)
	}
	benchCalls(b, benchSession(b, srv), "health_check", map[string]any{})
}

type echoIn struct {
	Text string `json:"text"`
}

// BenchmarkStdioEchoTool is the floor: a minimal go-sdk server with one
// echo tool over the same transport.
func BenchmarkStdioEchoTool(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoIn, error) {
		return nil, in, nil
	})
	benchCalls(b, benchSession(b, srv), "echo", map[string]any{"text": "hi"})
}

// BenchmarkNew is what every start pays to build the server: the registry,
// the selected tools' schemas and their registration.
func BenchmarkNew(b *testing.B) {
	cfg := testConfig(b, nil)
	b.ReportAllocs()
	for range b.N {
		if _, _, err := mcpserver.New(mcpserver.Deps{Cfg: cfg}, mcpserver.Options{Profile: mcpserver.Workflow}); err != nil {
			b.Fatal(err)
		}
	}
}

// rawSession speaks newline-delimited JSON-RPC to srv over pipes, as a
// stdio client does, and returns each answer's bytes unparsed, so a
// benchmark bills the server's work and not a client's decoding.
type rawSession struct {
	w  *io.PipeWriter
	rd *bufio.Reader
}

func newRawSession(tb testing.TB, srv *mcp.Server) *rawSession {
	tb.Helper()
	st, ct := pipeTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	s := &rawSession{w: ct.Writer.(*io.PipeWriter), rd: bufio.NewReaderSize(ct.Reader, 1<<20)}
	tb.Cleanup(func() { s.w.Close(); ss.Wait() })
	s.call(tb, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if _, err := io.WriteString(s.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		tb.Fatal(err)
	}
	return s
}

// call sends one request line and returns the answer line.
func (s *rawSession) call(tb testing.TB, line string) []byte {
	tb.Helper()
	if _, err := io.WriteString(s.w, line+"\n"); err != nil {
		tb.Fatal(err)
	}
	ans, err := s.rd.ReadBytes('\n')
	if err != nil {
		tb.Fatal(err)
	}
	return ans
}

const toolsListLine = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// BenchmarkToolsListRoundTrip is one warm tools/list over the stdio
// framing: what a client waits for each time it lists the tools.
func BenchmarkToolsListRoundTrip(b *testing.B) {
	srv, _, err := mcpserver.New(mcpserver.Deps{Cfg: testConfig(b, nil)}, mcpserver.Options{Profile: mcpserver.Workflow})
	if err != nil {
		b.Fatal(err)
	}
	s := newRawSession(b, srv)
	ans := s.call(b, toolsListLine)
	b.SetBytes(int64(len(ans)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.call(b, toolsListLine)
	}
}

// BenchmarkNewAndFirstToolsList is a start as a client sees it in process:
// build the server, initialize, and list the tools once.
func BenchmarkNewAndFirstToolsList(b *testing.B) {
	cfg := testConfig(b, nil)
	b.ReportAllocs()
	for range b.N {
		srv, _, err := mcpserver.New(mcpserver.Deps{Cfg: cfg}, mcpserver.Options{Profile: mcpserver.Workflow})
		if err != nil {
			b.Fatal(err)
		}
		s := newRawSession(b, srv)
		s.call(b, toolsListLine)
	}
}
