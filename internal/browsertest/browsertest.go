// Package browsertest starts headless Chromium for tests: one browser per
// test process, a tab in a browser context of its own per test, with
// everything the browser writes kept inside directories of its own under
// the run's temporary directory. It is imported by tests only.
//
// chromedp ends the browser by killing it, so Chromium never removes its
// singleton folder (org.chromium.Chromium.* in $TMPDIR) nor its crash
// database (Crash Reports under $HOME/.config/chromium). Giving the browser
// process its own TMPDIR, HOME, XDG directories and user data directory
// makes Main's end remove all of it, and Main fails the run when anything
// is left.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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

// Start gives the test a tab of the process's one headless chromium, in a
// browser context of its own (its own cookies, storage and cache, as a
// new incognito window has), with a viewport of the given size, and
// returns a context for chromedp actions, which times out after a minute.
// The tab and its browser context end when the test ends.
//
// Starting chromium costs about a CPU-second, more than most browser
// tests; so the browser is started once, on first use, and Main ends it
// and removes its files after the last test.
func Start(t testing.TB, width, height int) context.Context {
	t.Helper()
	bctx, err := shared.browser(Path(t))
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	tab, cancelTab := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(tab, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		cancelTab()
		t.Fatalf("open a %dx%d tab in chromium: %v", width, height, err)
	}
	ctx, cancelT := context.WithTimeout(tab, 60*time.Second)
	t.Cleanup(func() {
		cancelT()
		cancelTab()
	})
	return ctx
}

// shared is the process's one browser (tests hold package state here
// only, as pgtest holds its cluster).
var shared sharedBrowser

type sharedBrowser struct {
	mu   sync.Mutex
	ctx  context.Context
	err  error
	stop func() error
}

// browser starts chromium on first use, with everything it writes in
// directories of its own under the temporary directory, and returns the
// browser's context.
func (b *sharedBrowser) browser(path string) (context.Context, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx != nil || b.err != nil {
		if b.err == nil && b.ctx.Err() != nil {
			return nil, fmt.Errorf("chromium has ended: %w", context.Cause(b.ctx))
		}
		return b.ctx, b.err
	}
	b.ctx, b.stop, b.err = startBrowser(path)
	return b.ctx, b.err
}

// Stop ends the shared browser, if one was started, and removes its
// files. Main calls it after the last test.
func Stop() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	var err error
	if shared.stop != nil {
		err = shared.stop()
	}
	shared.ctx, shared.err, shared.stop = nil, nil, nil
	return err
}

func startBrowser(path string) (context.Context, func() error, error) {
	dir, err := os.MkdirTemp("", "browser-")
	if err != nil {
		return nil, nil, err
	}
	// The singleton socket lives in the browser's TMPDIR, and a Unix socket
	// path has at most 107 bytes, so the browser's TMPDIR is a short folder
	// of its own.
	tmp, err := os.MkdirTemp("", "chromium-")
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	env := []string{"TMPDIR=" + tmp}
	for _, sub := range []struct{ name, dir string }{
		{"HOME", "home"}, {"XDG_CONFIG_HOME", "config"}, {"XDG_CACHE_HOME", "cache"}, {"XDG_DATA_HOME", "data"},
	} {
		d := filepath.Join(dir, sub.dir)
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(dir)
			os.RemoveAll(tmp)
			return nil, nil, err
		}
		env = append(env, sub.name+"="+d)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root, where chromium's sandbox cannot start
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Env(env...),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	stop := func() error {
		cancel()
		cancelA()
		// Chromium's helper processes can outlive the browser for a moment
		// and still write into the directory; empty it until they are gone.
		var errs []error
		if err := removeContents(dir, 5*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("remove the browser's files: %w", err))
		} else if err := os.Remove(dir); err != nil {
			errs = append(errs, err)
		}
		if err := removeContents(tmp, 5*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("remove the browser's temporary files: %w", err))
		} else if err := os.Remove(tmp); err != nil {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	// The first action starts the browser, which lives as long as that
	// action's context.
	if err := chromedp.Do(bctx); err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	return bctx, stop, nil
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
	code, err := RunInTempDir(func() int {
		code := run(m)
		if err := Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
		return code
	})
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
