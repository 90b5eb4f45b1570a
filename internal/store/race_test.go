package store_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tuitbot/tuitbot/internal/store"
)

// startTogether starts n copies of the test binary that each open path,
// releases them at once with SIGUSR1 and returns each one's error output
// (empty when it succeeded).
func startTogether(t *testing.T, path string, n int) []string {
	t.Helper()
	type child struct {
		cmd    *exec.Cmd
		stderr *bytes.Buffer
	}
	children := make([]child, 0, n)
	for range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		// The child prints "ready" only after its SIGUSR1 handler is in
		// place, so the signal below cannot kill it.
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "ready" {
			t.Fatalf("child did not get ready: %q %v (stderr %s)", line, err, stderr.String())
		}
		children = append(children, child{cmd, &stderr})
	}
	for _, c := range children {
		if err := c.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]string, n)
	for i, c := range children {
		if err := c.cmd.Wait(); err != nil {
			errs[i] = strings.TrimSpace(c.stderr.String()) + " (" + err.Error() + ")"
		}
	}
	return errs
}

// TestConcurrentFirstStart starts several processes together on a fresh
// home: every one must open the database, and the schema must be complete.
func TestConcurrentFirstStart(t *testing.T) {
	trials, procs := 20, 4
	if testing.Short() {
		trials = 5
	}
	want := migrationTables(t)
	failed := 0
	for trial := range trials {
		path := filepath.Join(t.TempDir(), "home", "tuitbot.db")
		var bad []string
		for _, e := range startTogether(t, path, procs) {
			if e != "" {
				bad = append(bad, e)
			}
		}
		if len(bad) > 0 {
			failed++
			t.Errorf("trial %d: %d of %d processes failed to open a fresh database: %s", trial, len(bad), procs, strings.Join(bad, "; "))
			continue
		}
		db := open(t, path, store.Options{})
		tables := tableNames(t, db.DB)
		for _, names := range want {
			for _, n := range names {
				if !tables[n] {
					t.Errorf("trial %d: table %s missing after a concurrent first start", trial, n)
				}
			}
		}
		if v := dbVersion(t, db.DB); v != latestVersion(want) {
			t.Errorf("trial %d: schema version %d, want %d", trial, v, latestVersion(want))
		}
	}
	t.Logf("%d of %d trials had a process fail", failed, trials)
}
