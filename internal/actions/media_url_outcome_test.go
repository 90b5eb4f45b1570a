package actions

import (
	"bytes"
	"context"
	"crypto/x509"
	"database/sql"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/safefetch"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// releaseCounter allows every call with a charge on one limit and counts
// the charges given back.
type releaseCounter struct {
	mu       sync.Mutex
	reserved int
	released int
}

func (p *releaseCounter) Reserve(context.Context, *sql.Tx, policy.Request) (policy.Decision, policy.Reservation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserved++
	return policy.Decision{Outcome: policy.Allow},
		policy.Reservation{Account: "default", Items: []policy.Reserved{{Key: "mutations_per_hour", Amount: 1}}}, nil
}

func (p *releaseCounter) Release(_ context.Context, r policy.Reservation) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(r.Items) > 0 {
		p.released++
	}
	return nil
}

func (p *releaseCounter) counts() (reserved, released int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reserved, p.released
}

// trapHost is a loopback TLS media host whose first request to each trap
// path misbehaves; every later request gets the picture, as a host that
// has recovered would give it.
type trapHost struct {
	*httptest.Server
	// arrived receives the path of each trapped request once it is held.
	arrived chan string
	trapped sync.Map // path -> *atomic.Bool
}

func startTrapHost(t *testing.T) *trapHost {
	t.Helper()
	// Each path serves its own picture, so that no upload is answered
	// from the cache of another's.
	pics := map[string][]byte{}
	for i, p := range []string{"/slow.png", "/silent.png", "/held.png"} {
		var img bytes.Buffer
		if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 5+i, 5))); err != nil {
			t.Fatal(err)
		}
		pics[p] = img.Bytes()
	}
	h := &trapHost{arrived: make(chan string, 8)}
	h.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pic := pics[r.URL.Path]
		first, _ := h.trapped.LoadOrStore(r.URL.Path, new(atomic.Bool))
		if !first.(*atomic.Bool).CompareAndSwap(false, true) {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pic)
			return
		}
		switch r.URL.Path {
		case "/slow.png":
			// The headers come, then the body at one byte a second.
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", strconv.Itoa(len(pic)))
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for i := range pic {
				if _, err := w.Write(pic[i : i+1]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				if i == 0 {
					h.arrived <- r.URL.Path
				}
				select {
				case <-tick.C:
				case <-r.Context().Done():
					return
				}
			}
		case "/silent.png", "/held.png":
			// No headers, ever: the request is held until the client
			// gives up.
			h.arrived <- r.URL.Path
			<-r.Context().Done()
		}
	}))
	t.Cleanup(h.Close)
	return h
}

// fetcher is a fetcher allowed to reach the host that gives up on a
// download after timeout.
func (h *trapHost) fetcher(t *testing.T, timeout time.Duration) *safefetch.Fetcher {
	t.Helper()
	u, err := url.Parse(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	pool := x509.NewCertPool()
	pool.AddCert(h.Certificate())
	return safefetch.New(safefetch.Options{RootCAs: pool, Timeout: timeout, Policy: safefetch.Policy{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Ports: []int{port}}})
}

// TestMediaDownloadThatNeverReachedXFails: a download from a URL that
// does not finish (a host sending a byte a second, a host that never sends
// its headers, a caller that cancels while it waits) sent nothing to X.
// The attempt is a failure with media_download_error, not an unknown
// outcome: its audit row says failure (so no mutation.unknown notice is
// raised), its policy charge is given back, X saw no upload, and the same
// call made again, once the host answers, uploads.
func TestMediaDownloadThatNeverReachedXFails(t *testing.T) {
	host := startTrapHost(t)
	pol := &releaseCounter{}
	e := newXEnvFetching(t, pol, nil, host.fetcher(t, 500*time.Millisecond))
	tests := []struct {
		name   string
		path   string
		cancel bool   // the caller cancels once the host holds the request
		says   string // what the error's message says happened
	}{
		{"a host sending one byte a second", "/slow.png", false, "timed out"},
		{"a host that never sends its headers", "/silent.png", false, "timed out"},
		{"a caller that cancels while the host is silent", "/held.png", true, "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := UploadURLInput{URL: host.URL + tt.path, AltText: "A small grey square"}
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			if tt.cancel {
				go func() {
					<-host.arrived
					cancel()
				}()
			} else {
				go func() { <-host.arrived }()
			}
			uploads := e.sim.Counters()[xsim.CountMediaUploaded]
			_, releasedBefore := pol.counts()
			resp, err := e.g.Do(ctx, gateway.Call{Tool: "x_upload_media_from_url", Params: params})
			if apperr.CodeOf(err) != apperr.MediaDownloadError || !strings.Contains(apperr.As(err).Message, tt.says) {
				t.Fatalf("Do = %+v, %v; want %s saying %q", resp, err, apperr.MediaDownloadError, tt.says)
			}
			var status, code string
			if err := e.db.QueryRowContext(e.ctx, `SELECT status, COALESCE(error_code, '') FROM mutation_audit WHERE correlation_id = ?`,
				resp.CorrelationID).Scan(&status, &code); err != nil {
				t.Fatalf("audit row %q: %v", resp.CorrelationID, err)
			}
			if status != "failure" || code != string(apperr.MediaDownloadError) {
				t.Errorf("audit row status %q code %q, want failure %s: nothing was sent to X", status, code, apperr.MediaDownloadError)
			}
			if _, released := pol.counts(); released != releasedBefore+1 {
				t.Errorf("%d charges given back, want 1", released-releasedBefore)
			}
			if got := e.sim.Counters()[xsim.CountMediaUploaded]; got != uploads {
				t.Fatalf("X saw %d uploads, want none", got-uploads)
			}
			again, err := e.g.Do(e.ctx, gateway.Call{Tool: "x_upload_media_from_url", Params: params})
			if err != nil || again.Kind != gateway.Executed {
				t.Fatalf("the same call again = %+v, %v; want it executed", again, err)
			}
			if got := e.sim.Counters()[xsim.CountMediaUploaded]; got != uploads+1 {
				t.Errorf("X saw %d uploads after the repeat, want 1", got-uploads)
			}
		})
	}
}
