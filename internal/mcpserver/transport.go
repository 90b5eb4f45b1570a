package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the Streamable HTTP transport.
type HTTPOptions struct {
	Listen string // host:port
	Token  string // bearer token every request must carry
	Logger *slog.Logger
	// Ready, if set, receives the bound address once listening.
	Ready func(addr string)
}

// HTTPHandler wraps the MCP handler with bearer authentication and Origin
// checks.
func HTTPHandler(srv *mcp.Server, token string, log *slog.Logger) http.Handler {
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: log})
	return guard(inner, token)
}

func guard(next http.Handler, token string) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Origin first: a browser page on another origin must not even learn
		// whether its guessed token was right.
		if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
			http.Error(w, "forbidden origin", http.StatusForbidden)
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tuitbot"`)
			http.Error(w, "missing or wrong bearer token (see ~/.tuitbot/mcp_token)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

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
	host, _, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: want host:port such as 127.0.0.1:8765: %w", opts.Listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) && opts.Logger != nil {
		opts.Logger.Warn("listening on a non-loopback address because --listen asked for it", "listen", opts.Listen)
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.Listen, err)
	}
	hs := &http.Server{
		Handler:           HTTPHandler(srv, opts.Token, opts.Logger),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
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
