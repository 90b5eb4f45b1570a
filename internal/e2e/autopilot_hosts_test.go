//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/llm/llmtest"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/xauth"
)

// contentInterval is the content loop's interval, the only loop the
// autopilot hosts run: every interval each account posts one tweet, and a
// standing-by runner asks for the account's lock again.
const contentInterval = 2 * time.Second

// takeoverMargin is what a takeover may take beyond one interval: the
// server noticing the killed host's closed session, the standing-by
// runner's lock query, and its log line crossing a pipe to the test, on a
// machine other tests share. Measured takeovers are well under it.
const takeoverMargin = 1500 * time.Millisecond

// apAccounts are the two accounts both autopilot hosts serve.
var apAccounts = []string{"default", "brand_b"}

// changes wakes waiters when something the test observes changed: a log
// line arrived or X answered a request.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// waitUntil returns once cond holds, failing t when it does not within
// limit. cond is evaluated again on every change, and every poll (for
// state nobody announces, such as the database) when poll is not zero.
func waitUntil(t *testing.T, c *changes, limit, poll time.Duration, what string, cond func() bool, dump func() string) {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	var tick <-chan time.Time
	if poll > 0 {
		tk := time.NewTicker(poll)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		wake := c.next()
		if cond() {
			return
		}
		select {
		case <-wake:
		case <-tick:
		case <-deadline.C:
			t.Fatalf("%s: not within %s\n%s", what, limit, dump())
		}
	}
}

// xRequest is one request the X tap saw, and who sent it.
type xRequest struct {
	host          int
	account       string
	method, path  string
	status        int
	start, finish time.Time
	unknownBearer bool
	noBearer      bool
}

func (r xRequest) isPost() bool {
	return r.method == http.MethodPost && r.path == "/2/tweets" && r.status == http.StatusCreated
}

// xTap is a loopback proxy in front of the emulator that every host
// reaches X through. Each host logged each account in with its own token,
// so the bearer token of a request names the host and the account it acts
// for: the proof of who runs an account is what X saw.
type xTap struct {
	url     string
	changes *changes

	mu     sync.Mutex
	owners map[string]xRequest // bearer token -> host and account
	log    []xRequest
}

func newXTap(t *testing.T, target string, c *changes) *xTap {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	tap := &xTap{changes: c, owners: map[string]xRequest{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := xRequest{host: -1, method: r.Method, path: r.URL.Path, start: time.Now()}
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			tap.mu.Lock()
			o, known := tap.owners[tok]
			tap.mu.Unlock()
			rec.host, rec.account, rec.unknownBearer = o.host, o.account, !known
		} else {
			rec.noBearer = true
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		proxy.ServeHTTP(sw, r)
		rec.status, rec.finish = sw.status, time.Now()
		tap.mu.Lock()
		tap.log = append(tap.log, rec)
		tap.mu.Unlock()
		c.notify()
	}))
	t.Cleanup(srv.Close)
	tap.url = srv.URL
	return tap
}

func (x *xTap) own(token string, host int, account string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.owners[token] = xRequest{host: host, account: account}
}

func (x *xTap) requests() []xRequest {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]xRequest(nil), x.log...)
}

// posts counts the tweets X created for account through host (any host
// when host < 0) that started after since (zero: all of them).
func (x *xTap) posts(account string, host int, since time.Time) int {
	n := 0
	for _, r := range x.requests() {
		if r.isPost() && r.account == account && (host < 0 || r.host == host) && r.start.After(since) {
			n++
		}
	}
	return n
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// draftLLM speaks the OpenAI chat-completions wire format and answers
// every prompt with a short post no earlier answer resembles.
type draftLLM struct {
	url string
	mu  sync.Mutex
	n   int
}

func newDraftLLM(t *testing.T) *draftLLM {
	t.Helper()
	d := &draftLLM{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		d.mu.Lock()
		d.n++
		n := d.n
		d.mu.Unlock()
		words := make([]string, 8)
		for i := range words {
			words[i] = fmt.Sprintf("d%dw%d", n, i)
		}
		text := fmt.Sprintf("Note %d on shipping small tools: %s.", n, strings.Join(words, " "))
		llmtest.Write(w, llmtest.Completion{ID: n, Model: "gpt-4o-mini", Content: text, PromptTokens: 50, CompletionTokens: 20})
	}))
	t.Cleanup(srv.Close)
	d.url = srv.URL
	return d
}

// autopilotConfig is what the autopilot hosts add to the server
// configuration: a model, a content pillar, always-active hours, no pauses
// between actions, and only the content loop, every contentInterval.
func autopilotConfig(llmURL string) string {
	return fmt.Sprintf(`
[llm]
provider = "openai"
model = "gpt-4o-mini"
base_url = %q
api_key = "test"
timeout_seconds = 10

[business]
product_name = "Tuitbot"
product_description = "An autopilot for X that keeps a human in the loop."
content_pillars = ["shipping small tools", "safe automation"]

[limits]
max_tweets_per_day = 1000
min_action_delay_seconds = 0
max_action_delay_seconds = 0

[schedule]
timezone = "UTC"
active_hours_start = 0
active_hours_end = 24

[intervals]
enabled_loops = ["content"]
content_post_window_seconds = %d
jitter_percent = 0

[accounts.brand_b]
mode = "autopilot"
`, llmURL+"/v1", int(contentInterval/time.Second))
}

// logLine is one line a host wrote and when the test read it.
type logLine struct {
	at   time.Time
	text string
}

// apHost is one `tuitbot run --all-accounts` process.
type apHost struct {
	n    int
	name string // its PostgreSQL application_name
	home string
	cmd  *exec.Cmd
	done chan struct{}

	mu    sync.Mutex
	lines []logLine
}

func (h *apHost) output() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, l := range h.lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}

// first returns the first line matching re and when it arrived.
func (h *apHost) first(re *regexp.Regexp) (logLine, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.lines {
		if re.MatchString(l.text) {
			return l, true
		}
	}
	return logLine{}, false
}

func (h *apHost) count(re *regexp.Regexp) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.lines {
		if re.MatchString(l.text) {
			n++
		}
	}
	return n
}

// accountLine matches a runner's log line msg for account.
func accountLine(msg, account string) *regexp.Regexp {
	return regexp.MustCompile(`msg="` + regexp.QuoteMeta(msg) + `".*\baccount=` + regexp.QuoteMeta(account) + `(\s|$)`)
}

const (
	msgStarted    = "autopilot started"
	msgStandingBy = "autopilot standing by: another runner holds this account"
	msgTakingOver = "autopilot taking over: the lock is free"
)

// apFleet is two hosts running the autopilot of both accounts on one
// database, reaching one emulator through the tap.
type apFleet struct {
	t       *testing.T
	bin     string
	dbURL   string
	x       *sim
	tap     *xTap
	llm     *draftLLM
	changes *changes
	hosts   []*apHost
}

// hostURL is the shared database URL with the host's application_name,
// which lets the test tell the hosts' sessions apart in pg_stat_activity.
func hostURL(t *testing.T, dbURL, name string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// prepare writes host n's home: configuration and one X login per account.
func (f *apFleet) prepare(n int) *apHost {
	t := f.t
	t.Helper()
	h := &apHost{n: n, name: fmt.Sprintf("tuitbot-host%d", n), home: filepath.Join(t.TempDir(), fmt.Sprintf("host%d", n)), done: make(chan struct{})}
	if err := os.MkdirAll(filepath.Join(h.home, "tokens"), 0o700); err != nil {
		t.Fatal(err)
	}
	toml := childConfig(f.tap.url, hostURL(t, f.dbURL, h.name), "max_mutations_per_hour = 0") + autopilotConfig(f.llm.url)
	if err := os.WriteFile(filepath.Join(h.home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	users := f.x.DemoAccounts()
	for _, account := range apAccounts {
		user, ok := users[account]
		if !ok {
			t.Fatalf("the emulator's world has no account %s: %v", account, users)
		}
		access, refresh, ttl := f.x.IssueToken(user, f.x.AllScopes())
		tok := &xauth.Token{AccessToken: access, RefreshToken: refresh, TokenType: "bearer", ExpiresAt: time.Now().Add(ttl), Scopes: f.x.AllScopes()}
		path := filepath.Join(h.home, "tokens.json")
		if account != "default" {
			path = filepath.Join(h.home, "tokens", account+".json")
		}
		if err := xauth.SaveToken(context.Background(), path, tok); err != nil {
			t.Fatalf("save token: %v", err)
		}
		f.tap.own(access, n, account)
	}
	f.hosts = append(f.hosts, h)
	return h
}

// start runs `tuitbot run --all-accounts` in h's home, collecting its
// output line by line.
func (f *apFleet) start(h *apHost) {
	t := f.t
	t.Helper()
	cmd := exec.Command(f.bin, "run", "--all-accounts")
	cmd.Env = append(cleanEnv(), "TUITBOT_HOME="+h.home)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start host %d: %v", h.n, err)
	}
	h.cmd = cmd
	go func() {
		_ = cmd.Wait()
		pw.Close()
		close(h.done)
		f.changes.notify()
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			h.mu.Lock()
			h.lines = append(h.lines, logLine{at: time.Now(), text: sc.Text()})
			h.mu.Unlock()
			f.changes.notify()
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		select {
		case <-h.done:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-h.done
		}
	})
}

// waitLog waits for host h to write a line matching re.
func (f *apFleet) waitLog(h *apHost, re *regexp.Regexp, limit time.Duration) logLine {
	f.t.Helper()
	var got logLine
	waitUntil(f.t, f.changes, limit, 0, fmt.Sprintf("host %d writes %s", h.n, re), func() bool {
		var ok bool
		got, ok = h.first(re)
		if !ok {
			select {
			case <-h.done:
				f.t.Fatalf("host %d exited:\n%s", h.n, h.output())
			default:
			}
		}
		return ok
	}, f.dump)
	return got
}

// standingBy waits for host h to stand by for account, failing at once
// when h starts the account's loops instead.
func (f *apFleet) standingBy(h *apHost, account string, limit time.Duration) {
	f.t.Helper()
	started := accountLine(msgStarted, account)
	waiting := accountLine(msgStandingBy, account)
	waitUntil(f.t, f.changes, limit, 0, fmt.Sprintf("host %d stands by for %s", h.n, account), func() bool {
		if _, ok := h.first(started); ok {
			f.t.Fatalf("host %d started account %s's loops while another runner held it:\n%s", h.n, account, f.dump())
		}
		_, ok := h.first(waiting)
		return ok
	}, f.dump)
}

func (f *apFleet) dump() string {
	var b strings.Builder
	for _, h := range f.hosts {
		fmt.Fprintf(&b, "--- host %d:\n%s", h.n, h.output())
	}
	return b.String()
}

// holders reads, from PostgreSQL's own lock table, which host's session
// holds each account's autopilot lock ("" when none does).
func holders(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, account := range apAccounts {
		rows, err := db.QueryContext(context.Background(), `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND ((l.classid::bigint << 32) | l.objid::bigint) = ?`, store.LockKey(autopilot.SessionLockKey(account)))
		if err != nil {
			t.Fatalf("read the lock table: %v", err)
		}
		var names []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			names = append(names, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if len(names) > 1 {
			t.Fatalf("account %s's autopilot lock is granted to %d sessions: %v", account, len(names), names)
		}
		if len(names) == 1 {
			out[account] = names[0]
		}
	}
	return out
}

// postedActions returns the X ids of the tweets the autopilot recorded as
// posted for account.
func postedActions(t *testing.T, db *sql.DB, account string) map[string]bool {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT tweet_id FROM autopilot_actions WHERE account_id = ? AND status = 'posted'`, account)
	if err != nil {
		t.Fatalf("read autopilot actions: %v", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		if out[id] {
			t.Fatalf("account %s recorded tweet %s as posted twice", account, id)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAutopilotOneRunnerPerAccountAcrossHosts runs `tuitbot run
// --all-accounts` on two hosts (two homes, each with its own X logins) for
// two accounts on one PostgreSQL database, with the emulator as their
// shared X. Each account has exactly one runner, seen in the database's
// lock table, in the hosts' logs and in whose tokens X was called with;
// when the host running an account is SIGKILLed, the other one takes the
// account over within one interval and carries on posting, with every
// tweet on X recorded once.
func TestAutopilotOneRunnerPerAccountAcrossHosts(t *testing.T) {
	pgtest.ServerURL(t) // skips (or fails under TUITBOT_REQUIRE_POSTGRES) without a server
	bin := buildTuitbot(t)
	x := startSim(t, nil)
	ctx := context.Background()
	c := &changes{}
	f := &apFleet{t: t, bin: bin, dbURL: pgtest.NewDatabase(t, ""), x: x, changes: c}
	f.tap = newXTap(t, x.url, c)
	f.llm = newDraftLLM(t)
	db, err := store.Open(ctx, f.dbURL, store.Options{}) // migrates, as the first host's operator would
	if err != nil {
		t.Fatalf("open the shared database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	h0, h1 := f.prepare(0), f.prepare(1)
	users := x.DemoAccounts()
	before := map[string]map[string]bool{}
	for _, account := range apAccounts {
		before[account] = map[string]bool{}
		for _, tw := range x.World().Tweets {
			if tw.AuthorID == users[account] {
				before[account][tw.ID] = true
			}
		}
	}
	limit := 30 * time.Second

	// Give each host one account, rather than both to whichever host
	// starts first: host 1 starts while the test holds default's lock, so
	// it runs brand_b only; it is then paused (SIGSTOP, a host too slow to
	// ask again) while the lock is freed and host 0 starts and takes
	// default.
	unlock, err := db.TrySessionLock(ctx, autopilot.SessionLockKey("default"))
	if err != nil {
		t.Fatalf("hold default's lock: %v", err)
	}
	var unlockOnce sync.Once
	release := func() { unlockOnce.Do(unlock) }
	t.Cleanup(release)
	f.start(h1)
	f.waitLog(h1, accountLine(msgStarted, "brand_b"), limit)
	f.standingBy(h1, "default", limit)
	if err := h1.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	release()
	f.start(h0)
	f.waitLog(h0, accountLine(msgStarted, "default"), limit)
	f.standingBy(h0, "brand_b", limit)
	if err := h1.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	runner := map[string]*apHost{"default": h0, "brand_b": h1}

	// Both accounts post, each from its own runner's host only.
	start := time.Now()
	waitUntil(t, c, limit, 0, "both accounts post twice", func() bool {
		return f.tap.posts("default", -1, start) >= 2 && f.tap.posts("brand_b", -1, start) >= 2
	}, f.dump)
	if got, want := holders(t, db.DB), map[string]string{"default": h0.name, "brand_b": h1.name}; !maps.Equal(got, want) {
		t.Fatalf("lock table: the holders are %v, want %v", got, want)
	}
	for _, h := range f.hosts {
		for _, account := range apAccounts {
			started := h.count(accountLine(msgStarted, account))
			if want := map[bool]int{true: 1, false: 0}[runner[account] == h]; started != want {
				t.Fatalf("host %d started account %s's loops %d times, want %d:\n%s", h.n, account, started, want, f.dump())
			}
		}
	}
	checkAttribution(t, f.tap.requests(), func(r xRequest) bool { return runner[r.account].n == r.host })

	// Kill default's runner between two of its posts, once its last post
	// is recorded, so every tweet on X has its record.
	mark := time.Now()
	waitUntil(t, c, limit, 0, "host 0 posts for default again", func() bool { return f.tap.posts("default", h0.n, mark) >= 1 }, f.dump)
	waitUntil(t, c, limit, 20*time.Millisecond, "host 0 records its last post", func() bool {
		return len(postedActions(t, db.DB, "default")) == f.tap.posts("default", -1, time.Time{})
	}, f.dump)
	if _, ok := h1.first(accountLine(msgTakingOver, "default")); ok {
		t.Fatalf("host 1 took default over while host 0 ran it:\n%s", f.dump())
	}
	killed := time.Now()
	if err := h0.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	over := f.waitLog(h1, accountLine(msgTakingOver, "default"), limit)
	took := over.at.Sub(killed)
	t.Logf("host 1 took default over %s after host 0 was killed (interval %s)", took.Round(time.Millisecond), contentInterval)
	if took <= 0 {
		t.Fatalf("host 1 took default over before host 0 was killed:\n%s", f.dump())
	}
	if took > contentInterval+takeoverMargin {
		t.Fatalf("host 1 took default over %s after the kill, more than one interval (%s) plus %s", took, contentInterval, takeoverMargin)
	}
	f.waitLog(h1, accountLine(msgStarted, "default"), limit)
	if got, want := holders(t, db.DB), map[string]string{"default": h1.name, "brand_b": h1.name}; !maps.Equal(got, want) {
		t.Fatalf("lock table after the takeover: the holders are %v, want %v", got, want)
	}
	// The survivor posts for default, and brand_b carries on.
	waitUntil(t, c, limit, 0, "host 1 posts for both accounts after the takeover", func() bool {
		return f.tap.posts("default", h1.n, killed) >= 2 && f.tap.posts("brand_b", h1.n, killed) >= 1
	}, f.dump)
	<-h0.done
	checkAttribution(t, f.tap.requests(), func(r xRequest) bool {
		if r.account == "default" && r.start.After(killed) {
			return r.host == h1.n
		}
		return runner[r.account].n == r.host
	})

	// Stop the survivor so nothing is in flight, then compare X with the
	// records: every new tweet of an account is one posted action of it,
	// with a text no other tweet has.
	if err := h1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h1.done:
	case <-time.After(limit):
		t.Fatalf("host 1 did not stop on SIGTERM:\n%s", f.dump())
	}
	texts := map[string]int{}
	for _, tw := range x.World().Tweets {
		texts[tw.Text]++
	}
	for _, account := range apAccounts {
		onX := map[string]bool{}
		for _, tw := range x.World().Tweets {
			if tw.AuthorID == users[account] && !before[account][tw.ID] {
				onX[tw.ID] = true
				if texts[tw.Text] > 1 {
					t.Fatalf("account %s: %d tweets on X read %q", account, texts[tw.Text], tw.Text)
				}
			}
		}
		recorded := postedActions(t, db.DB, account)
		posts := f.tap.posts(account, -1, time.Time{})
		t.Logf("account %s: %d new tweets on X, %d posts answered through the tap, %d recorded as posted", account, len(onX), posts, len(recorded))
		if !maps.Equal(onX, recorded) || posts != len(onX) {
			t.Fatalf("account %s: tweets on X %v, recorded as posted %v, %d posts answered", account, slices.Sorted(maps.Keys(onX)), slices.Sorted(maps.Keys(recorded)), posts)
		}
	}
	checkSpacing(t, f.tap.requests())
	var counts []string
	rows, err := db.QueryContext(ctx, `SELECT account_id, status, count(*) FROM mutation_audit GROUP BY account_id, status ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var account, status string
		var n int
		if err := rows.Scan(&account, &status, &n); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, fmt.Sprintf("%s/%s=%d", account, status, n))
		if status != "success" {
			t.Fatalf("account %s has %d audit rows %s", account, n, status)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("audit: %s", strings.Join(counts, " "))
}

// checkAttribution fails t when X saw a request it cannot attribute, or
// one from a host that was not the account's runner at the time.
func checkAttribution(t *testing.T, reqs []xRequest, fromRunner func(xRequest) bool) {
	t.Helper()
	per := map[string]int{}
	for _, r := range reqs {
		switch {
		case r.noBearer:
			continue // the OAuth endpoints carry no bearer token
		case r.unknownBearer:
			t.Fatalf("X saw %s %s with a token no host was given", r.method, r.path)
		case !fromRunner(r):
			t.Fatalf("X saw %s %s (status %d) for account %s from host %d, which was not its runner", r.method, r.path, r.status, r.account, r.host)
		}
		per[fmt.Sprintf("%s@host%d", r.account, r.host)]++
	}
	t.Logf("X requests by account and host: %v", per)
}

// contentSpacing is how far apart the content loop keeps an account's
// posts: 9/10 of its interval (autopilot's spacing), judged from the
// account's ledger in the shared database, whichever host posts.
const contentSpacing = contentInterval - contentInterval/10

// checkSpacing fails t when two posts of one account reached X closer than
// contentSpacing: what two runners of one account, or a survivor posting
// again in the slot the dead host had already used, would do. A runner
// checks the ledger after the previous post was recorded (to the
// millisecond), so the posts' arrival times at X keep the spacing up to
// that rounding.
func checkSpacing(t *testing.T, reqs []xRequest) {
	t.Helper()
	const rounding = 10 * time.Millisecond
	var posts []xRequest
	for _, r := range reqs {
		if r.isPost() {
			posts = append(posts, r)
		}
	}
	// The tap logs a request when it is answered; order them by arrival.
	slices.SortFunc(posts, func(a, b xRequest) int { return a.start.Compare(b.start) })
	last := map[string]xRequest{}
	for _, r := range posts {
		if p, ok := last[r.account]; ok {
			if gap := r.start.Sub(p.start); gap < contentSpacing-rounding {
				t.Fatalf("account %s posted from host %d %s after its post from host %d; the content loop keeps %s between posts",
					r.account, r.host, gap, p.host, contentSpacing)
			}
		}
		last[r.account] = r
	}
}
