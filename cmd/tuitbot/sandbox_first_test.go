package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// sandboxFirstArgs gives every command a command line that runs it (or
// gets past cobra's own checks, for those that would run until stopped) in
// a fresh home. Keys are command paths without "tuitbot ".
var sandboxFirstArgs = map[string][]string{
	"version":                  nil,
	"config init":              nil,
	"config show":              nil,
	"config validate":          nil,
	"doctor":                   nil,
	"docs":                     {"--check"},
	"mcp serve":                nil, // stdin is empty: the session ends at once
	"mcp manifest":             nil,
	"mcp install":              {"--client", "claude-code", "--print"},
	"mcp uninstall":            {"--client", "claude-code", "--print"},
	"mcp healthcheck":          {"--url", "http://127.0.0.1:1/healthz", "--timeout", "1s"},
	"auth":                     nil,
	"auth status":              {"--json"},
	"approve list":             nil,
	"approve show":             {"1"},
	"approve approve":          {"1"},
	"approve reject":           {"1"},
	"approve edit":             {"1", "--text", "An edited post."},
	"audit recent":             nil,
	"audit show":               {"no-such-id"},
	"audit resolve":            {"no-such-id", "--happened"},
	"xsim serve":               {"--listen", "8.8.8.8:80"},                 // refused after it starts: it would serve until stopped
	"run":                      {"--all-accounts", "--account", "brand_b"}, // refused after it starts: it would run until stopped
	"tick":                     {"--loop", "housekeeping"},
	"status":                   nil,
	"analytics snapshot":       nil,
	"web":                      {"--listen", "8.8.8.8:1"}, // refused after it starts: it would serve until stopped
	"db migrate":               nil,
	"db export":                {"export.db"},
	"db import":                {"no-such.db"},
	"sandbox reset":            nil,
	"notify test":              {"--channel", "phone"}, // no such channel: refused after the sandbox is prepared
	"notify status":            nil,
	"notify add":               {"ntfy", "--name", "phone", "--topic-env", "NTFY_TOPIC"},
	"notify outbox list":       nil,
	"notify outbox retry":      {"1"},
	"notify outbox drop":       {"1"},
	"optouts list":             nil,
	"optouts clear":            {"someone"},
	"approve links rotate-key": nil,
	"approve links revoke":     {"1"},
	"queue show":               nil,
	"queue next":               nil,
	"export":                   {"--what", "audit"},
	"queue apply-suggestion":   {"--yes"}, // no measured posts yet: refused after the sandbox is prepared
	"recurring list":           nil,
	"recurring create":         {"--text", "A weekly post.", "--every", "1w", "--time", "09:00"},
	"recurring pause":          {"1"},
	"recurring resume":         {"1"},
	"recurring delete":         {"1"},
	"evergreen list":           nil,
	"evergreen mark":           {"123"}, // no such post in the demo world: refused after the sandbox is prepared
	"evergreen unmark":         {"123"},
}

// sandboxUntouched are the commands that leave the sandbox as they find
// it, and why.
var sandboxUntouched = map[string]string{
	"sandbox reset":         "it empties the sandbox",
	"analytics":             "a command group: it shows its help",
	"approve":               "a command group: it shows its help",
	"audit":                 "a command group: it shows its help",
	"config":                "a command group: it shows its help",
	"db":                    "a command group: it shows its help",
	"mcp":                   "a command group: it shows its help",
	"sandbox":               "a command group: it shows its help",
	"xsim":                  "a command group: it shows its help",
	"completion":            "a command group: it shows its help",
	"completion bash":       "it prints a shell script",
	"completion fish":       "it prints a shell script",
	"completion powershell": "it prints a shell script",
	"completion zsh":        "it prints a shell script",
	"help":                  "it shows help",
	"notify":                "a command group: it shows its help",
	"notify outbox":         "a command group: it shows its help",
	"approve links":         "a command group: it shows its help",
	"queue":                 "a command group: it shows its help",
	"optouts":               "a command group: it shows its help",
	"recurring":             "a command group: it shows its help",
	"evergreen":             "a command group: it shows its help",
}

// runnableCommands lists the path of every command below root that runs.
func runnableCommands(cmd *cobra.Command) []string {
	var out []string
	if cmd.Runnable() && cmd.HasParent() {
		out = append(out, strings.TrimPrefix(cmd.CommandPath(), "tuitbot "))
	}
	for _, sub := range cmd.Commands() {
		out = append(out, runnableCommands(sub)...)
	}
	return out
}

// TestEverySandboxCommandPreparesTheSandbox: whichever --sandbox command
// runs first on a fresh home, the sandbox world and every demo account's
// token are there afterwards, and nothing it says reports them missing or
// asks for --sandbox. Only `sandbox reset` and the command groups, which
// show their help, leave the sandbox as it was.
func TestEverySandboxCommandPreparesTheSandbox(t *testing.T) {
	cmds := runnableCommands(newRoot(io.Discard, io.Discard, strings.NewReader("")))
	sort.Strings(cmds)
	for _, name := range cmds {
		_, args := sandboxFirstArgs[name]
		_, untouched := sandboxUntouched[name]
		if !args && !untouched {
			t.Errorf("no command line for %q: add it to sandboxFirstArgs", name)
		}
	}
	prepared := []string{"world.json", "tokens.json", filepath.Join("tokens", "brand_b.json"), filepath.Join("tokens", "brand_c.json")}
	for _, name := range cmds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t)
			args := append(strings.Fields(name), sandboxFirstArgs[name]...)
			r := h.run(t, append(args, "--sandbox")...)
			for _, no := range []string{"no X token file", "use --sandbox", "or --sandbox"} {
				if strings.Contains(r.stdout+r.stderr, no) {
					t.Errorf("says %q:\n%s", no, r)
				}
			}
			for _, f := range prepared {
				_, err := os.Stat(filepath.Join(h.path("sandbox"), f))
				switch {
				case sandboxUntouched[name] != "" && err == nil:
					t.Errorf("`%s --sandbox` wrote %s, but %s", name, f, sandboxUntouched[name])
				case sandboxUntouched[name] == "" && err != nil:
					t.Errorf("the sandbox has no %s after `%s --sandbox`: %v\n%s", f, name, err, r)
				}
			}
		})
	}
}

// TestSandboxAuthStatusFirst: `auth status --json --sandbox` as the very
// first command shows the demo account's token, for every account the
// sandbox runs.
func TestSandboxAuthStatusFirst(t *testing.T) {
	for _, account := range []string{"", "brand_b", "brand_c"} {
		t.Run("account="+account, func(t *testing.T) {
			h := newHome(t)
			args := []string{"auth", "status", "--json", "--sandbox"}
			if account != "" {
				args = append(args, "--account", account)
			}
			r := h.ok(t, args...)
			var st TokenStatus
			oneJSONDocument(t, r.stdout, &st)
			want := h.path("sandbox/tokens.json")
			if account != "" {
				want = h.path("sandbox/tokens/" + account + ".json")
			}
			if st.TokenFile != want || st.Expired || !st.HasRefreshToken || len(st.Scopes) == 0 {
				b, _ := json.Marshal(st)
				t.Errorf("auth status = %s, want a live token in %s", b, want)
			}
		})
	}
}
