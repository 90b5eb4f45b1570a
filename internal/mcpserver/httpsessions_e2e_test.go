//go:build e2e

package mcpserver_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// The 10,000-session proof costs about 14 CPU-seconds, more than the rest
// of the package together, so it runs with the e2e tag; the quick suite
// keeps the eviction proof at a cap of two
// (TestHTTPSessionLimitClosesLeastRecentlyUsed).

func countSessions(srv *mcp.Server) int {
	n := 0
	for range srv.Sessions() {
		n++
	}
	return n
}

// TestHTTPSessionsStayBounded opens 10,000 sessions that are never closed
// by their clients. Sessions past the cap are closed, so the heap stays flat
// instead of growing by every session's state.
func TestHTTPSessionsStayBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 10,000 sessions")
	}
	url, srv := serveHTTP(t, mcpserver.HTTPOptions{})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	open := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		work := make(chan struct{})
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range work {
					req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("Authorization", "Bearer "+testToken)
					res, err := hc.Do(req)
					if err != nil {
						t.Error(err)
						continue
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK || res.Header.Get("Mcp-Session-Id") == "" {
						t.Errorf("initialize: %d", res.StatusCode)
					}
				}
			}()
		}
		for range n {
			work <- struct{}{}
		}
		close(work)
		wg.Wait()
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	open(1000)
	base, baseRSS := heap(), rss()
	open(9000)
	after, afterRSS := heap(), rss()
	n := countSessions(srv)
	t.Logf("sessions held %d; heap in use %d MiB after 1,000 sessions, %d MiB after 10,000; RSS %d MiB, %d MiB",
		n, base>>20, after>>20, baseRSS>>20, afterRSS>>20)
	if n > mcpserver.DefaultMaxSessions {
		t.Errorf("%d sessions held, want at most %d", n, mcpserver.DefaultMaxSessions)
	}
	if after > base+32<<20 {
		t.Errorf("heap grew from %d MiB to %d MiB over 9,000 more sessions", base>>20, after>>20)
	}
}

// rss is the process's resident set in bytes, 0 where /proc is missing.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb uint64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}
