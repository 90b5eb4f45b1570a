package autopilot_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// lockedLog collects log output written from the daemon's goroutine.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunLogsEveryOutcomeAtInfo: the daemon says at info level what each
// iteration did, or why it did nothing (outside the active hours, no LLM).
func TestRunLogsEveryOutcomeAtInfo(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) {
			c.LLM = config.LLM{}
			c.Sandbox.LLMStandIn = false
		})
		var out lockedLog
		cfg := e.cfg
		a, err := app.New(context.Background(), &cfg, app.Options{Sandbox: true, Now: e.clock.Now,
			Logger: slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		r := e.runner(a, "content", "analytics")
		e.runUntil(r, day0.Add(9*time.Hour))
		log := out.String()
		// The sandbox home has several accounts, so every line names its
		// account.
		for _, want := range []string{
			`msg="autopilot loop skipped" account=default loop=content because="outside active hours (08:00-22:00 UTC`,
			`msg="autopilot loop skipped" account=default loop=content because="tweets need an LLM: no LLM configured`,
			`msg="autopilot loop ran" account=default loop=analytics did=`,
		} {
			if !strings.Contains(log, want) {
				t.Errorf("the daemon's log lacks %q:\n%s", want, log)
			}
		}
	})
}
