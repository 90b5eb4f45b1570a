package autopilot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/llm/llmtest"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

const product = "Tuitpilot"

// day0 is a Monday, midnight UTC.
var day0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// fakeLLM speaks the OpenAI chat-completions wire format and answers with
// varied text, so similarity checks pass. What it writes depends on the
// system prompt: a reply names the product only when the prompt allows it,
// unless rogue is set, which makes every rogueEvery-th reply name it anyway.
type fakeLLM struct {
	srv *httptest.Server

	mu         sync.Mutex
	n          int
	replies    int
	rogueEvery int
	banned     string // when set, every reply contains it
	fixed      string // when set, every reply is exactly this
	calls      map[string]int
}

func newFakeLLM(t *testing.T) *fakeLLM {
	t.Helper()
	f := &fakeLLM{calls: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeLLM) set(fn func(f *fakeLLM)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeLLM) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[kind]
}

// words makes a sentence no earlier answer shares many words with.
func words(n, count int) string {
	var b []string
	for i := range count {
		b = append(b, fmt.Sprintf("w%dn%d", n, i))
	}
	return strings.Join(b, " ")
}

func (f *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	system := ""
	for _, m := range req.Messages {
		if m.Role == "system" {
			b, _ := json.Marshal(m.Content)
			system += string(b)
		}
	}
	f.mu.Lock()
	f.n++
	n := f.n
	var text string
	switch {
	case strings.Contains(system, "You write threads"):
		f.calls["thread"]++
		var parts []string
		for i := range 5 {
			parts = append(parts, fmt.Sprintf("Part %d of thread %d: %s.", i+1, n, words(n*10+i, 6)))
		}
		text = strings.Join(parts, "\n---\n")
	case strings.Contains(system, "You reply to posts"):
		f.calls["reply"]++
		f.replies++
		allowed := strings.Contains(system, "Mention "+product+" only if it genuinely helps")
		rogue := f.rogueEvery > 0 && f.replies%f.rogueEvery == 0
		text = "Good point. " + words(n, 8) + "."
		if allowed || rogue {
			text = "We hit the same thing while building " + product + ": " + words(n, 6) + "."
		}
		if f.banned != "" {
			text += " " + f.banned + " this."
		}
		if f.fixed != "" {
			text = f.fixed
		}
	case strings.Contains(system, "You write posts"):
		f.calls["tweet"]++
		text = fmt.Sprintf("Tip %d: %s.", n, words(n, 9))
	default:
		f.calls["other"]++
		text = "OK"
	}
	f.mu.Unlock()
	llmtest.Write(w, llmtest.Completion{ID: n, Model: "gpt-4o-mini", Content: text, PromptTokens: 50, CompletionTokens: 20})
}

// env is one autopilot under test: the App (with its emulator), the clock
// and the fake LLM.
type env struct {
	t     *testing.T
	clock *clock.Fake
	llm   *fakeLLM
	cfg   config.Config
	app   *app.App
	sim   *xsim.Server
	rng   *rand.Rand
	// injections are scheduled posts by other accounts.
	injections []injection
	injected   int
	// end and cancel stop a runUntil.
	end    time.Time
	cancel context.CancelFunc
}

type injection struct {
	at   time.Time
	user string
	text string
	// do, when set, runs instead of a post (arming a fault at a time).
	do func()
}

// baseConfig is a config in which the autopilot may post without approval,
// with deterministic pacing.
func baseConfig(home, llmURL string) config.Config {
	cfg := config.Default()
	cfg.Home = home
	// The loops reply to strangers found by search and quote posts, which
	// X allows only an enterprise app.
	cfg.XAPI.Access = config.AccessEnterprise
	// The loops' LLM writes their replies, which X's rules send to a
	// person unless X approved the app's AI replies: these tests declare it.
	cfg.XAPI.AIRepliesApproved = true
	cfg.ApprovalMode = false
	cfg.MCPPolicy.RequireApprovalFor = nil
	cfg.MCPPolicy.MaxMutationsPerHour = 0
	cfg.LLM = config.LLM{Provider: "openai", Model: "gpt-4o-mini", BaseURL: llmURL + "/v1", APIKey: "test",
		TimeoutSeconds: 10, MaxTokens: 500, Temperature: 0.7}
	cfg.XAPI.MaxAttempts = 1
	cfg.XAPI.MaxRateLimitWaitS = 1
	cfg.Business = config.Business{
		ProductName: product, ProductDescription: "An autopilot for X that keeps a human in the loop.",
		ProductKeywords: []string{"golang"}, CompetitorKeywords: []string{"rust"},
		ContentPillars: []string{"Go tooling", "shipping CLIs", "safe automation"},
	}
	cfg.Scoring.Threshold = 40
	cfg.Limits.MaxRepliesPerDay = 5
	cfg.Limits.MaxTweetsPerDay = 4
	cfg.Limits.MaxThreadsPerWeek = 1
	cfg.Limits.MaxRepliesPerAuthorPerDay = 1
	cfg.Limits.ProductMentionRatio = 0.4
	cfg.Limits.MinActionDelaySeconds = 30
	cfg.Limits.MaxActionDelaySeconds = 90
	cfg.Schedule = config.Schedule{Timezone: "UTC", ActiveHoursStart: 8, ActiveHoursEnd: 22,
		ActiveDays: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}}
	// The emulator stands in for a real account here, which keeps its
	// active hours.
	cfg.Sandbox.AllDay = false
	cfg.Intervals.DiscoverySeconds = 1800
	cfg.Intervals.MentionsSeconds = 1800
	cfg.Intervals.TargetsSeconds = 3600
	cfg.Intervals.ContentSeconds = 10800
	cfg.Intervals.AnalyticsSeconds = 3600
	cfg.Intervals.PublisherSeconds = 600
	cfg.Intervals.HousekeepingSeconds = 3600
	cfg.Intervals.JitterPercent = 0
	cfg.Breaker = config.Breaker{ErrorThreshold: 3, CooldownSeconds: 3600}
	return cfg
}

// newEnv builds an env on the backend t runs on (storetest.ForEachBackend):
// the home's SQLite file, or a new PostgreSQL database of its own.
func newEnv(t *testing.T, configure func(*config.Config)) *env {
	t.Helper()
	e := &env{t: t, clock: clock.NewFake(day0), llm: newFakeLLM(t), rng: rand.New(rand.NewPCG(7, 11))}
	e.cfg = baseConfig(t.TempDir(), e.llm.srv.URL)
	if storetest.BackendOf(t) == storetest.Postgres {
		e.cfg.Storage.DatabaseURL = storetest.Target(t)
	}
	if configure != nil {
		configure(&e.cfg)
	}
	e.app = e.openApp()
	e.sim = e.app.Sim.Server
	if e.sim == nil {
		t.Fatal("the sandbox did not start its own emulator")
	}
	return e
}

// openApp builds an App on the env's home and clock. A second App attaches
// to the first one's emulator, as a restarted process would.
func (e *env) openApp() *app.App {
	e.t.Helper()
	cfg := e.cfg
	a, err := app.New(context.Background(), &cfg, app.Options{Sandbox: true, Now: e.clock.Now})
	if err != nil {
		e.t.Fatalf("app.New: %v", err)
	}
	e.t.Cleanup(func() { _ = a.Close() })
	return a
}

func (e *env) runner(a *app.App, loops ...string) *autopilot.Runner {
	e.t.Helper()
	r, err := a.Autopilot(autopilot.Options{Sleep: e.sleep, Rand: rand.New(rand.NewPCG(1, 2)), Loops: loops})
	if err != nil {
		e.t.Fatalf("Autopilot: %v", err)
	}
	return r
}

// sleep advances the clock, performing the injections that fall inside the
// wait at their own time. Past the end of a runUntil it stops the daemon.
func (e *env) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	target := e.clock.Now().Add(d)
	stop := false
	if !e.end.IsZero() && target.After(e.end) {
		target, stop = e.end, true
	}
	for len(e.injections) > 0 && !e.injections[0].at.After(target) {
		in := e.injections[0]
		e.injections = e.injections[1:]
		e.clock.AdvanceTo(in.at)
		if in.do != nil {
			in.do()
			continue
		}
		// This runs on the daemon's goroutine, where t.Fatal must not be
		// called.
		if _, err := e.tryPostAs(in.user, in.text); err != nil {
			e.t.Errorf("injection at %s: %v", in.at.Format(time.RFC3339), err)
		}
	}
	e.clock.AdvanceTo(target)
	if stop {
		e.cancel()
		return context.Canceled
	}
	return ctx.Err()
}

// runUntil runs the daemon until the clock reaches end.
func (e *env) runUntil(r *autopilot.Runner, end time.Time) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.end, e.cancel = end, cancel
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			e.t.Fatalf("Run: %v", err)
		}
	case <-time.After(60 * time.Second):
		cancel()
		e.t.Fatal("Run did not finish")
	}
	e.end, e.cancel = time.Time{}, nil
}

// postAs posts on the emulator as another account.
func (e *env) postAs(username, text string) string {
	e.t.Helper()
	id, err := e.tryPostAs(username, text)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *env) tryPostAs(username, text string) (string, error) {
	var uid string
	for _, u := range e.sim.World().Users {
		if u.Username == username {
			uid = u.ID
		}
	}
	if uid == "" {
		return "", fmt.Errorf("no user %s in the emulator", username)
	}
	tok, _, _ := e.sim.IssueToken(uid, e.sim.AllScopes())
	body, _ := json.Marshal(map[string]any{"text": text})
	req, _ := http.NewRequest(http.MethodPost, e.app.Sim.URL+"/2/tweets", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("post as %s: %w", username, err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("post as %s: status %d", username, resp.StatusCode)
	}
	e.injected++
	return out.Data.ID, nil
}

// at runs fn when the clock reaches t.
func (e *env) at(t time.Time, fn func()) {
	e.injections = append(e.injections, injection{at: t, do: fn})
	sort.SliceStable(e.injections, func(a, b int) bool { return e.injections[a].at.Before(e.injections[b].at) })
}

func (e *env) inject(at time.Time, user, text string) {
	e.injections = append(e.injections, injection{at: at, user: user, text: text})
	sort.SliceStable(e.injections, func(a, b int) bool { return e.injections[a].at.Before(e.injections[b].at) })
}

func (e *env) db() *store.DB { return e.app.DB }

func (e *env) count(q string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db().QueryRow(q, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// ourPosts are the demo account's posts created in [from, to).
func (e *env) ourPosts(from, to time.Time) []xsim.Tweet {
	w := e.sim.World()
	var out []xsim.Tweet
	for _, t := range w.Tweets {
		if t.AuthorID == w.DemoUserID && !t.CreatedAt.Before(from) && t.CreatedAt.Before(to) {
			out = append(out, t)
		}
	}
	return out
}
