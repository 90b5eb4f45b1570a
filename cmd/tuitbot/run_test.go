package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// housekeepingOnly is a config with two accounts whose autopilot runs only
// the housekeeping loop, which needs neither X nor a model.
const housekeepingOnly = "[intervals]\nenabled_loops = [\"housekeeping\"]\nhousekeeping_seconds = 1\n\n[accounts.brand_b]\nmode = \"composer\"\n"

func writeRunConfig(t *testing.T, h *home) {
	t.Helper()
	if err := os.WriteFile(h.path("config.toml"), []byte(housekeepingOnly), 0o600); err != nil {
		t.Fatal(err)
	}
}

func waitOutput(t *testing.T, out *syncBuffer, what string) {
	t.Helper()
	if out.waitFor(regexp.MustCompile(regexp.QuoteMeta(what)), 30*time.Second) == nil {
		t.Fatalf("never printed %q:\n%s", what, out)
	}
}

// TestRunAllAccounts: `run --all-accounts` runs every account's autopilot
// in one process, each under its own lock file, so a second autopilot of
// either account is refused while it runs.
func TestRunAllAccounts(t *testing.T) {
	h := newHome(t)
	writeRunConfig(t, h)
	r := h.run(t, "run", "--all-accounts", "--account", "brand_b")
	if r.code != 2 {
		t.Fatalf("--all-accounts with --account: exit %d, want 2\n%s", r.code, r)
	}
	cmd := exec.Command(binPath, "run", "--all-accounts")
	cmd.Dir = h.dir
	out := startServer(t, cmd, h.env)
	for _, account := range []string{"default", "brand_b"} {
		waitOutput(t, out, "autopilot running for account "+account)
	}
	waitOutput(t, out, "press Ctrl-C to stop")
	for _, tc := range []struct{ account, lock string }{{"default", "tuitbot.db.run.lock"}, {"brand_b", "tuitbot.db.run-brand_b.lock"}} {
		r := h.fails(t, "--account", tc.account, "tick")
		mustContain(t, "tick of "+tc.account+" beside run --all-accounts", r.stderr, "already running", h.path(tc.lock))
	}
	waitSignalExit(t, cmd, out)
	// Stopped, each account's lock is free again.
	h.ok(t, "--account", "brand_b", "tick")
}

// TestRunOneAccountBesideAnother: two accounts of one SQLite home run in
// two processes; a second runner of the same account is refused.
func TestRunOneAccountBesideAnother(t *testing.T) {
	h := newHome(t)
	writeRunConfig(t, h)
	cmd := exec.Command(binPath, "run")
	cmd.Dir = h.dir
	out := startServer(t, cmd, h.env)
	waitOutput(t, out, "autopilot running for account default")
	h.ok(t, "--account", "brand_b", "tick")
	r := h.fails(t, "run")
	mustContain(t, "second run of default", r.stderr, "already running", h.path("tuitbot.db.run.lock"))
	waitSignalExit(t, cmd, out)
}

// TestRunStandsByOnPostgres: two hosts (two homes) share one PostgreSQL
// database. The second `run` of the account stands by, and takes over
// when the first one's process is killed.
func TestRunStandsByOnPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t, "")
	var hosts []*home
	for range 2 {
		h := newHome(t)
		writeRunConfig(t, h)
		hosts = append(hosts, h.with("TUITBOT_STORAGE__DATABASE_URL="+url))
	}
	first := exec.Command(binPath, "run")
	first.Dir = hosts[0].dir
	out1 := startServer(t, first, hosts[0].env)
	waitOutput(t, out1, "autopilot started")

	second := exec.Command(binPath, "run")
	second.Dir = hosts[1].dir
	out2 := startServer(t, second, hosts[1].env)
	waitOutput(t, out2, "another host runs its autopilot; standing by")
	if strings.Contains(out2.String(), "autopilot started") {
		t.Fatalf("the second runner started its loops while the first held the account:\n%s", out2)
	}
	// A tick of the account is refused while a runner holds it; another
	// account's tick runs.
	r := hosts[1].fails(t, "tick")
	mustContain(t, "tick beside a runner on another host", r.stderr, "already running for account default")
	hosts[1].ok(t, "--account", "brand_b", "tick")
	// The host dies: no release, the server ends its session.
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	waitOutput(t, out2, "autopilot started")
	waitSignalExit(t, second, out2)
}

// TestRunLockBelongsToTheDatabase: two homes (two config directories)
// pointing at one SQLite file share one autopilot per account. While the
// first home's `run` holds the account, the second home's `run` and
// `tick` are refused, and the refusal names the holder: its process id,
// host and home.
func TestRunLockBelongsToTheDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "shared.db")
	var homes []*home
	for range 2 {
		h := newHome(t)
		writeRunConfig(t, h)
		homes = append(homes, h.with("TUITBOT_STORAGE__DB_PATH="+db))
	}
	first := exec.Command(binPath, "run")
	first.Dir = homes[0].dir
	out := startServer(t, first, homes[0].env)
	waitOutput(t, out, "autopilot running for account default")
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// The second home takes the database on as its own, as its refusal to
	// open another home's database says to.
	for _, args := range [][]string{{"run"}, {"tick"}} {
		r := homes[1].fails(t, append([]string{"--accept-new-database"}, args...)...)
		mustContain(t, "second home's "+args[0], r.stderr, "already running", "process "+strconv.Itoa(first.Process.Pid),
			"host "+host, homes[0].dir, db+".run.lock")
	}
	// Another account of the shared database is free.
	homes[1].ok(t, "--accept-new-database", "--account", "brand_b", "tick")
	waitSignalExit(t, first, out)
	// Stopped, the account is free for the other home.
	homes[1].ok(t, "--accept-new-database", "tick")
}
