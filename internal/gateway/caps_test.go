package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// capMax is the cap every concurrency test sets; capCost is what each call
// is estimated to cost for the budget case.
const (
	capMax  = 3
	capCost = 0.01
)

// capConfig is a policy that lets capMax calls of fakeTool run along one
// limit dimension.
func capConfig(t testing.TB, dim string) policy.Config {
	t.Helper()
	cfg := policy.Config{EnforceForMutations: true}
	switch dim {
	case policy.DimGlobal:
		cfg.MaxMutationsPerHour = capMax
	case policy.DimTool:
		cfg.RateLimits = []policy.Limit{{Key: "cap", Dimension: policy.DimTool, MatchValue: fakeTool, Max: capMax, PeriodSeconds: 3600}}
	case policy.DimCategory:
		cfg.RateLimits = []policy.Limit{{Key: "cap", Dimension: policy.DimCategory, MatchValue: string(policy.CatWrite), Max: capMax, PeriodSeconds: 3600}}
	case policy.DimBudget:
		cfg.DailyBudgetUSD = capMax * capCost
	default:
		t.Fatalf("unknown limit dimension %q", dim)
	}
	return cfg
}

func capDimensions() []string {
	return []string{policy.DimGlobal, policy.DimTool, policy.DimCategory, policy.DimBudget}
}

// limitDenied reports whether err is a limit or budget denial.
func limitDenied(err error) bool {
	c := apperr.CodeOf(err)
	return c == apperr.PolicyRateLimited || c == apperr.PolicyBudget
}

// capEnv is a gateway over the real engine with cfg, whose fake action
// costs capCost.
func capEnv(t *testing.T, cfg policy.Config) *env {
	t.Helper()
	e := newEnv(t)
	e.withEngine(cfg, policy.ModeAutopilot, false)
	a, _ := e.g.Action(fakeTool)
	a.Cost = func(json.RawMessage) float64 { return capCost }
	return e
}

// TestCapsHoldUnderConcurrency: concurrent distinct calls never execute
// more than a limit allows. Every executor blocks until all calls have
// either entered it or been answered, so every call is decided while the
// others are still in flight: charging only after execution would let all
// of them through.
func TestCapsHoldUnderConcurrency(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		const n = 30
		for _, dim := range capDimensions() {
			t.Run(dim, func(t *testing.T) {
				e := capEnv(t, capConfig(t, dim))
				entered, release := make(chan struct{}, n), make(chan struct{})
				e.act.setRun(func(ctx context.Context, params json.RawMessage) (Result, error) {
					entered <- struct{}{}
					<-release
					return Result{Data: map[string]any{"ok": true}}, nil
				})
				results := make(chan error, n)
				for i := range n {
					go func() {
						_, err := e.do(e.g, map[string]any{"text": fmt.Sprintf("like %d", i)}, "")
						results <- err
					}()
				}
				var running, answered int
				var errs []error
				for running+answered < n {
					select {
					case <-entered:
						running++
					case err := <-results:
						answered++
						errs = append(errs, err)
					}
				}
				close(release)
				for range running {
					errs = append(errs, <-results)
				}
				denied := 0
				for _, err := range errs {
					switch {
					case err == nil:
					case limitDenied(err):
						denied++
					default:
						t.Errorf("unexpected error: %v", err)
					}
				}
				if got := e.act.count(); got != capMax || denied != n-capMax {
					t.Fatalf("%d calls ran and %d were denied, want %d and %d", got, denied, capMax, n-capMax)
				}
			})
		}
	})
}

// TestReservationFollowsTheOutcome: a call that failed before sending, or
// that X refused, gives its quota back; one whose outcome is unknown keeps
// it, as does one that succeeded.
func TestReservationFollowsTheOutcome(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		tests := []struct {
			name      string
			firstErr  error
			firstData bool // the first call returns a result X may not have applied
			secondRun bool
		}{
			{"success keeps the quota", nil, false, false},
			{"failure before sending releases it", apperr.New(apperr.XNotConfigured, "no X client"), false, true},
			{"refused by X releases it", apperr.New(apperr.XForbidden, "forbidden"), false, true},
			{"unknown outcome keeps it", apperr.New(apperr.XOutcomeUnknown, "timed out after sending"), false, false},
			{"5xx to a write keeps it", nil, true, false},
		}
		for _, dim := range capDimensions() {
			for _, tt := range tests {
				t.Run(dim+"/"+tt.name, func(t *testing.T) {
					cfg := capConfig(t, dim)
					// A cap of one call.
					switch dim {
					case policy.DimGlobal:
						cfg.MaxMutationsPerHour = 1
					case policy.DimBudget:
						cfg.DailyBudgetUSD = capCost
					default:
						cfg.RateLimits[0].Max = 1
					}
					e := capEnv(t, cfg)
					e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
						return Result{Data: map[string]any{"ok": true}, Unknown: tt.firstData}, tt.firstErr
					})
					if _, err := e.do(e.g, map[string]any{"text": "first"}, ""); (err != nil) != (tt.firstErr != nil) {
						t.Fatalf("first call: %v", err)
					}
					e.act.setRun(nil)
					_, err := e.do(e.g, map[string]any{"text": "second"}, "")
					if tt.secondRun && err != nil {
						t.Fatalf("second call: %v, want it to run on the released quota", err)
					}
					if !tt.secondRun && !limitDenied(err) {
						t.Fatalf("second call: %v, want a limit denial", err)
					}
				})
			}
		}
	})
}

// Variables that turn the test binary into one caller process of
// TestCapsHoldAcrossProcesses.
const (
	envCapChild = "TUITBOT_GATEWAY_CAP_CHILD" // the database path or URL
	envCapLocks = "TUITBOT_GATEWAY_CAP_LOCKS" // the liveness lock directory
	envCapDim   = "TUITBOT_GATEWAY_CAP_DIM"
	envCapLog   = "TUITBOT_GATEWAY_CAP_LOG" // one line per execution
	envCapID    = "TUITBOT_GATEWAY_CAP_ID"
)

// TestCapsHoldAcrossProcesses runs several processes, each with many
// concurrent callers, against one database: together they never execute
// more than the cap. The processes start calling at one signal (their
// stdin closing) once all report ready. On PostgreSQL they share one
// database on the server as processes on several hosts would.
func TestCapsHoldAcrossProcesses(t *testing.T) {
	if os.Getenv(envCapChild) != "" {
		capChild(t)
		return
	}
	storetest.ForEachBackend(t, testCapsHoldAcrossProcesses)
}

func testCapsHoldAcrossProcesses(t *testing.T) {
	const procs, callers = 3, 10
	for _, dim := range capDimensions() {
		t.Run(dim, func(t *testing.T) {
			dir := t.TempDir()
			dbPath := newTarget(t)
			logPath := filepath.Join(dir, "executions.log")
			var (
				cmds  []*exec.Cmd
				gates []io.WriteCloser
				outs  []*bufio.Reader
				errb  []*strings.Builder
			)
			for i := range procs {
				cmd := exec.Command(os.Args[0], "-test.run=^TestCapsHoldAcrossProcesses$", "-test.count=1")
				cmd.Env = append(os.Environ(), envCapChild+"="+dbPath, envCapDim+"="+dim, envCapLog+"="+logPath,
					envCapLocks+"="+filepath.Join(dir, "locks"),
					fmt.Sprintf("%s=%d", envCapID, i))
				stdin, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				var stderr strings.Builder
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatalf("start caller process: %v", err)
				}
				cmds, gates, errb = append(cmds, cmd), append(gates, stdin), append(errb, &stderr)
				outs = append(outs, bufio.NewReader(stdout))
			}
			for i, r := range outs {
				line, err := r.ReadString('\n')
				if err != nil || strings.TrimSpace(line) != "ready" {
					t.Fatalf("process %d did not get ready (%q, %v): %s", i, line, err, errb[i])
				}
			}
			for _, g := range gates {
				g.Close()
			}
			executed, denied := 0, 0
			for i, cmd := range cmds {
				rest, _ := io.ReadAll(outs[i])
				if err := cmd.Wait(); err != nil {
					t.Fatalf("process %d: %v\nstdout: %s\nstderr: %s", i, err, rest, errb[i])
				}
				var ex, de int
				if _, err := fmt.Sscanf(reportLine(string(rest)), "executed=%d denied=%d", &ex, &de); err != nil {
					t.Fatalf("process %d reported %q: %v", i, rest, err)
				}
				executed, denied = executed+ex, denied+de
			}
			b, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatalf("read the execution log: %v", err)
			}
			ran := strings.Count(string(b), "\n")
			if ran != capMax || executed != capMax || denied != procs*callers-capMax {
				t.Fatalf("%d executions logged, %d reported executed, %d denied; want %d, %d, %d",
					ran, executed, denied, capMax, capMax, procs*callers-capMax)
			}
		})
	}
}

// reportLine finds a caller process's report among the test binary's own
// output.
func reportLine(s string) string {
	for l := range strings.Lines(s) {
		if strings.HasPrefix(l, "executed=") {
			return l
		}
	}
	return ""
}

// capChild is one caller process: it opens the shared database, reports
// ready, waits for its stdin to close, then fires its callers at once and
// prints how many executed and how many were denied.
func capChild(t *testing.T) {
	const callers = 10
	ctx := context.Background()
	db, err := store.Open(ctx, os.Getenv(envCapChild), store.Options{})
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	defer db.Close()
	eng, err := policy.NewEngine(capConfig(t, os.Getenv(envCapDim)), func(s string) bool { return s == fakeTool })
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	ctr := counters.New(db.DB, "default", nil)
	if err := ctr.Sync(ctx, eng.Limits()); err != nil {
		t.Fatalf("sync limits: %v", err)
	}
	g, err := New(ctx, Options{DB: db, Policy: enginePolicy{eng, ctr}, AccountID: "default",
		Mode: func() (string, bool) { return policy.ModeAutopilot, false }, LockDir: os.Getenv(envCapLocks)})
	if err != nil {
		t.Fatalf("gateway: %v", err)
	}
	defer g.Close()
	logf, err := os.OpenFile(os.Getenv(envCapLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("open the execution log: %v", err)
	}
	defer logf.Close()
	g.Register(&Action{Tool: fakeTool, Category: policy.CatWrite,
		Cost: func(json.RawMessage) float64 { return capCost },
		Execute: func(_ context.Context, params json.RawMessage) (Result, error) {
			// One short O_APPEND write per execution: lines from several
			// processes never interleave.
			if _, err := logf.Write(append(append([]byte(nil), params...), '\n')); err != nil {
				return Result{}, err
			}
			return Result{Data: map[string]any{"ok": true}}, nil
		}})
	fmt.Println("ready")
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		t.Fatalf("wait for the start signal: %v", err)
	}
	var (
		mu               sync.Mutex
		executed, denied int
		wg               sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			_, err := g.Do(cctx, Call{Tool: fakeTool, Params: map[string]any{"text": fmt.Sprintf("p%s c%d", os.Getenv(envCapID), i)}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				executed++
			case limitDenied(err):
				denied++
			default:
				t.Errorf("caller %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	fmt.Printf("executed=%d denied=%d\n", executed, denied)
}
