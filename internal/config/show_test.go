package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/tuitbot/tuitbot/internal/config"
)

const (
	fileSecret = "file-client-secret-7f3a9c"
	envSecret  = "sk-env-api-key-51b2e8"
)

// secretConfig loads a configuration whose secrets come from both the file
// and the environment.
func secretConfig(t *testing.T) *config.Config {
	t.Helper()
	home := t.TempDir()
	writeFile(t, home, "config.toml", "[x_api]\nclient_id = \"visible-client-id\"\nclient_secret = \""+fileSecret+"\"\n")
	cfg, _ := mustLoad(t, home, "", env{"TUITBOT_LLM__API_KEY": envSecret, "TUITBOT_LLM__PROVIDER": "openai"})
	if cfg.XAPI.ClientSecret != fileSecret || cfg.LLM.APIKey != envSecret {
		t.Fatalf("secrets not loaded: %q %q", cfg.XAPI.ClientSecret, cfg.LLM.APIKey)
	}
	return cfg
}

func TestSecretFieldsAreMarked(t *testing.T) {
	def := config.Default()
	secret := map[string]bool{}
	for _, f := range config.Fields(&def) {
		if f.Secret {
			secret[f.Name()] = true
		}
	}
	for _, want := range []string{"x_api.client_secret", "llm.api_key"} {
		if !secret[want] {
			t.Errorf("%s is not marked secret", want)
		}
	}
}

func TestMaskedHidesSecrets(t *testing.T) {
	cfg := secretConfig(t)
	m := config.Masked(cfg)
	x := m["x_api"].(map[string]any)
	llm := m["llm"].(map[string]any)
	if x["client_secret"] != config.Mask || llm["api_key"] != config.Mask {
		t.Errorf("secrets not masked: client_secret=%v api_key=%v", x["client_secret"], llm["api_key"])
	}
	if x["client_id"] != "visible-client-id" {
		t.Errorf("non-secret client_id = %v, want it shown", x["client_id"])
	}
	if m["mode"] != "autopilot" {
		t.Errorf("top-level mode = %v", m["mode"])
	}
	// Masking must not change the configuration itself.
	if cfg.XAPI.ClientSecret != fileSecret || cfg.LLM.APIKey != envSecret {
		t.Error("Masked modified the configuration it was given")
	}

	tomlOut, err := config.MaskedTOML(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jsonOut, err := config.MaskedJSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"Masked": mustJSON(t, m), "MaskedTOML": tomlOut, "MaskedJSON": string(jsonOut)} {
		for _, s := range []string{fileSecret, envSecret} {
			if strings.Contains(out, s) {
				t.Errorf("%s output contains the secret %q", name, s)
			}
			// Not even a prefix may leak.
			if strings.Contains(out, s[:8]) {
				t.Errorf("%s output contains a prefix of the secret %q", name, s)
			}
		}
		if !strings.Contains(out, config.Mask) {
			t.Errorf("%s output lacks the mask", name)
		}
		if !strings.Contains(out, "visible-client-id") {
			t.Errorf("%s output lacks a non-secret value", name)
		}
	}

	// The TOML and JSON forms must be parseable.
	var back map[string]any
	if _, err := toml.Decode(tomlOut, &back); err != nil {
		t.Errorf("MaskedTOML is not valid TOML: %v", err)
	}
	if err := json.Unmarshal(jsonOut, &back); err != nil {
		t.Errorf("MaskedJSON is not valid JSON: %v", err)
	}
}

func TestMaskedEmptySecretStaysEmpty(t *testing.T) {
	cfg, _ := mustLoad(t, t.TempDir(), "", nil)
	m := config.Masked(cfg)
	if got := m["llm"].(map[string]any)["api_key"]; got != "" {
		t.Errorf("unset api_key shown as %v, want empty (so users can see it is not set)", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExampleTOMLParsesBackToDefaults(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "example.toml", config.ExampleTOML())
	cfg, src := mustLoad(t, t.TempDir(), path, nil)
	if src.File != path {
		t.Errorf("Source.File = %q", src.File)
	}
	if got, want := normalized(t, *cfg), normalized(t, config.Default()); !reflect.DeepEqual(got, want) {
		t.Errorf("example file does not decode to the defaults:\n got %+v\nwant %+v", got, want)
	}
}

func TestExampleTOMLDocumentsEveryKey(t *testing.T) {
	ex := config.ExampleTOML()
	def := config.Default()
	for _, f := range config.Fields(&def) {
		if f.Doc() == "" {
			t.Errorf("%s has no doc", f.Name())
		}
		if !strings.Contains(ex, "\n"+f.Key+" = ") && !strings.Contains(ex, "\n# "+f.Key+" = ") {
			t.Errorf("example lacks key %s", f.Name())
		}
		if f.Secret && strings.Contains(ex, "\n"+f.Key+" = ") {
			t.Errorf("example sets secret %s uncommented", f.Name())
		}
	}
	for _, s := range config.Sections() {
		if s == "mcp_policy" || strings.Contains(ex, "["+s+"]") {
			continue
		}
		t.Errorf("example lacks section [%s]", s)
	}
}

func TestReferenceListsEveryKey(t *testing.T) {
	ref := config.Reference()
	def := config.Default()
	for _, f := range config.Fields(&def) {
		if !strings.Contains(ref, "`"+f.Name()+"`") || !strings.Contains(ref, "`"+f.EnvName()+"`") {
			t.Errorf("reference lacks %s / %s", f.Name(), f.EnvName())
		}
	}
}

func TestWriteExample(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "home")
	path := filepath.Join(dir, "config.toml")
	if err := config.WriteExample(path, false); err != nil {
		t.Fatalf("WriteExample: %v", err)
	}
	assertMode(t, path, 0o600)
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("created directory mode: %v, %v; want no group/other access", st.Mode(), err)
	}
	if got := readFile(t, path); got != config.ExampleTOML() {
		t.Error("written file differs from ExampleTOML")
	}

	// A second write without force must fail and leave the file alone.
	if err := os.WriteFile(path, []byte("mode = \"composer\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := config.WriteExample(path, false)
	if err == nil {
		t.Fatal("WriteExample overwrote an existing file without force")
	}
	assertContainsAll(t, err.Error(), path, "--force")
	if got := readFile(t, path); got != "mode = \"composer\"\n" {
		t.Errorf("file changed by a refused write: %q", got)
	}

	// force replaces it, and the result is 0600 even if the old file was not.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := config.WriteExample(path, true); err != nil {
		t.Fatalf("WriteExample force: %v", err)
	}
	if got := readFile(t, path); got != config.ExampleTOML() {
		t.Error("forced write did not replace the content")
	}
	assertMode(t, path, 0o600)

	// No temporary files are left behind.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only config.toml", names)
	}
}

func TestWriteExampleRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, force := range []bool{false, true} {
		if err := config.WriteExample(dir, force); err == nil {
			t.Errorf("force=%t: WriteExample onto a directory succeeded", force)
		}
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != want {
		t.Errorf("%s mode = %o, want %o", path, got, want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestURLCredentialsMasked covers keys whose value is a URL: credentials in
// its user info are a secret like api_key, in config show, get_config and
// validation errors alike.
func TestURLCredentialsMasked(t *testing.T) {
	const key = "url-key-93c1d7"
	home := t.TempDir()
	writeFile(t, home, "config.toml", "[llm]\nbase_url = \"http://user:"+key+"@127.0.0.1:11434/v1\"\n"+
		"[business]\nproduct_url = \"https://shop:"+key+"@shop.example/p\"\ncontent_pillars = [\"see https://a:"+key+"@b.example\"]\n")
	cfg, _ := mustLoad(t, home, "", nil)
	m := config.Masked(cfg)
	if got, want := m["llm"].(map[string]any)["base_url"], "http://"+config.Mask+"@127.0.0.1:11434/v1"; got != want {
		t.Errorf("llm.base_url shown as %v, want %v", got, want)
	}
	tomlOut, err := config.MaskedTOML(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jsonOut, err := config.MaskedJSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"Masked": mustJSON(t, m), "MaskedTOML": tomlOut, "MaskedJSON": string(jsonOut)} {
		if strings.Contains(out, key) || strings.Contains(out, "user:") {
			t.Errorf("%s output shows URL credentials:\n%s", name, out)
		}
		if !strings.Contains(out, "127.0.0.1:11434/v1") {
			t.Errorf("%s output lost the rest of the URL", name)
		}
	}
	if !strings.Contains(cfg.LLM.BaseURL, key) {
		t.Error("Masked modified the configuration it was given")
	}

	// A URL refused by validation is quoted in the error without its
	// credentials.
	_, _, err = load(t, t.TempDir(), "", env{"TUITBOT_X_API__API_BASE_URL": "https://u:" + key + "@api.example.com"})
	if err == nil {
		t.Fatal("a base URL with credentials was accepted")
	}
	es, _ := config.AsErrors(err)
	if strings.Contains(err.Error(), key) || len(es) == 0 || strings.Contains(es[0].Message, key) {
		t.Errorf("validation error shows URL credentials: %v", err)
	}
	if !strings.Contains(err.Error(), "x_api.api_base_url") {
		t.Errorf("validation error does not name the key: %v", err)
	}
}

// TestURLQueryCredentialsMasked puts credentials into the query of every
// URL setting, as a Gemini base URL carries ?key=: each one is masked in
// every rendering, and the harmless parameters stay readable.
func TestURLQueryCredentialsMasked(t *testing.T) {
	const secret = "qs-secret-5e7a1c"
	query := "?model=m1&key=" + secret + "1&api_key=" + secret + "2&access_token=" + secret + "3&token=" + secret + "4&password=" + secret + "5"
	def := config.Default()
	e := env{}
	var keys []string
	for _, f := range config.Fields(&def) {
		if f.Secret || f.Value.Kind() != reflect.String || !strings.HasSuffix(f.Key, "url") {
			continue
		}
		if f.Name() == "notify.public_base_url" {
			continue // the base of approval links: validation refuses any query in it
		}
		e["TUITBOT_"+strings.ToUpper(f.Section)+"__"+strings.ToUpper(f.Key)] = "https://h.example/v1" + query
		keys = append(keys, f.Name())
	}
	if len(keys) < 6 {
		t.Fatalf("only %d URL settings found: %v", len(keys), keys)
	}
	cfg, _ := mustLoad(t, t.TempDir(), "", e)
	tomlOut, err := config.MaskedTOML(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jsonOut, err := config.MaskedJSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := config.Masked(cfg)
	for name, out := range map[string]string{"Masked": mustJSON(t, m), "MaskedTOML": tomlOut, "MaskedJSON": string(jsonOut)} {
		if strings.Contains(out, secret) {
			t.Errorf("%s shows a credential from a URL query", name)
		}
	}
	for _, k := range keys {
		section, key, _ := strings.Cut(k, ".")
		got, _ := m[section].(map[string]any)[key].(string)
		want := "https://h.example/v1?model=m1&key=******&api_key=******&access_token=******&token=******&password=******"
		if got != want {
			t.Errorf("%s shown as %q, want %q", k, got, want)
		}
	}
}
