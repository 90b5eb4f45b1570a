package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestDoctorSaysTheXAccess: doctor says every account's X API access
// level, what it allows and the prices in force, in text and in --json.
func TestDoctorSaysTheXAccess(t *testing.T) {
	h := newHome(t)
	if err := os.WriteFile(h.path("config.toml"), []byte("[accounts.big.x_api]\naccess = \"enterprise\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.ok(t, "doctor")
	mustContain(t, "doctor", r.stdout, "x_access.default ok", "no likes, follows or quote posts",
		"x_access.big ok", "enterprise (a contract with X)", "a reply (summoned; a link adds nothing) $0.010", "per resource $0.001")

	r = h.ok(t, "doctor", "--json")
	var rep DoctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.stdout)
	}
	if len(rep.Access) != 2 || rep.Access[0].Account != "default" || rep.Access[0].Access != "pay_per_use" ||
		rep.Access[1].Account != "big" || rep.Access[1].Access != "enterprise" || len(rep.Access[0].Prices) == 0 {
		t.Fatalf("doctor --json x_access = %+v", rep.Access)
	}
}

// TestSandboxWorldHasTheConfiguredAccess: a sandbox command starts an
// emulator whose world models x_api.access: pay_per_use by default, the
// X of 2026; enterprise when the home says so.
func TestSandboxWorldHasTheConfiguredAccess(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want xsim.Access
	}{
		{nil, xsim.AccessPayPerUse},
		{[]string{"TUITBOT_X_API__ACCESS=enterprise"}, xsim.AccessEnterprise},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			h := newHome(t).with(tc.env...)
			h.ok(t, "audit", "recent", "--sandbox")
			w, err := xsim.LoadWorld(h.path(filepath.Join("sandbox", "world.json")))
			if err != nil {
				t.Fatal(err)
			}
			got := w.Access
			if got == "" {
				got = xsim.AccessEnterprise // a world that names no level
			}
			if got != tc.want {
				t.Fatalf("the sandbox world's access is %q, want %q", got, tc.want)
			}
		})
	}
}
