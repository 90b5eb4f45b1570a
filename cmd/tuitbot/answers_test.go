package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUnknownSubcommandIsAUsageError: a mistyped subcommand exits 2 with
// a suggestion instead of printing the help and exiting 0, at every level.
func TestUnknownSubcommandIsAUsageError(t *testing.T) {
	h := newHome(t)
	for _, tc := range []struct {
		args []string
		bad  string
		want string
	}{
		{[]string{"approve", "aprove", "1"}, "aprove", "did you mean `tuitbot approve approve`?"},
		{[]string{"aprove", "list"}, "aprove", "did you mean `tuitbot approve`?"},
		{[]string{"audit", "recnt"}, "recnt", "did you mean `tuitbot audit recent`?"},
		{[]string{"sandbox", "rest"}, "rest", "did you mean `tuitbot sandbox reset`?"},
		{[]string{"mcp", "zzzz"}, "zzzz", "run `tuitbot mcp --help` for the list"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := h.run(t, tc.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2\n%s", r.code, r)
			}
			mustContain(t, "stderr", r.stderr, "unknown command \""+tc.bad+"\"", tc.want)
			if strings.Contains(r.stdout, "Available Commands") {
				t.Errorf("printed the help instead of an error:\n%s", r.stdout)
			}
		})
	}
	// A command group alone still shows its help.
	r := h.ok(t, "approve")
	mustContain(t, "approve help", r.stdout, "Available Commands")
}

// TestMissingArgumentSaysWhereToFindIt: a missing id exits 2 and names the
// command that lists ids.
func TestMissingArgumentSaysWhereToFindIt(t *testing.T) {
	h := newHome(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"approve", "show"}, "`approve show` needs an id: see `tuitbot approve list`"},
		{[]string{"approve", "approve"}, "`approve approve` needs an id: see `tuitbot approve list`"},
		{[]string{"approve", "reject"}, "`approve reject` needs an id: see `tuitbot approve list`"},
		{[]string{"audit", "show"}, "`audit show` needs a correlation id: see `tuitbot audit recent`"},
		{[]string{"version", "extra"}, "usage: tuitbot version"},
	} {
		r := h.run(t, tc.args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", tc.args, r.code, r)
		}
		mustContain(t, strings.Join(tc.args, " "), r.stderr, tc.want)
	}
}

// TestTokenPathIsTheOneUsed: with --sandbox the 401 body, the log and the
// help name the sandbox token file the server really reads, and README
// shows an HTTP client entry with the bearer header.
func TestTokenPathIsTheOneUsed(t *testing.T) {
	h := newHome(t)
	cmd := exec.Command(binPath, "mcp", "serve", "--sandbox", "--transport", "http", "--listen", "127.0.0.1:0")
	out := startServer(t, cmd, h.env)
	addr := waitListening(t, out)
	want := h.path(filepath.Join("sandbox", "mcp_token"))
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("the sandbox server did not create %s: %v", want, err)
	}
	res, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(initLine))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d, want 401", res.StatusCode)
	}
	mustContain(t, "401 body", string(body), want, "Authorization: Bearer")
	mustContain(t, "server log", out.String(), "token_file="+want)
	waitSignalExit(t, cmd, out)

	help := h.ok(t, "mcp", "serve", "--help")
	mustContain(t, "mcp serve --help", help.stdout, "~/.tuitbot/sandbox/mcp_token with --sandbox", "Authorization: Bearer")

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "README", string(readme), "~/.tuitbot/sandbox/mcp_token", `"Authorization": "Bearer `)
}

// TestServeStopsWithoutAnError: Ctrl-C and SIGTERM are how a person stops
// the server; neither is logged as an ERROR.
func TestServeStopsWithoutAnError(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := startStdio(t, newHome(t), "--sandbox")
			p.initialize(t)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := p.cmd.Wait(); err != nil {
				t.Fatalf("exit after %v: %v\nstderr:\n%s", sig, err, p.stderr)
			}
			if strings.Contains(p.stderr.String(), "level=ERROR") {
				t.Errorf("a normal stop logged an ERROR:\n%s", p.stderr)
			}
			mustContain(t, "stderr", p.stderr.String(), "mcp server stopped")
			if strings.Contains(p.stderr.String(), "waiting for an MCP client") {
				t.Errorf("the terminal hint was printed with a pipe on stdin:\n%s", p.stderr)
			}
		})
	}
}

// TestReadonlyWithMutationToolsServesNothing: a --tools list that leaves
// the profile empty is refused instead of serving no tools.
func TestReadonlyWithMutationToolsServesNothing(t *testing.T) {
	h := newHome(t)
	r := h.run(t, "mcp", "serve", "--profile", "readonly", "--tools", "x_post_tweet")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", r.code, r)
	}
	mustContain(t, "stderr", r.stderr, "x_post_tweet", "not in profile readonly", "serve no tools")
	r = h.run(t, "mcp", "serve", "--tools", "x_post_tweet", "--exclude-tools", "x_post_tweet")
	if r.code != 2 {
		t.Fatalf("all excluded: exit %d, want 2\n%s", r.code, r)
	}
	mustContain(t, "stderr", r.stderr, "all excluded")
}

// waitExit waits for cmd to end and reports how.
func waitExit(t *testing.T, cmd *exec.Cmd, out interface{ String() string }) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("no exit within 20s\n%s", out)
	}
	return nil
}

var terminalHint = regexp.MustCompile(`waiting for an MCP client on stdin.*mcp install --client claude-code --sandbox.*--transport http`)
