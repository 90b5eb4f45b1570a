package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// binPath is the tuitbot binary built once for every test in this package.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tuitbot-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "tuitbot")
	if runtime.GOOS == "windows" {
		binPath += ".exe"
	}
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building tuitbot for the CLI tests failed:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := pgtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// home is a temporary TUITBOT_HOME plus the environment every run gets: X
// points at a closed loopback port so no test can reach a real host, and
// HOME is private so ~/.tuitbot is never the developer's.
type home struct {
	dir string
	env []string
}

func newHome(t testing.TB) *home {
	t.Helper()
	dir := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "user"),
		"TUITBOT_HOME=" + dir,
		"TUITBOT_X_API__API_BASE_URL=http://127.0.0.1:1",
		"TUITBOT_X_API__UPLOAD_BASE_URL=http://127.0.0.1:1",
		"TUITBOT_X_API__LEGACY_UPLOAD_BASE_URL=http://127.0.0.1:1",
		"TUITBOT_X_API__AUTHORIZE_URL=http://127.0.0.1:1/authorize",
		"TUITBOT_X_API__TOKEN_URL=http://127.0.0.1:1/token",
		"TUITBOT_X_API__TIMEOUT_SECONDS=2",
		"TUITBOT_X_API__MAX_ATTEMPTS=1",
	}
	return &home{dir: dir, env: env}
}

func (h *home) with(extra ...string) *home {
	return &home{dir: h.dir, env: append(append([]string{}, h.env...), extra...)}
}

func (h *home) path(name string) string { return filepath.Join(h.dir, name) }

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run executes the binary to completion with a deadline.
func (h *home) run(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = h.env
	cmd.Dir = h.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("run %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("tuitbot %v did not finish within 60s", args)
	}
	return r
}

func (h *home) ok(t *testing.T, args ...string) result {
	t.Helper()
	r := h.run(t, args...)
	if r.code != 0 {
		t.Fatalf("tuitbot %s failed:\n%s", strings.Join(args, " "), r)
	}
	return r
}

func (h *home) fails(t *testing.T, args ...string) result {
	t.Helper()
	r := h.run(t, args...)
	if r.code == 0 {
		t.Fatalf("tuitbot %s succeeded, want failure:\n%s", strings.Join(args, " "), r)
	}
	return r
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}
