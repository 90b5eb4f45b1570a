package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sandboxEnvelope is a tool answer with its data kept raw.
type sandboxEnvelope struct {
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// callTool calls one tool over the raw stdio pipes and decodes its envelope.
func (p *stdioProc) callTool(t *testing.T, id int, name string, args map[string]any) sandboxEnvelope {
	t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	p.send(t, string(b))
	r := p.next(t, name)
	if string(r.ID) != fmt.Sprint(id) || r.Error != nil {
		t.Fatalf("%s reply %+v", name, r)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	var env sandboxEnvelope
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return env
}

// stop closes the server's stdin, the way an MCP client ends a session,
// and waits for a clean exit.
func (p *stdioProc) stop(t *testing.T) {
	t.Helper()
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("server exit: %v\nstderr:\n%s", err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("server did not exit after stdin closed\nstderr:\n%s", p.stderr)
	}
}

// timeline returns the texts of the demo account's latest posts as the
// server sees them.
func (p *stdioProc) timeline(t *testing.T, id int) []string {
	t.Helper()
	me := p.callTool(t, id, "x_get_me", map[string]any{})
	if !me.Success {
		t.Fatalf("x_get_me: %+v\nstderr:\n%s", me.Error, p.stderr)
	}
	var user struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(me.Data, &user); err != nil || user.ID == "" {
		t.Fatalf("x_get_me data %s: %v", me.Data, err)
	}
	got := p.callTool(t, id+1, "x_get_user_tweets", map[string]any{"user_id": user.ID, "max_results": 20})
	if !got.Success {
		t.Fatalf("x_get_user_tweets: %+v\nstderr:\n%s", got.Error, p.stderr)
	}
	var list struct {
		Tweets []struct {
			Text string `json:"text"`
		} `json:"tweets"`
	}
	if err := json.Unmarshal(got.Data, &list); err != nil {
		t.Fatalf("x_get_user_tweets data %s: %v", got.Data, err)
	}
	var out []string
	for _, tw := range list.Tweets {
		out = append(out, tw.Text)
	}
	return out
}

func (p *stdioProc) post(t *testing.T, id int, text string) sandboxEnvelope {
	t.Helper()
	return p.callTool(t, id, "x_post_tweet", map[string]any{"text": text})
}

func wantPosts(t *testing.T, who string, got []string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !slices.Contains(got, w) {
			t.Errorf("%s does not see the post %q; it sees %q", who, w, got)
		}
	}
}

// sandboxAdvertPID is the process the sandbox home says runs the emulator.
func sandboxAdvertPID(t *testing.T, h *home) int {
	t.Helper()
	b, err := os.ReadFile(h.path(filepath.Join("sandbox", "xsim.json")))
	if err != nil {
		t.Fatalf("sandbox advert: %v", err)
	}
	var ad struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(b, &ad); err != nil {
		t.Fatal(err)
	}
	return ad.PID
}

// TestSandboxApproveWithoutServerActsOnTheSharedWorld: approving in the
// sandbox with no server running posts into the one sandbox world (not a
// throwaway emulator), and the next server sees the post. --sandbox-state is
// a global flag: approve and audit take it like every command.
func TestSandboxApproveWithoutServerActsOnTheSharedWorld(t *testing.T) {
	h := newHome(t)
	const text = "Queued in the sandbox, approved with no server running."
	state := h.path(filepath.Join("sandbox", "world.json"))
	p := startStdio(t, h, "--sandbox")
	p.initialize(t)
	if queued := p.post(t, 2, text); !strings.Contains(string(queued.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_post_tweet was not routed to approval: %+v %s", queued.Error, queued.Data)
	}
	p.stop(t)

	r := h.ok(t, "approve", "approve", "1", "--sandbox", "--sandbox-state", state)
	mustContain(t, "approve output", r.stdout, "[executed]", text)
	audit := h.ok(t, "audit", "recent", "--sandbox", "--sandbox-state", state)
	mustContain(t, "audit", audit.stdout, "success", "x_post_tweet")

	p2 := startStdio(t, h, "--sandbox")
	p2.initialize(t)
	wantPosts(t, "the next server", p2.timeline(t, 2), text)
	p2.stop(t)
}

// permissiveSandbox lets x_post_tweet run at once, so a test can post
// through servers without a human in the loop.
func permissiveSandbox(t *testing.T) *home {
	t.Helper()
	h := newHome(t)
	cfg := "approval_mode = false\n\n[mcp_policy]\nrequire_approval_for = []\nmax_mutations_per_hour = 0\n"
	if err := os.WriteFile(h.path("config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSandboxEmulatorOutlivesItsStarter: two servers share the sandbox;
// when the one that started the emulator exits (cleanly, or killed without
// a chance to clean up), the other takes it over on the saved world and
// still posts and reads, and the posts made through the first are still
// there.
func TestSandboxEmulatorOutlivesItsStarter(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(t *testing.T, p *stdioProc)
	}{
		{"starter exits", func(t *testing.T, p *stdioProc) { p.stop(t) }},
		{"starter killed", func(t *testing.T, p *stdioProc) {
			if err := p.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = p.cmd.Wait()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := permissiveSandbox(t)
			first := startStdio(t, h, "--sandbox")
			first.started(t) // its emulator runs and is advertised
			// Attaching to a running emulator is a debug line: asked for here.
			second := startStdio(t, h, "--sandbox", "--log-level", "debug")
			second.started(t)
			if pid := sandboxAdvertPID(t, h); pid != first.cmd.Process.Pid {
				t.Fatalf("the emulator is run by process %d, want the first server %d", pid, first.cmd.Process.Pid)
			}
			for i, p := range []*stdioProc{first, second} {
				if env := p.post(t, 10+i, fmt.Sprintf("Posted through server %d.", i+1)); !env.Success {
					t.Fatalf("post through server %d: %+v\nstderr:\n%s", i+1, env.Error, p.stderr)
				}
			}
			tc.stop(t, first)

			env := second.post(t, 20, "Posted after the first server left.")
			if !env.Success {
				t.Fatalf("post after the emulator's starter left: %+v\nstderr:\n%s", env.Error, second.stderr)
			}
			wantPosts(t, "the surviving server", second.timeline(t, 21),
				"Posted through server 1.", "Posted through server 2.", "Posted after the first server left.")
			if pid := sandboxAdvertPID(t, h); pid != second.cmd.Process.Pid {
				t.Errorf("after the takeover the emulator is run by process %d, want the surviving server %d", pid, second.cmd.Process.Pid)
			}

			// A third server attaches to the emulator the survivor now runs.
			third := startStdio(t, h, "--sandbox", "--log-level", "debug")
			third.initialize(t)
			wantPosts(t, "a server started after the takeover", third.timeline(t, 2),
				"Posted through server 1.", "Posted after the first server left.")
			third.stop(t)
			second.stop(t)
			mustContain(t, "the surviving server's log", second.stderr.String(), "using the running emulator", "this process now runs it")
			mustContain(t, "the third server's log", third.stderr.String(), "using the running emulator")
		})
	}
}

// TestSandboxReset: reset refuses while a sandbox process runs, naming it,
// and afterwards starts the sandbox over: a new world, an empty queue, the
// MCP bearer token kept.
func TestSandboxReset(t *testing.T) {
	h := permissiveSandbox(t)
	sandbox := func(name string) string { return h.path(filepath.Join("sandbox", name)) }
	p := startStdio(t, h, "--sandbox")
	p.initialize(t)
	const text = "A post that a reset forgets."
	if env := p.post(t, 2, text); !env.Success {
		t.Fatalf("post: %+v", env.Error)
	}
	if err := os.WriteFile(sandbox("mcp_token"), []byte("sandbox-mcp-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := h.fails(t, "sandbox", "reset")
	mustContain(t, "reset while a server runs", r.stderr, "in use by process", fmt.Sprint(p.cmd.Process.Pid), "stop it first")
	if _, err := os.Stat(sandbox("world.json")); err != nil {
		t.Fatalf("a refused reset touched the world: %v", err)
	}
	wantPosts(t, "the server after a refused reset", p.timeline(t, 3), text)
	p.stop(t)

	r = h.ok(t, "sandbox", "reset")
	mustContain(t, "reset", r.stdout, "world.json", "tuitbot.db", "tokens.json", "starts a new demo world")
	if _, err := os.Stat(sandbox("mcp_token")); err != nil {
		t.Errorf("reset removed the MCP bearer token: %v", err)
	}
	for _, gone := range []string{"world.json", "tuitbot.db", "tokens.json", "xsim.json"} {
		if _, err := os.Stat(sandbox(gone)); !isNotExist(err) {
			t.Errorf("%s survived the reset: %v", gone, err)
		}
	}
	h.ok(t, "approve", "list", "--sandbox")
	p2 := startStdio(t, h, "--sandbox")
	p2.initialize(t)
	if got := p2.timeline(t, 2); slices.Contains(got, text) {
		t.Errorf("the world after a reset still has the old post: %q", got)
	}
	p2.stop(t)
	r = h.ok(t, "sandbox", "reset", "--help")
	mustContain(t, "reset help", r.stdout, "refuses while", "mcp_token")
}
