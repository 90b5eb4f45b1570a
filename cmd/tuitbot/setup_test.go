package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/clientcfg"
	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// userHome is the HOME the test runs give the binary (see newHome).
func (h *home) userHome() string { return filepath.Join(h.dir, "user") }

func TestMCPInstallClaudeCode(t *testing.T) {
	h := newHome(t)
	cfgPath := filepath.Join(h.userHome(), ".claude.json")
	if err := os.MkdirAll(h.userHome(), 0o700); err != nil {
		t.Fatal(err)
	}
	const existing = `{"numStartups": 3, "mcpServers": {"other": {"command": "other-mcp"}}}`
	if err := os.WriteFile(cfgPath, []byte(existing), 0o600); err != nil {
		t.Fatal(err)
	}

	p := h.ok(t, "mcp", "install", "--client", "claude-code", "--sandbox", "--print")
	mustContain(t, "--print", p.stdout, "claude-code: would add the tuitbot entry to "+cfgPath+":\n", `"tuitbot"`, binPath, "--sandbox", "Nothing was written")
	if b, _ := os.ReadFile(cfgPath); string(b) != existing {
		t.Fatalf("--print changed the file:\n%s", b)
	}

	r := h.ok(t, "mcp", "install", "--client", "claude-code", "--sandbox")
	mustContain(t, "install", r.stdout, "claude-code: added the tuitbot entry to "+cfgPath+"\n", cfgPath+".bak")
	var doc struct {
		NumStartups int `json:"numStartups"`
		MCPServers  map[string]struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("config is not JSON: %v\n%s", err, b)
	}
	got := doc.MCPServers["tuitbot"]
	if doc.NumStartups != 3 || doc.MCPServers["other"].Command != "other-mcp" {
		t.Errorf("other content lost:\n%s", b)
	}
	if got.Type != "stdio" || got.Command != binPath || strings.Join(got.Args, " ") != "mcp serve --sandbox" {
		t.Errorf("entry = %+v, want stdio %s mcp serve --sandbox", got, binPath)
	}
	if !filepath.IsAbs(got.Command) {
		t.Errorf("command %q is not absolute", got.Command)
	}

	again := h.ok(t, "mcp", "install", "--client", "claude-code", "--sandbox")
	mustContain(t, "second install", again.stdout, "already installed")
	if b2, _ := os.ReadFile(cfgPath); !bytes.Equal(b2, b) {
		t.Error("second install changed the file")
	}

	u := h.ok(t, "mcp", "uninstall", "--client", "claude-code")
	mustContain(t, "uninstall", u.stdout, "claude-code: removed the tuitbot entry from "+cfgPath+"\n")
	b3, _ := os.ReadFile(cfgPath)
	if strings.Contains(string(b3), "tuitbot") || !strings.Contains(string(b3), "other-mcp") {
		t.Errorf("uninstall left:\n%s", b3)
	}
}

// The HTTP entry refers to the token; neither --print nor the file ever
// holds it.
func TestMCPInstallHTTPNeverShowsTheToken(t *testing.T) {
	h := newHome(t)
	const token = "0123456789abcdef-http-token-never-shown"
	if err := os.WriteFile(h.path("mcp_token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{"claude-code", "cursor", "vscode", "codex", "gemini"} {
		p := h.ok(t, "mcp", "install", "--client", client, "--transport", "http", "--listen", "127.0.0.1:9911", "--print")
		mustContain(t, client+" --print", p.stdout, "http://127.0.0.1:9911/", h.path("mcp_token"))
		if strings.Contains(p.stdout+p.stderr, token) {
			t.Errorf("%s: --print shows the token:\n%s", client, p)
		}
		h.ok(t, "mcp", "install", "--client", client, "--transport", "http", "--listen", "127.0.0.1:9911")
	}
	err := filepath.Walk(h.userHome(), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), token) {
			t.Errorf("%s holds the token", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := h.fails(t, "mcp", "install", "--client", "claude-desktop", "--transport", "http")
	mustContain(t, "claude-desktop http", r.stderr, "stdio")
}

func TestMCPInstallRejectsAnUnknownClient(t *testing.T) {
	r := newHome(t).fails(t, "mcp", "install", "--client", "notepad")
	if r.code != 2 {
		t.Errorf("exit %d, want 2 (usage)", r.code)
	}
	mustContain(t, "unknown client", r.stderr, "claude-code", "codex")
}

// completions runs cobra's hidden __complete command and returns the
// candidates without their descriptions.
func completions(t *testing.T, h *home, args ...string) []string {
	t.Helper()
	r := h.ok(t, append([]string{"__complete"}, args...)...)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		out = append(out, strings.SplitN(line, "\t", 2)[0])
	}
	return out
}

func TestCompletionOfToolNames(t *testing.T) {
	h := newHome(t)
	got := completions(t, h, "mcp", "serve", "--tools", "x_post_tw")
	if !contains(got, "x_post_tweet") || contains(got, "x_like_tweet") {
		t.Errorf("--tools x_post_tw completes to %v", got)
	}
	// The last element of a list completes; names already given do not
	// come again.
	got = completions(t, h, "mcp", "serve", "--exclude-tools", "x_post_tweet,x_post_")
	if !contains(got, "x_post_tweet,x_post_thread") || contains(got, "x_post_tweet,x_post_tweet") {
		t.Errorf("--exclude-tools x_post_tweet,x_post_ completes to %v", got)
	}
	// A read-only profile offers no mutation tools.
	got = completions(t, h, "mcp", "serve", "--profile", "readonly", "--tools", "x_")
	if len(got) == 0 || contains(got, "x_post_tweet") {
		t.Errorf("readonly --tools x_ completes to %v", got)
	}
}

func TestCompletionOfApprovalIDs(t *testing.T) {
	h := newHome(t)
	// No database yet: nothing to offer, and completing must not create one.
	if got := completions(t, h, "approve", "show", ""); len(got) != 0 {
		t.Errorf("approve show with no database completes to %v", got)
	}
	if _, err := os.Stat(h.path("tuitbot.db")); !os.IsNotExist(err) {
		t.Fatalf("completion created a database (%v)", err)
	}
	seedPending(t, h, 12)
	for _, sub := range []string{"show", "approve", "reject", "edit"} {
		got := completions(t, h, "approve", sub, "")
		if len(got) != 12 {
			t.Errorf("approve %s completes to %v, want the 12 pending ids", sub, got)
		}
	}
	got := completions(t, h, "approve", "approve", "1")
	want := []string{"1", "10", "11", "12"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("approve approve 1<TAB> = %v, want %v", got, want)
	}
	r := h.ok(t, "__complete", "approve", "show", "")
	mustContain(t, "descriptions", r.stdout, "x_post_tweet", "queued post 1")
	// One id per command: no second argument.
	if got := completions(t, h, "approve", "show", "3", ""); len(got) != 0 {
		t.Errorf("a second argument completes to %v", got)
	}
}

func TestCompletionScript(t *testing.T) {
	r := newHome(t).ok(t, "completion", "bash")
	mustContain(t, "bash completion", r.stdout, "__start_tuitbot")
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// versionLine is what `tuitbot version` prints in any build.
var versionLine = regexp.MustCompile(`^tuitbot (\S+)(?: \(commit ([0-9a-f]+)(-dirty)?(?:, built (\S+))?\))? (go\S+) (\S+/\S+)\n$`)

func TestMCPHealthcheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			fmt.Fprintln(w, "ok")
		default:
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	h := newHome(t)
	base := "http://" + ln.Addr().String()
	r := h.ok(t, "mcp", "healthcheck", "--url", base+"/healthz")
	mustContain(t, "healthy", r.stdout, "ok")
	bad := h.fails(t, "mcp", "healthcheck", "--url", base+"/elsewhere")
	mustContain(t, "unhealthy", bad.stderr, "503")
}

// TestMCPInstallFitsEachClient: every client's entry lists a selection
// within the tool limit the client documents, and says what it left out;
// Claude Code, which defers tools behind its tool search, keeps the whole
// profile.
func TestMCPInstallFitsEachClient(t *testing.T) {
	h := newHome(t)
	counted := regexp.MustCompile(`The entry lists the default selection: (\d+) tools`)
	for _, client := range clientcfg.Clients() {
		t.Run(string(client), func(t *testing.T) {
			lim := client.ToolLimit()
			p := h.ok(t, "mcp", "install", "--client", string(client), "--print")
			if lim.Defers {
				if strings.Contains(p.stdout, "--toolsets") {
					t.Errorf("%s gets a selection although it defers tools:\n%s", client, p.stdout)
				}
				mustContain(t, string(client), p.stdout, "The entry lists the whole profile")
				return
			}
			mustContain(t, string(client), p.stdout, "--toolsets", "default", "Left out: the toolsets", "enable_toolset")
			m := counted.FindStringSubmatch(p.stdout)
			if m == nil {
				t.Fatalf("%s: no tool count in:\n%s", client, p.stdout)
			}
			var n int
			fmt.Sscan(m[1], &n)
			if lim.Max > 0 && n > lim.Max {
				t.Errorf("%s: %d tools, over its limit of %d", client, n, lim.Max)
			}
			if !client.URLEntries() {
				r := h.fails(t, "mcp", "install", "--client", string(client), "--transport", "http", "--print")
				mustContain(t, string(client)+" http", r.stderr, "stdio")
				return
			}
			switch client {
			case clientcfg.Codex:
				hp := h.ok(t, "mcp", "install", "--client", string(client), "--transport", "http", "--print")
				mustContain(t, string(client)+" http", hp.stdout, "--toolsets default")
				return
			}
			hp := h.ok(t, "mcp", "install", "--client", string(client), "--transport", "http", "--print")
			mustContain(t, string(client)+" http", hp.stdout, `"`+mcpserver.HeaderToolsets+`": "default"`)
		})
	}
}
