package safefetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// MaxRedirects is how many redirects a download may follow; each target is
// checked like the first.
const MaxRedirects = 3

// Resolver looks names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Fetcher.
type Options struct {
	Policy
	// Resolver resolves host names; nil is the system resolver.
	Resolver Resolver
	// RootCAs verify servers; nil is the system pool.
	RootCAs *x509.CertPool
	// Timeout bounds a whole download, body included; 0 means 60 s.
	Timeout time.Duration
}

// Fetcher downloads from URLs under a Policy. It never uses a proxy from
// the environment: a proxy would connect on its behalf to addresses it
// cannot check.
type Fetcher struct {
	policy   Policy
	resolver Resolver
	client   *http.Client
}

// New returns a Fetcher for o.
func New(o Options) *Fetcher {
	f := &Fetcher{policy: o.Policy, resolver: o.Resolver}
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           f.dial,
		TLSClientConfig:       &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	f.client = &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: f.checkRedirect}
	return f
}

// Policy returns the policy the fetcher applies.
func (f *Fetcher) Policy() Policy { return f.policy }

func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return blocked(ReasonTooManyRedirect, "url: more than %d redirects", MaxRedirects)
	}
	err := f.policy.check(req.URL)
	var e *apperr.Error
	if errors.As(err, &e) {
		// Only the message reaches the caller: say it was a redirect.
		e.Message = "url: redirected to " + req.URL.Host + ": " + strings.TrimPrefix(e.Message, "url: ")
	}
	return err
}

// dial resolves the host itself and connects to each address in turn; the
// dialer's Control checks the address the socket is about to connect to,
// which is the one that counts.
func (f *Fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = f.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, apperr.Wrap(apperr.MediaDownloadError, err, "url: cannot resolve %s", host)
		}
	}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: f.control}
	var first error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.WithZone("").String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil || Reason(first) == "" && Reason(err) != "" {
			first = err
		}
	}
	if first == nil {
		first = apperr.New(apperr.MediaDownloadError, "url: %s has no address", host)
	}
	return nil, first
}

// control refuses to connect to an address the policy does not allow.
func (f *Fetcher) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return blocked(ReasonHost, "url: cannot check the address %q", address)
	}
	return f.policy.CheckAddr(ap.Addr())
}

// Limit says how many bytes a body of the declared media type (without
// parameters, "" when none was declared) may have, or refuses the type.
type Limit func(declared string) (int64, error)

// Response is a completed download.
type Response struct {
	// URL is where the body came from, after redirects.
	URL string
	// Declared is the Content-Type the server sent, without parameters.
	Declared string
	Body     []byte
}

// Get downloads raw. The body may not exceed what limit allows for its
// declared type: a larger Content-Length is refused before reading, and a
// body without one is read to at most the limit plus one byte.
func (f *Fetcher) Get(ctx context.Context, raw string, limit Limit) (*Response, error) {
	u, err := f.policy.CheckURL(raw)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, apperr.Wrap(apperr.InvalidInput, err, "url: not a valid request target")
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, downloadError(err, u)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, apperr.New(apperr.MediaDownloadError, "url: the server answered %s", resp.Status)
	}
	declared := ""
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil {
			return nil, apperr.New(apperr.UnsupportedMedia, "url: malformed Content-Type %q", ct)
		}
		declared = mt
	}
	max, err := limit(declared)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > max {
		return nil, apperr.New(apperr.MediaTooLarge, "url: %d bytes exceeds the %d-byte limit", resp.ContentLength, max).
			With("limit_bytes", max)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, downloadError(err, u)
	}
	if int64(len(body)) > max {
		return nil, apperr.New(apperr.MediaTooLarge, "url: the body exceeds the %d-byte limit", max).With("limit_bytes", max)
	}
	return &Response{URL: resp.Request.URL.Redacted(), Declared: declared, Body: body}, nil
}

// downloadError keeps a refusal's own error and turns anything else into
// media_download_error, without echoing the URL's query.
func downloadError(err error, u *url.URL) error {
	var e *apperr.Error
	if errors.As(err, &e) {
		return e
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return apperr.Wrap(apperr.MediaDownloadError, err, "url: timed out downloading from %s", u.Host)
	}
	if errors.Is(err, context.Canceled) {
		return apperr.Wrap(apperr.MediaDownloadError, err, "url: the download from %s was cancelled", u.Host)
	}
	return apperr.Wrap(apperr.MediaDownloadError, err, "url: cannot download from %s", u.Host)
}
