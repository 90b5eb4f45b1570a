package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one inbound JSON-RPC line.
const MaxLineBytes = 8 << 20

// GuardedStdio is a stdio transport that answers malformed lines with a
// JSON-RPC error instead of ending the session: one bad line from a client
// must not take the server down.
func GuardedStdio(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	return &mcp.IOTransport{
		Reader:        io.NopCloser(&lineGuard{r: bufio.NewReaderSize(in, 64<<10), out: w}),
		Writer:        nopWriteCloser{w},
		MaxLineLength: MaxLineBytes + 1,
	}
}

// ServeStdio runs srv on stdin/stdout until ctx ends or the client leaves.
func ServeStdio(ctx context.Context, srv *mcp.Server) error {
	err := srv.Run(ctx, GuardedStdio(os.Stdin, os.Stdout))
	if err != nil && (ctx.Err() != nil || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// lockedWriter makes every Write atomic, so error replies written here and
// messages written by the SDK never interleave within a line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

type lineGuard struct {
	r       *bufio.Reader
	out     io.Writer
	pending []byte
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, tooLong, err := g.readLine()
		switch {
		case tooLong:
			g.reject(nil, -32700, "parse error: line longer than the 8 MiB limit")
		case len(bytes.TrimSpace(line)) > 0:
			if id, code, msg, ok := checkMessage(line); ok {
				g.pending = line
			} else {
				g.reject(id, code, msg)
			}
		}
		if err != nil {
			if len(g.pending) > 0 {
				break
			}
			return 0, err
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// readLine reads one line, discarding the rest of a line over the limit.
func (g *lineGuard) readLine() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := g.r.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLineBytes {
			tooLong = true
			buf = nil
		} else if !tooLong {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return buf, false, err
	}
}

// checkMessage accepts one JSON-RPC 2.0 object whose id, if any, is a
// string or an integer the SDK can echo back unchanged; anything else gets a
// parse or invalid-request error here, because the SDK would end the whole
// session on it.
func checkMessage(line []byte) (id json.RawMessage, code int, msg string, ok bool) {
	if !json.Valid(line) {
		return nil, -32700, "parse error: the line is not valid JSON", false
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] == '[' {
		return nil, -32600, "invalid request: JSON-RPC batches are not supported; send one message per line", false
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &m) != nil {
		return nil, -32600, "invalid request: a JSON-RPC message must be an object", false
	}
	idOK := validID(m.ID)
	echo := m.ID
	if !idOK {
		echo = nil
	}
	switch {
	case m.JSONRPC != "2.0":
		return echo, -32600, `invalid request: "jsonrpc" must be "2.0"`, false
	case !idOK:
		return nil, -32600, "invalid request: id must be a string or an integer", false
	case m.Method == nil && m.Result == nil && m.Error == nil:
		return echo, -32600, "invalid request: no method", false
	case m.Method == nil && len(m.ID) == 0:
		return nil, -32600, "invalid request: a response needs the id of the request it answers", false
	}
	return nil, 0, "", true
}

// validID accepts an absent id (a notification), a string, or an integer
// in int64 range.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return true
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil
	}
	return false
}

func (g *lineGuard) reject(id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": msg},
	})
	if err != nil {
		return
	}
	_, _ = g.out.Write(append(b, '\n'))
}
