package notify

import (
	"encoding/json"
	"testing"

	"github.com/tuitbot/tuitbot/internal/gateway"
)

// A row recorded before payloads kept the stored content's hash compares
// the decoded parameters: a re-encoding is the same content, an edit is not.
func TestSameContentOfRowsWithoutTheStoredHash(t *testing.T) {
	stored := json.RawMessage(`{"text":"Q&A <3 a > b\u2028"}`)
	reencoded, err := json.Marshal(Item{Tool: "x_post_tweet", Params: stored})
	if err != nil {
		t.Fatal(err)
	}
	var legacy Item
	if err := json.Unmarshal(reencoded, &legacy); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		was    Item
		now    json.RawMessage
		same   bool
		nowFor string
	}{
		{"legacy row, same content", legacy, stored, true, "x_post_tweet"},
		{"legacy row, edited", legacy, json.RawMessage(`{"text":"Q&A <3 a > c"}`), false, "x_post_tweet"},
		{"legacy row, other tool", legacy, stored, false, "x_reply_to_tweet"},
		{"stored hash, same bytes", Item{Tool: "x_post_tweet", Content: ContentHash("x_post_tweet", stored)}, stored, true, "x_post_tweet"},
		{"stored hash, edited", Item{Tool: "x_post_tweet", Content: ContentHash("x_post_tweet", stored)}, json.RawMessage(`{"text":"other"}`), false, "x_post_tweet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameContent(tc.was, &gateway.ApprovalItem{Tool: tc.nowFor, Params: tc.now}); got != tc.same {
				t.Fatalf("sameContent = %v, want %v", got, tc.same)
			}
		})
	}
}
