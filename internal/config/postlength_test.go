package config_test

import (
	"slices"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

// TestMaxPostLength: x_api.max_post_length defaults to auto, takes auto,
// 280 or 25000 written as a string or a number, may be set per account
// (and only that x_api key), and anything else is refused naming the key.
func TestMaxPostLength(t *testing.T) {
	if got := config.Default().XAPI.MaxPostLength; got != config.PostLengthAuto {
		t.Fatalf("default max_post_length %q, want auto", got)
	}
	home := t.TempDir()
	cfg, _ := mustLoad(t, home, writeFile(t, home, "config.toml", `
[x_api]
max_post_length = 280

[accounts.brand_b.x_api]
max_post_length = "25000"

[accounts.brand_c]
mode = "composer"
`), nil)
	if cfg.XAPI.MaxPostLength != config.PostLengthShort {
		t.Errorf("top level %q, want 280", cfg.XAPI.MaxPostLength)
	}
	for name, want := range map[string]config.PostLength{"brand_b": config.PostLengthLong, "brand_c": config.PostLengthShort} {
		acc, err := cfg.ForAccount(name)
		if err != nil {
			t.Fatal(err)
		}
		if acc.XAPI.MaxPostLength != want {
			t.Errorf("%s: %q, want %q", name, acc.XAPI.MaxPostLength, want)
		}
	}

	home = t.TempDir()
	fromEnv, _ := mustLoad(t, home, writeFile(t, home, "config.toml", ""), env{"TUITBOT_X_API__MAX_POST_LENGTH": "25000"})
	if fromEnv.XAPI.MaxPostLength != config.PostLengthLong {
		t.Errorf("from the environment %q, want 25000", fromEnv.XAPI.MaxPostLength)
	}

	for _, tc := range []struct{ name, toml, wantKey string }{
		{"a number X has no tier for", "[x_api]\nmax_post_length = 4000\n", "x_api.max_post_length"},
		{"a word", "[x_api]\nmax_post_length = \"long\"\n", "x_api.max_post_length"},
		{"per account", "[accounts.b.x_api]\nmax_post_length = 300\n", "accounts.b.x_api.max_post_length"},
		{"another x_api key per account", "[accounts.b.x_api]\nclient_id = \"other\"\n", "accounts.b.x_api.client_id"},
	} {
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
