//go:build e2e

package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// gatedCallers is how many clients post at once, spread over
// gatedProcesses `mcp serve --transport http --sandbox` processes.
const (
	gatedCallers   = 32
	gatedProcesses = 3
)

// BenchmarkGatedPosts drives gatedCallers clients posting through three
// `tuitbot mcp serve --transport http --sandbox` processes on one home (the
// SQLite file) and on one PostgreSQL database. The policy lets every post
// run, so each is decided, executed against the sandbox emulator and
// completed; every post adds to the emulator's world, which therefore
// grows during the run. It reports calls/s, the floor measured on the same
// database in the same run (two plain write transactions per call from
// gatedCallers goroutines, before and after the servers' run) and their
// ratio, and the calls/s of the first and last quarter of the calls, to
// show whether throughput holds as the world grows. b.N is the number of
// posts, at most maxGatedPosts:
//
//	go test -tags e2e ./internal/e2e -run '^$' -bench GatedPosts -benchtime 300x
//
// TUITBOT_BENCH_BIN names a tuitbot binary to measure instead of building
// this tree's (an earlier build, to compare).
func BenchmarkGatedPosts(b *testing.B) {
	bin := os.Getenv("TUITBOT_BENCH_BIN")
	if bin == "" {
		bin = buildTuitbot(b)
	}
	if b.N > maxGatedPosts {
		b.Fatalf("-benchtime %dx: the sandbox's accounts may post at most %d times in 15 minutes (X's limit); use -benchtime %dx or fewer", b.N, maxGatedPosts, maxGatedPosts)
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			home := b.TempDir()
			dbURL := ""
			if backend == "postgres" {
				dbURL = pgtest.NewDatabase(b, "")
			}
			token := writeGatedHome(b, home, dbURL)
			target := dbURL
			if target == "" {
				target = filepath.Join(home, "sandbox", "tuitbot.db")
			}
			procs := make([]*gatedProc, gatedProcesses)
			for i := range procs {
				// One at a time: the first prepares the sandbox home and
				// runs the emulator, the others attach to it.
				procs[i] = startGatedProc(b, bin, home, token)
			}
			floorBefore := floorCallsPerSec(b, target, b.N)
			b.ResetTimer()
			total, first, last := postGated(b, procs, b.N)
			b.StopTimer()
			floorAfter := floorCallsPerSec(b, target, b.N)
			floor := (floorBefore + floorAfter) / 2
			b.ReportMetric(total, "calls/s")
			b.ReportMetric(floor, "floor-calls/s")
			b.ReportMetric(total/floor, "ratio")
			b.ReportMetric(first, "first-quarter-calls/s")
			b.ReportMetric(last, "last-quarter-calls/s")
			b.ReportMetric(0, "ns/op") // the custom metrics are the result
		})
	}
}

// writeGatedHome writes a home whose policy lets posts run without
// approval, on dbURL when it is set, and the MCP bearer token every
// process accepts.
func writeGatedHome(b *testing.B, home, dbURL string) string {
	b.Helper()
	storage := ""
	if dbURL != "" {
		storage = fmt.Sprintf("[storage]\ndatabase_url = %q\n", dbURL)
	}
	cfg := fmt.Sprintf(`approval_mode = false
%s
[mcp_policy]
require_approval_for = []
max_mutations_per_hour = 0

[logging]
level = "info"
`, storage)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	token := fmt.Sprintf("%032x", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(home, "mcp_token"), []byte(token+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return token
}

// gatedProc is one server process and the sessions opened on it.
type gatedProc struct {
	cmd      *exec.Cmd
	stderr   *lockedBuffer
	done     chan struct{}
	sessions []*mcp.ClientSession
}

func startGatedProc(b *testing.B, bin, home, token string) *gatedProc {
	b.Helper()
	cmd := exec.Command(bin, "--sandbox", "mcp", "serve", "--transport", "http", "--listen", "127.0.0.1:0",
		"--token-file", filepath.Join(home, "mcp_token"))
	cmd.Env = append(cleanEnv(), "TUITBOT_HOME="+home)
	sp := startServing(b, cmd, "the server", 60*time.Second)
	p := &gatedProc{cmd: cmd, stderr: sp.stderr, done: sp.done}
	at := sp.addr
	hc := &http.Client{Transport: bearer{token: token, base: &http.Transport{MaxIdleConnsPerHost: gatedCallers}}}
	for range (gatedCallers + gatedProcesses - 1) / gatedProcesses {
		client := mcp.NewClient(&mcp.Implementation{Name: "gated-bench", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + at + "/", HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			b.Fatalf("connect: %v\n%s", err, p.stderr)
		}
		b.Cleanup(func() { cs.Close() })
		p.sessions = append(p.sessions, cs)
	}
	return p
}

// gatedAccounts are the sandbox's accounts ("" the default one); the
// posts go round them, since the emulator keeps X's limit of 100 posts per
// user per 15 minutes.
var gatedAccounts = []string{"", "brand_b", "brand_c"}

// gatedText is post k's text: words of its own, so that no two posts of
// the run look alike to X's rules against similar posts across accounts.
func gatedText(run int64, k int) string {
	r := rand.New(rand.NewPCG(uint64(run), uint64(k)))
	words := make([]string, 8)
	for i := range words {
		words[i] = strconv.FormatUint(r.Uint64(), 36)
	}
	return strings.Join(words, " ")
}

// maxGatedPosts is how many posts the accounts may make in one run.
const maxGatedPosts = 300

// postGated sends n posts from gatedCallers callers, caller i through
// process i%gatedProcesses, and returns the calls/s of all of them and of
// the first and last quarter by completion time. Every post must be
// executed: a refusal or an error fails the benchmark.
func postGated(b *testing.B, procs []*gatedProc, n int) (total, first, last float64) {
	b.Helper()
	ctx := context.Background()
	run := time.Now().UnixNano()
	var next atomic.Int64
	done := make([]time.Duration, n)
	errs := make(chan error, gatedCallers)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range gatedCallers {
		p := procs[c%gatedProcesses]
		cs := p.sessions[(c/gatedProcesses)%len(p.sessions)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				args := map[string]any{"text": gatedText(run, k)}
				if a := gatedAccounts[k%len(gatedAccounts)]; a != "" {
					args["account"] = a
				}
				e, err := call(ctx, cs, "x_post_tweet", args)
				if err == nil && !e.Success {
					err = fmt.Errorf("post %d: %s", k, e.raw)
				}
				if err != nil {
					errs <- err
					next.Store(int64(n))
					return
				}
				done[k] = time.Since(start)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("%v\n%s", err, procs[0].stderr)
	}
	elapsed := time.Since(start)
	sort.Slice(done, func(i, j int) bool { return done[i] < done[j] })
	q := n / 4
	if q == 0 {
		return float64(n) / elapsed.Seconds(), 0, 0
	}
	first = float64(q) / done[q-1].Seconds()
	last = float64(q) / (done[n-1] - done[n-1-q]).Seconds()
	return float64(n) / elapsed.Seconds(), first, last
}

// floorCallsPerSec is the floor a gated call is measured against: n calls
// of two plain write transactions each (an insert, then an update of the
// row), from gatedCallers goroutines, on the database at target.
func floorCallsPerSec(b *testing.B, target string, n int) float64 {
	b.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, target, store.Options{})
	if err != nil {
		b.Fatalf("open %s for the floor: %v", target, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS bench_floor (id BIGINT PRIMARY KEY, state TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	base := time.Now().UnixNano()
	var next atomic.Int64
	var failed atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for range gatedCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := next.Add(1)
				if k > int64(n) {
					return
				}
				id := base + k
				err := db.Tx(ctx, func(tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, `INSERT INTO bench_floor (id, state) VALUES (?, 'pending')`, id)
					return err
				})
				if err == nil {
					err = db.Tx(ctx, func(tx *sql.Tx) error {
						_, err := tx.ExecContext(ctx, `UPDATE bench_floor SET state = 'success' WHERE id = ?`, id)
						return err
					})
				}
				if err != nil {
					failed.Store(err)
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("floor: %v", err)
	}
	return float64(n) / time.Since(start).Seconds()
}
