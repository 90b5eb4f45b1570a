package actions

import (
	"bytes"
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/safefetch"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// staticTokens hands the X client one fixed emulator token.
type staticTokens struct{ tok string }

func (s staticTokens) AccessToken(context.Context) (string, error) { return s.tok, nil }
func (s staticTokens) Refresh(context.Context) (string, error)     { return s.tok, nil }

// allowAll lets every call through, so the tests see each action's own
// behaviour.
type allowAll struct{}

func (allowAll) Reserve(context.Context, *sql.Tx, policy.Request) (policy.Decision, policy.Reservation, error) {
	return policy.Decision{Outcome: policy.Allow}, policy.Reservation{}, nil
}
func (allowAll) Release(context.Context, policy.Reservation) error { return nil }

// xenv is the real actions behind a real gateway, talking to the emulator.
type xenv struct {
	// media is the directory uploads are confined to.
	media string
	t     *testing.T
	ctx   context.Context
	sim   *xsim.Server
	db    *store.DB
	g     *gateway.Gateway
	clock *clock.Fake
	token string
	me    string
	rec   *fakeRecorder
	// mediaURL is a loopback TLS server the URL fetcher may reach; it
	// serves a PNG at /pic.png.
	mediaURL string
}

// fakeRecorder keeps what the actions report, in order.
type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

func (f *fakeRecorder) ReplySent(_ context.Context, target, reply, text string) error {
	f.add("reply " + target + " " + reply + " " + text)
	return nil
}

func (f *fakeRecorder) Posted(_ context.Context, kind, id, text string) error {
	f.add(kind + " " + id + " " + text)
	return nil
}

func (f *fakeRecorder) add(e string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
}

func (f *fakeRecorder) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

func newXEnv(t *testing.T) *xenv { return newXEnvWith(t, allowAll{}, nil) }

// newXEnvWith is newXEnv with pol deciding every call and configure, when
// set, adjusting the emulator's options. The database is the backend of the
// storetest.ForEachBackend subtest t runs in (SQLite outside one).
func newXEnvWith(t *testing.T, pol gateway.Policy, configure func(*xsim.Options)) *xenv {
	t.Helper()
	return newXEnvFetching(t, pol, configure, nil)
}

// newXEnvFetching is newXEnvWith downloading media from URLs through
// fetcher; nil means a fetcher allowed to reach the xenv's own media server.
func newXEnvFetching(t *testing.T, pol gateway.Policy, configure func(*xsim.Options), fetcher *safefetch.Fetcher) *xenv {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	opts := xsim.DefaultOptions()
	opts.Now = clk.Now
	opts.Seed = 7
	opts.RateLimits = false
	if configure != nil {
		configure(&opts)
	}
	sim := xsim.New(opts)
	base, err := sim.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(func() { sim.Close() })
	access, _, _ := sim.IssueToken(sim.DemoUserID(), sim.AllScopes())
	x, err := xapi.New(xapi.Options{
		BaseURLs: map[string]string{"api.x.com": base, "upload.x.com": base, "upload.twitter.com": base},
		Tokens:   staticTokens{access}, AccountID: "default", Now: clk.Now, Timeout: 5 * time.Second,
		BaseBackoff: time.Millisecond,
	})
	if err != nil {
		t.Fatalf("x client: %v", err)
	}
	dir := t.TempDir()
	db := storetest.Open(t, store.Options{Now: clk.Now})
	g, err := gateway.New(ctx, gateway.Options{DB: db, Policy: pol, Now: clk.Now, LockDir: filepath.Join(dir, "locks"),
		Mode: func() (string, bool) { return policy.ModeAutopilot, false }})
	if err != nil {
		t.Fatalf("gateway: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	rec := &fakeRecorder{}
	var media string
	if fetcher == nil {
		media, fetcher = mediaServer(t)
	}
	Register(g, Deps{X: func() (*xapi.Client, error) { return x, nil }, DB: db, AccountID: "default", Now: clk.Now,
		MediaDirs: []string{dir}, Recorder: rec, URLFetcher: fetcher})
	return &xenv{t: t, ctx: ctx, sim: sim, db: db, g: g, clock: clk, token: access, me: sim.DemoUserID(), rec: rec, media: dir,
		mediaURL: media}
}

// do runs a call that must execute.
func (e *xenv) do(tool string, params any) gateway.Response {
	e.t.Helper()
	r, err := e.g.Do(e.ctx, gateway.Call{Tool: tool, Params: params})
	if err != nil {
		e.t.Fatalf("%s %v: %v", tool, params, err)
	}
	if r.Kind != gateway.Executed {
		e.t.Fatalf("%s %v: kind %q", tool, params, r.Kind)
	}
	return r
}

// otherTweet returns the id of a tweet in the demo world not written by
// the demo user.
func (e *xenv) otherTweets(n int) []string {
	e.t.Helper()
	var out []string
	for _, tw := range e.sim.World().Tweets {
		if tw.AuthorID != e.me && tw.RetweetOf == "" {
			out = append(out, tw.ID)
			if len(out) == n {
				return out
			}
		}
	}
	e.t.Fatalf("the demo world has fewer than %d foreign tweets", n)
	return nil
}

// otherUser returns a public account that is not the demo user.
func (e *xenv) otherUser() string {
	e.t.Helper()
	for _, u := range e.sim.World().Users {
		if u.ID != e.me && !u.Protected {
			return u.ID
		}
	}
	e.t.Fatal("the demo world has no other public user")
	return ""
}

// tweetExists reports whether the emulator holds a live tweet with id.
func (e *xenv) tweetExists(id string) bool {
	for _, tw := range e.sim.World().Tweets {
		if tw.ID == id {
			return true
		}
	}
	return false
}

// auditSummary returns the params_summary of the audit row for corr.
func (e *xenv) auditSummary(corr string) string {
	e.t.Helper()
	var s string
	if err := e.db.QueryRowContext(e.ctx, `SELECT params_summary FROM mutation_audit WHERE correlation_id = ?`, corr).Scan(&s); err != nil {
		e.t.Fatalf("audit row %s: %v", corr, err)
	}
	return s
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mediaDir is the directory the actions accept uploads from.
func (e *xenv) mediaDir() string { return e.media }

// mediaServer starts a loopback TLS server with a PNG at /pic.png and a
// fetcher allowed to reach it.
func mediaServer(t *testing.T) (string, *safefetch.Fetcher) {
	t.Helper()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 3, 3))); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(img.Bytes())
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv.URL, safefetch.New(safefetch.Options{RootCAs: pool, Policy: safefetch.Policy{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Ports: []int{port}}})
}
