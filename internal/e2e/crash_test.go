//go:build e2e

package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

var (
	crashKills = flag.Int("crash.kills", 50, "how many times TestCrashNeverRepeatsAMutation SIGKILLs the server process")
	crashSeed  = flag.Uint64("crash.seed", 0, "seed of the kill schedule and workload (0: time-based, logged)")
)

// buildTuitbot compiles the real binary without the race detector, so the
// child runs at production speed whatever flags the test itself runs with.
func buildTuitbot(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the crash test builds cmd/tuitbot and needs the go tool: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "tuitbot")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tuitbot/tuitbot/cmd/tuitbot")
	cmd.Env = cleanEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build cmd/tuitbot: %v\n%s", err, out)
	}
	return bin
}

// cleanEnv is the test's environment without tuitbot or Go build flags
// that would change what the child does.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TUITBOT_") || strings.HasPrefix(kv, "GOFLAGS=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// writeChildConfig points a tuitbot home at the emulator with a policy that
// lets mutations run.
func writeChildConfig(t *testing.T, home string, s *sim) {
	t.Helper()
	cfg := permissive(home)
	pointAt(t, &cfg, s) // tokens.json
	toml := childConfig(s.url, "", "max_mutations_per_hour = 0")
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// childConfig is the config.toml of a server process that reaches X at
// xURL and lets mutations run: policy lines go at the end of [mcp_policy],
// and databaseURL, when set, is the shared PostgreSQL database.
func childConfig(xURL, databaseURL, policy string) string {
	storage := ""
	if databaseURL != "" {
		storage = fmt.Sprintf("\n[storage]\ndatabase_url = %q\n", databaseURL)
	}
	return fmt.Sprintf(`approval_mode = false
%[5]s
[x_api]
api_base_url = %[1]q
upload_base_url = %[1]q
legacy_upload_base_url = %[1]q
authorize_url = %[2]q
token_url = %[3]q
client_id = %[4]q
timeout_seconds = 10
# An enterprise app, as in the other proofs: none of X's self-serve
# restrictions apply.
access = "enterprise"

[mcp_policy]
require_approval_for = []
%[6]s

[logging]
level = "info"
`, xURL, xURL+"/i/oauth2/authorize", xURL+"/2/oauth2/token", xsim.DefaultClientID, storage, policy)
}

// child is one `tuitbot mcp serve` process and its MCP session.
type child struct {
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stderr *lockedBuffer
	done   chan error
}

// startChild starts the server; kill, when not nil, receives the process
// right after it starts so a kill can land during start-up too.
func startChild(ctx context.Context, bin, home string, stderr *lockedBuffer, kill func(*os.Process)) (*child, error) {
	cmd := exec.Command(bin, "mcp", "serve")
	cmd.Env = append(cleanEnv(), "TUITBOT_HOME="+home)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stderr: stderr, done: make(chan error, 1)}
	if kill != nil {
		kill(cmd.Process)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "crash-harness", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		_ = cmd.Process.Kill()
		stdin.Close()
		c.done <- cmd.Wait()
		return c, err
	}
	c.cs = cs
	return c, nil
}

// stop ends the session and waits for the process; after a kill this just
// reaps it, otherwise closing stdin makes the server exit cleanly.
func (c *child) stop(t *testing.T) error {
	t.Helper()
	if c.cs != nil {
		_ = c.cs.Close()
		go func() { c.done <- c.cmd.Wait() }()
	}
	select {
	case err := <-c.done:
		return err
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		return errors.New("the server did not exit within 20s of its input closing")
	}
}

// item is one agent intention: a post of text or a bookmark of tweet. (A
// like would wait for a person: X's automation rules.)
type item struct {
	text, tweet string
}

func (it item) tool() (string, map[string]any) {
	if it.text != "" {
		return "x_post_tweet", map[string]any{"text": it.text}
	}
	return "x_bookmark_tweet", map[string]any{"tweet_id": it.tweet}
}

// agent hands out work and keeps what the client learned. Work whose answer
// never arrived (the server died) is retried first after a restart, like an
// agent would.
type agent struct {
	mu       sync.Mutex
	retry    []item
	next     int
	targets  []string
	executed map[string]string // post text -> correlation id of its success
	answered map[string]apperr.Code
	bad      []string
}

func (a *agent) take() item {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.retry); n > 0 {
		it := a.retry[n-1]
		a.retry = a.retry[:n-1]
		return it
	}
	a.next++
	if a.next%3 == 0 && len(a.targets) > 0 {
		it := item{tweet: a.targets[0]}
		a.targets = a.targets[1:]
		return it
	}
	return item{text: fmt.Sprintf("crash workload post %d", a.next)}
}

func isDuplicate(e env) bool {
	var d struct {
		Duplicate bool `json:"duplicate"`
	}
	return json.Unmarshal(e.Data, &d) == nil && d.Duplicate
}

func (a *agent) lost(it item) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.retry = append(a.retry, it)
}

func (a *agent) record(it item, e env) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := it.text + it.tweet
	switch {
	case e.Success && isDuplicate(e):
		a.answered[key] = "duplicate"
	case e.Success:
		a.answered[key] = "executed"
		if it.text != "" {
			a.executed[it.text] = e.Meta.CorrelationID
		}
	case e.code() == apperr.OutcomeUnverified:
		// The agent would now verify on X; it does not repeat blindly.
		a.answered[key] = e.code()
	case e.code() == apperr.MutationInFlight:
		a.retry = append(a.retry, it)
	default:
		a.bad = append(a.bad, e.raw)
	}
}

// TestCrashNeverRepeatsAMutation kills a real `tuitbot mcp serve` with
// SIGKILL at random points while agents post and bookmark through it, restarts
// it, and has the agents retry whatever they got no answer for. Afterwards
// nothing may have reached X twice, every audit row must be terminal and
// the database must be intact.
func TestCrashNeverRepeatsAMutation(t *testing.T) {
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("crash seed %d (rerun with -crash.seed=%d), %d kills", seed, seed, *crashKills)
	began := time.Now()
	bin := buildTuitbot(t)
	t.Logf("built cmd/tuitbot in %v", time.Since(began).Round(time.Millisecond))
	s := startSim(t, nil)
	// Slow writes keep a mutation in flight most of the time, so kills
	// land between the pending audit row and its completion.
	s.SetFault("POST /2/tweets", xsim.Fault{Latency: 6 * time.Millisecond})
	s.SetFault("POST /2/users/:id/bookmarks", xsim.Fault{Latency: 4 * time.Millisecond})
	home := t.TempDir()
	writeChildConfig(t, home, s)
	me := s.DemoUserID()
	markedBefore := map[string]bool{}
	for _, l := range s.World().Bookmarks {
		if l.From == me {
			markedBefore[l.To] = true
		}
	}
	var targets []string
	for _, tw := range s.World().Tweets {
		if tw.AuthorID != me && !markedBefore[tw.ID] {
			targets = append(targets, tw.ID)
		}
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	ag := &agent{targets: targets, executed: map[string]string{}, answered: map[string]apperr.Code{}}
	stderr := &lockedBuffer{}
	ctx := context.Background()

	killedDuringStart := 0
	killStart := time.Now()
	for k := 0; k < *crashKills; k++ {
		delay := time.Duration(rng.Int64N(int64(150 * time.Millisecond)))
		var timer *time.Timer
		c, err := startChild(ctx, bin, home, stderr, func(p *os.Process) {
			timer = time.AfterFunc(delay, func() { _ = p.Kill() })
		})
		if err != nil {
			killedDuringStart++
			if timer != nil {
				timer.Stop()
			}
			if c != nil {
				_ = c.stop(t)
			}
			continue
		}
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					it := ag.take()
					tool, args := it.tool()
					e, err := call(ctx, c.cs, tool, args)
					if err != nil {
						ag.lost(it)
						return
					}
					ag.record(it, e)
				}
			}()
		}
		wg.Wait()
		timer.Stop()
		_ = c.stop(t)
	}

	killing := time.Since(killStart)

	// A final clean start recovers whatever the last kill left pending;
	// then the server is shut down normally.
	c, err := startChild(ctx, bin, home, stderr, nil)
	if err != nil {
		t.Fatalf("final start: %v\n%s", err, stderr.String())
	}
	for _, it := range ag.retry {
		tool, args := it.tool()
		e := mustCall(t, ctx, c.cs, tool, args)
		ag.record(it, e)
	}
	mustCall(t, ctx, c.cs, "get_recent_mutations", map[string]any{"limit": 1})
	if err := c.stop(t); err != nil {
		t.Fatalf("clean shutdown: %v\n%s", err, stderr.String())
	}
	if len(ag.bad) > 0 {
		t.Fatalf("unexpected answers (first of %d): %s", len(ag.bad), ag.bad[0])
	}

	// X: every workload text at most once, every executed post exactly once,
	// and no bookmark request billed twice.
	byText := s.postsByText()
	onX := 0
	for text, n := range byText {
		if !strings.HasPrefix(text, "crash workload post ") {
			continue
		}
		if n > 1 {
			t.Fatalf("%q was posted %d times", text, n)
		}
		onX++
	}
	for text := range ag.executed {
		if byText[text] != 1 {
			t.Fatalf("%q was reported executed but is on X %d times", text, byText[text])
		}
	}
	if got := s.Counters()[xsim.CountTweetsCreated]; got != int64(onX) {
		t.Fatalf("emulator created %d posts for %d workload texts", got, onX)
	}
	newMarks := 0
	for _, l := range s.World().Bookmarks {
		if l.From == me && !markedBefore[l.To] {
			newMarks++
		}
	}
	if billed := s.Billing().Units[xsim.BillBookmark]; billed != int64(newMarks) {
		t.Fatalf("%d bookmark requests reached X for %d new bookmarks", billed, newMarks)
	}

	// The database: intact, and no row left pending.
	db, err := store.Open(ctx, filepath.Join(home, "tuitbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res, err := db.IntegrityCheck(ctx); err != nil || res != "ok" {
		t.Fatalf("integrity_check = %q (%v)", res, err)
	}
	counts := map[string]int{}
	rows, err := db.QueryContext(ctx, `SELECT status, count(*) FROM mutation_audit GROUP BY status`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			t.Fatal(err)
		}
		counts[st] = n
	}
	rows.Close()
	for st, n := range counts {
		switch st {
		case "success", "failure", "unknown", "interrupted", "duplicate":
		default:
			t.Fatalf("%d audit rows are %q after a clean start: %v", n, st, counts)
		}
	}
	checkSuccessRowsOnX(t, ctx, db.DB, byText)
	if strings.Contains(stderr.String(), tokenOf(t, home)) {
		t.Fatal("the server logged the bearer token")
	}
	t.Logf("%d kills (%d before the session was up) in %v; audit rows %v; %d posts and %d bookmarks on X; %d answers seen",
		*crashKills, killedDuringStart, killing.Round(time.Millisecond), counts, onX, newMarks, len(ag.answered))
	if *crashKills >= 20 && counts["interrupted"] == 0 {
		t.Fatal("no kill landed while a mutation was in flight; the test did not exercise recovery")
	}
}

// checkSuccessRowsOnX asserts every successful post in the audit log is on X.
func checkSuccessRowsOnX(t *testing.T, ctx context.Context, db *sql.DB, byText map[string]int) {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT params_summary FROM mutation_audit WHERE tool_name = 'x_post_tweet' AND status = 'success'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var summary string
		if err := rows.Scan(&summary); err != nil {
			t.Fatal(err)
		}
		i := strings.Index(summary, "crash workload post ")
		if i < 0 {
			t.Fatalf("summary %q", summary)
		}
		text := summary[i : i+strings.IndexByte(summary[i:], '"')]
		if byText[text] != 1 {
			t.Fatalf("audit says %q succeeded; X has it %d times", text, byText[text])
		}
	}
}

func tokenOf(t *testing.T, home string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	const key = `"access_token":"`
	s := strings.ReplaceAll(string(b), `": "`, `":"`)
	i := strings.Index(s, key)
	if i < 0 {
		t.Fatal("tokens.json has no access_token")
	}
	s = s[i+len(key):]
	return s[:strings.IndexByte(s, '"')]
}
