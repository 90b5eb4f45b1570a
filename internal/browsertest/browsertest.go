// Package browsertest starts headless Chromium for tests, one browser per
// test, with everything the browser writes kept inside that test's own
// temporary directory. It is imported by tests only.
//
// chromedp ends the browser by killing it, so Chromium never removes its
// singleton folder (org.chromium.Chromium.* in $TMPDIR) nor its crash
// database (Crash Reports under $HOME/.config/chromium). Giving the browser
// process its own TMPDIR, HOME, XDG directories and user data directory
// under t.TempDir() makes the test's cleanup remove all of it.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvRequire makes a missing browser a failure instead of a skip.
const EnvRequire = "TUITBOT_REQUIRE_BROWSER"

// Path finds Debian's headless-capable chromium. Without it the test skips,
// unless TUITBOT_REQUIRE_BROWSER is set (CI installs chromium and sets it,
// so a missing browser fails there).
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(EnvRequire) != "" {
		t.Fatal(EnvRequire + " is set but no chromium is installed (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed; set " + EnvRequire + "=1 to make this a failure")
	return ""
}

// Start starts one headless chromium for the test with a window of the
// given size and returns a context for chromedp actions, which times out
// after a minute. The browser ends, and its files are removed, when the
// test ends.
func Start(t testing.TB, width, height int) context.Context {
	t.Helper()
	path := Path(t)
	dir := t.TempDir()
	// The singleton socket lives in the browser's TMPDIR, and a Unix socket
	// path has at most 107 bytes: t.TempDir() names the test and is too long
	// for it, so the browser's TMPDIR is a short folder of its own.
	tmp, err := os.MkdirTemp("", "chromium-")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"TMPDIR=" + tmp}
	for _, sub := range []struct{ name, dir string }{
		{"HOME", "home"}, {"XDG_CONFIG_HOME", "config"}, {"XDG_CACHE_HOME", "cache"}, {"XDG_DATA_HOME", "data"},
	} {
		d := filepath.Join(dir, sub.dir)
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(tmp)
			t.Fatal(err)
		}
		env = append(env, sub.name+"="+d)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root, where chromium's sandbox cannot start
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Env(env...),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	stop := func() {
		cancel()
		cancelA()
		// Chromium's helper processes can outlive the browser for a moment
		// and still write into the directory; empty it until they are gone,
		// so that the test's own cleanup finds nothing left to fail on.
		if err := removeContents(dir, 5*time.Second); err != nil {
			t.Errorf("remove the browser's files: %v", err)
		}
		if err := removeContents(tmp, 5*time.Second); err != nil {
			t.Errorf("remove the browser's temporary files: %v", err)
		}
		if err := os.Remove(tmp); err != nil {
			t.Errorf("remove the browser's temporary directory: %v", err)
		}
	}
	// The first action starts the browser, which lives as long as that
	// action's context: no timeout there, one on everything after.
	if err := chromedp.Do(bctx); err != nil {
		stop()
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelT := context.WithTimeout(bctx, 60*time.Second)
	t.Cleanup(func() {
		cancelT()
		stop()
	})
	return ctx
}

// removeContents removes everything inside dir, trying again while
// something still writes there, until the deadline.
func removeContents(dir string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := clearDir(dir)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Main runs the tests of a package with a temporary directory of their own
// and fails the run when the tests leave anything behind in it: every
// test's files belong under t.TempDir(), which the test removes. run is
// the package's usual TestMain body (m.Run, or pgtest.Main(m)).
func Main(m *testing.M, run func(*testing.M) int) int {
	code, err := RunInTempDir(func() int { return run(m) })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// RunInTempDir runs fn with TMPDIR set to a new empty directory, then
// reports an error naming whatever fn left in it, and removes the
// directory.
func RunInTempDir(fn func() int) (int, error) {
	dir, err := os.MkdirTemp("", "tuitbot-test-")
	if err != nil {
		return 1, err
	}
	// Others may enter it, as they may enter the system's temporary
	// directory: the test PostgreSQL runs as its own user, in a folder here.
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return 1, err
	}
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	defer func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
		os.RemoveAll(dir)
	}()
	code := fn()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return code, err
	}
	if len(entries) > 0 {
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		return code, fmt.Errorf("the tests left %d entries in the temporary directory: %q", len(names), names)
	}
	return code, nil
}
