package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestSandboxCommandsAreQuiet: a sandbox command says nothing on stderr
// about the emulator it starts unless the person asks for debug logs.
func TestSandboxCommandsAreQuiet(t *testing.T) {
	h := newHome(t)
	for _, tc := range []struct {
		name  string
		args  []string
		wants bool
	}{
		{"default level", []string{"approve", "list", "--sandbox"}, false},
		{"info asked for", []string{"approve", "list", "--sandbox", "--log-level", "info"}, false},
		{"debug asked for", []string{"approve", "list", "--sandbox", "--log-level", "debug"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.ok(t, tc.args...)
			if got := strings.Contains(r.stderr, "emulator started"); got != tc.wants {
				t.Errorf("stderr names the emulator start: %v, want %v\n%s", got, tc.wants, r)
			}
		})
	}
}

// TestSandboxHasDemoQueueSlots: a fresh sandbox has a posting queue to try,
// while a real home without [queue] slots still has none.
func TestSandboxHasDemoQueueSlots(t *testing.T) {
	h := newHome(t)
	for _, args := range [][]string{{"queue", "show", "--sandbox"}, {"queue", "next", "--sandbox"}} {
		r := h.ok(t, append(args, "--json")...)
		var got struct {
			Count int `json:"count"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Count == 0 {
			t.Errorf("`tuitbot %s` in a fresh sandbox shows no slots:\n%s", strings.Join(args, " "), r)
		}
	}
	r := h.run(t, "queue", "show", "--json")
	if r.code != 1 || !strings.Contains(r.stdout, `"queue_not_configured"`) {
		t.Errorf("a real home without slots got slots:\n%s", r)
	}
	// A sandbox keeps the slots the configuration sets.
	cfg := h.path("config.toml")
	if err := os.WriteFile(cfg, []byte("[queue]\nslots = [\"sun 06:30\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = h.ok(t, "queue", "next", "--sandbox", "--json", "-c", cfg)
	if !strings.Contains(r.stdout, "06:30") {
		t.Errorf("the sandbox replaced the configured slots:\n%s", r)
	}
}
