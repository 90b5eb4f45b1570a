package safefetch

import (
	"bytes"
	"context"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

var pngHead = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// fixedLimit allows n bytes of any declared type.
func fixedLimit(n int64) Limit { return func(string) (int64, error) { return n, nil } }

// mapResolver answers from a fixed table, as a DNS server an attacker
// controls would.
type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, &netErr{host}
}

type netErr struct{ host string }

func (e *netErr) Error() string { return "no such host " + e.host }

// tlsServer starts a loopback TLS server and a fetcher allowed to reach it
// (its network and port), trusting its certificate.
func tlsServer(t *testing.T, h http.Handler, adjust func(*Options)) (*httptest.Server, *Fetcher) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	o := Options{Policy: Policy{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Ports: []int{port, 443}},
		RootCAs: pool}
	if adjust != nil {
		adjust(&o)
	}
	return srv, New(o)
}

func wantBlocked(t *testing.T, err error, reason string) {
	t.Helper()
	if apperr.CodeOf(err) != apperr.MediaURLBlocked || Reason(err) != reason {
		t.Fatalf("err = %v (reason %q), want media_url_blocked for %s", err, Reason(err), reason)
	}
}

func TestGetDownloadsFromAllowedServer(t *testing.T) {
	body := append(append([]byte{}, pngHead...), bytes.Repeat([]byte{7}, 100)...)
	srv, f := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png; charset=binary")
		_, _ = w.Write(body)
	}), func(o *Options) {
		o.Resolver = mapResolver{"example.com": {netip.MustParseAddr("127.0.0.1")}}
	})
	// A proxy from the environment would connect on the fetcher's behalf;
	// it must be ignored. (Go never proxies loopback addresses, so the
	// request names the server by a name its certificate holds.)
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	r, err := f.Get(t.Context(), strings.Replace(srv.URL, "127.0.0.1", "example.com", 1)+"/a.png", fixedLimit(1<<20))
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal(r.Body, body) || r.Declared != "image/png" {
		t.Errorf("got %d bytes declared %q, want %d bytes of image/png", len(r.Body), r.Declared, len(body))
	}
}

func TestGetRefusesLoopbackWithoutAllowance(t *testing.T) {
	srv, f := tlsServer(t, http.NotFoundHandler(), func(o *Options) { o.AllowPrivate = nil })
	_, err := f.Get(t.Context(), srv.URL+"/a.png", fixedLimit(1<<20))
	wantBlocked(t, err, ReasonLoopback)
}

// TestGetChecksTheConnectedAddress: a name whose answer is private is
// refused when connecting, whatever the URL looked like.
func TestGetChecksTheConnectedAddress(t *testing.T) {
	tests := []struct {
		name   string
		addrs  []netip.Addr
		reason string
	}{
		{"private", []netip.Addr{netip.MustParseAddr("10.0.0.1")}, ReasonPrivate},
		{"metadata", []netip.Addr{netip.MustParseAddr("169.254.169.254")}, ReasonLinkLocal},
		{"mapped loopback", []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1")}, ReasonLoopback},
		{"nat64 private", []netip.Addr{netip.MustParseAddr("64:ff9b::c0a8:101")}, ReasonPrivate},
		{"every answer private", []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("127.0.0.1")}, ReasonPrivate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New(Options{Resolver: mapResolver{"media.example": tt.addrs}})
			_, err := f.Get(t.Context(), "https://media.example/a.png", fixedLimit(1<<20))
			wantBlocked(t, err, tt.reason)
		})
	}
}

func TestControlRefusesAddresses(t *testing.T) {
	f := New(Options{})
	for addr, reason := range map[string]string{
		"10.0.0.1:443": ReasonPrivate, "169.254.169.254:80": ReasonLinkLocal, "[::1]:443": ReasonLoopback,
		"[::ffff:10.1.1.1]:443": ReasonPrivate, "100.100.100.200:80": ReasonCGNAT, "not-an-address": ReasonHost,
	} {
		wantBlocked(t, f.control("tcp", addr, nil), reason)
	}
	if err := f.control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("a public address was refused: %v", err)
	}
}

func TestGetRedirects(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/meta", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/meta-http", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/chain/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			_, _ = w.Write(pngHead)
			return
		}
		http.Redirect(w, r, "/chain/"+strconv.Itoa(n-1), http.StatusFound)
	})
	var allowHTTP Options
	srv, f := tlsServer(t, mux, func(o *Options) { allowHTTP = *o; allowHTTP.AllowHTTP = true })
	httpOK := New(allowHTTP)
	t.Run("to metadata", func(t *testing.T) {
		_, err := f.Get(t.Context(), srv.URL+"/meta", fixedLimit(1<<20))
		wantBlocked(t, err, ReasonLinkLocal)
		if !strings.Contains(err.Error(), "redirected to 169.254.169.254") {
			t.Errorf("the error does not say it was a redirect: %v", err)
		}
	})
	t.Run("downgrade to http", func(t *testing.T) {
		_, err := f.Get(t.Context(), srv.URL+"/meta-http", fixedLimit(1<<20))
		wantBlocked(t, err, ReasonScheme)
	})
	t.Run("to metadata over allowed http", func(t *testing.T) {
		_, err := httpOK.Get(t.Context(), srv.URL+"/meta-http", fixedLimit(1<<20))
		wantBlocked(t, err, ReasonLinkLocal)
	})
	t.Run("three redirects", func(t *testing.T) {
		if _, err := f.Get(t.Context(), srv.URL+"/chain/3", fixedLimit(1<<20)); err != nil {
			t.Fatalf("three redirects: %v", err)
		}
	})
	t.Run("four redirects", func(t *testing.T) {
		_, err := f.Get(t.Context(), srv.URL+"/chain/4", fixedLimit(1<<20))
		wantBlocked(t, err, ReasonTooManyRedirect)
	})
}

func TestGetSizeAndStatus(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/sized", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write(bytes.Repeat([]byte{1}, 1000))
	})
	mux.HandleFunc("/unsized", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // chunked: no Content-Length
		_, _ = w.Write(bytes.Repeat([]byte{1}, 1000))
	})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) })
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html></html>"))
	})
	srv, f := tlsServer(t, mux, nil)
	tests := []struct {
		path  string
		limit Limit
		code  apperr.Code
	}{
		{"/sized", fixedLimit(999), apperr.MediaTooLarge},
		{"/sized", fixedLimit(1000), ""},
		{"/unsized", fixedLimit(999), apperr.MediaTooLarge},
		{"/unsized", fixedLimit(1000), ""},
		{"/gone", fixedLimit(1000), apperr.MediaDownloadError},
		{"/html", func(d string) (int64, error) {
			return 0, apperr.New(apperr.UnsupportedMedia, "url: %s is not media", d)
		}, apperr.UnsupportedMedia},
	}
	for _, tt := range tests {
		_, err := f.Get(t.Context(), srv.URL+tt.path, tt.limit)
		if apperr.CodeOf(err) != tt.code {
			t.Errorf("%s: err = %v, want code %q", tt.path, err, tt.code)
		}
	}
}

// countingBody is a body far larger than any limit that counts what was
// read from it.
type countingBody struct{ n int64 }

func (c *countingBody) Read(p []byte) (int, error) {
	if c.n >= 64<<20 {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'x'
	}
	c.n += int64(len(p))
	return len(p), nil
}

func (c *countingBody) Close() error { return nil }

type bodyTransport struct{ body io.ReadCloser }

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"image/png"}},
		ContentLength: -1, Body: b.body, Request: r}, nil
}

// TestGetReadsAtMostLimitPlusOne: a huge body of unknown length is cut
// off one byte past the limit.
func TestGetReadsAtMostLimitPlusOne(t *testing.T) {
	body := &countingBody{}
	f := New(Options{})
	f.client.Transport = bodyTransport{body}
	const limit = 5 << 20
	_, err := f.Get(t.Context(), "https://media.example.com/a.png", fixedLimit(limit))
	if apperr.CodeOf(err) != apperr.MediaTooLarge {
		t.Fatalf("err = %v, want media_too_large", err)
	}
	if body.n > limit+1 {
		t.Errorf("read %d bytes, want at most %d", body.n, limit+1)
	}
}

func TestGetTimesOut(t *testing.T) {
	// The handler answers only once Get has returned. It used to answer
	// also when its request's context ended, and once, on a loaded
	// machine, that let an empty 200 reach Get before its timeout.
	release := make(chan struct{})
	srv, f := tlsServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		<-release
	}), func(o *Options) { o.Timeout = 100 * time.Millisecond })
	defer close(release)
	_, err := f.Get(t.Context(), srv.URL+"/slow", fixedLimit(1<<20))
	if apperr.CodeOf(err) != apperr.MediaDownloadError || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want a media_download_error that says it timed out", err)
	}
}
