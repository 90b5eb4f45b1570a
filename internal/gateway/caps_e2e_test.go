//go:build e2e

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

	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/counters"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// The proof with several caller processes starts the test binary three
// times per cap and backend, so it runs with the e2e tag; the quick suite
// keeps the same cap under concurrent callers of one process
// (TestCapsHoldUnderConcurrency) and of several accounts.

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
