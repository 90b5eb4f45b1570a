package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/gateway"
)

// TestPrintItemShowsPostOptions: approve show says a queued post's poll and
// reply settings in words.
func TestPrintItemShowsPostOptions(t *testing.T) {
	var b bytes.Buffer
	printItem(&b, &gateway.ApprovalItem{ID: 7, Tool: "x_post_tweet", Status: "pending",
		Params: json.RawMessage(`{"text":"Which?","options":{"poll":{"options":["A","B"],"duration_minutes":1440},"reply_settings":"following"}}`)})
	for _, want := range []string{"\n  Poll: A / B, 1 day\n", "\n  Replies: people you follow\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("approve show lacks %q:\n%s", want, b.String())
		}
	}
}

// TestApproveEditOptions: approve edit changes a pending post's options,
// keeps them when only the text changes, shows the change in words and in
// the diff, and refuses malformed or invalid options naming them.
func TestApproveEditOptions(t *testing.T) {
	h := newHome(t)
	seedPending(t, h, 1)
	r := h.ok(t, "approve", "edit", "1", "--options", `{"reply_settings":"following"}`)
	for _, want := range []string{"Replies: people you follow", `+ options: {"reply_settings":"following"}`} {
		mustContain(t, "approve edit --options", r.stdout, want)
	}
	r = h.ok(t, "approve", "edit", "1", "--text", "queued post, edited")
	mustContain(t, "approve edit --text", r.stdout, "Replies: people you follow")
	r = h.fails(t, "approve", "edit", "1", "--options", `{"reply_settings":"friends"}`)
	mustContain(t, "invalid options", r.stdout+r.stderr, "options.reply_settings")
	r = h.fails(t, "approve", "edit", "1", "--options", `{not json`)
	mustContain(t, "malformed options", r.stdout+r.stderr, "--options")
	r = h.fails(t, "approve", "edit", "1")
	mustContain(t, "no change", r.stdout+r.stderr, "--text or --options")
}
