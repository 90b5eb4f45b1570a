package autopilot_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/llm"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// housekeepingEvery is the only loop's interval in these tests, so it is
// also the stand-by retry interval.
const housekeepingEvery = time.Hour

// gatedRunner is a runner whose every sleep is reported on slept and then
// waits for wake (or its context), advancing the shared fake clock only
// when woken: the test decides when each runner's time passes.
type gatedRunner struct {
	r       *autopilot.Runner
	slept   chan time.Duration
	wake    chan struct{}
	standby chan error
	done    chan error
	cancel  context.CancelFunc
}

func (e *env) gatedRunner(a *app.App) *gatedRunner {
	e.t.Helper()
	g := &gatedRunner{slept: make(chan time.Duration, 16), wake: make(chan struct{}), standby: make(chan error, 16), done: make(chan error, 1)}
	sleep := func(ctx context.Context, d time.Duration) error {
		g.slept <- d
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-g.wake:
			e.clock.Advance(d)
			return nil
		}
	}
	r, err := a.Autopilot(autopilot.Options{Sleep: sleep, Rand: rand.New(rand.NewPCG(1, 2)), Loops: []string{autopilot.LoopHousekeeping}})
	if err != nil {
		e.t.Fatalf("Autopilot: %v", err)
	}
	g.r = r
	return g
}

// start runs the runner under acquire until the test ends.
func (g *gatedRunner) start(t *testing.T, acquire autopilot.Acquire) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	go func() { g.done <- g.r.RunExclusive(ctx, acquire, func(err error) { g.standby <- err }) }()
	t.Cleanup(func() { g.stop(t) })
}

func (g *gatedRunner) stop(t *testing.T) {
	t.Helper()
	if g.cancel == nil {
		return
	}
	g.cancel()
	g.cancel = nil
	select {
	case err := <-g.done:
		if err != nil {
			t.Errorf("RunExclusive: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("RunExclusive did not return after its context was cancelled")
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func (e *env) housekeepingRuns(account string) int {
	e.t.Helper()
	return e.count(`SELECT COALESCE(SUM(runs), 0) FROM loop_state WHERE account_id = ? AND name = ?`, account, autopilot.LoopHousekeeping)
}

// postgresEnv is an env whose database is a new PostgreSQL database, with
// a second account "brand_b".
func postgresEnv(t *testing.T) *env {
	t.Helper()
	url := pgtest.NewDatabase(t, "")
	return newEnv(t, func(c *config.Config) {
		c.Storage.DatabaseURL = url
		c.Intervals.HousekeepingSeconds = int(housekeepingEvery / time.Second)
		c.Accounts = map[string]map[string]any{"brand_b": {}}
	})
}

// TestExclusiveRunnerTakesOverWithinOneInterval runs two runners of one
// account on two "hosts" (two Apps on one PostgreSQL database): one runs,
// the other stands by without running a loop, and once the holder is gone
// (stopped, or its session killed as when its host dies) the other takes
// over on its next retry, one interval later.
func TestExclusiveRunnerTakesOverWithinOneInterval(t *testing.T) {
	for _, tc := range []struct {
		name string
		// livesOn: the holder's process outlives its session.
		livesOn bool
		kill    func(t *testing.T, e *env, holder *gatedRunner)
	}{
		{"holder stops", false, func(t *testing.T, _ *env, holder *gatedRunner) { holder.stop(t) }},
		{"holder's session dies", true, func(t *testing.T, e *env, _ *gatedRunner) {
			t.Helper()
			var pid int
			// The advisory lock's 64-bit key is split into classid (high
			// half) and objid (low half).
			if err := e.db().QueryRow(`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
				AND ((classid::bigint << 32) | objid::bigint) = ?`, store.LockKey(autopilot.SessionLockKey("default"))).Scan(&pid); err != nil {
				t.Fatalf("find the lock holder's session: %v", err)
			}
			var ok bool
			if err := e.db().QueryRow(`SELECT pg_terminate_backend(?, 10000)`, pid).Scan(&ok); err != nil || !ok {
				t.Fatalf("terminate the holder's session: %v, %v", ok, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := postgresEnv(t)
			hostB := e.openApp()
			holder, other := e.gatedRunner(e.app), e.gatedRunner(hostB)
			if got := other.r.RetryInterval(); got != housekeepingEvery {
				t.Fatalf("RetryInterval = %s, want the shortest loop interval %s", got, housekeepingEvery)
			}

			holder.start(t, autopilot.SessionLock(e.app.DB, "default"))
			// The holder ran housekeeping and now waits for the next run.
			if d := recv(t, holder.slept, "the holder's first sleep"); d != housekeepingEvery {
				t.Fatalf("holder sleeps %s, want %s", d, housekeepingEvery)
			}
			if n := e.housekeepingRuns("default"); n != 1 {
				t.Fatalf("housekeeping runs = %d, want 1 (the holder's)", n)
			}

			other.start(t, autopilot.SessionLock(hostB.DB, "default"))
			if err := recv(t, other.standby, "the other runner standing by"); !errors.Is(err, autopilot.ErrHeld) {
				t.Fatalf("stand-by reason = %v, want ErrHeld", err)
			}
			if d := recv(t, other.slept, "the stand-by wait"); d != housekeepingEvery {
				t.Fatalf("stand-by waits %s, want one interval (%s)", d, housekeepingEvery)
			}
			if n := e.housekeepingRuns("default"); n != 1 {
				t.Fatalf("housekeeping runs = %d while standing by, want 1", n)
			}

			tc.kill(t, e, holder)
			killedAt := e.clock.Now()
			other.wake <- struct{}{}
			// Taken over: it ran housekeeping and sleeps until its next run,
			// without standing by again.
			if d := recv(t, other.slept, "the new holder's first sleep"); d != housekeepingEvery {
				t.Fatalf("new holder sleeps %s, want %s", d, housekeepingEvery)
			}
			select {
			case err := <-other.standby:
				t.Fatalf("still standing by after the holder was gone: %v", err)
			default:
			}
			if n := e.housekeepingRuns("default"); n != 2 {
				t.Fatalf("housekeeping runs = %d, want 2 (the new holder ran)", n)
			}
			if took := e.clock.Now().Sub(killedAt); took > housekeepingEvery {
				t.Fatalf("took over %s after the holder was gone, want within %s", took, housekeepingEvery)
			}
			if !tc.livesOn {
				return
			}
			// The old holder wakes for its next iteration: it finds its lock
			// gone and stands by instead of running beside the new holder.
			holder.wake <- struct{}{}
			if err := recv(t, holder.standby, "the old holder standing by"); !errors.Is(err, autopilot.ErrHeld) {
				t.Fatalf("old holder's stand-by reason = %v, want ErrHeld", err)
			}
			if d := recv(t, holder.slept, "the old holder's stand-by wait"); d != housekeepingEvery {
				t.Fatalf("old holder waits %s, want %s", d, housekeepingEvery)
			}
			if n := e.housekeepingRuns("default"); n != 2 {
				t.Fatalf("housekeeping runs = %d, want 2: the old holder ran after losing its lock", n)
			}
		})
	}
}

// TestExclusiveRunnersOfTwoAccountsBothRun checks that the lock is the
// account's, not the database's: two accounts on two hosts both run.
func TestExclusiveRunnersOfTwoAccountsBothRun(t *testing.T) {
	e := postgresEnv(t)
	hostB := e.openApp()
	brand, err := hostB.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	def, other := e.gatedRunner(e.app), e.gatedRunner(brand)
	def.start(t, autopilot.SessionLock(e.app.DB, "default"))
	recv(t, def.slept, "the default account's runner")
	other.start(t, autopilot.SessionLock(hostB.DB, "brand_b"))
	recv(t, other.slept, "brand_b's runner")
	select {
	case err := <-other.standby:
		t.Fatalf("brand_b stood by: %v", err)
	case err := <-def.standby:
		t.Fatalf("default stood by: %v", err)
	default:
	}
	if a, b := e.housekeepingRuns("default"), e.housekeepingRuns("brand_b"); a != 1 || b != 1 {
		t.Fatalf("housekeeping runs: default %d, brand_b %d; want 1 each", a, b)
	}
}

// TestRunLockPerAccount checks the SQLite lock files: one per account
// beside the database, so two accounts of one database run together and
// one account runs once.
func TestRunLockPerAccount(t *testing.T) {
	home := t.TempDir()
	db := filepath.Join(home, "tuitbot.db")
	def, err := autopilot.AcquireAccountRunLock(db, home, "default")
	if err != nil {
		t.Fatal(err)
	}
	defer def.Release()
	brand, err := autopilot.AcquireAccountRunLock(db, home, "brand_b")
	if err != nil {
		t.Fatalf("a second account's lock beside the default's: %v", err)
	}
	defer brand.Release()
	for _, tc := range []struct{ account, file string }{{"default", "run.lock"}, {"", "run.lock"}, {"brand_b", "run-brand_b.lock"}} {
		if got := autopilot.RunLockFile(tc.account); got != tc.file {
			t.Errorf("RunLockFile(%q) = %q, want %q", tc.account, got, tc.file)
		}
		path := db + "." + tc.file
		if _, err := os.Stat(path); err != nil {
			t.Errorf("lock file: %v", err)
		}
		var le *autopilot.LockedError
		if _, err := autopilot.AcquireAccountRunLock(db, home, tc.account); !errors.As(err, &le) || le.Path != path {
			t.Errorf("second lock of %q: %v, want LockedError on %s", tc.account, err, path)
		}
	}
}

// TestLLMUsageIsRecordedPerAccount: each account's LLM calls land in the
// ledger under that account, so drafting spend is never pooled.
func TestLLMUsageIsRecordedPerAccount(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Accounts = map[string]map[string]any{"brand_b": {}} })
	for account, calls := range map[string]int{"default": 1, "brand_b": 2} {
		a, err := e.app.ForAccount(account)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.LLM()
		if err != nil {
			t.Fatal(err)
		}
		for range calls {
			if _, err := p.Complete(context.Background(), llm.Request{Operation: "test",
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for account, want := range map[string]int{"default": 1, "brand_b": 2} {
		if n := e.count(`SELECT count(*) FROM llm_usage WHERE account_id = ?`, account); n != want {
			t.Errorf("llm_usage rows of %s = %d, want %d", account, n, want)
		}
	}
}
