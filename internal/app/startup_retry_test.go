package app_test

import (
	"context"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
)

// TestGatewayStartSurvivesADroppedConnection: PostgreSQL drops the
// connection that syncs the policy limits while the gateway starts, as a
// flaky network or a server restart does. The start tries that step
// again, like any transient database error, and the gateway runs.
func TestGatewayStartSurvivesADroppedConnection(t *testing.T) {
	proxy := pgtest.NewProxy(t, pgtest.NewDatabase(t, ""))
	proxy.CutOn("DELETE FROM policy_counters", 1)
	cfg := testConfig(t, t.TempDir())
	cfg.Storage.DatabaseURL = proxy.URL()
	var told []error
	a, err := app.New(context.Background(), cfg, app.Options{RequireDB: true, SkipX: true, RetryingAfter: func(err error, _ int) { told = append(told, err) }})
	if err != nil {
		t.Fatalf("app.New with one connection dropped while the gateway starts: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	if proxy.Cut() != 1 {
		t.Fatalf("the proxy cut %d connections, want the one syncing the limits", proxy.Cut())
	}
	// A server answering meanwhile hears of the failure before the retry,
	// so it can answer db_error instead of keeping its callers waiting.
	if len(told) != 1 || !store.Transient(told[0]) {
		t.Fatalf("RetryingAfter was told %v, want the one dropped connection", told)
	}
	if _, err := a.RequireGateway(); err != nil {
		t.Fatalf("gateway: %v", err)
	}
}

// TestGatewayStartStopsTryingWhenNoOneWaits: once RetryUntil is done (the
// server's client has left), a step that failed transiently is not tried
// again: New returns that failure instead of trying startupTries times.
func TestGatewayStartStopsTryingWhenNoOneWaits(t *testing.T) {
	proxy := pgtest.NewProxy(t, pgtest.NewDatabase(t, ""))
	proxy.CutOn("DELETE FROM policy_counters", 5)
	cfg := testConfig(t, t.TempDir())
	cfg.Storage.DatabaseURL = proxy.URL()
	left, leave := context.WithCancel(context.Background())
	leave()
	a, err := app.New(context.Background(), cfg, app.Options{RequireDB: true, SkipX: true, RetryUntil: left})
	if err == nil {
		a.Close()
		t.Fatal("app.New started although the gateway's step failed and no one waited for a retry")
	}
	if !store.Transient(err) {
		t.Fatalf("app.New: %v, want the transient failure", err)
	}
	if proxy.Cut() != 1 {
		t.Fatalf("the step was tried %d times, want once", proxy.Cut())
	}
}
