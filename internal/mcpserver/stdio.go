package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes bounds one inbound JSON-RPC message when no limit is
// configured (mcp.max_message_bytes). A post is 280 characters; a megabyte
// leaves room for any legitimate call while one client cannot make the
// server hold gigabytes.
const DefaultMaxMessageBytes = 1 << 20

// MaxNestingDepth is the deepest nesting of objects and arrays a message may
// have. The SDK's decoder refuses more than 1000 levels by ending the whole
// session, so the guard answers deeper messages itself and sits well below
// that limit; real MCP messages nest a handful of levels.
const MaxNestingDepth = 128

// StdioOptions configure the stdio transport.
type StdioOptions struct {
	// MaxMessageBytes bounds one inbound line; 0 means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// Written, when set, is called after each message the server writes
	// (Starting.Written).
	Written func()
}

func (o StdioOptions) maxBytes() int {
	if o.MaxMessageBytes <= 0 {
		return DefaultMaxMessageBytes
	}
	return int(o.MaxMessageBytes)
}

// GuardedStdio is a stdio transport that answers malformed lines with a
// JSON-RPC error instead of ending the session: one bad line from a client
// must not take the server down. It hands the SDK messages it has decoded
// itself (see checkMessage), so a message is decoded once, by the guard,
// rather than by the guard and then twice more by the SDK's stdio reader.
func GuardedStdio(in io.Reader, out io.Writer, opts StdioOptions) mcp.Transport {
	return &guardedTransport{in: in, out: out, limit: opts.maxBytes(), written: opts.Written}
}

type guardedTransport struct {
	in      io.Reader
	out     io.Writer
	limit   int
	written func()
}

func (t *guardedTransport) Connect(context.Context) (mcp.Connection, error) {
	neg := &negotiation{}
	w := &lockedWriter{w: t.out, neg: neg}
	// readLine copies every line out of the reader, so a bigger buffer
	// only saves reads of long lines, and stays allocated for the session.
	g := &lineGuard{r: bufio.NewReader(t.in), out: w, limit: t.limit, neg: neg}
	c := &guardedConn{w: w, written: t.written, incoming: make(chan readResult), closed: make(chan struct{})}
	go c.readLoop(g)
	return c, nil
}

// guardedConn is one stdio session's connection. Lines are read in their
// own goroutine, so that Close ends a Read waiting for input: a read of
// stdin cannot be interrupted.
type guardedConn struct {
	w         *lockedWriter
	written   func()
	incoming  chan readResult
	closed    chan struct{}
	closeOnce sync.Once
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

func (c *guardedConn) readLoop(g *lineGuard) {
	for {
		msg, err := g.next()
		select {
		case c.incoming <- readResult{msg, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *guardedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *guardedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	if _, err := c.w.Write(append(data, '\n')); err != nil {
		return err
	}
	if c.written != nil {
		c.written()
	}
	return nil
}

func (c *guardedConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *guardedConn) SessionID() string { return "" }

// ServeStdio runs srv on stdin/stdout until ctx ends or the client leaves.
func ServeStdio(ctx context.Context, srv *mcp.Server, opts StdioOptions) error {
	err := srv.Run(ctx, GuardedStdio(os.Stdin, os.Stdout, opts))
	if err != nil && (ctx.Err() != nil || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// lockedWriter makes every Write atomic, so error replies written here and
// messages written by the SDK never interleave within a line. It shows
// the server's answers to neg until the session's version is agreed.
type lockedWriter struct {
	mu  sync.Mutex
	w   io.Writer
	neg *negotiation
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.neg != nil {
		l.neg.answered(p)
	}
	return l.w.Write(p)
}

// negotiation follows a stdio session's initialize exchange: the request's
// id as the client sent it, then the protocol version the server answered.
// A session knows its version, so it never has to fall back to guessing it.
type negotiation struct {
	mu      sync.Mutex
	initID  json.RawMessage
	version string
}

// asked notes the id of an initialize request passing to the server.
func (n *negotiation) asked(id json.RawMessage) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.version == "" && n.initID == nil {
		n.initID = bytes.Clone(id)
	}
}

// answered looks for the answer to the initialize request in out, the
// server's output, until it has gone by.
func (n *negotiation) answered(out []byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.initID == nil || n.version != "" {
		return
	}
	for line := range bytes.SplitSeq(out, []byte("\n")) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &m) == nil && bytes.Equal(m.ID, n.initID) && m.Result.ProtocolVersion != "" {
			n.version, n.initID = m.Result.ProtocolVersion, nil
			return
		}
	}
}

// agreed is the session's protocol version; empty before initialize is
// answered.
func (n *negotiation) agreed() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.version
}

type lineGuard struct {
	r     *bufio.Reader
	out   io.Writer
	limit int
	neg   *negotiation
}

// next is the next message to pass on; every line before it that is not
// one has been answered with an error.
func (g *lineGuard) next() (jsonrpc.Message, error) {
	for {
		line, head, tooLong, err := g.readLine()
		var msg jsonrpc.Message
		switch {
		case tooLong:
			g.reject(leadingID(head), -32600, tooLargeMessage(int64(g.limit)))
		case isBatch(line):
			g.reject(nil, -32600, g.batchRefusal())
		case len(bytes.TrimSpace(line)) > 0:
			m, id, code, text, ok := checkMessage(line)
			if !ok {
				g.reject(id, code, text)
				break
			}
			if req, isReq := m.(*jsonrpc.Request); isReq && req.Method == "initialize" {
				g.neg.asked(id)
			}
			msg = m
		}
		if msg != nil {
			// A read error after the message comes with the next call,
			// which reads nothing more.
			return msg, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// isBatch reports a line that holds a JSON-RPC batch: a valid JSON array.
func isBatch(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) > 0 && t[0] == '[' && nestingDepth(t) <= MaxNestingDepth && json.Valid(t)
}

// batchRefusal answers a batch. A session that agreed on a version that
// has no batches is told so in the words the SDK uses over HTTP; the
// stdio transport never takes batches, whatever the version.
func (g *lineGuard) batchRefusal() string {
	if v := g.neg.agreed(); v >= noBatchVersion {
		return noBatchMessage(v)
	}
	return "invalid request: JSON-RPC batches are not supported; send one message per line"
}

// tooLargeMessage is the error text for a message over the limit, on every
// transport.
func tooLargeMessage(limit int64) string {
	return fmt.Sprintf("invalid request: message larger than the %d-byte limit (mcp.max_message_bytes)", limit)
}

// readLine reads one line. A line over the limit is skipped chunk by chunk
// without being held: only its first chunk is kept (head), so the error
// reply can carry the request's id when it comes early, as it does from
// every SDK.
func (g *lineGuard) readLine() (line, head []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := g.r.ReadSlice('\n')
		size := len(buf) + len(chunk)
		if bytes.HasSuffix(chunk, []byte("\n")) {
			size-- // the line ends here; the newline is not part of the message
		}
		switch {
		case tooLong:
		case size > g.limit:
			tooLong = true
			head = buf
			if len(head) == 0 {
				head = chunk
			}
			head = bytes.Clone(head[:min(len(head), maxHeadBytes)])
			buf = nil
		default:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, head, true, err
		}
		return buf, nil, false, err
	}
}

// maxHeadBytes is how much of an over-long message is kept to find its id.
const maxHeadBytes = 64 << 10

// leadingID returns the id of a JSON-RPC object whose text is cut short,
// when the id comes before the cut; nil otherwise.
func leadingID(prefix []byte) json.RawMessage {
	prefix = prefix[:min(len(prefix), maxHeadBytes)]
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if tok == "id" {
			// A number cut off by the end of the prefix decodes as a
			// shorter number; only an id something follows is whole.
			rest := bytes.TrimLeft(prefix[dec.InputOffset():], " \t\r\n")
			if len(rest) == 0 || !validID(v) {
				return nil
			}
			return v
		}
	}
	return nil
}

// nestingDepth is the deepest nesting of objects and arrays in data, counted
// outside strings the way the SDK's decoder counts it.
func nestingDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return deepest
}

// checkMessage accepts one JSON-RPC 2.0 object whose id, if any, is a
// string or an integer the SDK can echo back unchanged, and which the SDK's
// own decoder accepts; anything else gets a parse or invalid-request error
// here, because the SDK would end the whole session on it. It returns the
// message as the SDK's decoder decodes it, and the id as the line spells
// it (for a refused line, the id to answer with, if any).
func checkMessage(line []byte) (msg jsonrpc.Message, id json.RawMessage, code int, text string, ok bool) {
	trimmed := bytes.TrimSpace(line)
	if d := nestingDepth(trimmed); d > MaxNestingDepth {
		return nil, leadingID(trimmed), -32600, fmt.Sprintf("invalid request: JSON nested %d levels deep; the limit is %d", d, MaxNestingDepth), false
	}
	if !json.Valid(trimmed) {
		return nil, nil, -32700, "parse error: the line is not valid JSON", false
	}
	if trimmed[0] == '[' {
		return nil, nil, -32600, "invalid request: JSON-RPC batches are not supported; send one message per line", false
	}
	var members map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &members) != nil {
		return nil, nil, -32600, "invalid request: a JSON-RPC message must be an object", false
	}
	// The SDK decodes more strictly than encoding/json (member names match
	// case-sensitively, for one); whatever it would refuse is answered here.
	// A request or notification whose members are all spelled as JSON-RPC
	// spells them, with plain strings, is made into the SDK's message from
	// these members; only other messages pay for a second decoding of the
	// line and a run of the SDK's decoder, which takes a fresh 32 KiB buffer
	// per message.
	m, plain := plainRequest(members)
	if !plain && json.Unmarshal(trimmed, &m) != nil {
		return nil, nil, -32600, "invalid request: a JSON-RPC message must be an object", false
	}
	idOK := validID(m.ID)
	echo := m.ID
	if !idOK {
		echo = nil
	}
	switch {
	case m.JSONRPC != "2.0":
		return nil, echo, -32600, `invalid request: "jsonrpc" must be "2.0"`, false
	case !idOK:
		return nil, nil, -32600, "invalid request: id must be a string or an integer", false
	case m.Method == nil && m.Result == nil && m.Error == nil:
		return nil, echo, -32600, "invalid request: no method", false
	case m.Method == nil && len(m.ID) == 0:
		return nil, nil, -32600, "invalid request: a response needs the id of the request it answers", false
	}
	if plain {
		if req, ok := plainMessage(m.ID, members["method"], members["params"]); ok {
			return req, m.ID, 0, "", true
		}
	}
	msg, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		return nil, echo, -32600, "invalid request: " + err.Error(), false
	}
	return msg, m.ID, 0, "", true
}

// rpcFields are the members of a JSON-RPC message the guard looks at.
type rpcFields struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// plainRequest reads the fields of a request or notification whose every
// member is one a request carries, spelled exactly so, and whose method
// and version are strings; plain is false for any other message.
func plainRequest(members map[string]json.RawMessage) (m rpcFields, plain bool) {
	for name := range members {
		switch name {
		case "jsonrpc", "id", "method", "params":
		default:
			return rpcFields{}, false
		}
	}
	method, ok := members["method"]
	if !ok || method[0] != '"' {
		return rpcFields{}, false
	}
	if v, ok := members["jsonrpc"]; ok && json.Unmarshal(v, &m.JSONRPC) != nil {
		return rpcFields{}, false
	}
	m.Method, m.ID = new(string), members["id"]
	return m, true
}

// plainMessage is the request the SDK's decoder makes of a checked plain
// request, when its method and id are plain strings or an integer and its
// params, if any, an object or array; ok is false otherwise, and the SDK's
// decoder decides. The SDK reads a numeric id as a float64, and so does
// this.
func plainMessage(rawID, rawMethod, params json.RawMessage) (req *jsonrpc.Request, ok bool) {
	method, ok := plainString(rawMethod)
	if !ok {
		return nil, false
	}
	if len(params) > 0 && params[0] != '{' && params[0] != '[' {
		return nil, false
	}
	var raw any
	switch {
	case len(rawID) == 0:
	case rawID[0] == '"':
		s, ok := plainString(rawID)
		if !ok {
			return nil, false
		}
		raw = s
	default:
		f, err := strconv.ParseFloat(string(rawID), 64)
		if err != nil {
			return nil, false
		}
		raw = f
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil {
		return nil, false
	}
	return &jsonrpc.Request{ID: id, Method: method, Params: params}, true
}

// plainString is the JSON string s holds when it has no escapes and is
// valid UTF-8: then its text is its value, whichever decoder reads it.
func plainString(s json.RawMessage) (string, bool) {
	if len(s) < 2 || s[0] != '"' || bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return "", false
	}
	return string(s[1 : len(s)-1]), true
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
