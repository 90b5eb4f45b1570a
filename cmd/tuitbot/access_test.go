package main

import (
	"encoding/json"
	"os"
	"testing"
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
