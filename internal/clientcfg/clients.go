// Package clientcfg writes tuitbot's server entry into the configuration
// file of an MCP client (Claude Code, Claude Desktop, Cursor, VS Code, Codex,
// Gemini CLI, Windsurf, Trae), in that client's own format and at its documented per-OS
// location. It merges and never clobbers: every other server and every key it
// does not know stays as it was, the file is backed up before it changes, a
// second install changes nothing, and uninstall removes exactly tuitbot's
// entry.
package clientcfg

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Client names an MCP client.
type Client string

// The supported clients.
const (
	ClaudeCode    Client = "claude-code"
	ClaudeDesktop Client = "claude-desktop"
	Cursor        Client = "cursor"
	VSCode        Client = "vscode"
	Codex         Client = "codex"
	Gemini        Client = "gemini"
	Windsurf      Client = "windsurf"
	Trae          Client = "trae"
)

// Clients lists every supported client, in the order help text shows them.
func Clients() []Client {
	return []Client{ClaudeCode, ClaudeDesktop, Cursor, VSCode, Codex, Gemini, Windsurf, Trae}
}

// ParseClient accepts a client name as the --client flag spells it.
func ParseClient(s string) (Client, error) {
	for _, c := range Clients() {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, 0, len(Clients()))
	for _, c := range Clients() {
		names = append(names, string(c))
	}
	return "", fmt.Errorf("client %q: allowed values: %s", s, strings.Join(names, ", "))
}

// ErrUnsupported is returned for a transport a client's config file cannot
// express.
var ErrUnsupported = errors.New("not supported by this client's config file")

// TokenEnvVar is the environment variable the HTTP entries read the bearer
// token from, so the token itself never sits in a client's config file.
const TokenEnvVar = "TUITBOT_MCP_TOKEN"

// vscodeInputID names the VS Code input that prompts for the token once and
// keeps it in VS Code's secret storage.
const vscodeInputID = "tuitbot-mcp-token"

// Env is what locating a config file depends on; tests pass their own.
type Env struct {
	GOOS   string
	Home   string
	Getenv func(string) string
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// join builds a path in the target OS's syntax, so the Windows locations
// can be checked on any machine.
func (e Env) join(elem ...string) string {
	if e.GOOS == "windows" {
		return strings.Join(elem, `\`)
	}
	return filepath.Join(elem...)
}

// appData is Windows' roaming application-data directory.
func (e Env) appData() string {
	if d := e.getenv("APPDATA"); d != "" {
		return d
	}
	return e.join(e.Home, "AppData", "Roaming")
}

// xdgConfig is the XDG configuration directory on Linux and the BSDs.
func (e Env) xdgConfig() string {
	if d := e.getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return e.join(e.Home, ".config")
}

// ConfigPath is the user-level configuration file of c.
func (c Client) ConfigPath(e Env) (string, error) {
	if e.Home == "" {
		return "", errors.New("no home directory to find the client's config in")
	}
	switch c {
	case ClaudeCode:
		// User scope lives at the top level of ~/.claude.json; Claude Code
		// moves the file with its config directory.
		if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return e.join(d, ".claude.json"), nil
		}
		return e.join(e.Home, ".claude.json"), nil
	case ClaudeDesktop:
		switch e.GOOS {
		case "darwin":
			return e.join(e.Home, "Library", "Application Support", "Claude", "claude_desktop_config.json"), nil
		case "windows":
			return e.join(e.appData(), "Claude", "claude_desktop_config.json"), nil
		default:
			// No official Linux build; the community builds read this.
			return e.join(e.xdgConfig(), "Claude", "claude_desktop_config.json"), nil
		}
	case Cursor:
		return e.join(e.Home, ".cursor", "mcp.json"), nil
	case VSCode:
		switch e.GOOS {
		case "darwin":
			return e.join(e.Home, "Library", "Application Support", "Code", "User", "mcp.json"), nil
		case "windows":
			return e.join(e.appData(), "Code", "User", "mcp.json"), nil
		default:
			return e.join(e.xdgConfig(), "Code", "User", "mcp.json"), nil
		}
	case Codex:
		if d := e.getenv("CODEX_HOME"); d != "" {
			return e.join(d, "config.toml"), nil
		}
		return e.join(e.Home, ".codex", "config.toml"), nil
	case Gemini:
		return e.join(e.Home, ".gemini", "settings.json"), nil
	case Windsurf:
		// %USERPROFILE% on Windows, which Home is.
		return e.join(e.Home, ".codeium", "windsurf", "mcp_config.json"), nil
	case Trae:
		// Trae is built on VS Code and keeps its user-level MCP servers in
		// mcp.json in its own User directory (Settings > MCP > Raw config
		// opens it; on macOS ~/Library/Application Support/Trae/User/mcp.json).
		switch e.GOOS {
		case "darwin":
			return e.join(e.Home, "Library", "Application Support", "Trae", "User", "mcp.json"), nil
		case "windows":
			return e.join(e.appData(), "Trae", "User", "mcp.json"), nil
		default:
			return e.join(e.xdgConfig(), "Trae", "User", "mcp.json"), nil
		}
	}
	return "", fmt.Errorf("unknown client %q", c)
}

// Server describes the entry to write.
type Server struct {
	// Name is the entry's key in the client's server map.
	Name string
	// HTTP selects a URL entry; otherwise the client launches Command
	// with Args over stdio.
	HTTP    bool
	Command string
	Args    []string
	URL     string
	// Headers are further HTTP headers of a URL entry, in order (name,
	// value): the tool selection, never a secret.
	Headers [][2]string
}

// ToolLimit is what a client documents about how many tools it holds.
type ToolLimit struct {
	// Max is the most tools the client gives its agent; 0 when it
	// documents none.
	Max int
	// AcrossServers says Max counts the tools of every server together.
	AcrossServers bool
	// Defers says the client loads a tool's definition only when its
	// agent searches for it (Claude Code's tool search), so listing the
	// whole profile costs its context little.
	Defers bool
	// Source says where the figure comes from.
	Source string
}

// ToolLimit returns c's documented limit on tools.
func (c Client) ToolLimit() ToolLimit {
	switch c {
	case ClaudeCode:
		return ToolLimit{Defers: true, Source: "Claude Code defers MCP tools behind its tool search once they would take a tenth of the context"}
	case Cursor:
		return ToolLimit{Max: 40, AcrossServers: true, Source: "Cursor sends its agent only the first 40 tools"}
	case Windsurf:
		return ToolLimit{Max: 50, AcrossServers: true, Source: "Windsurf's Cascade holds 50 tools across all servers"}
	case VSCode:
		return ToolLimit{Max: 128, AcrossServers: true, Source: "VS Code sends at most 128 tools in a chat request"}
	case Trae:
		return ToolLimit{Max: 40, AcrossServers: true, Source: "Trae gives an agent at most 40 MCP tools and drops the ones past the limit"}
	}
	return ToolLimit{}
}

// URLEntries reports whether c's file can hold an HTTP (URL) entry whose
// bearer token stays out of the file.
func (c Client) URLEntries() bool {
	switch c {
	case ClaudeDesktop, Trae:
		return false
	}
	return true
}

// containerKey is where c keeps its servers.
func (c Client) containerKey() string {
	switch c {
	case VSCode:
		return "servers"
	case Codex:
		return "mcp_servers"
	}
	return "mcpServers"
}

// jsonEntry is the server entry in c's JSON dialect. The HTTP entries carry
// the bearer token only by reference: an environment variable, or for VS
// Code an input it prompts for once and keeps in its secret storage.
func (c Client) jsonEntry(s Server) (*object, error) {
	e := newObject()
	if !s.HTTP {
		switch c {
		case ClaudeCode, VSCode:
			e.set("type", "stdio")
		}
		e.set("command", s.Command)
		e.set("args", stringArray(s.Args))
		return e, nil
	}
	headers := newObject()
	switch c {
	case ClaudeCode:
		e.set("type", "http")
		e.set("url", s.URL)
		headers.set("Authorization", "Bearer ${"+TokenEnvVar+"}")
	case Cursor:
		e.set("url", s.URL)
		headers.set("Authorization", "Bearer ${env:"+TokenEnvVar+"}")
	case VSCode:
		e.set("type", "http")
		e.set("url", s.URL)
		headers.set("Authorization", "Bearer ${input:"+vscodeInputID+"}")
	case Gemini:
		e.set("httpUrl", s.URL)
		headers.set("Authorization", "Bearer ${"+TokenEnvVar+"}")
	case Windsurf:
		// Windsurf reads a remote server's address from serverUrl, not url.
		e.set("serverUrl", s.URL)
		headers.set("Authorization", "Bearer ${env:"+TokenEnvVar+"}")
	case ClaudeDesktop:
		return nil, fmt.Errorf("--transport http with %s: %w: Claude Desktop's file only launches local (stdio) servers, remote ones are added as connectors in its settings; install with the default stdio transport", c, ErrUnsupported)
	case Trae:
		// Trae's remote entries take literal headers; it documents no way
		// to read one from the environment, and the token never goes into
		// a client's file.
		return nil, fmt.Errorf("--transport http with %s: %w: Trae's file would have to hold the bearer token itself, which tuitbot never writes into a client's file; install with the default stdio transport", c, ErrUnsupported)
	default:
		return nil, fmt.Errorf("%s has no JSON entry", c)
	}
	for _, h := range s.Headers {
		headers.set(h[0], h[1])
	}
	e.set("headers", headers)
	return e, nil
}

// vscodeInput is the promptString input the VS Code HTTP entry refers to.
func vscodeInput(tokenFile string) *object {
	in := newObject()
	in.set("type", "promptString")
	in.set("id", vscodeInputID)
	desc := "tuitbot MCP bearer token"
	if tokenFile != "" {
		desc += " (the contents of " + tokenFile + ")"
	}
	in.set("description", desc)
	in.set("password", true)
	return in
}

// tokenNote tells the user how the HTTP entry of c finds its token.
func (c Client) tokenNote(tokenFile string) string {
	if c == VSCode {
		return fmt.Sprintf("VS Code asks for the bearer token the first time it connects and keeps it in its secret storage; paste the contents of %s.", tokenFile)
	}
	return fmt.Sprintf("The entry reads the bearer token from $%s; set it where %s is started, e.g. export %s=\"$(cat %s)\". The token is not written to the client's file.", TokenEnvVar, c, TokenEnvVar, tokenFile)
}
