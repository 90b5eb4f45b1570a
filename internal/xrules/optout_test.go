package xrules

import "testing"

// TestSaysOptOut: an opt-out phrase is found whatever its case or width,
// as whole words only.
func TestSaysOptOut(t *testing.T) {
	for _, tc := range []struct {
		text    string
		phrases []string
		want    string
	}{
		{text: "STOP", want: "stop"},
		{text: "ｓｔｏｐ", want: "stop"},
		{text: "@tuitbot please stop replying", want: "stop"},
		{text: "Unsubscribe!", want: "unsubscribe"},
		{text: "I want to OPT   OUT now", want: "opt out"},
		{text: "opt-out please", want: "opt out"},
		{text: "Leave me alone.", want: "leave me alone"},
		{text: "nice stopwatch", want: ""},
		{text: "nonstop fun", want: ""},
		{text: "great thread, thanks", want: ""},
		{text: "BASTA ya", phrases: []string{"basta"}, want: "basta"},
		{text: "stop", phrases: []string{"basta"}, want: ""},
	} {
		t.Run(tc.text, func(t *testing.T) {
			got, ok := SaysOptOut(tc.text, tc.phrases)
			if ok != (tc.want != "") || got != tc.want {
				t.Fatalf("SaysOptOut(%q) = %q, %v; want %q", tc.text, got, ok, tc.want)
			}
		})
	}
}
