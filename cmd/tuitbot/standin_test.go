package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestSandboxTickDraftsWithTheStandIn: `tick --sandbox` in a home with no
// LLM runs the content loop on the sandbox stand-in, and the tweet it
// queues for approval carries the label; sandbox.llm_stand_in = false
// brings back "needs an LLM".
func TestSandboxTickDraftsWithTheStandIn(t *testing.T) {
	h := newHome(t)
	// All day, every day, so the loop runs whatever the wall clock says.
	cfg := "[business]\ncontent_pillars = [\"Go tooling\"]\n\n[schedule]\nactive_hours_start = 0\nactive_hours_end = 24\n"
	if err := os.WriteFile(h.path("config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	tick := func(h *home) map[string]any {
		t.Helper()
		var res []map[string]any
		r := h.ok(t, "tick", "--sandbox", "--loop", "content", "--json")
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res) != 1 {
			t.Fatalf("tick --json: %v\n%s", err, r)
		}
		return res[0]
	}
	off := h.with("TUITBOT_SANDBOX__LLM_STAND_IN=false")
	if res := tick(off); !strings.Contains(res["summary"].(string), "need an LLM") || res["queued"].(float64) != 0 {
		t.Errorf("with the stand-in off: %v", res)
	}
	if res := tick(h); res["queued"].(float64) != 1 || res["error"] != nil {
		t.Fatalf("content on the stand-in: %v", res)
	}
	if r := h.ok(t, "tick", "--sandbox", "--loop", "content"); !strings.Contains(r.stderr, "sandbox stand-in") {
		t.Errorf("tick does not say the drafts come from the stand-in:\n%s", r)
	}
	list := h.ok(t, "approve", "list", "--sandbox", "--json").stdout
	if !strings.Contains(list, "[sandbox stand-in] ") || !strings.Contains(list, "Go tooling") {
		t.Errorf("the queued tweet is not the stand-in's labelled draft:\n%s", list)
	}
}
