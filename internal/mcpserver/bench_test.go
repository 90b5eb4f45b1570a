package mcpserver_test

import (
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
