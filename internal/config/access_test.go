package config_test

import (
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

// TestXAPIAccess: x_api.access defaults to pay_per_use (X's only
// self-serve access), ai_replies_approved to false and own_replies_summon to
// true; all three may be set per account, from the environment too, and
// an access level X does not sell is refused naming the key.
func TestXAPIAccess(t *testing.T) {
	d := config.Default().XAPI
	if d.Access != config.AccessPayPerUse || d.AIRepliesApproved || !d.OwnRepliesSummon {
		t.Fatalf("defaults: access %q, ai_replies_approved %t, own_replies_summon %t", d.Access, d.AIRepliesApproved, d.OwnRepliesSummon)
	}
	home := t.TempDir()
	cfg, _ := mustLoad(t, home, writeFile(t, home, "config.toml", `
[accounts.big.x_api]
access = "enterprise"
ai_replies_approved = true
own_replies_summon = false

[accounts.small]
mode = "composer"
`), nil)
	for _, tc := range []struct {
		account  string
		access   config.Access
		approved bool
		own      bool
	}{
		{"default", config.AccessPayPerUse, false, true},
		{"big", config.AccessEnterprise, true, false},
		{"small", config.AccessPayPerUse, false, true},
	} {
		acc, err := cfg.ForAccount(tc.account)
		if err != nil {
			t.Fatal(err)
		}
		if x := acc.XAPI; x.Access != tc.access || x.AIRepliesApproved != tc.approved || x.OwnRepliesSummon != tc.own {
			t.Errorf("%s: access %q ai_replies_approved %t own_replies_summon %t; want %q %t %t",
				tc.account, x.Access, x.AIRepliesApproved, x.OwnRepliesSummon, tc.access, tc.approved, tc.own)
		}
	}

	home = t.TempDir()
	fromEnv, _ := mustLoad(t, home, writeFile(t, home, "config.toml", ""), env{"TUITBOT_X_API__ACCESS": "enterprise"})
	if fromEnv.XAPI.Access != config.AccessEnterprise {
		t.Errorf("from the environment %q, want enterprise", fromEnv.XAPI.Access)
	}

	for _, tc := range []struct{ name, toml, wantKey string }{
		{"a retired plan", "[x_api]\naccess = \"basic\"\n", "x_api.access"},
		{"another spelling", "[x_api]\naccess = \"Enterprise\"\n", "x_api.access"},
		{"per account", "[accounts.b.x_api]\naccess = \"pro\"\n", "accounts.b.x_api.access"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			_, _, err := load(t, home, writeFile(t, home, "config.toml", tc.toml), nil)
			if err == nil {
				t.Fatal("Load accepted it")
			}
			es, ok := config.AsErrors(err)
			var keys []string
			for _, e := range es {
				keys = append(keys, e.Key)
			}
			if !ok || !slices.Contains(keys, tc.wantKey) {
				t.Fatalf("Load error = %v (keys %v); want one naming %s", err, keys, tc.wantKey)
			}
		})
	}
}
