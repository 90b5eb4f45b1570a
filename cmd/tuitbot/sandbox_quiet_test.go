package main

import (
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
