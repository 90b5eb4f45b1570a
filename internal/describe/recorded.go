package describe

import (
	"encoding/json"
	"strings"
)

// ListedTextRunes is how much of a recorded call's text a list of calls
// shows.
const ListedTextRunes = 160

// Recorded is a recorded call as a list of calls shows it: the action's
// name, and the text it posted or else the post or account it acted on.
type Recorded struct {
	Name string
	// Text is the text the call posted (a thread's posts one after the
	// other), shortened to ListedTextRunes; "" when it posted none.
	Text string
	// Target is what it acted on; set only when Text is "".
	Target Target
}

// RecordedOf describes a recorded call of tool from its parameters'
// summary as the audit trail stores it (already stripped of secrets, and
// perhaps truncated: then it is not JSON and only the name is known).
// equivalent is the typed tool a universal request does the work of.
func RecordedOf(tool, equivalent, summary string) Recorded {
	text := PostedText(summary)
	var params json.RawMessage
	if text == "" {
		// A call that posted text shows the text, not its target: the
		// summary is decoded once, not twice.
		params = json.RawMessage(summary)
	}
	a := Of(tool, equivalent, params)
	r := Recorded{Name: a.Name}
	if text != "" {
		r.Text = shorten(text, ListedTextRunes)
	} else {
		r.Target = a.Target
	}
	return r
}

// PostedText is the text a recorded call posted: its text, or a thread's
// posts one after the other ("" when it posted none).
func PostedText(summary string) string {
	if !strings.Contains(summary, `"text"`) && !strings.Contains(summary, `"tweets"`) {
		return ""
	}
	var p struct {
		Text   string   `json:"text"`
		Tweets []string `json:"tweets"`
	}
	if json.Unmarshal([]byte(summary), &p) != nil {
		return ""
	}
	if p.Text != "" {
		return p.Text
	}
	return strings.Join(p.Tweets, " / ")
}

// shorten cuts s to n runes, the last an ellipsis when it was longer.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
