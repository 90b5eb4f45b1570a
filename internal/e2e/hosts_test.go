package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
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
func newFleet(t *testing.T, bin string, x *sim, extras string) *fleet {
	t.Helper()
	f := &fleet{t: t, bin: bin, x: x, dbURL: pgtest.NewDatabase(t, ""), extras: extras}
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
	toml := fmt.Sprintf(`approval_mode = false

[storage]
database_url = %[5]q

[x_api]
api_base_url = %[1]q
upload_base_url = %[1]q
legacy_upload_base_url = %[1]q
authorize_url = %[2]q
token_url = %[3]q
client_id = %[4]q
timeout_seconds = 10

[mcp_policy]
require_approval_for = []
%[6]s

[logging]
level = "info"
`, s.url, s.url+"/i/oauth2/authorize", s.url+"/2/oauth2/token", xsim.DefaultClientID, f.dbURL, f.extras)
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
	pr, pw := io.Pipe()
	h := &host{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start host %d: %v", i, err)
	}
	go func() {
		_ = cmd.Wait()
		pw.Close()
		close(h.done)
	}()
	t.Cleanup(func() {
		select {
		case <-h.done:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-h.done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-h.done
			}
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(h.stderr, line)
			if m := hostListening.FindStringSubmatch(line); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, pr)
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("host %d exited before listening:\n%s", i, h.stderr)
		}
		h.addr = a
	case <-time.After(30 * time.Second):
		t.Fatalf("host %d never reported listening:\n%s", i, h.stderr)
	}
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

// unlikedForeign returns n posts by others the demo user has not liked.
func unlikedForeign(t *testing.T, s *sim, n int) []string {
	t.Helper()
	me := s.DemoUserID()
	liked := map[string]bool{}
	for _, l := range s.World().Likes {
		if l.From == me {
			liked[l.To] = true
		}
	}
	var out []string
	for _, tw := range s.World().Tweets {
		if tw.AuthorID != me && tw.RetweetOf == "" && !liked[tw.ID] {
			out = append(out, tw.ID)
			if len(out) == n {
				return out
			}
		}
	}
	t.Fatalf("the demo world has %d unliked foreign posts, the test needs %d", len(out), n)
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

	t.Run("identical likes execute once", func(t *testing.T) {
		const calls, workers = 1000, 48
		f := newFleet(t, bin, x, "max_mutations_per_hour = 0")
		tweet := unlikedForeign(t, x, 1)[0]
		likes, billed := x.Counters()[xsim.CountLikes], x.Billing().Units[xsim.BillInteraction]
		results := make(chan env, calls)
		errs := make(chan error, calls)
		next := make(chan int, calls)
		for n := range calls {
			next <- n
		}
		close(next)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range next {
					i, cs := f.session(n)
					e, err := call(ctx, cs, "x_like_tweet", map[string]any{"tweet_id": tweet})
					if err != nil {
						errs <- fmt.Errorf("host %d: %w", i, err)
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
		executed, dups := 0, 0
		for e := range results {
			switch {
			case !e.Success:
				t.Fatalf("a like failed: %s", e.raw)
			case isDuplicate(e):
				dups++
			default:
				executed++
			}
		}
		gotLikes := x.Counters()[xsim.CountLikes] - likes
		gotBilled := x.Billing().Units[xsim.BillInteraction] - billed
		t.Logf("%d calls over %d hosts: %d executed, %d duplicates; emulator likes +%d, like requests +%d", calls, hostCount, executed, dups, gotLikes, gotBilled)
		if executed != 1 || dups != calls-1 {
			t.Fatalf("%d executed and %d duplicate answers, want 1 and %d", executed, dups, calls-1)
		}
		if gotLikes != 1 || gotBilled != 1 {
			t.Fatalf("emulator likes +%d and like requests +%d, want +1 and +1", gotLikes, gotBilled)
		}
	})

	t.Run("hourly cap holds across hosts", func(t *testing.T) {
		const distinct, limit, workers = 100, 5, 30
		f := newFleet(t, bin, x, fmt.Sprintf("max_mutations_per_hour = %d", limit))
		targets := unlikedForeign(t, x, distinct)
		likes, billed := x.Counters()[xsim.CountLikes], x.Billing().Units[xsim.BillInteraction]
		results := make(chan env, distinct)
		errs := make(chan error, distinct)
		next := make(chan int, distinct)
		for n := range distinct {
			next <- n
		}
		close(next)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range next {
					i, cs := f.session(n)
					e, err := call(ctx, cs, "x_like_tweet", map[string]any{"tweet_id": targets[n]})
					if err != nil {
						errs <- fmt.Errorf("host %d: %w", i, err)
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
		executed, refused := 0, map[apperr.Code]int{}
		for e := range results {
			if e.Success {
				if isDuplicate(e) {
					t.Fatalf("a distinct like answered duplicate: %s", e.raw)
				}
				executed++
				continue
			}
			refused[e.code()]++
		}
		gotLikes := x.Counters()[xsim.CountLikes] - likes
		gotBilled := x.Billing().Units[xsim.BillInteraction] - billed
		t.Logf("%d distinct likes over %d hosts with a cap of %d/hour: %d executed, refused %v; emulator likes +%d, like requests +%d",
			distinct, hostCount, limit, executed, refused, gotLikes, gotBilled)
		if executed > limit || gotLikes > limit || gotBilled > limit {
			t.Fatalf("%d executed, emulator likes +%d, like requests +%d: the cap of %d did not hold", executed, gotLikes, gotBilled, limit)
		}
		if executed != limit || int64(executed) != gotLikes || gotBilled != gotLikes {
			t.Fatalf("%d executed, emulator likes +%d, like requests +%d; want the cap (%d) used exactly", executed, gotLikes, gotBilled, limit)
		}
		if refused[apperr.Code("")] != 0 || sumCodes(refused) != distinct-executed {
			t.Fatalf("refusals %v do not add up", refused)
		}
	})

	t.Run("a killed host leaves no duplicate and recovers", func(t *testing.T) {
		const distinct, copies, workers, killAfter = 90, 3, 24, 20
		f := newFleet(t, bin, x, "max_mutations_per_hour = 0")
		// Slow like requests keep calls in flight, so the kill lands
		// between a pending audit row and its outcome.
		x.SetFault("POST /2/users/:id/likes", xsim.Fault{Latency: 5 * time.Millisecond})
		t.Cleanup(func() { x.SetFault("POST /2/users/:id/likes", xsim.Fault{}) })
		targets := unlikedForeign(t, x, distinct)
		likes, billed := x.Counters()[xsim.CountLikes], x.Billing().Units[xsim.BillInteraction]

		// Every intent is sent copies times, to different hosts; an
		// intent whose host died is retried on the next live host, as an
		// agent would.
		total := distinct * copies
		next := make(chan int, total)
		for n := range total {
			next <- n
		}
		close(next)
		var (
			mu        sync.Mutex
			answered  int
			killedAt  = make(chan struct{})
			killOnce  sync.Once
			lost      int
			answers   = map[apperr.Code]int{}
			bad       []string
			victimIdx = 0
		)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range next {
					tweet := targets[n%distinct]
					for attempt := 0; ; attempt++ {
						i, cs := f.session(n + attempt)
						e, err := call(ctx, cs, "x_like_tweet", map[string]any{"tweet_id": tweet})
						if err != nil {
							select {
							case <-killedAt:
							default:
								mu.Lock()
								bad = append(bad, fmt.Sprintf("host %d failed before any kill: %v", i, err))
								mu.Unlock()
								return
							}
							if i != victimIdx {
								mu.Lock()
								bad = append(bad, fmt.Sprintf("live host %d failed: %v", i, err))
								mu.Unlock()
								return
							}
							mu.Lock()
							lost++
							mu.Unlock()
							continue // the agent tries another host
						}
						mu.Lock()
						answered++
						switch {
						case e.Success && isDuplicate(e):
							answers["duplicate"]++
						case e.Success:
							answers["executed"]++
						case e.code() == apperr.OutcomeUnverified, e.code() == apperr.MutationInFlight:
							answers[e.code()]++
						default:
							bad = append(bad, e.raw)
						}
						if answered == killAfter {
							killOnce.Do(func() {
								// Announce the kill first: a call the victim
								// drops as it dies must count as lost.
								close(killedAt)
								f.kill(victimIdx)
							})
						}
						mu.Unlock()
						break
					}
				}
			}()
		}
		wg.Wait()
		if len(bad) > 0 {
			t.Fatalf("unexpected answers (first of %d): %s", len(bad), bad[0])
		}
		select {
		case <-killedAt:
		default:
			t.Fatal("the workload ended before the kill")
		}

		// The killed host restarts; its start recovers what it left
		// pending.
		pendingBefore := f.auditCounts()["pending"]
		h := f.start(victimIdx)
		mustCall(t, ctx, h.sessions[0], "get_recent_mutations", map[string]any{"limit": 1})
		counts := f.auditCounts()
		gotLikes := x.Counters()[xsim.CountLikes] - likes
		gotBilled := x.Billing().Units[xsim.BillInteraction] - billed
		t.Logf("%d calls (%d intents x %d) over %d hosts, host %d SIGKILLed after %d answers: %d calls lost with it, answers %v; %d rows pending before the restart, audit after %v; emulator likes +%d, like requests +%d",
			total, distinct, copies, hostCount, victimIdx, killAfter, lost, answers, pendingBefore, counts, gotLikes, gotBilled)
		if gotBilled != gotLikes {
			t.Fatalf("%d like requests reached X for %d new likes: an intent reached X twice", gotBilled, gotLikes)
		}
		if gotLikes > distinct {
			t.Fatalf("%d new likes for %d intents", gotLikes, distinct)
		}
		if lost == 0 {
			t.Fatal("no call was lost with the killed host; the kill did not land mid-workload")
		}
		for st, n := range counts {
			switch st {
			case "success", "failure", "unknown", "interrupted", "duplicate":
			default:
				t.Fatalf("%d audit rows are %q after the killed host restarted: %v", n, st, counts)
			}
		}
		// A like X made whose answer died with the host is interrupted,
		// not success; nothing succeeded that X does not have.
		if s := int64(counts["success"]); s > gotLikes || s+int64(counts["interrupted"]+counts["unknown"]) < gotLikes {
			t.Fatalf("%d successful, %d interrupted and %d unknown audit rows for %d likes on X", s, counts["interrupted"], counts["unknown"], gotLikes)
		}
	})
}

func sumCodes(m map[apperr.Code]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
