package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// inProcess runs the command tree the way main does, without a process per
// command, and returns main's exit code and the message main would print.
type inProcess struct{ ctx context.Context }

type inResult struct {
	stdout, stderr, err string
	code                int
}

// newInProcess points every home the commands could touch at a temporary
// directory, and X at a closed loopback port, as newHome does for the
// binary.
func newInProcess(t *testing.T, ctx context.Context) inProcess {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{
		"HOME":                                  filepath.Join(dir, "user"),
		"TUITBOT_HOME":                          dir,
		"XDG_CONFIG_HOME":                       filepath.Join(dir, "user", ".config"),
		"CLAUDE_CONFIG_DIR":                     "",
		"CODEX_HOME":                            "",
		"TUITBOT_X_API__API_BASE_URL":           "http://127.0.0.1:1",
		"TUITBOT_X_API__UPLOAD_BASE_URL":        "http://127.0.0.1:1",
		"TUITBOT_X_API__LEGACY_UPLOAD_BASE_URL": "http://127.0.0.1:1",
		"TUITBOT_X_API__AUTHORIZE_URL":          "http://127.0.0.1:1/authorize",
		"TUITBOT_X_API__TOKEN_URL":              "http://127.0.0.1:1/token",
		"TUITBOT_X_API__TIMEOUT_SECONDS":        "2",
		"TUITBOT_X_API__MAX_ATTEMPTS":           "1",
	} {
		t.Setenv(k, v)
	}
	return inProcess{ctx: ctx}
}

func (p inProcess) run(args ...string) inResult {
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb, strings.NewReader(""))
	root.SetArgs(append([]string{}, args...))
	err := root.ExecuteContext(p.ctx)
	r := inResult{stdout: out.String(), stderr: errb.String()}
	if err != nil {
		r.err, r.code = err.Error(), exitCode(err)
	}
	return r
}

// walkCommands visits every command of a fresh tree, root first, with its
// path below the root. Hidden commands are internal (cobra's __complete).
func walkCommands(t *testing.T, visit func(path []string, cmd *cobra.Command)) {
	t.Helper()
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Hidden {
			return
		}
		visit(strings.Fields(cmd.CommandPath())[1:], cmd)
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&bytes.Buffer{}, &bytes.Buffer{}, strings.NewReader("")))
}

var placeholderRE = regexp.MustCompile(`^[A-Z][A-Z_]*$`)

// positionals are the arguments a command's Use line names (ID, FILE, ...);
// open reports whether it takes optional or repeated ones besides.
func positionals(cmd *cobra.Command) (need []string, open bool) {
	for _, w := range strings.Fields(cmd.Use)[1:] {
		switch {
		case placeholderRE.MatchString(w):
			need = append(need, w)
		case strings.HasPrefix(w, "[") && !strings.HasPrefix(w, "[-"), strings.HasSuffix(w, "..."):
			open = true
		}
	}
	return need, open
}

type exitCase struct {
	name string
	args []string
	want int
	// msg, when set, must start the error message.
	msg string
}

// usageCases derives, for every command in the tree, the ways of calling it
// wrongly that the README's table says exit 2: an unknown flag, a flag value
// of the wrong type, an unknown subcommand, a missing or extra argument and
// a missing required flag.
func usageCases(t *testing.T) []exitCase {
	t.Helper()
	var cases []exitCase
	add := func(path []string, what string, extra ...string) {
		cases = append(cases, exitCase{
			name: strings.Join(append([]string{"tuitbot"}, path...), " ") + ": " + what,
			args: append(append([]string{}, path...), extra...), want: 2,
		})
	}
	walkCommands(t, func(path []string, cmd *cobra.Command) {
		add(path, "unknown flag", "--no-such-flag")
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			switch f.Value.Type() {
			case "bool", "int", "int64", "uint", "float64", "duration":
				add(path, "bad --"+f.Name+" value", "--"+f.Name+"=not-a-"+f.Value.Type())
			}
		})
		if cmd.HasSubCommands() {
			add(path, "unknown subcommand", "no-such-command")
			return
		}
		need, open := positionals(cmd)
		if len(need) > 0 {
			add(path, "missing "+need[0])
		}
		args := make([]string, len(need))
		for i := range args {
			args[i] = "1"
		}
		if !open {
			add(path, "extra argument", append(args, "extra")...)
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if req := f.Annotations[cobra.BashCompOneRequiredFlag]; len(req) > 0 && req[0] == "true" {
				add(path, "missing --"+f.Name, args...)
			}
		})
	})
	return cases
}

// TestExitCodesOfEveryCommand holds every command to the README's exit-code
// table: each wrong call of any command in the tree exits 2, and so do the
// bad values that once slipped through as 1 or 0.
func TestExitCodesOfEveryCommand(t *testing.T) {
	// No wrong call may get as far as doing something: if one does, it
	// finds its context already over and returns at once.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	p := newInProcess(t, done)
	cases := usageCases(t)
	commands := map[string]bool{}
	walkCommands(t, func(path []string, _ *cobra.Command) { commands[strings.Join(path, " ")] = true })
	for _, want := range []string{"completion", "completion bash", "help", "mcp install", "xsim serve"} {
		if !commands[want] {
			t.Errorf("the walk does not reach `tuitbot %s`: its calls go unchecked", want)
		}
	}
	for _, tc := range cases {
		r := p.run(tc.args...)
		if r.code != tc.want {
			t.Errorf("%s: `tuitbot %s` exits %d, want %d (%s)", tc.name, strings.Join(tc.args, " "), r.code, tc.want, r.err)
		} else if r.err == "" {
			t.Errorf("%s: `tuitbot %s` says nothing about what was wrong", tc.name, strings.Join(tc.args, " "))
		}
	}
	t.Logf("%d wrong calls derived from %d commands", len(cases), len(commands))
	if len(cases) < 100 {
		t.Errorf("only %d usage cases derived from the tree; the walk lost commands", len(cases))
	}

	// Values that are wrong for what the command does, not for its flag's
	// type. These get as far as checking them, so they need a live context.
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	live := newInProcess(t, ctx)
	for _, tc := range []exitCase{
		{"install without a client", []string{"mcp", "install"}, 2, "`mcp install` needs --client"},
		{"uninstall without a client", []string{"mcp", "uninstall"}, 2, "`mcp uninstall` needs --client"},
		{"install with an unknown client", []string{"mcp", "install", "--client", "notepad"}, 2, "client \"notepad\""},
		{"transport the client cannot express", []string{"mcp", "install", "--client", "claude-desktop", "--transport", "http", "--print"}, 2, "--transport http"},
		{"unknown tool", []string{"mcp", "serve", "--tools", "nosuchtool"}, 2, "--tools: unknown tool \"nosuchtool\""},
		{"unknown excluded tool", []string{"mcp", "serve", "--exclude-tools", "x_post_twet"}, 2, "--exclude-tools: unknown tool \"x_post_twet\""},
		{"unknown toolset", []string{"mcp", "serve", "--toolsets", "compose,nope"}, 2, "--toolsets: unknown toolset \"nope\""},
		{"toolset outside the profile", []string{"mcp", "serve", "--profile", "readonly", "--toolsets", "engage"}, 2, "--toolsets engage: none of their tools is in profile readonly"},
		{"listen address without a port", []string{"mcp", "serve", "--transport", "http", "--listen", "localhost"}, 2, "--listen \"localhost\""},
		{"emulator off loopback", []string{"xsim", "serve", "--listen", "8.8.8.8:80"}, 2, "--listen \"8.8.8.8:80\": the emulator listens on loopback only"},
		{"emulator listen address without a port", []string{"xsim", "serve", "--listen", "nowhere"}, 2, "--listen \"nowhere\""},
		{"review page off loopback without TLS or a proxy", []string{"web", "--listen", "8.8.8.8:80"}, 2, "--listen \"8.8.8.8:80\" is not a loopback address: serve it over TLS (--tls-cert FILE --tls-key FILE) or behind a reverse proxy"},
		{"completion for an unknown shell", []string{"completion", "tcsh"}, 2, "unknown command \"tcsh\" for \"tuitbot completion\""},
		{"help on an unknown topic", []string{"help", "aprove"}, 2, "unknown command \"aprove\" for \"tuitbot\"; did you mean `tuitbot approve`?"},
		{"help on an unknown subtopic", []string{"help", "mcp", "instal"}, 2, "unknown command \"instal\" for \"tuitbot mcp\""},
		{"approval id that is not a number", []string{"approve", "show", "abc"}, 2, "\"abc\" is not an approval id"},
		{"audit filter that matches nothing", []string{"audit", "recent", "--status", "bogus"}, 2, "--status: \"bogus\" is not an audit status"},
		{"help on a topic", []string{"help", "mcp", "install"}, 0, ""},
		{"completion script", []string{"completion", "bash"}, 0, ""},
		{"completion's own help", []string{"completion"}, 0, ""},
	} {
		r := live.run(tc.args...)
		if r.code != tc.want {
			t.Errorf("%s: `tuitbot %s` exits %d, want %d (%s)", tc.name, strings.Join(tc.args, " "), r.code, tc.want, r.err)
		}
		if !strings.HasPrefix(r.err, tc.msg) {
			t.Errorf("%s: `tuitbot %s` says %q, want it to start %q", tc.name, strings.Join(tc.args, " "), r.err, tc.msg)
		}
	}
}
