package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestMain(m *testing.M) { os.Exit(Main(m, (*testing.M).Run)) }

// TestStartLeavesNothingBehind: the browser, used by a (sub)test and
// stopped as Main stops it, leaves nothing in the temporary directory (no
// org.chromium.Chromium.* singleton folder) nor in the home directory (no
// .config/chromium/Crash Reports).
func TestStartLeavesNothingBehind(t *testing.T) {
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	tmp := os.TempDir()
	before := names(t, tmp)
	t.Run("browser", func(t *testing.T) {
		ctx := Start(t, 800, 600)
		if err := chromedp.Do(ctx, chromedp.Navigate("data:text/html,<title>ok</title>")); err != nil {
			t.Fatal(err)
		}
		title, err := chromedp.Run(ctx, chromedp.Title())
		if err != nil {
			t.Fatal(err)
		}
		if title != "ok" {
			t.Fatalf("title %q, want ok", title)
		}
	})
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	if after := names(t, tmp); after != before {
		t.Errorf("temporary directory %s holds %s after the browser test, want %s", tmp, after, before)
	}
	if left := names(t, home); left != "" {
		t.Errorf("home directory holds %s after the browser test, want nothing", left)
	}
}

// TestTestsShareNoState: each test's tab has the viewport it asked for and
// a browser context of its own, so what one test's page stored (a cookie,
// local storage) is not there for the next, though the browser is shared.
func TestTestsShareNoState(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>t</title>")
	}))
	defer srv.Close()
	stored := func(t *testing.T, ctx context.Context) string {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie + "|" + (localStorage.getItem("k") || "")`))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i, w := range []int{390, 1280} {
		t.Run(fmt.Sprintf("test %d at %d px", i, w), func(t *testing.T) {
			ctx := Start(t, w, 900)
			if got := stored(t, ctx); got != "|" {
				t.Fatalf("a new test's page finds %q stored, want nothing", got)
			}
			size, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`document.cookie = "k=v"; localStorage.setItem("k", "v"); [window.innerWidth, window.innerHeight]`))
			if err != nil {
				t.Fatal(err)
			}
			if width, height := size[0], size[1]; width != w || height != 900 {
				t.Errorf("viewport %dx%d, want %dx900", width, height, w)
			}
			if got := stored(t, ctx); got != "k=v|v" {
				t.Fatalf("the page reads back %q, want k=v|v", got)
			}
		})
	}
}

// TestRunInTempDirNamesWhatIsLeft: the check behind Main reports what a run
// leaves in the temporary directory it gives, and nothing after a clean
// run.
func TestRunInTempDirNamesWhatIsLeft(t *testing.T) {
	tests := []struct {
		name  string
		leave string
		want  string
	}{
		{"clean run", "", ""},
		{"leftover folder", "org.chromium.Chromium.abc123", `"org.chromium.Chromium.abc123"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dir string
			code, err := RunInTempDir(func() int {
				dir = os.TempDir()
				if tt.leave != "" {
					if err := os.Mkdir(filepath.Join(dir, tt.leave), 0o700); err != nil {
						t.Fatal(err)
					}
				}
				return 0
			})
			if code != 0 {
				t.Fatalf("code %d, want 0", code)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("clean run reported %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one naming %s", err, tt.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("the run's temporary directory %s is still there (%v)", dir, err)
			}
		})
	}
}

// names lists a directory's entries, one string for comparing.
func names(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return strings.Join(out, ",")
}
