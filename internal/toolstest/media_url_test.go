package toolstest

import (
	"bytes"
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/safefetch"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// mediaServer is a loopback TLS server with the pictures and traps the
// tests download.
type mediaServer struct {
	*httptest.Server
	hits    atomic.Int64
	written atomic.Int64 // bytes of the endless body actually sent
}

func startMediaServer(t *testing.T, png []byte) *mediaServer {
	t.Helper()
	ms := &mediaServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/chart.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	})
	mux.HandleFunc("/page.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("<!DOCTYPE html><html><body>not a picture</body></html>"))
	})
	mux.HandleFunc("/metadata.png", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://169.254.169.254/latest/meta-data/iam/security-credentials/", http.StatusFound)
	})
	mux.HandleFunc("/huge.png", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the size shows only while reading. The body
		// would go on far past any limit.
		w.Header().Set("Content-Type", "image/png")
		chunk := append(append([]byte{}, png...), bytes.Repeat([]byte{0}, 64<<10)...)
		for range 1024 {
			n, err := w.Write(chunk)
			ms.written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	ms.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ms.hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(ms.Close)
	return ms
}

// fetchOptions trusts the server's certificate, lets its port through and
// resolves names from names.
func (ms *mediaServer) fetchOptions(t *testing.T, names map[string]string) func(*safefetch.Options) {
	u, err := url.Parse(ms.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	pool := x509.NewCertPool()
	pool.AddCert(ms.Certificate())
	return func(o *safefetch.Options) {
		o.RootCAs = pool
		o.Ports = []int{port, 443}
		o.Resolver = fixedResolver(names)
	}
}

type fixedResolver map[string]string

func (f fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net404{host}
}

type net404 struct{ host string }

func (e *net404) Error() string { return "no such host " + e.host }

func allowLoopback(c *config.Config) { c.Media.URLAllowPrivate = []string{"127.0.0.0/8"} }

// TestUploadMediaFromURL: a picture on a TLS server the configuration lets
// through is uploaded with its alt text; loopback without that allowance, a
// name resolving to a private address, a redirect to the metadata address,
// HTML declared as PNG and an endless body are all refused without an
// upload; bad URLs name the field; the default policy gates it like
// x_upload_media.
func TestUploadMediaFromURL(t *testing.T) {
	png := pngBytes(t, 41)
	ms := startMediaServer(t, png)
	e := newEnv(t, envOptions{permissive: true, configure: allowLoopback,
		mediaFetch: ms.fetchOptions(t, map[string]string{"media.example": "10.0.0.1"})})

	t.Run("uploads the picture with its alt text", func(t *testing.T) {
		before := e.counters()
		var m actions.URLMediaResult
		r := executed(t, e.call("x_upload_media_from_url", map[string]any{"url": ms.URL + "/chart.png", "alt_text": "A rising chart"}), &m)
		e.requireDelta(before, map[string]int64{xsim.CountMediaUploaded: 1, xsim.CountMediaMetadata: 1})
		if m.MediaType != "image/png" || m.SizeBytes != int64(len(png)) || m.AltText != "A rising chart" || m.SourceURL != ms.URL+"/chart.png" {
			t.Fatalf("upload data %+v", m)
		}
		xm, ok := e.mediaByID(m.MediaID)
		if !ok || xm.AltText != "A rising chart" || xm.State != "succeeded" {
			t.Fatalf("emulator media %+v (found %t), want the alt text", xm, ok)
		}
		if r.Meta.Rollback == nil || r.Meta.Rollback.Reversible || r.Meta.Rollback.Note == "" {
			t.Fatalf("rollback %+v, want an irreversible note", r.Meta.Rollback)
		}
	})

	refused := []struct {
		name   string
		env    *env
		url    string
		code   apperr.Code
		reason string
	}{
		{"loopback", newEnv(t, envOptions{permissive: true, mediaFetch: ms.fetchOptions(t, nil)}),
			ms.URL + "/chart.png", apperr.MediaURLBlocked, safefetch.ReasonLoopback},
		{"a name resolving to 10.0.0.1", e,
			"https://media.example/chart.png", apperr.MediaURLBlocked, safefetch.ReasonPrivate},
		{"a redirect to 169.254.169.254", e,
			ms.URL + "/metadata.png", apperr.MediaURLBlocked, safefetch.ReasonLinkLocal},
		{"plain http", e, "http://media.example/chart.png", apperr.MediaURLBlocked, safefetch.ReasonScheme},
		{"credentials", e, "https://user:secret@media.example/chart.png", apperr.MediaURLBlocked, safefetch.ReasonUserinfo},
		{"HTML declared as PNG", e, ms.URL + "/page.png", apperr.UnsupportedMedia, ""},
		{"an endless body", e, ms.URL + "/huge.png", apperr.MediaTooLarge, ""},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.env.counters()
			r := tt.env.call("x_upload_media_from_url", map[string]any{"url": tt.url, "alt_text": "x"}).fails(t, tt.code).mentions(t, "url")
			if got, _ := r.extra("reason").(string); got != tt.reason {
				t.Errorf("reason %q, want %q", got, tt.reason)
			}
			tt.env.requireDelta(before, map[string]int64{})
		})
	}
	// The endless body stopped being sent once the client had read past
	// the limit and hung up; what the sockets buffered is all that went.
	if w := ms.written.Load(); w >= 64<<20 {
		t.Errorf("the server sent all %d bytes of the endless body", w)
	}

	t.Run("bad input names the field", func(t *testing.T) {
		for _, u := range []string{"", "ftp://media.example/a.png", "/relative.png"} {
			e.call("x_upload_media_from_url", map[string]any{"url": u}).fails(t, apperr.InvalidInput).mentions(t, "url")
		}
	})

	t.Run("the default policy gates it like x_upload_media, before any download", func(t *testing.T) {
		gated := newEnv(t, envOptions{configure: allowLoopback, mediaFetch: ms.fetchOptions(t, nil)})
		hits := ms.hits.Load()
		var q, qFile routed
		gated.call("x_upload_media_from_url", map[string]any{"url": ms.URL + "/chart.png"}).ok(t, &q)
		path := writeFile(t, gated.Media+"/gated.png", png)
		gated.call("x_upload_media", map[string]any{"file_path": path}).ok(t, &qFile)
		if q.Routed != qFile.Routed || !q.Routed || q.ApprovalID == 0 || ms.hits.Load() != hits {
			t.Fatalf("from_url answered %+v, x_upload_media %+v, %d downloads; want both routed to approval and nothing downloaded",
				q, qFile, ms.hits.Load()-hits)
		}
	})
}

// TestSignedMediaURLLeavesNoSecret: a presigned URL's query authorizes the
// download, so after an upload from one no audit field, no other stored
// row, no log line and no tool output holds a value of its query, while
// the audit still says where the media came from.
func TestSignedMediaURLLeavesNoSecret(t *testing.T) {
	const sig, tok = "SIGs3cr3tf00d", "TOKs3cr3tbeef"
	png := pngBytes(t, 43)
	ms := startMediaServer(t, png)
	var logs bytes.Buffer
	var logMu sync.Mutex
	e := newEnv(t, envOptions{permissive: true, configure: allowLoopback, mediaFetch: ms.fetchOptions(t, nil),
		logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	signed := ms.URL + "/chart.png?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=" + sig + "&token=" + tok + "#frag=" + tok

	var m actions.URLMediaResult
	r := executed(t, e.call("x_upload_media_from_url", map[string]any{"url": signed, "alt_text": "A chart"}), &m)
	if !strings.HasPrefix(m.SourceURL, ms.URL+"/chart.png?") || !strings.Contains(m.SourceURL, "X-Amz-Signature=") {
		t.Errorf("source_url %q, want the URL with its parameter names", m.SourceURL)
	}
	a := e.audit(r.Meta.CorrelationID)
	if !strings.Contains(a.ParamsSummary, "/chart.png") {
		t.Errorf("audit params %q, want where the media came from", a.ParamsSummary)
	}
	var recent json.RawMessage
	e.call("get_recent_mutations", map[string]any{}).ok(t, &recent)

	where := map[string]string{"tool output": string(r.Data), "recent mutations": string(recent)}
	ab, _ := json.Marshal(a)
	where["audit entry"] = string(ab)
	for table, text := range dumpTables(t, e.App.DB.DB) {
		where["table "+table] = text
	}
	logMu.Lock()
	where["log"] = logs.String()
	logMu.Unlock()
	for name, text := range where {
		for _, secret := range []string{sig, tok} {
			if strings.Contains(text, secret) {
				i := strings.Index(text, secret)
				t.Errorf("%s holds the signed URL's secret %s: ...%s...", name, secret, text[max(0, i-300):min(len(text), i+50)])
			}
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// dumpTables renders every row of every table of the SQLite database as
// text, by table.
func dumpTables(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, table := range tables {
		rs, err := db.QueryContext(t.Context(), `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		var b strings.Builder
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%v\t", v)
			}
			b.WriteString("\n")
		}
		if err := rs.Close(); err != nil {
			t.Fatal(err)
		}
		out[table] = b.String()
	}
	return out
}
