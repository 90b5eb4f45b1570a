package config_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

// env is an injected process environment for Load.
type env map[string]string

func (e env) getenv(k string) string { return e[k] }

func (e env) environ() []string {
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// load runs config.Load with TUITBOT_HOME set to home plus extra variables,
// so the test never sees the real environment or home directory.
func load(t *testing.T, home, path string, extra env) (*config.Config, config.Source, error) {
	t.Helper()
	e := env{"TUITBOT_HOME": home}
	for k, v := range extra {
		e[k] = v
	}
	return config.Load(config.LoadOptions{Path: path, Getenv: e.getenv, Environ: e.environ})
}

func mustLoad(t *testing.T, home, path string, extra env) (*config.Config, config.Source) {
	t.Helper()
	cfg, src, err := load(t, home, path, extra)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg, src
}

// writeFile writes content to name inside dir and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// normalized clears the location fields and turns empty lists into nil, so
// a configuration read from a file compares equal to Default().
func normalized(t *testing.T, c config.Config) config.Config {
	t.Helper()
	c.Home, c.ConfigPath = "", ""
	for _, f := range config.Fields(&c) {
		if f.Value.Kind() == reflect.Slice && f.Value.Len() == 0 {
			f.Value.Set(reflect.Zero(f.Value.Type()))
		}
	}
	if len(c.MCPPolicy.Rules) == 0 {
		c.MCPPolicy.Rules = nil
	}
	if len(c.MCPPolicy.RateLimits) == 0 {
		c.MCPPolicy.RateLimits = nil
	}
	return c
}

func assertContainsAll(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("message %q does not contain %q", got, w)
		}
	}
}

func TestDefaultsAreValid(t *testing.T) {
	def := config.Default()
	if err := def.Validate(); err != nil {
		t.Fatalf("Default() does not validate: %v", err)
	}
}

func TestLoadWithoutFileGivesDefaults(t *testing.T) {
	home := t.TempDir()
	cfg, src := mustLoad(t, home, "", nil)
	if src.File != "" {
		t.Errorf("Source.File = %q, want empty when no file exists", src.File)
	}
	if len(src.EnvApplied) != 0 {
		t.Errorf("EnvApplied = %v, want none", src.EnvApplied)
	}
	if cfg.Home != home {
		t.Errorf("Home = %q, want %q", cfg.Home, home)
	}
	if want := filepath.Join(home, "config.toml"); cfg.ConfigPath != want {
		t.Errorf("ConfigPath = %q, want %q", cfg.ConfigPath, want)
	}
	if got, want := normalized(t, *cfg), normalized(t, config.Default()); !reflect.DeepEqual(got, want) {
		t.Errorf("loaded config differs from defaults:\n got %+v\nwant %+v", got, want)
	}
	if got, want := cfg.DBFile(), filepath.Join(home, "tuitbot.db"); got != want {
		t.Errorf("DBFile = %q, want %q", got, want)
	}
	if got, want := cfg.TokenFile(), filepath.Join(home, "tokens.json"); got != want {
		t.Errorf("TokenFile = %q, want %q", got, want)
	}
	if got, want := cfg.MediaDirs(), []string{filepath.Join(home, "media")}; !reflect.DeepEqual(got, want) {
		t.Errorf("MediaDirs = %v, want %v", got, want)
	}
}

func TestFileOverridesDefaults(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "config.toml", `
mode = "composer"
approval_mode = false

[llm]
provider = "openai"
model = "gpt-4o-mini"
temperature = 0.2

[business]
product_keywords = ["rust", "cli"]

[storage]
db_path = "custom.db"

[[mcp_policy.rules]]
id = "user:a"
priority = 200
action = { type = "deny", reason = "no" }
`)
	cfg, src := mustLoad(t, home, "", nil)
	if src.File != filepath.Join(home, "config.toml") {
		t.Errorf("Source.File = %q", src.File)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"mode", cfg.Mode, "composer"},
		{"approval_mode", cfg.ApprovalMode, false},
		{"llm.provider", cfg.LLM.Provider, "openai"},
		{"llm.model", cfg.LLM.Model, "gpt-4o-mini"},
		{"llm.temperature", cfg.LLM.Temperature, 0.2},
		{"business.product_keywords", cfg.Business.ProductKeywords, []string{"rust", "cli"}},
		{"storage.db_path", cfg.DBFile(), "custom.db"},
		{"rules", len(cfg.MCPPolicy.Rules), 1},
		// Keys the file does not mention keep their defaults.
		{"llm.max_tokens", cfg.LLM.MaxTokens, config.Default().LLM.MaxTokens},
		{"limits.max_replies_per_day", cfg.Limits.MaxRepliesPerDay, config.Default().Limits.MaxRepliesPerDay},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if !cfg.EffectiveApprovalMode() {
		t.Error("composer mode must force the effective approval mode on")
	}
	if cfg.MCPPolicy.Rules[0].Action.Type != "deny" {
		t.Errorf("rule action = %q", cfg.MCPPolicy.Rules[0].Action.Type)
	}
}

func TestExplicitPathIsUsed(t *testing.T) {
	home := t.TempDir()
	// A file in home must be ignored when -c names another one.
	writeFile(t, home, "config.toml", `mode = "composer"`)
	other := writeFile(t, t.TempDir(), "other.toml", "[llm]\nmodel = \"m\"\n")
	cfg, src := mustLoad(t, home, other, nil)
	if src.File != other || cfg.ConfigPath != other {
		t.Errorf("Source.File = %q, ConfigPath = %q, want %q", src.File, cfg.ConfigPath, other)
	}
	if cfg.Mode != "autopilot" || cfg.LLM.Model != "m" {
		t.Errorf("mode = %q, llm.model = %q: -c file not used alone", cfg.Mode, cfg.LLM.Model)
	}
}

func TestEnvOverrides(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   env
		check func(t *testing.T, c *config.Config)
	}{
		{
			name: "section string",
			env:  env{"TUITBOT_LLM__MODEL": "llama3.1"},
			check: func(t *testing.T, c *config.Config) {
				if c.LLM.Model != "llama3.1" {
					t.Errorf("llm.model = %q", c.LLM.Model)
				}
			},
		},
		{
			name: "top-level mode",
			env:  env{"TUITBOT_MODE": "composer"},
			check: func(t *testing.T, c *config.Config) {
				if c.Mode != "composer" {
					t.Errorf("mode = %q", c.Mode)
				}
			},
		},
		{
			name: "env beats file",
			file: "mode = \"composer\"\n[llm]\nmodel = \"from-file\"\n",
			env:  env{"TUITBOT_MODE": "autopilot", "TUITBOT_LLM__MODEL": "from-env"},
			check: func(t *testing.T, c *config.Config) {
				if c.Mode != "autopilot" || c.LLM.Model != "from-env" {
					t.Errorf("mode = %q, llm.model = %q", c.Mode, c.LLM.Model)
				}
			},
		},
		{
			name: "bool int float",
			env: env{
				"TUITBOT_APPROVAL_MODE":               "false",
				"TUITBOT_LIMITS__MAX_REPLIES_PER_DAY": " 9 ",
				"TUITBOT_SCORING__THRESHOLD":          "75.5",
				"TUITBOT_X_API__MAX_BODY_BYTES":       "1024",
			},
			check: func(t *testing.T, c *config.Config) {
				if c.ApprovalMode || c.Limits.MaxRepliesPerDay != 9 || c.Scoring.Threshold != 75.5 || c.XAPI.MaxBodyBytes != 1024 {
					t.Errorf("approval_mode=%t max_replies=%d threshold=%g max_body=%d",
						c.ApprovalMode, c.Limits.MaxRepliesPerDay, c.Scoring.Threshold, c.XAPI.MaxBodyBytes)
				}
			},
		},
		{
			name: "comma list trims and drops blanks",
			env:  env{"TUITBOT_BUSINESS__PRODUCT_KEYWORDS": " go, mcp ,,agents "},
			check: func(t *testing.T, c *config.Config) {
				if want := []string{"go", "mcp", "agents"}; !reflect.DeepEqual(c.Business.ProductKeywords, want) {
					t.Errorf("product_keywords = %#v, want %#v", c.Business.ProductKeywords, want)
				}
			},
		},
		{
			name: "empty value is an empty list",
			env:  env{"TUITBOT_MCP_POLICY__REQUIRE_APPROVAL_FOR": ""},
			check: func(t *testing.T, c *config.Config) {
				if c.MCPPolicy.RequireApprovalFor == nil || len(c.MCPPolicy.RequireApprovalFor) != 0 {
					t.Errorf("require_approval_for = %#v, want an empty non-nil list", c.MCPPolicy.RequireApprovalFor)
				}
			},
		},
		{
			name: "empty list from env replaces file list",
			file: "[limits]\nbanned_phrases = [\"a\", \"b\"]\n",
			env:  env{"TUITBOT_LIMITS__BANNED_PHRASES": ""},
			check: func(t *testing.T, c *config.Config) {
				if len(c.Limits.BannedPhrases) != 0 {
					t.Errorf("banned_phrases = %#v, want empty", c.Limits.BannedPhrases)
				}
			},
		},
		{
			name: "non-config TUITBOT variables are ignored",
			env:  env{"TUITBOT_CONFORMANCE_DIR": "/nowhere", "TUITBOT_CONFIG": "x", "OTHER__THING": "1"},
			check: func(t *testing.T, c *config.Config) {
				if c.Mode != "autopilot" {
					t.Errorf("mode = %q", c.Mode)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if tc.file != "" {
				writeFile(t, home, "config.toml", tc.file)
			}
			cfg, src := mustLoad(t, home, "", tc.env)
			tc.check(t, cfg)
			for name := range tc.env {
				if !strings.HasPrefix(name, "TUITBOT_") || name == "TUITBOT_CONFORMANCE_DIR" || name == "TUITBOT_CONFIG" {
					continue
				}
				if !contains(src.EnvApplied, name) {
					t.Errorf("EnvApplied = %v, missing %s", src.EnvApplied, name)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestEveryFieldCanBeSetFromEnv(t *testing.T) {
	// Each settable key has an env name of the documented form, and setting
	// it is accepted (values chosen to pass validation where possible).
	def := config.Default()
	for _, f := range config.Fields(&def) {
		name := f.EnvName()
		want := "TUITBOT_" + strings.ToUpper(f.Key)
		if f.Section != "" {
			want = "TUITBOT_" + strings.ToUpper(f.Section) + "__" + strings.ToUpper(f.Key)
		}
		if name != want {
			t.Errorf("%s: EnvName = %q, want %q", f.Name(), name, want)
		}
	}
	home := t.TempDir()
	cfg, src := mustLoad(t, home, "", env{"TUITBOT_LOGGING__LEVEL": "debug", "TUITBOT_SANDBOX__SEED": "7"})
	if cfg.Logging.Level != "debug" || cfg.Sandbox.Seed != 7 {
		t.Errorf("logging.level = %q, sandbox.seed = %d", cfg.Logging.Level, cfg.Sandbox.Seed)
	}
	if want := []string{"TUITBOT_LOGGING__LEVEL", "TUITBOT_SANDBOX__SEED"}; !reflect.DeepEqual(src.EnvApplied, want) {
		t.Errorf("EnvApplied = %v, want %v (sorted)", src.EnvApplied, want)
	}
}

func TestUnknownFileKey(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		key   string
		hints []string
	}{
		{"top-level", "modee = \"composer\"\n", "modee", []string{"allowed keys", "mode", "approval_mode", "max_batch_approve"}},
		{"in section", "[llm]\nmodle = \"x\"\n", "llm.modle", []string{"allowed keys", "model", "provider", "api_key_env"}},
		{"unknown section", "[nope]\na = 1\n", "nope", []string{"allowed sections", "[llm]", "[x_api]"}},
		{"in policy rule", "[[mcp_policy.rules]]\nid = \"r\"\nactoin = { type = \"deny\" }\n", "mcp_policy.rules.actoin", []string{"action", "conditions", "priority"}},
		{"in rule conditions", "[[mcp_policy.rules]]\nid = \"r\"\nconditions = { tool = [\"x\"] }\n", "mcp_policy.rules.conditions.tool", []string{"tools", "categories", "schedule_window"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, home, "config.toml", tc.file)
			_, _, err := load(t, home, "", nil)
			if err == nil {
				t.Fatal("Load accepted an unknown key")
			}
			es, ok := config.AsErrors(err)
			if !ok {
				t.Fatalf("error %v is not config.Errors", err)
			}
			found := false
			for _, e := range es {
				if strings.HasPrefix(e.Key, tc.key) {
					found = true
					assertContainsAll(t, e.Message, tc.hints...)
				}
			}
			if !found {
				t.Errorf("no error names key %q: %v", tc.key, err)
			}
			assertContainsAll(t, err.Error(), tc.key)
			// One mistake, one error: keys inside an unknown table are not
			// reported again.
			if len(es) != 1 {
				t.Errorf("got %d errors, want 1: %v", len(es), err)
			}
		})
	}
}

func TestFileTypeErrorNamesKey(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "config.toml", "[limits]\nmax_replies_per_day = \"five\"\n")
	_, _, err := load(t, home, "", nil)
	if err == nil {
		t.Fatal("Load accepted a string for an integer key")
	}
	assertContainsAll(t, err.Error(), "max_replies_per_day", filepath.Join(home, "config.toml"))
}

func TestMalformedTOML(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "config.toml", "mode = \n[[[")
	_, _, err := load(t, home, "", nil)
	if err == nil {
		t.Fatal("Load accepted malformed TOML")
	}
	assertContainsAll(t, err.Error(), "config.toml")
}

func TestUnknownEnvVariable(t *testing.T) {
	tests := []struct {
		name string
		env  env
		want []string
	}{
		{"unknown section", env{"TUITBOT_FOO__BAR": "1"}, []string{"TUITBOT_FOO__BAR", "TUITBOT_<SECTION>__<KEY>"}},
		{"unknown key in known section", env{"TUITBOT_LLM__MODLE": "x"}, []string{"TUITBOT_LLM__MODLE"}},
		{"bad integer", env{"TUITBOT_LIMITS__MAX_REPLIES_PER_DAY": "many"}, []string{"TUITBOT_LIMITS__MAX_REPLIES_PER_DAY", "not an integer"}},
		{"bad bool", env{"TUITBOT_APPROVAL_MODE": "maybe"}, []string{"TUITBOT_APPROVAL_MODE", "true, false"}},
		{"bad float", env{"TUITBOT_SCORING__THRESHOLD": "high"}, []string{"TUITBOT_SCORING__THRESHOLD", "not a number"}},
		{"top-level typo", env{"TUITBOT_APROVAL_MODE": "false"}, []string{"TUITBOT_APROVAL_MODE", "did you mean TUITBOT_APPROVAL_MODE?"}},
		{"top-level typo, one letter more", env{"TUITBOT_MODES": "composer"}, []string{"TUITBOT_MODES", "did you mean TUITBOT_MODE?"}},
		{"section key with one underscore", env{"TUITBOT_LLM_MODEL": "x"}, []string{"TUITBOT_LLM_MODEL", "did you mean TUITBOT_LLM__MODEL?"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := load(t, t.TempDir(), "", tc.env)
			if err == nil {
				t.Fatalf("Load accepted %v", tc.env)
			}
			if _, ok := config.AsErrors(err); !ok {
				t.Errorf("error %T is not config.Errors", err)
			}
			assertContainsAll(t, err.Error(), tc.want...)
		})
	}
}

// TestForeignEnvVariablesAreLeftAlone: TUITBOT_ names that are not a
// misspelt key belong to other tools (MCP clients read the bearer token
// from TUITBOT_MCP_TOKEN) and must not stop tuitbot.
func TestForeignEnvVariablesAreLeftAlone(t *testing.T) {
	for _, name := range []string{"TUITBOT_MCP_TOKEN", "TUITBOT_REQUIRE_BROWSER", "TUITBOT_REQUIRE_CONFORMANCE", "TUITBOT_TEST_LLM_KEY", "TUITBOT_SCREENSHOT_DIR"} {
		if _, _, err := load(t, t.TempDir(), "", env{name: "x"}); err != nil {
			t.Errorf("%s stopped the load: %v", name, err)
		}
	}
}

// TestActiveHoursEndMidnight: 24 ends the active hours at midnight, so
// 0 to 24 says "all day" the way people write it.
func TestActiveHoursEndMidnight(t *testing.T) {
	cfg, _, err := load(t, t.TempDir(), "", env{"TUITBOT_SCHEDULE__ACTIVE_HOURS_START": "0", "TUITBOT_SCHEDULE__ACTIVE_HOURS_END": "24"})
	if err != nil {
		t.Fatalf("active_hours_end = 24 refused: %v", err)
	}
	if cfg.Schedule.ActiveHoursEnd != 24 {
		t.Errorf("active_hours_end = %d, want 24", cfg.Schedule.ActiveHoursEnd)
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  env
		key  string
		want []string
	}{
		{"mode file", "mode = \"foo\"\n", nil, "mode", []string{`"foo"`, "autopilot", "composer"}},
		{"mode env", "", env{"TUITBOT_MODE": "foo"}, "mode", []string{"autopilot", "composer"}},
		{"provider", "[llm]\nprovider = \"x\"\n", nil, "llm.provider", []string{"openai", "anthropic"}},
		{"timezone", "[schedule]\ntimezone = \"Mars/Olympus\"\n", nil, "schedule.timezone", []string{"Mars/Olympus", "IANA"}},
		{"empty timezone", "", env{"TUITBOT_SCHEDULE__TIMEZONE": ""}, "schedule.timezone", []string{"IANA"}},
		{"threshold", "[scoring]\nthreshold = 200\n", nil, "scoring.threshold", []string{"0 and 100", "200"}},
		{"threshold env", "", env{"TUITBOT_SCORING__THRESHOLD": "-1"}, "scoring.threshold", []string{"0 and 100"}},
		{"profile", "[mcp]\nprofile = \"admin\"\n", nil, "mcp.profile", []string{"workflow", "readonly", "api-readonly"}},
		{"dynamic toolsets", "[mcp]\ndynamic_toolsets = \"sometimes\"\n", nil, "mcp.dynamic_toolsets", []string{"auto", "on", "off"}},
		{"template", "[mcp_policy]\ntemplate = \"yolo\"\n", nil, "mcp_policy.template", []string{"safe_default"}},
		{"log level", "[logging]\nlevel = \"loud\"\n", nil, "logging.level", []string{"debug", "error"}},
		{"active day", "[schedule]\nactive_days = [\"mon\", \"funday\"]\n", nil, "schedule.active_days", []string{"funday", "sun"}},
		{"preferred time", "[schedule]\npreferred_times = [\"25:00\"]\n", nil, "schedule.preferred_times", []string{"HH:MM"}},
		{"hour", "[schedule]\nactive_hours_end = 25\n", nil, "schedule.active_hours_end", []string{"0-24"}},
		{"start hour", "[schedule]\nactive_hours_start = 24\n", nil, "schedule.active_hours_start", []string{"0-23"}},
		{"temperature", "[llm]\ntemperature = 3.0\n", nil, "llm.temperature", []string{"0 and 2"}},
		{"non-positive", "[limits]\nmax_tweets_per_day = 0\n", nil, "limits.max_tweets_per_day", []string{"greater than 0"}},
		{"approval queue bound", "[mcp_policy]\nmax_pending_approvals = 0\n", nil, "mcp_policy.max_pending_approvals", []string{"greater than 0"}},
		{"http url", "[x_api]\napi_base_url = \"http://api.example.com\"\n", nil, "x_api.api_base_url", []string{"https://"}},
		{"loopback-looking host", "[x_api]\napi_base_url = \"http://127.0.0.1.evil.example\"\n", nil, "x_api.api_base_url", []string{"https://"}},
		{"localhost-looking host", "[x_api]\ntoken_url = \"http://localhost.evil.example/token\"\n", nil, "x_api.token_url", []string{"https://"}},
		{"url without host", "[x_api]\nupload_base_url = \"https://\"\n", nil, "x_api.upload_base_url", []string{"https://"}},
		{"llm base url not a url", "[llm]\nbase_url = \"ht!tp://u:p@x y/\"\n", nil, "llm.base_url", []string{"not a URL", "http://127.0.0.1:11434/v1"}},
		{"llm base url without scheme", "", env{"TUITBOT_LLM__BASE_URL": "api.example.com/v1"}, "llm.base_url", []string{"not a URL"}},
		{"llm base url other scheme", "", env{"TUITBOT_LLM__BASE_URL": "ftp://files.example/v1"}, "llm.base_url", []string{"http or https"}},
		{"llm base url without host", "", env{"TUITBOT_LLM__BASE_URL": "https:///v1"}, "llm.base_url", []string{"host"}},
		{"nan file", "[llm]\ntemperature = nan\n", nil, "llm.temperature", []string{"finite"}},
		{"nan env", "", env{"TUITBOT_SCORING__THRESHOLD": "NaN"}, "scoring.threshold", []string{"finite"}},
		{"inf env", "", env{"TUITBOT_MCP_POLICY__DAILY_BUDGET_USD": "+Inf"}, "mcp_policy.daily_budget_usd", []string{"finite"}},
		{"nan ratio", "[limits]\nproduct_mention_ratio = nan\n", nil, "limits.product_mention_ratio", []string{"finite"}},
		{"nan rate limit", "[[mcp_policy.rate_limits]]\nkey = \"k\"\nmax_count = nan\n", nil, "mcp_policy.rate_limits[0].max_count", []string{"finite"}},
		{"max connections", "[mcp]\nhttp_max_connections = 0\n", nil, "mcp.http_max_connections", []string{"greater than 0"}},
		{"session idle timeout", "", env{"TUITBOT_MCP__SESSION_IDLE_TIMEOUT_SECONDS": "-5"}, "mcp.session_idle_timeout_seconds", []string{"greater than 0"}},
		{"max sessions", "[mcp]\nmax_sessions = 0\n", nil, "mcp.max_sessions", []string{"greater than 0"}},
		{"cross-account window zero", "[x_api]\ncross_account_duplicate_hours = 0\n", nil, "x_api.cross_account_duplicate_hours", []string{"between 1 and 720", "got 0"}},
		{"cross-account window too long", "", env{"TUITBOT_X_API__CROSS_ACCOUNT_DUPLICATE_HOURS": "721"}, "x_api.cross_account_duplicate_hours", []string{"between 1 and 720", "got 721"}},
		{"max message bytes", "[mcp]\nmax_message_bytes = 100\n", nil, "mcp.max_message_bytes", []string{"at least 1024", "100"}},
		{"rule without id", "[[mcp_policy.rules]]\naction = { type = \"deny\" }\n", nil, "mcp_policy.rules[0].id", []string{"required"}},
		{"rule action", "[[mcp_policy.rules]]\nid = \"r\"\naction = { type = \"maybe\" }\n", nil, "mcp_policy.rules[0].action.type", []string{"allow", "deny", "require_approval", "dry_run"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if tc.file != "" {
				writeFile(t, home, "config.toml", tc.file)
			}
			_, _, err := load(t, home, "", tc.env)
			if err == nil {
				t.Fatal("Load accepted a bad value")
			}
			es, ok := config.AsErrors(err)
			if !ok {
				t.Fatalf("error %T (%v) is not config.Errors", err, err)
			}
			for _, e := range es {
				if e.Key == tc.key {
					assertContainsAll(t, e.Message, tc.want...)
					assertContainsAll(t, err.Error(), tc.key+": ")
					return
				}
			}
			t.Errorf("no error for key %q in %v", tc.key, err)
		})
	}
}

func TestLoopbackHTTPURLsAllowed(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8080", "http://localhost:9000/x", "http://[::1]:1234", "https://api.x.com"} {
		home := t.TempDir()
		if _, _, err := load(t, home, "", env{"TUITBOT_X_API__API_BASE_URL": u}); err != nil {
			t.Errorf("%s rejected: %v", u, err)
		}
	}
}

func TestValidationReportsEveryProblemSorted(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "config.toml", "mode = \"foo\"\n[llm]\nprovider = \"x\"\n[scoring]\nthreshold = 200\n")
	_, _, err := load(t, home, "", nil)
	es, ok := config.AsErrors(err)
	if !ok {
		t.Fatalf("want config.Errors, got %v", err)
	}
	var keys []string
	for _, e := range es {
		keys = append(keys, e.Key)
	}
	if want := []string{"llm.provider", "mode", "scoring.threshold"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
}

func TestConfigPathErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing.toml")
		_, _, err := load(t, t.TempDir(), missing, nil)
		if err == nil {
			t.Fatal("Load accepted a missing -c file")
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v does not wrap fs.ErrNotExist", err)
		}
		assertContainsAll(t, err.Error(), missing, "does not exist")
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		_, _, err := load(t, t.TempDir(), dir, nil)
		if err == nil {
			t.Fatal("Load accepted a directory as config file")
		}
		assertContainsAll(t, err.Error(), dir, "is a directory")
	})
	t.Run("default path is a directory", func(t *testing.T) {
		home := t.TempDir()
		if err := os.Mkdir(filepath.Join(home, "config.toml"), 0o700); err != nil {
			t.Fatal(err)
		}
		_, _, err := load(t, home, "", nil)
		if err == nil {
			t.Fatal("Load accepted a directory at the default config path")
		}
		assertContainsAll(t, err.Error(), "is a directory")
	})
	t.Run("db path is a directory", func(t *testing.T) {
		home := t.TempDir()
		_, _, err := load(t, home, "", env{"TUITBOT_STORAGE__DB_PATH": home})
		if err == nil {
			t.Fatal("Load accepted a directory as storage.db_path")
		}
		assertContainsAll(t, err.Error(), "storage.db_path", "directory")
	})
}

func TestHomeDir(t *testing.T) {
	got, err := config.HomeDir(func(k string) string {
		if k == "TUITBOT_HOME" {
			return "/srv/tb"
		}
		return ""
	})
	if err != nil || got != "/srv/tb" {
		t.Errorf("HomeDir = %q, %v; want /srv/tb", got, err)
	}
	got, err = config.HomeDir(func(string) string { return "" })
	if err != nil {
		t.Skipf("no user home directory here: %v", err)
	}
	if filepath.Base(got) != ".tuitbot" {
		t.Errorf("HomeDir without TUITBOT_HOME = %q, want ~/.tuitbot", got)
	}
}

func TestMediaDirsExplicit(t *testing.T) {
	cfg, _ := mustLoad(t, t.TempDir(), "", env{"TUITBOT_MEDIA__ALLOWED_DIRS": "/a,/b"})
	if want := []string{"/a", "/b"}; !reflect.DeepEqual(cfg.MediaDirs(), want) {
		t.Errorf("MediaDirs = %v, want %v", cfg.MediaDirs(), want)
	}
}

// TestRequireApprovalForSetTracksTheUser: only a require_approval_for the
// file or the environment wrote counts as the user's list.
func TestRequireApprovalForSetTracksTheUser(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  env
		want bool
	}{
		{"defaults", "", nil, false},
		{"file without the key", "[mcp_policy]\nblocked_tools = [\"x_post_tweet\"]\n", nil, false},
		{"file sets the key", "[mcp_policy]\nrequire_approval_for = [\"x_like_tweet\"]\n", nil, true},
		{"file sets an empty list", "[mcp_policy]\nrequire_approval_for = []\n", nil, true},
		{"file repeats the default list", "[mcp_policy]\nrequire_approval_for = [\"x_post_tweet\", \"x_reply_to_tweet\", \"x_quote_tweet\", \"x_post_thread\", \"x_follow_user\", \"x_like_tweet\", \"x_edit_tweet\"]\n", nil, false},
		{"environment sets the key", "", env{"TUITBOT_MCP_POLICY__REQUIRE_APPROVAL_FOR": "x_like_tweet"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.file != "" {
				writeFile(t, home, "config.toml", tt.file)
			}
			cfg, _ := mustLoad(t, home, "", tt.env)
			if cfg.MCPPolicy.RequireApprovalForSet != tt.want {
				t.Errorf("RequireApprovalForSet = %t, want %t", cfg.MCPPolicy.RequireApprovalForSet, tt.want)
			}
		})
	}
}

func TestMediaURLKeys(t *testing.T) {
	cfg, _ := mustLoad(t, t.TempDir(), "", env{"TUITBOT_MEDIA__URL_ALLOW_PRIVATE": "10.1.2.0/24, fd00::/8"})
	if got := fmt.Sprint(cfg.MediaURLPrivate()); got != "[10.1.2.0/24 fd00::/8]" {
		t.Errorf("MediaURLPrivate = %s", got)
	}
	if cfg.Media.MaxURLBytes != 64<<20 || cfg.Media.URLAllowHTTP {
		t.Errorf("defaults: max_url_bytes %d, url_allow_http %v; want 64 MiB and false", cfg.Media.MaxURLBytes, cfg.Media.URLAllowHTTP)
	}
	home := t.TempDir()
	writeFile(t, home, "config.toml", "[media]\nurl_allow_private = [\"10.0.0.0/8\", \"10.0.0.1\"]\nurl_allow_hosts = [\"ok.example\", \"a/b\"]\nmax_url_bytes = 0\n")
	_, _, err := load(t, home, "", nil)
	es, ok := config.AsErrors(err)
	if !ok {
		t.Fatalf("want config.Errors, got %v", err)
	}
	var keys []string
	for _, e := range es {
		keys = append(keys, e.Key)
	}
	if want := []string{"media.max_url_bytes", "media.url_allow_hosts[1]", "media.url_allow_private[1]"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
}
