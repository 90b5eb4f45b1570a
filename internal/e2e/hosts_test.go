//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// hostCount is how many `tuitbot mcp serve --transport http` processes
// share one PostgreSQL database, as servers on separate hosts would.
const hostCount = 3

// hostListening is the log line a server writes once it accepts
// connections; the tests listen on port 0 and read the address from it.
var hostListening = regexp.MustCompile(`msg=listening url=http://(\S+)/`)

// bearer adds the MCP bearer token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// fleet is a set of homes, one per simulated host, that all use one
// PostgreSQL database and one emulator as X.
type fleet struct {
	t      *testing.T
	bin    string
	x      *sim
	dbURL  string
	token  string // the MCP bearer token every server accepts
	homes  []string
	hosts  []*host
	extras string // extra TOML appended to each host's configuration
	// via, when it names a host, is the URL that host reaches X through
	// (a proxy in front of the emulator) instead of the emulator itself.
	via map[int]string
}

// host is one running server process.
type host struct {
	cmd      *exec.Cmd
	addr     string
	stderr   *lockedBuffer
	done     chan struct{}
	sessions []*mcp.ClientSession
}

// newFleet prepares hostCount homes on a fresh database and starts a
// server in each.
func newFleet(t *testing.T, bin string, x *sim, extras string, via map[int]string) *fleet {
	t.Helper()
	f := &fleet{t: t, bin: bin, x: x, dbURL: pgtest.NewDatabase(t, ""), extras: extras, via: via}
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	f.token = hex.EncodeToString(buf)
	// Migrate once, before any server starts, as an operator would with
	// the first host.
	db, err := store.Open(context.Background(), f.dbURL, store.Options{})
	if err != nil {
		t.Fatalf("open the shared database: %v", err)
	}
	db.Close()
	for i := 0; i < hostCount; i++ {
		f.homes = append(f.homes, f.prepareHome(i))
	}
	f.hosts = make([]*host, hostCount)
	for i := range f.hosts {
		f.start(i)
	}
	return f
}

// prepareHome writes one host's configuration, X token and MCP token.
func (f *fleet) prepareHome(i int) string {
	t := f.t
	t.Helper()
	home := filepath.Join(t.TempDir(), fmt.Sprintf("host%d", i))
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	s := f.x
	xURL := s.url
	if u, ok := f.via[i]; ok {
		xURL = u
	}
	toml := childConfig(xURL, f.dbURL, f.extras)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	// Each host logged in on its own, as `tuitbot auth` would.
	access, refresh, ttl := s.IssueToken(s.DemoUserID(), s.AllScopes())
	tok := &xauth.Token{AccessToken: access, RefreshToken: refresh, TokenType: "bearer", ExpiresAt: time.Now().Add(ttl), Scopes: s.AllScopes()}
	if err := xauth.SaveToken(context.Background(), filepath.Join(home, "tokens.json"), tok); err != nil {
		t.Fatalf("save token: %v", err)
	}
	if err := os.WriteFile(filepath.Join(home, "mcp_token"), []byte(f.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// start runs host i's server, waits for its "listening" line and opens
// its MCP sessions.
func (f *fleet) start(i int) *host {
	t := f.t
	t.Helper()
	home := f.homes[i]
	cmd := exec.Command(f.bin, "mcp", "serve", "--transport", "http", "--listen", "127.0.0.1:0",
		"--token-file", filepath.Join(home, "mcp_token"))
	cmd.Env = append(cleanEnv(), "TUITBOT_HOME="+home)
	sp := startServing(t, cmd, fmt.Sprintf("host %d", i), 30*time.Second)
	h := &host{cmd: cmd, addr: sp.addr, stderr: sp.stderr, done: sp.done}
	ctx := context.Background()
	hc := &http.Client{Transport: bearer{token: f.token, base: http.DefaultTransport}}
	for range 4 {
		client := mcp.NewClient(&mcp.Implementation{Name: "hosts-e2e", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + h.addr + "/", HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect to host %d: %v\n%s", i, err, h.stderr)
		}
		t.Cleanup(func() { cs.Close() })
		h.sessions = append(h.sessions, cs)
	}
	f.hosts[i] = h
	return h
}

// kill ends host i with SIGKILL and waits until it is gone.
func (f *fleet) kill(i int) {
	h := f.hosts[i]
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	<-h.done
}

// session picks a session of host n%hostCount for call number n.
// spread sends n x_bookmark_tweet calls with args(i) from workers goroutines,
// round-robin over the hosts' sessions, and returns every answer; a call
// that fails on the wire fails the test.
func (f *fleet) spread(ctx context.Context, t *testing.T, n, workers int, args func(i int) map[string]any) <-chan env {
	t.Helper()
	results := make(chan env, n)
	errs := make(chan error, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				h, cs := f.session(k)
				e, err := call(ctx, cs, "x_bookmark_tweet", args(k))
				if err != nil {
					errs <- fmt.Errorf("host %d: %w", h, err)
					continue
				}
				results <- e
			}
		}()
	}
	wg.Wait()
	close(results)
	close(errs)
	for err := range errs {
		t.Fatalf("call failed: %v", err)
	}
	return results
}

func (f *fleet) session(n int) (int, *mcp.ClientSession) {
	i := n % hostCount
	h := f.hosts[i]
	return i, h.sessions[(n/hostCount)%len(h.sessions)]
}

// auditCounts returns the audit rows by status.
func (f *fleet) auditCounts() map[string]int {
	t := f.t
	t.Helper()
	db, err := store.Open(context.Background(), f.dbURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), `SELECT status, count(*) FROM mutation_audit GROUP BY status`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			t.Fatal(err)
		}
		out[st] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// unmarkedForeign returns n posts by others the demo user has not
// bookmarked.
func unmarkedForeign(t *testing.T, s *sim, n int) []string {
	t.Helper()
	me := s.DemoUserID()
	marked := map[string]bool{}
	for _, l := range s.World().Bookmarks {
		if l.From == me {
			marked[l.To] = true
		}
	}
	var out []string
	for _, tw := range s.World().Tweets {
		if tw.AuthorID != me && tw.RetweetOf == "" && !marked[tw.ID] {
			out = append(out, tw.ID)
			if len(out) == n {
				return out
			}
		}
	}
	t.Fatalf("the demo world has %d unbookmarked foreign posts, the test needs %d", len(out), n)
	return nil
}

// TestHostsSharePostgres runs three `tuitbot mcp serve --transport http`
// processes on one PostgreSQL database with one emulator as their shared
// X, as three hosts would, and proves that exactly-once, caps and crash
// recovery hold across them.
func TestHostsSharePostgres(t *testing.T) {
	pgtest.ServerURL(t) // skips (or fails under TUITBOT_REQUIRE_POSTGRES) without a server
	bin := buildTuitbot(t)
	x := startSim(t, nil)
	ctx := context.Background()

	t.Run("identical bookmarks execute once", func(t *testing.T) {
		const calls, workers = 1000, 48
		f := newFleet(t, bin, x, "max_mutations_per_hour = 0", nil)
		tweet := unmarkedForeign(t, x, 1)[0]
		bookmarks, billed := x.Counters()[xsim.CountBookmarks], x.Billing().Units[xsim.BillBookmark]
		results := f.spread(ctx, t, calls, workers, func(int) map[string]any { return map[string]any{"tweet_id": tweet} })
		// Within one process an identical call waits for the one running;
		// on another host it is told the call is in flight (and which).
		// Either way it points at the one execution.
		var executed []env
		var others []env
		inFlight := 0
		for e := range results {
			switch {
			case e.Success && isDuplicate(e):
				others = append(others, e)
			case e.Success:
				executed = append(executed, e)
			case e.code() == apperr.MutationInFlight:
				inFlight++
				others = append(others, e)
			default:
				t.Fatalf("a bookmark failed: %s", e.raw)
			}
		}
		gotMarks := x.Counters()[xsim.CountBookmarks] - bookmarks
		gotBilled := x.Billing().Units[xsim.BillBookmark] - billed
		t.Logf("%d calls over %d hosts: %d executed, %d duplicates, %d told in flight; emulator bookmarks +%d, bookmark requests +%d",
			calls, hostCount, len(executed), len(others)-inFlight, inFlight, gotMarks, gotBilled)
		if len(executed) != 1 || len(others) != calls-1 {
			t.Fatalf("%d executed and %d duplicate or in-flight answers, want 1 and %d", len(executed), len(others), calls-1)
		}
		orig := executed[0].Meta.CorrelationID
		for _, e := range others {
			if got := originalOf(t, e); got != orig {
				t.Fatalf("answer points at %q, not at the one execution %q: %s", got, orig, e.raw)
			}
		}
		if gotMarks != 1 || gotBilled != 1 {
			t.Fatalf("emulator bookmarks +%d and bookmark requests +%d, want +1 and +1", gotMarks, gotBilled)
		}
	})

	t.Run("hourly cap holds across hosts", func(t *testing.T) {
		const distinct, limit, workers = 100, 5, 30
		f := newFleet(t, bin, x, fmt.Sprintf("max_mutations_per_hour = %d", limit), nil)
		targets := unmarkedForeign(t, x, distinct)
		bookmarks, billed := x.Counters()[xsim.CountBookmarks], x.Billing().Units[xsim.BillBookmark]
		results := f.spread(ctx, t, distinct, workers, func(n int) map[string]any { return map[string]any{"tweet_id": targets[n]} })
		executed, refused := 0, map[apperr.Code]int{}
		for e := range results {
			if e.Success {
				if isDuplicate(e) {
					t.Fatalf("a distinct bookmark answered duplicate: %s", e.raw)
				}
				executed++
				continue
			}
			refused[e.code()]++
		}
		gotMarks := x.Counters()[xsim.CountBookmarks] - bookmarks
		gotBilled := x.Billing().Units[xsim.BillBookmark] - billed
		t.Logf("%d distinct bookmarks over %d hosts with a cap of %d/hour: %d executed, refused %v; emulator bookmarks +%d, bookmark requests +%d",
			distinct, hostCount, limit, executed, refused, gotMarks, gotBilled)
		if executed > limit || gotMarks > limit || gotBilled > limit {
			t.Fatalf("%d executed, emulator bookmarks +%d, bookmark requests +%d: the cap of %d did not hold", executed, gotMarks, gotBilled, limit)
		}
		if executed != limit || int64(executed) != gotMarks || gotBilled != gotMarks {
			t.Fatalf("%d executed, emulator bookmarks +%d, bookmark requests +%d; want the cap (%d) used exactly", executed, gotMarks, gotBilled, limit)
		}
		if refused[apperr.Code("")] != 0 || sumCodes(refused) != distinct-executed {
			t.Fatalf("refusals %v do not add up", refused)
		}
	})

	t.Run("a killed host leaves no duplicate and recovers", func(t *testing.T) {
		const distinct, copies, workers, armAfter, victim = 90, 3, 24, 20, 0
		// The victim reaches X through a proxy that tells the test when
		// one of its bookmark requests is on the wire and holds it there until
		// the victim is dead; then X applies it. So the kill always lands
		// between a pending audit row and its outcome, and X has an
		// effect whose caller never learnt of it.
		trap := newBookmarkTrap(t, x.url)
		f := newFleet(t, bin, x, "max_mutations_per_hour = 0", map[int]string{victim: trap.url})
		targets := unmarkedForeign(t, x, distinct)
		bookmarks, billed := x.Counters()[xsim.CountBookmarks], x.Billing().Units[xsim.BillBookmark]

		// Every intent is sent copies times, to different hosts; a call
		// that died with its host is retried on the next host, as an
		// agent would.
		total := distinct * copies
		next := make(chan int, total)
		for n := range total {
			next <- n
		}
		close(next)
		var (
			mu       sync.Mutex
			answered int
			killed   = make(chan struct{}) // closed just before the SIGKILL
			armOnce  sync.Once
			lost     int
			answers  = map[apperr.Code]int{}
			inFlight []string // intents answered mutation_in_flight
			bad      []string
		)
		workDone := make(chan struct{})
		killerDone := make(chan struct{})
		go func() {
			defer close(killerDone)
			select {
			case <-trap.held:
			case <-workDone:
				return
			}
			close(killed)
			f.kill(victim)
			close(trap.release)
		}()
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range next {
					tweet := targets[n%distinct]
					for attempt := 0; ; attempt++ {
						i, cs := f.session(n + attempt)
						e, err := call(ctx, cs, "x_bookmark_tweet", map[string]any{"tweet_id": tweet})
						mu.Lock()
						if err != nil {
							dead := false
							select {
							case <-killed:
								dead = i == victim
							default:
							}
							if !dead {
								bad = append(bad, fmt.Sprintf("host %d failed: %v", i, err))
								mu.Unlock()
								return
							}
							lost++
							mu.Unlock()
							continue
						}
						answered++
						switch {
						case e.Success && isDuplicate(e):
							answers["duplicate"]++
						case e.Success:
							answers["executed"]++
						case e.code() == apperr.MutationInFlight:
							answers[e.code()]++
							inFlight = append(inFlight, tweet)
						case e.code() == apperr.OutcomeUnverified:
							answers[e.code()]++
						default:
							bad = append(bad, e.raw)
						}
						if answered == armAfter {
							armOnce.Do(trap.arm)
						}
						mu.Unlock()
						break
					}
				}
			}()
		}
		wg.Wait()
		close(workDone)
		<-killerDone
		if len(bad) > 0 {
			t.Fatalf("unexpected answers (first of %d): %s", len(bad), bad[0])
		}
		select {
		case <-killed:
		default:
			t.Fatal("the victim sent no bookmark after the trap was armed; nothing was killed")
		}
		<-trap.forwarded // the held bookmark has reached X

		// The dead host's rows stay pending: no other host recovers rows
		// of a process it cannot prove dead... until the host restarts.
		pendingBefore := f.auditCounts()["pending"]
		if pendingBefore == 0 {
			t.Fatal("no audit row was pending after the kill, though a bookmark was on the wire")
		}
		h := f.start(victim)
		mustCall(t, ctx, h.sessions[0], "get_recent_mutations", map[string]any{"limit": 1})
		// The agent retries what it was told is in flight; nothing more
		// may reach X.
		midBilled := x.Billing().Units[xsim.BillBookmark]
		for k, tweet := range inFlight {
			_, cs := f.session(k)
			e := mustCall(t, ctx, cs, "x_bookmark_tweet", map[string]any{"tweet_id": tweet})
			if e.Success && !isDuplicate(e) {
				t.Fatalf("a retry of an in-flight bookmark executed again: %s", e.raw)
			}
			if !e.Success && e.code() != apperr.OutcomeUnverified {
				t.Fatalf("a retry of an in-flight bookmark after recovery: %s", e.raw)
			}
		}
		if got := x.Billing().Units[xsim.BillBookmark]; got != midBilled {
			t.Fatalf("retrying %d in-flight bookmarks sent %d more bookmark requests to X", len(inFlight), got-midBilled)
		}
		counts := f.auditCounts()
		gotMarks := x.Counters()[xsim.CountBookmarks] - bookmarks
		gotBilled := x.Billing().Units[xsim.BillBookmark] - billed
		t.Logf("%d calls (%d intents x %d) over %d hosts, host %d SIGKILLed with a bookmark on the wire: %d calls lost with it, answers %v; %d rows pending before the restart, audit after %v; emulator bookmarks +%d, bookmark requests +%d",
			total, distinct, copies, hostCount, victim, lost, answers, pendingBefore, counts, gotMarks, gotBilled)
		if gotBilled != gotMarks {
			t.Fatalf("%d bookmark requests reached X for %d new bookmarks: an intent reached X twice", gotBilled, gotMarks)
		}
		if gotMarks > distinct {
			t.Fatalf("%d new bookmarks for %d intents", gotMarks, distinct)
		}
		if lost == 0 {
			t.Fatal("no call was lost with the killed host")
		}
		for st, n := range counts {
			switch st {
			case "success", "failure", "unknown", "interrupted", "duplicate":
			default:
				t.Fatalf("%d audit rows are %q after the killed host restarted: %v", n, st, counts)
			}
		}
		if counts["interrupted"] == 0 {
			t.Fatalf("the killed host's pending rows were not recovered as interrupted: %v", counts)
		}
		// A bookmark X made whose answer died with the host is interrupted,
		// not success; nothing succeeded that X does not have.
		if s := int64(counts["success"]); s > gotMarks || s+int64(counts["interrupted"]+counts["unknown"]) < gotMarks {
			t.Fatalf("%d successful, %d interrupted and %d unknown audit rows for %d bookmarks on X", s, counts["interrupted"], counts["unknown"], gotMarks)
		}
		for i, hh := range f.hosts {
			if strings.Contains(hh.stderr.String(), f.token) {
				t.Fatalf("host %d logged the MCP bearer token", i)
			}
		}
	})
}

// bookmarkTrap is a loopback proxy in front of the emulator. Once armed, the
// first bookmark request through it is reported on held and kept on the wire
// until release closes; then it goes on to X even though its caller may
// be gone.
type bookmarkTrap struct {
	url       string
	armed     atomic.Bool
	once      sync.Once
	held      chan struct{}
	release   chan struct{}
	forwarded chan struct{}
}

func newBookmarkTrap(t *testing.T, target string) *bookmarkTrap {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	// Requests of the killed host fail as it dies; that is expected.
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	lt := &bookmarkTrap{held: make(chan struct{}), release: make(chan struct{}), forwarded: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/bookmarks") && lt.armed.Load() {
			caught := false
			lt.once.Do(func() { caught = true })
			if caught {
				close(lt.held)
				<-lt.release
				// The caller is dead; X still gets the request.
				r = r.WithContext(context.WithoutCancel(r.Context()))
				proxy.ServeHTTP(w, r)
				close(lt.forwarded)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	lt.url = srv.URL
	return lt
}

func (lt *bookmarkTrap) arm() { lt.armed.Store(true) }

// originalOf is the correlation id of the execution a duplicate or
// in-flight answer points at.
func originalOf(t *testing.T, e env) string {
	t.Helper()
	var v struct {
		Data struct {
			Original string `json:"original_correlation_id"`
		} `json:"data"`
		Error struct {
			Original string `json:"original_correlation_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(e.raw), &v); err != nil {
		t.Fatalf("answer: %v: %s", err, e.raw)
	}
	if e.Success {
		return v.Data.Original
	}
	return v.Error.Original
}

func sumCodes(m map[apperr.Code]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
