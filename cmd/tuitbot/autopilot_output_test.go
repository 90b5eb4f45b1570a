package main

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestSandboxTickOnAFreshHome: `tick --sandbox` as the first command of a
// home nobody configured prints one line per loop, in the order they run,
// and, whatever the hour, queues a tweet and a thread about the demo topics
// for approval. Discovery searches the demo keywords and, on pay_per_use
// (the default), hands its best drafts to a person instead of failing.
func TestSandboxTickOnAFreshHome(t *testing.T) {
	h := newHome(t)
	r := h.ok(t, "tick", "--sandbox")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	loops := autopilot.LoopNames()
	if len(lines) != len(loops) {
		t.Fatalf("%d lines for %d loops:\n%s", len(lines), len(loops), r)
	}
	byLoop := map[string]string{}
	for i, n := range loops {
		if f := strings.Fields(lines[i]); len(f) < 2 || f[0] != n {
			t.Fatalf("line %d is not the %s loop's: %q", i+1, n, lines[i])
		}
		byLoop[n] = lines[i]
		if strings.Contains(lines[i], "outside active hours") {
			t.Errorf("the sandbox keeps active hours: %q", lines[i])
		}
	}
	for _, n := range []string{autopilot.LoopContent, autopilot.LoopThreads} {
		if !regexp.MustCompile(`^` + n + ` +ok +posted 0, queued 1, `).MatchString(byLoop[n]) {
			t.Errorf("%s on a fresh sandbox home: %q, want one item queued", n, byLoop[n])
		}
	}
	if !regexp.MustCompile(`^discovery +ok +posted 0, queued 0, blocked 0; searched .*; [1-9]\d* reply suggestions? handed to a person$`).MatchString(byLoop[autopilot.LoopDiscovery]) {
		t.Errorf("discovery on a fresh sandbox home: %q, want reply suggestions handed to a person", byLoop[autopilot.LoopDiscovery])
	}
	demo := false
	for _, p := range xsim.DemoPillars() {
		demo = demo || strings.Contains(byLoop[autopilot.LoopContent], `"`+p+`"`)
	}
	if !demo {
		t.Errorf("the content loop did not write about a demo topic: %q", byLoop[autopilot.LoopContent])
	}
	var list struct {
		Items []struct {
			ToolName string `json:"tool_name"`
		} `json:"items"`
	}
	out := h.ok(t, "approve", "list", "--sandbox", "--json").stdout
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("approve list --json: %v\n%s", err, out)
	}
	tools := map[string]bool{}
	for _, it := range list.Items {
		tools[it.ToolName] = true
	}
	if !tools["x_post_tweet"] || !tools["x_post_thread"] {
		t.Errorf("the approval queue holds %v, want the tick's tweet and thread", tools)
	}
}

// TestRunSaysWhenEachLoopRunsNext: `run` says when each loop runs first,
// and after each iteration what the loop did and when it runs next.
func TestRunSaysWhenEachLoopRunsNext(t *testing.T) {
	h := newHome(t)
	writeRunConfig(t, h)
	cmd := exec.Command(binPath, "run")
	cmd.Dir = h.dir
	out := startServer(t, cmd, h.env)
	waitOutput(t, out, "next runs: housekeeping now")
	line := regexp.MustCompile(`housekeeping +ok +posted 0, queued 0, blocked 0; 0 approval items expired; next run \d{4}-\d\d-\d\dT[0-9:]+Z \(in [^)]+\)\n`)
	if out.waitFor(line, 30*time.Second) == nil {
		t.Fatalf("run does not say what housekeeping did and when it runs next:\n%s", out)
	}
	waitSignalExit(t, cmd, out)
}
