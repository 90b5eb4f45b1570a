//go:build e2e

package main

import (
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// TestServeKeepsServingWhileTheDatabaseIsDown: `mcp serve` starts while
// its PostgreSQL server cannot be reached. It does not stop: every tool
// call answers db_error (retryable) while it tries again, and once the
// server is reachable the services start and the same call succeeds.
func TestServeKeepsServingWhileTheDatabaseIsDown(t *testing.T) {
	proxy := pgtest.NewProxy(t, pgtest.NewDatabase(t, ""))
	proxy.Refuse(true)
	h := newHome(t)
	cfg := fmt.Sprintf("[storage]\ndatabase_url = %q\n", proxy.URL())
	if err := os.WriteFile(h.path("config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startStdio(t, h)
	p.initialize(t)
	for id := 2; id <= 3; id++ {
		env := p.callTool(t, id, "get_recent_mutations", map[string]any{})
		if env.Success || env.Error == nil || env.Error.Code != "db_error" {
			t.Fatalf("call %d while the database is down: %+v, want db_error\nstderr:\n%s", id, env.Error, p.stderr)
		}
	}
	if proxy.Refused() == 0 {
		t.Fatal("the server never tried to reach the database")
	}
	proxy.Refuse(false)
	if p.stderr.waitFor(regexp.MustCompile(`database available again`), 60*time.Second) == nil {
		t.Fatalf("the services did not start once the database was back\nstderr:\n%s", p.stderr)
	}
	if env := p.callTool(t, 4, "get_recent_mutations", map[string]any{}); !env.Success {
		t.Fatalf("call after the database came back: %+v\nstderr:\n%s", env.Error, p.stderr)
	}
	p.stop(t)
}
