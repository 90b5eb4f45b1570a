package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/config"
)

func TestVersion(t *testing.T) {
	r := newHome(t).ok(t, "version")
	m := versionLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("version printed %q", r.stdout)
	}
	// A plain build in a checkout reports the development version or the
	// module version the toolchain stamped from VCS, never nothing.
	if m[1] != app.Version && !strings.HasPrefix(m[1], "v") {
		t.Errorf("version %q is neither %q nor a module version", m[1], app.Version)
	}
}

func TestConfigInitShowValidate(t *testing.T) {
	const secret = "sk-cli-secret-do-not-print-4417"
	h := newHome(t)
	r := h.ok(t, "config", "init")
	cfgPath := h.path("config.toml")
	mustContain(t, "init output", r.stdout, cfgPath)
	st, err := os.Stat(cfgPath)
	if err != nil {
		t.Fatalf("config init wrote nothing: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("config file mode %o, want 600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(cfgPath)
	if string(b) != config.ExampleTOML() {
		t.Error("config init did not write the example file")
	}

	hs := h.with("TUITBOT_LLM__API_KEY="+secret, "TUITBOT_MODE=composer")
	show := hs.ok(t, "config", "show")
	mustContain(t, "config show", show.stdout, "# file: "+cfgPath, "# overridden by TUITBOT_LLM__API_KEY", config.Mask, `mode = "composer"`)
	js := hs.ok(t, "config", "show", "--json")
	var m map[string]any
	if err := json.Unmarshal([]byte(js.stdout), &m); err != nil {
		t.Fatalf("config show --json is not JSON: %v\n%s", err, js.stdout)
	}
	if m["llm"].(map[string]any)["api_key"] != config.Mask {
		t.Errorf("json api_key = %v", m["llm"].(map[string]any)["api_key"])
	}
	for _, out := range []string{show.stdout, show.stderr, js.stdout, js.stderr} {
		if strings.Contains(out, secret) {
			t.Fatal("config show printed the secret")
		}
	}
	v := hs.ok(t, "config", "validate")
	mustContain(t, "validate", v.stdout, "valid")
}

func TestConfigShowWithoutFile(t *testing.T) {
	r := newHome(t).ok(t, "config", "show")
	mustContain(t, "config show", r.stdout, "# file: (none; defaults)", `mode = "autopilot"`)
}

func TestConfigInitRefusesOverwrite(t *testing.T) {
	h := newHome(t)
	h.ok(t, "config", "init")
	if err := os.WriteFile(h.path("config.toml"), []byte("mode = \"composer\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.fails(t, "config", "init")
	mustContain(t, "second init", r.stderr, "already exists", "--force")
	if b, _ := os.ReadFile(h.path("config.toml")); string(b) != "mode = \"composer\"\n" {
		t.Error("refused init changed the file")
	}
	h.ok(t, "config", "init", "--force")
	if b, _ := os.ReadFile(h.path("config.toml")); string(b) != config.ExampleTOML() {
		t.Error("init --force did not rewrite the file")
	}
}

func TestBadConfigFailsNamingKey(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   []string
		wants []string
	}{
		{"bad mode", "mode = \"foo\"\n", nil, []string{"mode", "autopilot", "composer"}},
		{"unknown key", "[llm]\nmodle = \"x\"\n", nil, []string{"llm.modle", "model"}},
		{"bad env", "", []string{"TUITBOT_FOO__BAR=1"}, []string{"TUITBOT_FOO__BAR"}},
		{"bad threshold", "[scoring]\nthreshold = 200\n", nil, []string{"scoring.threshold"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t).with(tc.env...)
			if tc.file != "" {
				if err := os.WriteFile(h.path("config.toml"), []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{{"config", "validate"}, {"config", "show"}, {"doctor"}, {"mcp", "serve"}} {
				r := h.fails(t, args...)
				mustContain(t, strings.Join(args, " ")+" stderr", r.stderr, tc.wants...)
				if strings.Join(args, " ") == "mcp serve" && r.stdout != "" {
					t.Errorf("mcp serve wrote to stdout on a config error: %q", r.stdout)
				}
			}
		})
	}
}

var statusRE = regexp.MustCompile(`^(\S+)\s+(ok|degraded|not_configured|error)\s+`)

func TestDoctor(t *testing.T) {
	h := newHome(t)
	r := h.run(t, "doctor")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	seen := map[string]string{}
	for _, l := range lines {
		m := statusRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("doctor line %q is not `name status message`", l)
			continue
		}
		if _, dup := seen[m[1]]; dup {
			t.Errorf("doctor printed %s twice", m[1])
		}
		seen[m[1]] = m[2]
	}
	for _, want := range []string{"config", "database", "token", "llm", "x"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("doctor has no %s line:\n%s", want, r.stdout)
		}
	}
	if seen["config"] != "ok" || seen["database"] != "ok" {
		t.Errorf("fresh home: config=%s database=%s, want ok", seen["config"], seen["database"])
	}
	failed := false
	for _, s := range seen {
		failed = failed || s == "error"
	}
	if failed != (r.code != 0) {
		t.Errorf("exit %d but error lines=%t:\n%s", r.code, failed, r)
	}

	// A database path that is a directory is one error line and a failing exit.
	if err := os.Mkdir(h.path("dbdir"), 0o700); err != nil {
		t.Fatal(err)
	}
	bad := h.with("TUITBOT_STORAGE__DB_PATH=" + h.path("dbdir"))
	r = bad.fails(t, "doctor")
	mustContain(t, "doctor", r.stdout+r.stderr, "storage.db_path")
}

func TestManifestReadonly(t *testing.T) {
	h := newHome(t)
	r := h.ok(t, "mcp", "manifest", "--profile", "readonly")
	var m struct {
		Profile   string `json:"profile"`
		ToolCount int    `json:"tool_count"`
		Tools     []struct {
			Name     string   `json:"name"`
			Mutation bool     `json:"mutation"`
			Profiles []string `json:"profiles"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("manifest is not JSON: %v\n%s", err, r.stdout)
	}
	if m.Profile != "readonly" || m.ToolCount != len(m.Tools) || m.ToolCount == 0 {
		t.Errorf("manifest header: profile=%s count=%d tools=%d", m.Profile, m.ToolCount, len(m.Tools))
	}
	for _, tool := range m.Tools {
		if tool.Mutation {
			t.Errorf("readonly manifest lists mutation %s", tool.Name)
		}
	}
	bad := h.run(t, "mcp", "manifest", "--profile", "admin")
	if bad.code != 2 {
		t.Errorf("unknown profile exit %d, want 2 (usage)", bad.code)
	}
	mustContain(t, "bad profile", bad.stderr, "admin", "readonly")
}

func TestConfigFlagForEveryCommand(t *testing.T) {
	h := newHome(t)
	missing := h.path("missing.toml")
	for _, args := range [][]string{
		{"doctor"}, {"config", "show"}, {"config", "validate"}, {"mcp", "serve"},
	} {
		r := h.fails(t, append([]string{"-c", missing}, args...)...)
		mustContain(t, strings.Join(args, " "), r.stderr, missing, "does not exist")
	}

	// -c with a real file is used by every command that reads config.
	other := h.path("other.toml")
	if err := os.WriteFile(other, []byte("mode = \"composer\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.ok(t, "-c", other, "config", "show")
	mustContain(t, "config show -c", r.stdout, "# file: "+other, `mode = "composer"`)
	r = h.ok(t, "--config", other, "doctor")
	mustContain(t, "doctor -c", r.stdout, "mode=composer")

	// config init -c writes exactly there.
	target := h.path("sub/init.toml")
	h.ok(t, "-c", target, "config", "init")
	if _, err := os.Stat(target); err != nil {
		t.Errorf("config init -c did not write %s: %v", target, err)
	}
	if _, err := os.Stat(h.path("config.toml")); err == nil {
		t.Error("config init -c also wrote the default path")
	}
}

func TestUsageErrors(t *testing.T) {
	h := newHome(t)
	for _, args := range [][]string{{"--no-such-flag"}, {"mcp", "serve", "--transport", "carrier-pigeon"}, {"version", "extra"}} {
		r := h.run(t, args...)
		if r.code == 0 {
			t.Errorf("%v succeeded", args)
		}
		if r.stderr == "" {
			t.Errorf("%v: no message on stderr", args)
		}
	}
	if r := h.run(t, "mcp", "serve", "--transport", "carrier-pigeon"); r.code != 2 {
		t.Errorf("bad --transport exit %d, want 2", r.code)
	}
}

// TestConfigValidatePrintsPolicyWarnings: configuration that can never
// take effect is shown, and blocking a tool the default
// require_approval_for names is valid.
func TestConfigValidatePrintsPolicyWarnings(t *testing.T) {
	h := newHome(t)
	cfg := "[mcp_policy]\ntemplate = \"growth_aggressive\"\ndry_run_mutations = true\nblocked_tools = [\"x_post_tweet\"]\n" +
		"[[notify.channels]]\nname = \"phone\"\ntype = \"ntfy\"\ntopic = \"tuitbot-7f3a9c2e\"\n"
	if err := os.WriteFile(h.path("config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	v := h.ok(t, "config", "validate")
	mustContain(t, "validate", v.stdout, "warning: dry_run_mutations is on",
		`warning: rule "compat:approval:x_like_tweet"`, "warning: notify.channels[0].topic (channel phone) is written in the file", "configuration is valid")
	if strings.Contains(v.stdout, "tuitbot-7f3a9c2e") {
		t.Errorf("validate quotes the topic:\n%s", v.stdout)
	}
}

// TestURLQueryCredentialsMaskedOnEverySurface: a key in a URL's query (a
// Gemini base URL carries ?key=) is masked in config show, its JSON form
// and the review page's settings, and a base URL that is not a URL is
// refused naming the key.
func TestURLQueryCredentialsMaskedOnEverySurface(t *testing.T) {
	const secret = "AIza-query-secret-7c21"
	h := newHome(t).with("TUITBOT_LLM__BASE_URL=https://generativelanguage.example/v1beta/openai?key="+secret,
		"TUITBOT_BUSINESS__PRODUCT_URL=https://shop.example/p?ref=x&access_token="+secret)
	show := h.ok(t, "config", "show")
	js := h.ok(t, "config", "show", "--json")
	mustContain(t, "config show", show.stdout, "openai?key="+config.Mask, "ref=x&access_token="+config.Mask)

	cmd, stdout, stderr := h.start(t, "web", "--sandbox", "--listen", "127.0.0.1:0")
	c, base, _ := webLogin(t, stdout)
	settings := webGet(t, c, base+"/settings")
	mustContain(t, "settings page", settings, "openai?key="+config.Mask)
	waitSignalExit(t, cmd, stderr)
	for name, out := range map[string]string{"config show": show.stdout + show.stderr, "config show --json": js.stdout + js.stderr,
		"settings page": settings, "web log": stdout.String() + stderr.String()} {
		if strings.Contains(out, secret) {
			t.Errorf("%s shows the key from a URL's query", name)
		}
	}

	bad := newHome(t).with("TUITBOT_LLM__BASE_URL=ht!tp://u:p@x y/")
	r := bad.fails(t, "config", "validate")
	mustContain(t, "config validate", r.stdout+r.stderr, "llm.base_url", "not a URL")
	if strings.Contains(r.stdout+r.stderr, "u:p@") {
		t.Errorf("config validate shows the URL's credentials:\n%s", r)
	}
}
