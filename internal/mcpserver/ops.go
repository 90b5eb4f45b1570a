package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// Paths the HTTP transport serves beside the MCP endpoint.
const (
	HealthPath  = "/healthz"
	MetricsPath = "/metrics"
)

// healthTimeout bounds one health decision: a probe that hangs must not
// hang the container's health check.
const healthTimeout = 3 * time.Second

// opsRoutes serves /healthz without authentication and /metrics behind the
// bearer token (unless public); every other path is the MCP endpoint.
func opsRoutes(mcpHandler http.Handler, opts HTTPOptions) http.Handler {
	metrics := opts.Metrics
	if metrics != nil && !opts.MetricsPublic {
		metrics = guard(metrics, opts.Token, opts.TokenFile)
	}
	health := healthHandler(opts.Healthy)
	mounts := make(map[string]http.Handler, len(opts.Mounts))
	for prefix, h := range opts.Mounts {
		mounts[prefix] = writeDeadlines(h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for prefix, h := range mounts {
			if r.URL.Path == prefix || strings.HasPrefix(r.URL.Path, prefix+"/") {
				h.ServeHTTP(w, r)
				return
			}
		}
		switch {
		case r.URL.Path == HealthPath:
			health.ServeHTTP(w, r)
			return
		case r.URL.Path == MetricsPath && metrics != nil:
			metrics.ServeHTTP(w, r)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
}

// healthHandler answers GET /healthz with "ok" (200) or "degraded" (503)
// and nothing else: it is unauthenticated, so it must not tell a stranger
// which service is down or where the files are.
func healthHandler(healthy func(context.Context) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		ok := true
		if healthy != nil {
			ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
			ok = healthy(ctx)
			cancel()
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("degraded\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
}

// MetricsOptions configure the metrics listener of a stdio server.
type MetricsOptions struct {
	Listen  string // host:port on loopback
	Handler http.Handler
	// Token guards /metrics unless Public; TokenFile is where it is kept,
	// named in the 401 answer.
	Token     string
	TokenFile string
	Public    bool
	// Healthy decides /healthz, as on the HTTP transport.
	Healthy func(ctx context.Context) bool
	Logger  *slog.Logger
	// Ready, if set, receives the bound address once listening.
	Ready func(addr string)
}

// ServeMetrics serves /metrics and /healthz on a loopback address until
// ctx ends. It refuses any other address: a stdio server has no network
// surface of its own, and metrics name the tools an agent uses.
func ServeMetrics(ctx context.Context, o MetricsOptions) error {
	if o.Handler == nil {
		return errors.New("metrics listener needs a handler")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return fmt.Errorf("--metrics-listen %q: want host:port such as 127.0.0.1:9464: %w", o.Listen, err)
	}
	if !loopbackHost(host) {
		return fmt.Errorf("--metrics-listen %q: metrics are served on loopback only (127.0.0.1, ::1 or localhost)", o.Listen)
	}
	if !o.Public && o.Token == "" {
		return errors.New("metrics listener needs the bearer token unless --metrics-public")
	}
	metrics := o.Handler
	if !o.Public {
		metrics = guard(metrics, o.Token, o.TokenFile)
	}
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, metrics)
	mux.Handle(HealthPath, healthHandler(o.Healthy))
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("metrics listen on %s: %w", o.Listen, err)
	}
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
	}
	if o.Ready != nil {
		o.Ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("metrics shutdown: %w", err)
	}
	return nil
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
