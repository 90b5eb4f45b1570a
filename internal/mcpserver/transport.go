package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the HTTP transport limits; HTTPOptions fields left at zero
// take these.
const (
	DefaultMaxConnections     = 128
	DefaultMaxSessions        = 128
	DefaultSessionIdleTimeout = 30 * time.Minute
)

// Timeouts of the HTTP transport. A connection that has not sent its
// headers within readHeaderTimeout, or sits idle between requests for
// idleTimeout, is closed, so a client cannot hold descriptors by opening
// connections and sending nothing. Writes get writeTimeout each rather than
// per response: a streamed (SSE) response lives as long as its client keeps
// reading it.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 60 * time.Second
	maxHeaderBytes    = 64 << 10
)

// HTTPOptions configure the Streamable HTTP transport.
type HTTPOptions struct {
	Listen string // host:port
	Token  string // bearer token every request must carry
	// TokenFile is where the token is kept; a 401 names it so the caller
	// knows which file to read. Empty names ~/.tuitbot/mcp_token.
	TokenFile string
	Logger    *slog.Logger
	// Ready, if set, receives the bound address once listening.
	Ready func(addr string)
	// MaxConnections caps open connections; past it the connection idle
	// longest (or still silent since it was accepted) is closed. It is
	// lowered to half the process's open-file limit when that is smaller.
	MaxConnections int
	// MaxSessions caps MCP sessions; past it the least recently used one is
	// closed and its client gets 404 on its next request.
	MaxSessions int
	// SessionIdleTimeout closes a session that received no request for
	// this long.
	SessionIdleTimeout time.Duration
	// MaxMessageBytes bounds one request body (one JSON-RPC message).
	MaxMessageBytes int64
	// Healthy, when set, decides what GET /healthz says: ok or degraded.
	// Nil means ok whenever the server answers.
	Healthy func(ctx context.Context) bool
	// Metrics, when set, is served at /metrics behind the bearer token, or
	// without it when MetricsPublic is set (loopback listeners only).
	Metrics       http.Handler
	MetricsPublic bool
	// Mounts are served beside the MCP endpoint, each under its path
	// prefix ("/ui": the prefix and everything below it), without the
	// bearer token: a mounted site authenticates its own requests (the
	// review page's one-time login). Writes get per-write deadlines, as
	// the MCP endpoint's do, so event streams may stay open.
	Mounts map[string]http.Handler
}

func (o HTTPOptions) withDefaults() HTTPOptions {
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = DefaultSessionIdleTimeout
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// HTTPHandler wraps the MCP handler with bearer authentication, Origin
// checks, the message size limit, session limits and per-write deadlines.
// Token, Logger, MaxSessions, SessionIdleTimeout and MaxMessageBytes of
// opts apply.
func HTTPHandler(srv *mcp.Server, opts HTTPOptions) http.Handler {
	opts = opts.withDefaults()
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Logger:              opts.Logger,
		SessionTimeout:      opts.SessionIdleTimeout,
		MaxRequestBodyBytes: opts.MaxMessageBytes,
	})
	sessions := newSessionLRU(srv, opts.MaxSessions, opts.Logger)
	versions := newSessionVersions(srv, opts.MaxSessions)
	srv.AddReceivingMiddleware(versions.record)
	return opsRoutes(guard(limitBody(versions.fill(sessions.wrap(writeDeadlines(inner))), opts.MaxMessageBytes), opts.Token, opts.TokenFile), opts)
}

// noBatchVersion is the first protocol version without JSON-RPC batches.
const noBatchVersion = "2025-06-18"

// noBatchMessage refuses a batch in a session of version v, in the SDK's
// words for a request that names its version.
func noBatchMessage(v string) string {
	return fmt.Sprintf("JSON-RPC batching is not supported in %s and later (request version: %s)", noBatchVersion, v)
}

// protocolVersionHeader names a request's protocol version (2025-06-18
// and later).
const protocolVersionHeader = "Mcp-Protocol-Version"

// sessionVersions remembers the protocol version each HTTP session agreed
// on. The SDK takes a request without the version header for 2025-03-26,
// the spec's fallback for a server with no other way to know; a session
// knows its version, so a batch in a session that agreed on a version
// without batches is given that version, and the SDK refuses it as it
// refuses one that names its version.
type sessionVersions struct {
	srv *mcp.Server
	max int

	mu   sync.Mutex
	byID map[string]string
}

func newSessionVersions(srv *mcp.Server, maxSessions int) *sessionVersions {
	return &sessionVersions{srv: srv, max: 2 * maxSessions, byID: map[string]string{}}
}

// record is server middleware that notes the version the server answered
// an initialize request with.
func (v *sessionVersions) record(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && ir.ProtocolVersion != "" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
				v.set(ss.ID(), ir.ProtocolVersion)
			}
		}
		return res, err
	}
}

func (v *sessionVersions) set(id, version string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.byID) >= v.max {
		// Forget the sessions the SDK no longer has.
		live := map[string]bool{}
		for ss := range v.srv.Sessions() {
			live[ss.ID()] = true
		}
		for k := range v.byID {
			if !live[k] {
				delete(v.byID, k)
			}
		}
	}
	v.byID[id] = version
}

func (v *sessionVersions) get(id string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.byID[id]
}

// fill gives a batch without a version header its session's version. It
// runs after limitBody, so the body is already in memory.
func (v *sessionVersions) fill(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionIDHeader)
		if r.Method != http.MethodPost || id == "" || r.Header.Get(protocolVersionHeader) != "" || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.Header().Set("Connection", "close")
			http.Error(w, "could not read the request body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
			if version := v.get(id); version >= noBatchVersion {
				r.Header.Set(protocolVersionHeader, version)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// guard checks Origin, then the bearer token with the SDK's
// auth.RequireBearerToken.
//
// The Origin check stays by hand: net/http's CrossOriginProtection lets
// safe methods (the GET of an event stream) through, judges Origin only
// against Host, and refuses a loopback page on another port (a local
// tool's UI), which this server admits; MCP clients are not browsers,
// and what is refused is any origin that is not loopback, on every method.
func guard(next http.Handler, token, tokenFile string) http.Handler {
	want := []byte("Bearer " + token)
	if tokenFile == "" {
		tokenFile = "~/.tuitbot/mcp_token"
	}
	unauthorized := fmt.Sprintf("missing or wrong bearer token (send Authorization: Bearer <the contents of %s>)", tokenFile)
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		// The SDK reads the scheme in any case and splits on any space;
		// this server takes exactly "Bearer <token>", so the whole header
		// is compared, in constant time.
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			return nil, auth.ErrInvalidToken
		}
		// One static token: it never expires and names one user, the
		// owner of the token file, to whom the SDK binds each session.
		return &auth.TokenInfo{UserID: "mcp_token"}, nil
	}
	// A request that passes reaches next with the writer it came with.
	pass := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rw, ok := w.(*refusalWriter); ok {
			w = rw.ResponseWriter
		}
		next.ServeHTTP(w, r)
	})
	bearer := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(pass)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Origin first: a browser page on another origin must not even learn
		// whether its guessed token was right.
		if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
			// Refused requests close their connection: a client without
			// the token must not keep a descriptor open by idling on it.
			w.Header().Set("Connection", "close")
			http.Error(w, "forbidden origin", http.StatusForbidden)
			return
		}
		bearer.ServeHTTP(&refusalWriter{ResponseWriter: w, unauthorized: unauthorized}, r)
	})
}

// refusalWriter carries the SDK's bearer refusals (only they are written
// through it) in this server's form: the connection closes, and a 401
// carries a Bearer challenge and a text that names the token file.
type refusalWriter struct {
	http.ResponseWriter
	unauthorized string
	replaced     bool
}

func (w *refusalWriter) WriteHeader(code int) {
	// Refused requests close their connection: a client without the token
	// must not keep a descriptor open by idling on it.
	w.Header().Set("Connection", "close")
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tuitbot"`)
		w.ResponseWriter.WriteHeader(code)
		_, _ = io.WriteString(w.ResponseWriter, w.unauthorized+"\n")
		w.replaced = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write drops the SDK's own text of a 401, which WriteHeader replaced.
func (w *refusalWriter) Write(p []byte) (int, error) {
	if w.replaced {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// limitBody reads the whole request body up to limit before the SDK sees
// it. A larger body is answered with 413 and a JSON-RPC error that states
// the limit and carries the request's id when it comes early in the body,
// so an SDK client fails that one call and keeps its session. Only the
// start of a body that declares itself too large is read.
func limitBody(next http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > limit {
			tooLarge(w, readLeadingID(r.Body), limit)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				tooLarge(w, leadingID(body), limit)
				return
			}
			w.Header().Set("Connection", "close")
			http.Error(w, "could not read the request body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// readLeadingID reads the start of a body only until the request's id has
// gone by (or maxHeadBytes): the rest of a body declared too large is
// never read.
func readLeadingID(body io.Reader) json.RawMessage {
	head := make([]byte, 0, 4096)
	buf := make([]byte, 4096)
	for len(head) < maxHeadBytes {
		n, err := body.Read(buf[:min(len(buf), maxHeadBytes-len(head))])
		head = append(head, buf[:n]...)
		if id := leadingID(head); id != nil {
			return id
		}
		if err != nil {
			break
		}
	}
	return nil
}

func tooLarge(w http.ResponseWriter, id json.RawMessage, limit int64) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32600, "message": tooLargeMessage(limit)},
	})
	if err != nil {
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message too large"}}`)
	}
	// The rest of the body is not read, so the connection cannot be
	// reused.
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = w.Write(b)
}

// writeDeadlines replaces the server-wide write timeout of an authenticated
// request with a deadline per write: a tool call may take longer than
// writeTimeout before its answer, and an SSE stream lives for as long as the
// client reads it, but a client that stops reading is cut off writeTimeout
// after the write it stalled.
func writeDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.SetWriteDeadline(time.Time{}); err != nil {
			// The writer cannot take deadlines (a test recorder); the
			// server-wide timeout stays.
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: rc}, r)
	})
}

type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (w *deadlineWriter) extend() { _ = w.rc.SetWriteDeadline(time.Now().Add(writeTimeout)) }

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(p)
}

func (w *deadlineWriter) Flush() {
	w.extend()
	_ = w.rc.Flush()
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func loopbackOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ServeHTTP listens on opts.Listen and serves until ctx ends, then shuts
// down gracefully.
func ServeHTTP(ctx context.Context, srv *mcp.Server, opts HTTPOptions) error {
	if opts.Token == "" {
		return errors.New("HTTP transport needs a bearer token")
	}
	opts = opts.withDefaults()
	host, _, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: want host:port such as 127.0.0.1:8765: %w", opts.Listen, err)
	}
	if !loopbackHost(host) {
		if opts.Metrics != nil && opts.MetricsPublic {
			return fmt.Errorf("--metrics-public serves /metrics without the token, so only on a loopback --listen address, not %s", opts.Listen)
		}
		opts.Logger.Warn("listening on a non-loopback address because --listen asked for it", "listen", opts.Listen)
	}
	maxConns := opts.MaxConnections
	if fdCap := openFileLimit() / 2; fdCap > 0 && fdCap < maxConns {
		opts.Logger.Warn("lowering the HTTP connection cap to half the open-file limit",
			"mcp.http_max_connections", maxConns, "effective", fdCap)
		maxConns = fdCap
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.Listen, err)
	}
	lim := newConnLimiter(ln, maxConns)
	hs := &http.Server{
		Handler:           HTTPHandler(srv, opts),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnState:         lim.track,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug),
	}
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(lim) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hs.SetKeepAlivesEnabled(false)
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(sctx) }()
	// Shutdown stops accepting at once but counts a connection that never
	// sent a request as busy for five seconds; close those as they appear
	// (one may still be accepted while the listener closes).
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		lim.closeUnstarted()
		select {
		case err := <-shut:
			if err != nil {
				return fmt.Errorf("shutdown: %w", err)
			}
			return nil
		case <-tick.C:
		}
	}
}

// LoadOrCreateToken reads the bearer token from path, creating a random one
// (0600) when the file does not exist. A token file others can read is
// refused.
func LoadOrCreateToken(path string, create bool) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		st, serr := os.Stat(path)
		if serr != nil {
			return "", serr
		}
		if st.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("token file %s is readable by others; run `chmod 600 %s`", path, path)
		}
		tok := strings.TrimSpace(string(b))
		if len(tok) < 16 {
			return "", fmt.Errorf("token file %s holds a token shorter than 16 characters; write a longer random token", path)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) || !create {
		return "", fmt.Errorf("read token file %s: %w", path, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("create token file %s: %w", path, err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", err
	}
	return tok, f.Close()
}
