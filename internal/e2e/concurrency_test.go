//go:build e2e

package e2e

import (
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestThousandIdenticalBookmarksExecuteOnce sends 1,000 identical
// x_bookmark_tweet calls from 50 goroutines spread over 5 MCP client
// sessions of one real server (in-memory transports), against the sandbox
// emulator with a policy that allows bookmarks. (Not likes: an agent's
// like always waits for a person, X's automation rules.) Exactly one call may reach X. It runs on the
// home's SQLite file and on a PostgreSQL database.
func TestThousandIdenticalBookmarksExecuteOnce(t *testing.T) {
	storetest.ForEachBackend(t, testThousandIdenticalBookmarksExecuteOnce)
}

func testThousandIdenticalBookmarksExecuteOnce(t *testing.T) {
	const (
		sessions   = 5
		goroutines = 50
		perG       = 20
	)
	cfg := permissive(t.TempDir())
	if storetest.BackendOf(t) == storetest.Postgres {
		cfg.Storage.DatabaseURL = storetest.Target(t)
	}
	h := newHarness(t, &cfg, app.Options{Sandbox: true})
	x := h.a.Sim.Server
	tweet := (&sim{Server: x}).foreignTweets(t, 1)[0]
	before := x.Counters()[xsim.CountBookmarks]
	cs := make([]*mcp.ClientSession, sessions)
	for i := range cs {
		cs[i] = h.connect()
	}

	envs := make(chan env, goroutines*perG)
	errs := make(chan error, goroutines*perG)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < perG; i++ {
				e, err := call(h.ctx, cs[g%sessions], "x_bookmark_tweet", map[string]any{"tweet_id": tweet})
				if err != nil {
					errs <- err
					continue
				}
				envs <- e
			}
		}()
	}
	close(start)
	wg.Wait()
	close(envs)
	close(errs)
	for err := range errs {
		t.Fatalf("call failed: %v", err)
	}

	var executed []env
	var dups []env
	for e := range envs {
		if !e.Success {
			t.Fatalf("a bookmark failed: %s", e.raw)
		}
		d := e.data(t)
		if d["duplicate"] == true {
			dups = append(dups, e)
		} else {
			executed = append(executed, e)
		}
	}
	if len(executed) != 1 || len(dups) != goroutines*perG-1 {
		t.Fatalf("%d executed and %d duplicate envelopes, want 1 and %d", len(executed), len(dups), goroutines*perG-1)
	}
	orig := executed[0].Meta.CorrelationID
	if d := executed[0].data(t); orig == "" || d["bookmarked"] != true || d["tweet_id"] != tweet || executed[0].Meta.Rollback == nil {
		t.Fatalf("executed envelope %s", executed[0].raw)
	}
	for _, e := range dups {
		d := e.data(t)
		cached, _ := d["cached_result"].(map[string]any)
		if d["original_correlation_id"] != orig || e.Meta.CorrelationID != orig || cached["tweet_id"] != tweet || cached["bookmarked"] != true {
			t.Fatalf("duplicate envelope does not point at the executed call %s: %s", orig, e.raw)
		}
	}

	// The emulator saw one bookmark and was billed for one bookmark request.
	if got := x.Counters()[xsim.CountBookmarks] - before; got != 1 {
		t.Fatalf("emulator bookmarks +%d, want +1", got)
	}
	if units := x.Billing().Units[xsim.BillBookmark]; units != 1 {
		t.Fatalf("emulator billed %d bookmark requests, want 1", units)
	}
	var audited, usage int
	if err := h.a.DB.QueryRowContext(h.ctx, `SELECT count(*) FROM mutation_audit WHERE tool_name = 'x_bookmark_tweet' AND status = 'success'`).Scan(&audited); err != nil {
		t.Fatal(err)
	}
	if err := h.a.DB.QueryRowContext(h.ctx, `SELECT count(*) FROM x_api_usage WHERE method = 'POST'`).Scan(&usage); err != nil {
		t.Fatal(err)
	}
	if audited != 1 || usage != 1 {
		t.Fatalf("%d successful audit rows and %d X write requests in the ledger, want 1 and 1", audited, usage)
	}
}
