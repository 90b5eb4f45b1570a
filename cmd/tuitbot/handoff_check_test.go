package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestServeAloneResolvesHandOffs: `mcp serve --sandbox` with no
// notification channel (so no dispatcher) and no autopilot still runs the
// periodic hand-off check. The agent's like is refused on pay-per-use and
// handed to a person; the person presses Like on the emulator's intent
// page; the server finds it by itself (never asked to check) and records
// done_by_person, which get_handoff then reads.
func TestServeAloneResolvesHandOffs(t *testing.T) {
	h := newHome(t).with("TUITBOT_X_API__HANDOFF_CHECK_SECONDS=1")
	h.ok(t, "audit", "recent", "--sandbox")
	w, err := xsim.LoadWorld(h.path(filepath.Join("sandbox", "world.json")))
	if err != nil {
		t.Fatal(err)
	}
	liked := map[string]bool{}
	for _, l := range w.Likes {
		if l.From == w.DemoUserID {
			liked[l.To] = true
		}
	}
	post := ""
	for _, tw := range w.Tweets {
		if tw.AuthorID != w.DemoUserID && tw.RetweetOf == "" && tw.QuoteOf == "" && tw.InReplyToUserID == "" && !liked[tw.ID] {
			post = tw.ID
		}
	}
	if post == "" {
		t.Fatal("no stranger's post in the sandbox world")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.Command(binPath, "mcp", "serve", "--sandbox")
	cmd.Env = h.env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "handoff-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr)
	}
	defer cs.Close()
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\nstderr:\n%s", tool, err, stderr)
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
			t.Fatal(err)
		}
		return env
	}
	refusal := call("x_like_tweet", map[string]any{"tweet_id": post})
	e, _ := refusal["error"].(map[string]any)
	id, _ := e["handoff_id"].(float64)
	if refusal["success"] != false || e["code"] != "x_feature_unavailable" || id == 0 {
		t.Fatalf("the like was not handed to a person: %v", refusal)
	}
	got := call("get_handoff", map[string]any{"handoff_id": id})
	data, _ := got["data"].(map[string]any)
	link, _ := data["intent_url"].(string)
	if data["status"] != "open" || !strings.Contains(link, "/intent/like?") {
		t.Fatalf("hand-off before the person acts: %v", got)
	}

	// The person presses Like on the intent page.
	res, err := http.PostForm(link, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the intent page answered %d", res.StatusCode)
	}
	// The server's own periodic check finds it; nothing asks it to.
	resolved := regexp.MustCompile(`msg="hand-off resolved".*handoff_id=` + strconv.FormatInt(int64(id), 10) + ` .*status=done_by_person`)
	if stderr.waitFor(resolved, 60*time.Second) == nil {
		t.Fatalf("mcp serve never resolved hand-off %v by itself\nstderr:\n%s", id, stderr)
	}
	got = call("get_handoff", map[string]any{"handoff_id": id})
	data, _ = got["data"].(map[string]any)
	if data["status"] != "done_by_person" || data["post_id"] != post {
		t.Fatalf("hand-off after the check: %v", got)
	}
}
