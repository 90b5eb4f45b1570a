package app_test

import (
	"bytes"
	"log/slog"
	"regexp"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
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
