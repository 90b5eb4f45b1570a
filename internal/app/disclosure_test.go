package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
)

// TestDoctorWarnsWithoutBotDisclosure: when the autopilot writes for an
// account whose bio (read from /2/users/me) does not say it is automated,
// the health report has a degraded "disclosure" line naming the loops; a
// bio that says so, or an autopilot that writes nothing, has none.
func TestDoctorWarnsWithoutBotDisclosure(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	disclosure := func(loops []string) (app.Check, bool) {
		t.Helper()
		cfg := testConfig(t, home)
		if loops != nil {
			cfg.Intervals.EnabledLoops = loops
		}
		a, err := app.New(ctx, cfg, app.Options{Sandbox: true, RequireDB: true})
		if err != nil {
			t.Fatalf("app.New: %v", err)
		}
		defer a.Close()
		for _, c := range a.Health(ctx) {
			if c.Name == "x" && c.Status != "ok" {
				t.Fatalf("the X check is not ok: %+v", c)
			}
			if c.Name == "disclosure" {
				return c, true
			}
		}
		return app.Check{}, false
	}
	if c, ok := disclosure(nil); ok {
		t.Fatalf("the sandbox's demo bio says it is automated, yet: %+v", c)
	}
	world := filepath.Join(home, "world.json")
	b, err := os.ReadFile(world)
	if err != nil {
		t.Fatal(err)
	}
	const bio = "Building tools for developers. Automated sandbox account run by @tuitbot."
	if !bytes.Contains(b, []byte(bio)) {
		t.Fatalf("world.json lacks the demo bio %q", bio)
	}
	if err := os.WriteFile(world, bytes.ReplaceAll(b, []byte(bio), []byte("Building tools for developers.")), 0o600); err != nil {
		t.Fatal(err)
	}
	c, ok := disclosure(nil)
	if !ok || c.Status != "degraded" || !strings.Contains(c.Message, "mentions") || !strings.Contains(c.Message, "Automated") {
		t.Fatalf("no bot disclosure in the bio: %+v (%v), want a degraded line naming the loops", c, ok)
	}
	if c, ok := disclosure([]string{"analytics", "housekeeping"}); ok {
		t.Fatalf("an autopilot that writes nothing: %+v", c)
	}
}
