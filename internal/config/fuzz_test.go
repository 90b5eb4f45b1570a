package config_test

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

// FuzzLoadFile feeds arbitrary bytes as the config file. Load must never
// panic, and whatever it accepts must be a valid configuration.
func FuzzLoadFile(f *testing.F) {
	f.Add([]byte(config.ExampleTOML()))
	f.Add([]byte("mode = \"composer\"\n[llm]\nprovider = \"openai\"\n"))
	f.Add([]byte("[[mcp_policy.rules]]\nid = \"r\"\naction = { type = \"deny\" }\n"))
	f.Add([]byte("[scoring]\nthreshold = 1e400\n"))
	f.Add([]byte("[nope]\na = 1\n"))
	f.Add([]byte("\x00\xff[[["))
	// One home per worker process: calls within a worker run one at a time,
	// and a fresh directory per input would dominate the run time.
	home := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(home, "config.toml"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		e := env{"TUITBOT_HOME": home}
		cfg, _, err := config.Load(config.LoadOptions{Getenv: e.getenv, Environ: e.environ})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Load returned a configuration that does not validate: %v", err)
		}
		// Independent of Validate: what Load accepts is always usable.
		for _, fl := range config.Fields(cfg) {
			if fl.Value.Kind() == reflect.Float64 {
				if v := fl.Value.Float(); math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s = %g accepted", fl.Name(), v)
				}
			}
		}
		if cfg.Mode != "autopilot" && cfg.Mode != "composer" {
			t.Fatalf("mode %q accepted", cfg.Mode)
		}
		if cfg.Scoring.Threshold < 0 || cfg.Scoring.Threshold > 100 {
			t.Fatalf("threshold %g accepted", cfg.Scoring.Threshold)
		}
		if _, err := config.MaskedTOML(cfg); err != nil {
			t.Fatalf("MaskedTOML of an accepted configuration: %v", err)
		}
	})
}

// FuzzEnvList checks list parsing from the environment: no blank or
// untrimmed element ever comes out, and nothing panics.
func FuzzEnvList(f *testing.F) {
	for _, s := range []string{"", "a,b", " a , ,b ", ",,,", "x", "\t,\n", "é,ü"} {
		f.Add(s)
	}
	home := f.TempDir()
	f.Fuzz(func(t *testing.T, v string) {
		e := env{"TUITBOT_HOME": home, "TUITBOT_BUSINESS__PRODUCT_KEYWORDS": v}
		cfg, _, err := config.Load(config.LoadOptions{Getenv: e.getenv, Environ: e.environ})
		if err != nil {
			t.Fatalf("a list value was rejected: %v", err)
		}
		got := cfg.Business.ProductKeywords
		if got == nil {
			t.Fatal("list is nil; an env override must give a non-nil list")
		}
		for _, el := range got {
			if el == "" || el != strings.TrimSpace(el) || strings.Contains(el, ",") {
				t.Fatalf("bad element %q from %q", el, v)
			}
		}
	})
}
