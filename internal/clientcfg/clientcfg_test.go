package clientcfg

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const (
	testCommand = "/opt/tuitbot/bin/tuitbot"
	testURL     = "http://127.0.0.1:8765/"
	testToken   = "/home/me/.tuitbot/mcp_token"
)

func server(http bool) Server {
	if http {
		return Server{Name: "tuitbot", HTTP: true, URL: testURL}
	}
	return Server{Name: "tuitbot", Command: testCommand, Args: []string{"mcp", "serve", "--sandbox"}}
}

// fixture copies testdata/<client>.input to a client config path in a
// temporary home, with mode 0640 so the test sees whether the mode is kept.
func fixture(t *testing.T, c Client) (path string, input []byte) {
	t.Helper()
	input, err := os.ReadFile(filepath.Join("testdata", string(c)+".input"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	path, err = c.ConfigPath(Env{GOOS: "linux", Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, input, 0o640); err != nil {
		t.Fatal(err)
	}
	return path, input
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/clientcfg -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// sameContent compares two versions of a config file by meaning: the JSON
// or TOML they hold, not their formatting.
func sameContent(t *testing.T, c Client, a, b []byte) bool {
	t.Helper()
	if c == Codex {
		da, err := decodeTOML(a)
		if err != nil {
			t.Fatal(err)
		}
		db, err := decodeTOML(b)
		if err != nil {
			t.Fatal(err)
		}
		return sameTOML(da, db)
	}
	oa, err := parseJSON(a)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := parseJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return sameJSON(oa, ob)
}

// Each client's file gets the entry in its own format (golden), keeps every
// other server and unknown key, is backed up first, and a second install
// changes nothing; uninstall then gives back exactly what was there.
func TestInstallMergesIdempotentlyAndUninstallRestores(t *testing.T) {
	for _, c := range Clients() {
		for _, http := range []bool{false, true} {
			transport := "stdio"
			if http {
				transport = "http"
			}
			t.Run(string(c)+"/"+transport, func(t *testing.T) {
				path, input := fixture(t, c)
				o := Options{Client: c, Path: path, Server: server(http), TokenFile: testToken}
				r, err := Install(o)
				if !c.URLEntries() && http {
					if !errors.Is(err, ErrUnsupported) {
						t.Fatalf("Install = %v, want ErrUnsupported", err)
					}
					if !bytes.Equal(readFile(t, path), input) {
						t.Error("a refused install changed the file")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if r.Action != Installed {
					t.Errorf("Action = %q, want %q", r.Action, Installed)
				}
				got := readFile(t, path)
				golden(t, string(c)+"."+transport, got)

				// Backed up first, privately.
				if r.Backup != path+".bak" {
					t.Fatalf("Backup = %q, want %q", r.Backup, path+".bak")
				}
				if !bytes.Equal(readFile(t, r.Backup), input) {
					t.Error("the backup does not hold the file as it was")
				}
				if m := mode(t, r.Backup); m != 0o600 {
					t.Errorf("backup mode %o, want 600", m)
				}
				if m := mode(t, path); m != 0o640 {
					t.Errorf("config mode %o after install, want the original 640", m)
				}
				if strings.Contains(r.Snippet, "mcp_token\n") || !strings.Contains(r.Snippet, "tuitbot") {
					t.Errorf("snippet %q", r.Snippet)
				}
				if http && len(r.Notes) == 0 {
					t.Error("an HTTP install says nothing about the token")
				}

				// Idempotent: nothing changes, no new backup.
				if err := os.Remove(r.Backup); err != nil {
					t.Fatal(err)
				}
				r2, err := Install(o)
				if err != nil {
					t.Fatal(err)
				}
				if r2.Action != AlreadyInstalled {
					t.Errorf("second Install: Action = %q, want %q", r2.Action, AlreadyInstalled)
				}
				if !bytes.Equal(readFile(t, path), got) {
					t.Error("second Install changed the file")
				}
				if _, err := os.Stat(r.Backup); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("second Install wrote a backup (%v)", err)
				}

				// Uninstall removes exactly the entry.
				u, err := Uninstall(o)
				if err != nil {
					t.Fatal(err)
				}
				if u.Action != Removed {
					t.Errorf("Uninstall: Action = %q, want %q", u.Action, Removed)
				}
				after := readFile(t, path)
				if !sameContent(t, c, after, input) {
					t.Errorf("uninstall did not restore the original content:\n%s", after)
				}
				if c == Codex && !bytes.Equal(after, input) {
					t.Errorf("codex: uninstall changed other text:\n--- got\n%s\n--- want\n%s", after, input)
				}
				u2, err := Uninstall(o)
				if err != nil {
					t.Fatal(err)
				}
				if u2.Action != NotInstalled {
					t.Errorf("second Uninstall: Action = %q, want %q", u2.Action, NotInstalled)
				}
			})
		}
	}
}

// A file in the canonical layout of its client comes back byte for byte.
func TestUninstallRestoresCanonicalFilesExactly(t *testing.T) {
	for _, c := range []Client{ClaudeDesktop, Cursor, VSCode, Gemini} {
		t.Run(string(c), func(t *testing.T) {
			path, input := fixture(t, c)
			o := Options{Client: c, Path: path, Server: server(c == VSCode), TokenFile: testToken}
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); !bytes.Equal(got, input) {
				t.Errorf("got\n%s\nwant\n%s", got, input)
			}
		})
	}
}

func TestInstallCreatesAPrivateFile(t *testing.T) {
	for _, c := range Clients() {
		t.Run(string(c), func(t *testing.T) {
			path, err := c.ConfigPath(Env{GOOS: "linux", Home: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Install(Options{Client: c, Path: path, Server: server(false)})
			if err != nil {
				t.Fatal(err)
			}
			if r.Action != Installed || r.Backup != "" {
				t.Errorf("Action = %q, Backup = %q; want installed and no backup", r.Action, r.Backup)
			}
			if m := mode(t, path); m != 0o600 {
				t.Errorf("new file mode %o, want 600", m)
			}
			golden(t, string(c)+".new", readFile(t, path))
		})
	}
}

func TestPrintWritesNothing(t *testing.T) {
	for _, c := range Clients() {
		t.Run(string(c), func(t *testing.T) {
			path, input := fixture(t, c)
			r, err := Install(Options{Client: c, Path: path, Server: server(false), DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.Action != Installed || !strings.Contains(r.Snippet, testCommand) {
				t.Errorf("dry run: Action %q, snippet %q", r.Action, r.Snippet)
			}
			if !bytes.Equal(readFile(t, path), input) {
				t.Error("dry run changed the file")
			}
			if _, err := os.Stat(path + ".bak"); !errors.Is(err, fs.ErrNotExist) {
				t.Error("dry run wrote a backup")
			}
		})
	}
}

// A changed binary path updates the entry in place and leaves the rest.
func TestInstallUpdatesAStaleEntry(t *testing.T) {
	for _, c := range Clients() {
		t.Run(string(c), func(t *testing.T) {
			path, input := fixture(t, c)
			old := server(false)
			old.Command = "/old/place/tuitbot"
			if _, err := Install(Options{Client: c, Path: path, Server: old}); err != nil {
				t.Fatal(err)
			}
			r, err := Install(Options{Client: c, Path: path, Server: server(false)})
			if err != nil {
				t.Fatal(err)
			}
			if r.Action != Updated {
				t.Errorf("Action = %q, want %q", r.Action, Updated)
			}
			got := readFile(t, path)
			if bytes.Contains(got, []byte("/old/place")) || !bytes.Contains(got, []byte(testCommand)) {
				t.Errorf("entry not updated:\n%s", got)
			}
			if _, err := Uninstall(Options{Client: c, Path: path, Server: server(false)}); err != nil {
				t.Fatal(err)
			}
			if !sameContent(t, c, readFile(t, path), input) {
				t.Errorf("other content changed:\n%s", readFile(t, path))
			}
		})
	}
}

// Files tuitbot cannot rewrite without losing something are left alone.
func TestRefusesFilesItCannotRewriteFaithfully(t *testing.T) {
	tests := []struct {
		name   string
		client Client
		text   string
	}{
		{"json with comments", VSCode, "{\n  // my servers\n  \"servers\": {}\n}\n"},
		{"json with a trailing comma", Cursor, "{\n  \"mcpServers\": {},\n}\n"},
		{"json array", Gemini, "[]\n"},
		{"servers not an object", ClaudeCode, "{\"mcpServers\": []}\n"},
		{"toml syntax error", Codex, "model = \n"},
		{"toml inline entry", Codex, "[mcp_servers]\ntuitbot = { command = \"/old\" }\n"},
		{"toml dotted entry", Codex, "mcp_servers.tuitbot.command = \"/old\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Install(Options{Client: tt.client, Path: path, Server: server(false)})
			if err == nil {
				t.Fatalf("Install succeeded:\n%s", readFile(t, path))
			}
			if !strings.Contains(err.Error(), "--print") {
				t.Errorf("error %q does not say how to proceed", err)
			}
			if got := readFile(t, path); string(got) != tt.text {
				t.Errorf("file changed:\n%s", got)
			}
			if _, err := os.Stat(path + ".bak"); !errors.Is(err, fs.ErrNotExist) {
				t.Error("a refused install wrote a backup")
			}
		})
	}
}

func TestInstallWritesThroughASymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "mcp.json")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, err := Install(Options{Client: Cursor, Path: link, Server: server(false)}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced (%v)", err)
	}
	if !bytes.Contains(readFile(t, real), []byte(testCommand)) {
		t.Error("the link target did not get the entry")
	}
}

func TestConfigPath(t *testing.T) {
	env := func(goos, home string, vars ...string) Env {
		m := map[string]string{}
		for i := 0; i+1 < len(vars); i += 2 {
			m[vars[i]] = vars[i+1]
		}
		return Env{GOOS: goos, Home: home, Getenv: func(k string) string { return m[k] }}
	}
	mac := env("darwin", "/Users/me")
	linux := env("linux", "/home/me")
	win := env("windows", `C:\Users\me`, "APPDATA", `C:\Users\me\AppData\Roaming`)
	tests := []struct {
		client Client
		env    Env
		want   string
	}{
		{ClaudeCode, mac, "/Users/me/.claude.json"},
		{ClaudeCode, win, `C:\Users\me\.claude.json`},
		{ClaudeCode, env("linux", "/home/me", "CLAUDE_CONFIG_DIR", "/cfg/claude"), "/cfg/claude/.claude.json"},
		{ClaudeDesktop, mac, "/Users/me/Library/Application Support/Claude/claude_desktop_config.json"},
		{ClaudeDesktop, win, `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`},
		{ClaudeDesktop, linux, "/home/me/.config/Claude/claude_desktop_config.json"},
		{Cursor, mac, "/Users/me/.cursor/mcp.json"},
		{Cursor, win, `C:\Users\me\.cursor\mcp.json`},
		{VSCode, mac, "/Users/me/Library/Application Support/Code/User/mcp.json"},
		{VSCode, win, `C:\Users\me\AppData\Roaming\Code\User\mcp.json`},
		{VSCode, linux, "/home/me/.config/Code/User/mcp.json"},
		{VSCode, env("linux", "/home/me", "XDG_CONFIG_HOME", "/xdg"), "/xdg/Code/User/mcp.json"},
		{Codex, linux, "/home/me/.codex/config.toml"},
		{Codex, env("linux", "/home/me", "CODEX_HOME", "/srv/codex"), "/srv/codex/config.toml"},
		{Codex, win, `C:\Users\me\.codex\config.toml`},
		{Gemini, linux, "/home/me/.gemini/settings.json"},
		{Gemini, win, `C:\Users\me\.gemini\settings.json`},
		{Windsurf, mac, "/Users/me/.codeium/windsurf/mcp_config.json"},
		{Windsurf, win, `C:\Users\me\.codeium\windsurf\mcp_config.json`},
		{Trae, mac, "/Users/me/Library/Application Support/Trae/User/mcp.json"},
		{Trae, win, `C:\Users\me\AppData\Roaming\Trae\User\mcp.json`},
		{Trae, linux, "/home/me/.config/Trae/User/mcp.json"},
		{Trae, env("linux", "/home/me", "XDG_CONFIG_HOME", "/xdg"), "/xdg/Trae/User/mcp.json"},
	}
	for _, tt := range tests {
		got, err := tt.client.ConfigPath(tt.env)
		if err != nil {
			t.Errorf("%s on %s: %v", tt.client, tt.env.GOOS, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s on %s = %q, want %q", tt.client, tt.env.GOOS, got, tt.want)
		}
	}
	if _, err := ParseClient("notepad"); err == nil || !strings.Contains(err.Error(), "claude-code") {
		t.Errorf("ParseClient(notepad) = %v, want an error listing the clients", err)
	}
}

// An existing codex table, subtables included, is replaced where it stands.
func TestCodexReplacesItsTableInPlace(t *testing.T) {
	const before = `[mcp_servers.tuitbot]
command = "/old/tuitbot"
args = ["mcp", "serve"]

[mcp_servers.tuitbot.env]
TUITBOT_HOME = "/old/home"

[mcp_servers.other]
command = "other"
`
	const want = `[mcp_servers.tuitbot]
command = "/opt/tuitbot/bin/tuitbot"
args = ["mcp", "serve", "--sandbox"]

[mcp_servers.other]
command = "other"
`
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Install(Options{Client: Codex, Path: path, Server: server(false)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != Updated {
		t.Errorf("Action = %q, want %q", r.Action, Updated)
	}
	if got := string(readFile(t, path)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := Uninstall(Options{Client: Codex, Path: path, Server: server(false)}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, path)); got != "[mcp_servers.other]\ncommand = \"other\"\n" {
		t.Errorf("after uninstall:\n%s", got)
	}
}
