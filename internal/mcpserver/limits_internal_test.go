package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/argcheck"
)

// countedIn counts how often its limits are built.
type countedIn struct {
	Text string `json:"text" jsonschema:"some text"`
}

var countedLimitsBuilt int

func (countedIn) Limits() argcheck.Limits {
	countedLimitsBuilt++
	return argcheck.Limits{"text": {MaxLength: 3}}
}

// TestLimitsAreBuiltOnTheFirstCall: defining a tool builds none of its
// argument limits; its first call builds them, once, and they hold.
func TestLimitsAreBuiltOnTheFirstCall(t *testing.T) {
	countedLimitsBuilt = 0
	tool := def(Spec{Name: "counted"}, func(context.Context, *Call, countedIn) (Result, error) { return Result{}, nil })
	if countedLimitsBuilt != 0 {
		t.Fatalf("defining the tool built its limits %d times, want none", countedLimitsBuilt)
	}
	if _, err := tool.parse(json.RawMessage(`{"text":"abc"}`)); err != nil {
		t.Fatalf("a text within the limit: %v", err)
	}
	_, err := tool.parse(json.RawMessage(`{"text":"abcd"}`))
	if err == nil || !strings.Contains(err.Error(), "text") {
		t.Fatalf("a text over the limit: %v, want an error naming the field", err)
	}
	if countedLimitsBuilt != 1 {
		t.Fatalf("two calls built the limits %d times, want once", countedLimitsBuilt)
	}
}
