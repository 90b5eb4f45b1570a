package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestSandboxModelsEachAccountsAccess: the sandbox emulator gives each
// account's demo user the access level SandboxAccess names, the default
// account's level is the world's, a start with the levels the world already
// has does not rewrite it, a start without levels keeps the world's, and a
// level that is not one fails the start naming the account.
func TestSandboxModelsEachAccountsAccess(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	levels := func(account string) xsim.Access {
		if account == "brand_b" {
			return xsim.AccessEnterprise
		}
		return xsim.AccessPayPerUse
	}
	// start runs a sandbox process; running sees its emulator before it
	// closes.
	start := func(access app.SandboxAccess, running func(*xsim.Server)) {
		t.Helper()
		a, err := app.New(ctx, testConfig(t, home), app.Options{Sandbox: true, RequireDB: true, SkipX: true, SandboxAccess: access})
		if err != nil {
			t.Fatalf("app.New: %v", err)
		}
		running(a.Sim.Server)
		if err := a.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	world := func() []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(home, "world.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	check := func(srv *xsim.Server) {
		t.Helper()
		if srv == nil {
			t.Fatal("this process did not start the emulator")
		}
		users := srv.DemoAccounts()
		for _, name := range []string{"default", "brand_c"} {
			if got := srv.AccessOf(users[name]); got != xsim.AccessPayPerUse {
				t.Errorf("account %s: %q, want pay_per_use", name, got)
			}
		}
		if got := srv.AccessOf(users["brand_b"]); got != xsim.AccessEnterprise {
			t.Errorf("account brand_b: %q, want enterprise", got)
		}
		if got := srv.AccessOf(srv.UserIDByUsername("nobody_in_particular")); got != xsim.AccessPayPerUse {
			t.Errorf("a user no account names: %q, want the default account's pay_per_use", got)
		}
	}
	start(levels, check)
	saved := world()
	start(levels, func(srv *xsim.Server) {
		check(srv)
		if !bytes.Equal(world(), saved) {
			t.Error("a start with the levels the world has rewrote the world")
		}
	})
	start(nil, check)

	_, err := app.New(ctx, testConfig(t, home), app.Options{Sandbox: true, RequireDB: true, SkipX: true,
		SandboxAccess: func(account string) xsim.Access {
			if account == "brand_c" {
				return "gold"
			}
			return ""
		}})
	if err == nil || !strings.Contains(err.Error(), "brand_c") || !strings.Contains(err.Error(), "access level") {
		t.Fatalf("a level that is not one: %v, want an error naming the account and the level", err)
	}
}
