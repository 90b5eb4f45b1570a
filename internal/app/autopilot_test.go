package app_test

import (
	"bytes"
	"log/slog"
	"regexp"
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestAutopilotLogNamesTheAccount: in a home of several accounts, where
// one process may run (or stand by for) every account's autopilot, each
// runner's log lines name their account exactly once, the default account
// included; a home of one account logs without it, as before.
func TestAutopilotLogNamesTheAccount(t *testing.T) {
	for _, tc := range []struct {
		name     string
		accounts map[string]map[string]any
		want     map[string]string // account -> the account attribute its lines carry ("" for none)
	}{
		{"one account", nil, map[string]string{"default": ""}},
		{"several accounts", map[string]map[string]any{"brand_b": {"mode": "autopilot"}},
			map[string]string{"default": "default", "brand_b": "brand_b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, t.TempDir())
			cfg.Accounts = tc.accounts
			var logs bytes.Buffer
			top := newApp(t, cfg, app.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if got := len(top.Accounts()); got != len(tc.want) {
				t.Fatalf("the home has %d accounts, want %d", got, len(tc.want))
			}
			for account, want := range tc.want {
				a, err := top.ForAccount(account)
				if err != nil {
					t.Fatal(err)
				}
				d, err := a.AutopilotDeps()
				if err != nil {
					t.Fatalf("AutopilotDeps(%s): %v", account, err)
				}
				logs.Reset()
				d.Log.Info("probe")
				attrs := regexp.MustCompile(`\baccount=(\S+)`).FindAllStringSubmatch(logs.String(), -1)
				switch {
				case want == "" && len(attrs) != 0:
					t.Fatalf("account %s's autopilot log names an account in a home of one: %s", account, logs.String())
				case want != "" && (len(attrs) != 1 || attrs[0][1] != want):
					t.Fatalf("account %s's autopilot log: %q, want account=%s once", account, logs.String(), want)
				}
			}
		})
	}
}

// TestOnlyTheSandboxRunsAtAnyHour: the autopilot of a real account keeps
// its active hours, whatever [sandbox] all_day says; the sandbox runs at
// any hour unless all_day is turned off. A sandbox whose configuration
// names no topics writes about the demo account's, and one that names
// topics keeps them.
func TestOnlyTheSandboxRunsAtAnyHour(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sandbox     bool
		allDay      bool
		keywords    []string
		wantAnyHour bool
		wantPillars []string
	}{
		{"real account", false, true, nil, false, nil},
		{"sandbox", true, true, nil, true, xsim.DemoPillars()},
		{"sandbox keeping the hours", true, false, nil, false, xsim.DemoPillars()},
		{"sandbox with its own topics", true, true, []string{"sqlite"}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, t.TempDir())
			cfg.Sandbox.AllDay = tc.allDay
			cfg.Business.ProductKeywords = tc.keywords
			a := newApp(t, cfg, app.Options{Sandbox: tc.sandbox})
			for _, account := range a.Accounts() {
				v, err := a.ForAccount(account)
				if err != nil {
					t.Fatal(err)
				}
				d, err := v.AutopilotDeps()
				if err != nil {
					t.Fatal(err)
				}
				if d.AnyHour != tc.wantAnyHour {
					t.Errorf("account %s: AnyHour = %v, want %v", account, d.AnyHour, tc.wantAnyHour)
				}
				if got := v.Cfg.Business.ContentPillars; !slices.Equal(got, tc.wantPillars) {
					t.Errorf("account %s: content pillars %q, want %q", account, got, tc.wantPillars)
				}
			}
		})
	}
}
