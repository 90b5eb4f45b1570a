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
