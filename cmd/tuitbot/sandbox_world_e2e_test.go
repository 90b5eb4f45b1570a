//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// replies reads stdout until every id in want has its reply, whatever the
// order the server answers in, and returns them by id.
func (p *stdioProc) replies(t *testing.T, want ...int) map[int]rpcReply {
	t.Helper()
	out := map[int]rpcReply{}
	for len(out) < len(want) {
		r := p.next(t, fmt.Sprintf("replies %v", want))
		if len(r.ID) == 0 {
			continue // a notification
		}
		id, err := strconv.Atoi(string(r.ID))
		if err != nil {
			t.Fatalf("reply id %s", r.ID)
		}
		out[id] = r
	}
	return out
}

// TestOneEmulatorPerWorldFile: many `mcp serve --sandbox` processes start
// at once from two homes whose [sandbox] state_file names one world file.
// Exactly one of them runs an emulator; the others use it; and every post
// answered as successful, through whichever process, is in the world file
// once they have all stopped.
func TestOneEmulatorPerWorldFile(t *testing.T) {
	const perHome, postsEach = 4, 3
	world := filepath.Join(t.TempDir(), "world.json")
	var homes []*home
	for range 2 {
		h := permissiveSandbox(t)
		cfg, err := os.ReadFile(h.path("config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		cfg = append(cfg, fmt.Sprintf("\n[sandbox]\nstate_file = %q\n", world)...)
		if err := os.WriteFile(h.path("config.toml"), cfg, 0o600); err != nil {
			t.Fatal(err)
		}
		// Each home has used the shared world once, alone, and so holds a
		// login in it.
		h.ok(t, "auth", "status", "--sandbox")
		homes = append(homes, h)
	}
	// Every process is started, and asked to start its services and post,
	// before any answer is read: their start-ups race.
	var procs []*stdioProc
	for i := range 2 * perHome {
		// The emulator's start is a debug line, asked for to count starters.
		procs = append(procs, startStdio(t, homes[i%2], "--sandbox", "--log-level", "debug"))
	}
	text := func(p, n int) string { return fmt.Sprintf("Post %d of server %d on the shared world.", n, p) }
	for i, p := range procs {
		p.send(t, initLine)
		p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
		for n := range postsEach {
			b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
				"params": map[string]any{"name": "x_post_tweet", "arguments": map[string]any{"text": text(i, n)}}})
			if err != nil {
				t.Fatal(err)
			}
			p.send(t, string(b))
		}
	}
	answered := map[string]string{} // post id -> text
	for i, p := range procs {
		want := []int{1}
		for n := range postsEach {
			want = append(want, 10+n)
		}
		got := p.replies(t, want...)
		for n := range postsEach {
			r := got[10+n]
			if r.Error != nil {
				t.Fatalf("server %d post %d: %+v\nstderr:\n%s", i, n, r.Error, p.stderr)
			}
			var res mcp.CallToolResult
			if err := json.Unmarshal(r.Result, &res); err != nil {
				t.Fatal(err)
			}
			var env sandboxEnvelope
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
				t.Fatalf("server %d post %d: %v", i, n, err)
			}
			if !env.Success {
				t.Errorf("server %d post %d failed: %+v\nstderr:\n%s", i, n, env.Error, p.stderr)
				continue
			}
			var posted struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(env.Data, &posted); err != nil || posted.ID == "" {
				t.Fatalf("server %d post %d data %s: %v", i, n, env.Data, err)
			}
			answered[posted.ID] = text(i, n)
		}
	}
	// While every server still runs, exactly one of them runs an emulator.
	var starters []int
	for i, p := range procs {
		if strings.Contains(p.stderr.String(), "sandbox: X emulator started") {
			starters = append(starters, i)
		}
	}
	if len(starters) != 1 {
		t.Errorf("servers %v each started an emulator on %s, want exactly one", starters, world)
	}
	for _, p := range procs {
		p.stop(t)
	}
	w, err := xsim.LoadWorld(world)
	if err != nil {
		t.Fatal(err)
	}
	inFile := map[string]string{}
	for _, tw := range w.Tweets {
		inFile[tw.ID] = tw.Text
	}
	lost := 0
	for id, want := range answered {
		if inFile[id] != want {
			lost++
			t.Errorf("post %s (%q) was answered as successful but is not in the world file", id, want)
		}
	}
	if len(answered) != 2*perHome*postsEach || lost > 0 {
		t.Errorf("%d of %d posts answered as successful, %d of them missing from the world file", len(answered), 2*perHome*postsEach, lost)
	}
}
