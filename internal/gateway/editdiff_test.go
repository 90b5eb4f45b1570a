package gateway

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestEditDiff(t *testing.T) {
	cases := []struct {
		name          string
		original, now string
		want          []string
	}{
		{"not edited", "", `{"text":"a"}`, nil},
		{"text changed", `{"text":"a","media_ids":["1"]}`, `{"text":"b","media_ids":["1"]}`, []string{`- text: "a"`, `+ text: "b"`}},
		{"key added and removed, in key order", `{"b":1,"text":"a"}`, `{"a":2,"text":"a"}`, []string{"- a: null", "+ a: 2", "- b: 1", "+ b: null"}},
		{"same after edit", `{"text":"a"}`, `{"text":"a"}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := ApprovalItem{Params: json.RawMessage(tc.now)}
			if tc.original != "" {
				it.OriginalParams = json.RawMessage(tc.original)
			}
			if got := it.EditDiff(); !slices.Equal(got, tc.want) {
				t.Fatalf("EditDiff = %q, want %q", got, tc.want)
			}
		})
	}
}
