package config_test

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

const twoAccounts = `
mode = "autopilot"
approval_mode = true
default_account = "brand_b"

[limits]
max_replies_per_day = 7
max_tweets_per_day = 4

[mcp_policy]
max_mutations_per_hour = 11
template = "safe_default"

[[mcp_policy.rate_limits]]
key = "likes"
dimension = "tool"
match_value = "x_like_tweet"
max_count = 3
period_seconds = 3600

[business]
product_name = "Top"
brand_voice = "calm"

[accounts.brand_b]
mode = "composer"
limits = { max_replies_per_day = 2 }
business = { brand_voice = "loud" }
schedule = { timezone = "Europe/Berlin" }

[accounts.brand_c]
approval_mode = false
[accounts.brand_c.mcp_policy]
template = "agency_mode"
daily_budget_usd = 2.5
[[accounts.brand_c.mcp_policy.rate_limits]]
key = "likes"
dimension = "tool"
match_value = "x_like_tweet"
max_count = 9
period_seconds = 3600
`

func TestAccountsOverrideAndInherit(t *testing.T) {
	home := t.TempDir()
	cfg, _ := mustLoad(t, home, writeFile(t, home, "config.toml", twoAccounts), env{"TUITBOT_BUSINESS__PRODUCT_NAME": "FromEnv"})
	if got, want := cfg.AccountNames(), []string{"default", "brand_b", "brand_c"}; !slices.Equal(got, want) {
		t.Fatalf("AccountNames = %v, want %v", got, want)
	}
	if sel, err := cfg.SelectAccount(""); err != nil || sel != "brand_b" {
		t.Fatalf("SelectAccount(\"\") = %q, %v; want brand_b from default_account", sel, err)
	}
	if sel, err := cfg.SelectAccount("brand_c"); err != nil || sel != "brand_c" {
		t.Fatalf("SelectAccount(brand_c) = %q, %v", sel, err)
	}
	if _, err := cfg.SelectAccount("nope"); err == nil || !strings.Contains(err.Error(), "default, brand_b, brand_c") {
		t.Fatalf("SelectAccount(nope) = %v; want an error listing the accounts", err)
	}

	def, err := cfg.ForAccount("default")
	if err != nil || def != cfg {
		t.Fatalf("ForAccount(default) = %p, %v; want the top-level config itself", def, err)
	}
	b, err := cfg.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	if b.Mode != "composer" || b.Limits.MaxRepliesPerDay != 2 || b.Business.BrandVoice != "loud" || b.Schedule.Timezone != "Europe/Berlin" {
		t.Errorf("brand_b overrides not applied: mode=%s replies=%d voice=%q tz=%s", b.Mode, b.Limits.MaxRepliesPerDay, b.Business.BrandVoice, b.Schedule.Timezone)
	}
	// Everything the section leaves out is inherited, environment included.
	if b.Limits.MaxTweetsPerDay != 4 || b.Business.ProductName != "FromEnv" || b.MCPPolicy.MaxMutationsPerHour != 11 || !b.ApprovalMode ||
		len(b.MCPPolicy.RateLimits) != 1 || b.MCPPolicy.RateLimits[0].MaxCount != 3 || b.Schedule.ActiveHoursStart != 8 {
		t.Errorf("brand_b did not inherit: %+v %+v %+v", b.Limits, b.Business, b.MCPPolicy)
	}
	c, err := cfg.ForAccount("brand_c")
	if err != nil {
		t.Fatal(err)
	}
	if c.ApprovalMode || c.MCPPolicy.Template != "agency_mode" || c.MCPPolicy.DailyBudgetUSD != 2.5 ||
		len(c.MCPPolicy.RateLimits) != 1 || c.MCPPolicy.RateLimits[0].MaxCount != 9 {
		t.Errorf("brand_c overrides not applied: approval=%t policy=%+v", c.ApprovalMode, c.MCPPolicy)
	}
	// Applying an account never writes through to the top level or to
	// another account.
	if cfg.MCPPolicy.RateLimits[0].MaxCount != 3 || cfg.Limits.MaxRepliesPerDay != 7 || cfg.Mode != "autopilot" || cfg.Business.BrandVoice != "calm" {
		t.Errorf("top-level config changed by ForAccount: %+v %+v", cfg.MCPPolicy.RateLimits, cfg.Limits)
	}
	if b.Accounts != nil || c.Accounts != nil {
		t.Error("an account's effective config must not carry accounts of its own")
	}

	if got, want := cfg.TokenFileFor("default"), filepath.Join(home, "tokens.json"); got != want {
		t.Errorf("TokenFileFor(default) = %s, want %s", got, want)
	}
	if got, want := cfg.TokenFileFor("brand_b"), filepath.Join(home, "tokens", "brand_b.json"); got != want {
		t.Errorf("TokenFileFor(brand_b) = %s, want %s", got, want)
	}
	if got := cfg.TokenFiles(); len(got) != 3 || got[0] == got[1] || got[1] == got[2] {
		t.Errorf("TokenFiles = %v; want one distinct file per account", got)
	}
}

func TestAccountsRejected(t *testing.T) {
	tests := []struct {
		name, toml, wantKey string
	}{
		{"key not overridable", "[accounts.b]\nstorage = { db_path = \"/tmp/x.db\" }\n", "accounts.b.storage"},
		{"unknown key inside a section", "[accounts.b.limits]\nmax_replys_per_day = 3\n", "accounts.b.limits.max_replys_per_day"},
		{"invalid value", "[accounts.b]\nmode = \"turbo\"\n", "accounts.b.mode"},
		{"invalid nested value", "[accounts.b.mcp_policy]\ntemplate = \"nope\"\n", "accounts.b.mcp_policy.template"},
		{"reserved name", "[accounts.default]\nmode = \"composer\"\n", "accounts.default"},
		{"bad name", "[accounts.\"Brand B\"]\nmode = \"composer\"\n", "accounts.Brand B"},
		{"unknown default account", "default_account = \"ghost\"\n", "default_account"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			_, _, err := load(t, home, writeFile(t, home, "config.toml", tc.toml), nil)
			es, ok := config.AsErrors(err)
			if !ok {
				t.Fatalf("Load error = %v; want field errors", err)
			}
			var keys []string
			for _, e := range es {
				keys = append(keys, e.Key)
			}
			if !slices.Contains(keys, tc.wantKey) {
				t.Fatalf("error keys = %v; want %s", keys, tc.wantKey)
			}
		})
	}
}

func TestAccountsNotAnEnvironmentKey(t *testing.T) {
	home := t.TempDir()
	cfg, _ := mustLoad(t, home, "", nil)
	if got := cfg.AccountNames(); !slices.Equal(got, []string{"default"}) {
		t.Fatalf("AccountNames without sections = %v, want [default]", got)
	}
	for _, f := range config.Fields(cfg) {
		if f.Name() == "accounts" {
			t.Fatal("[accounts.NAME] sections must not be listed as a settable key")
		}
	}
}

// TestCloneSharesNothing: a clone equals its original, and changing the
// clone's lists, maps and account sections leaves the original as it was.
func TestCloneSharesNothing(t *testing.T) {
	home := t.TempDir()
	cfg, _ := mustLoad(t, home, writeFile(t, home, "config.toml", twoAccounts), env{})
	before, _ := mustLoad(t, home, filepath.Join(home, "config.toml"), env{})
	c := cfg.Clone()
	if !reflect.DeepEqual(c, cfg) {
		t.Fatal("the clone differs from its original")
	}
	c.MCPPolicy.RateLimits[0].MaxCount = 99
	c.MCPPolicy.RequireApprovalFor = append(c.MCPPolicy.RequireApprovalFor[:0], "x_delete_tweet")
	c.Accounts["brand_b"]["mode"] = "autopilot"
	c.Accounts["brand_c"]["mcp_policy"].(map[string]any)["template"] = "safe_default"
	delete(c.Accounts, "brand_c")
	if !reflect.DeepEqual(cfg, before) {
		t.Error("changing the clone changed the original")
	}
}

// TestConfigFieldsAreExported: Clone copies exported fields only (as
// reflection may set them), so every field of Config must be one.
func TestConfigFieldsAreExported(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				t.Errorf("%s.%s is unexported: Clone would drop it", path, f.Name)
			}
			walk(f.Type, path+"."+f.Name)
		}
	}
	walk(reflect.TypeFor[config.Config](), "Config")
}
