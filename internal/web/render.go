package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// segment is one piece of a post as shown: plain text or an entity that is
// highlighted. Text is never trusted: the template escapes it.
type segment struct {
	Kind string // text, mention, hashtag, url
	Text string
}

// segments cuts post text into plain text, links (as the weighted count
// finds them), @mentions and #hashtags.
func segments(text string) []segment {
	nfc, links := tweettext.Links(text)
	var out []segment
	plain := func(s string) {
		out = append(out, tagSegments(s)...)
	}
	at := 0
	for _, l := range links {
		plain(nfc[at:l[0]])
		out = append(out, segment{Kind: "url", Text: nfc[l[0]:l[1]]})
		at = l[1]
	}
	plain(nfc[at:])
	return out
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// tagSegments finds @mentions (1-15 of A-Z, 0-9, _) and #hashtags (word
// characters, not only digits) that start a word.
func tagSegments(s string) []segment {
	var out []segment
	start := 0 // start of pending plain text
	prev := rune(-1)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == '@' || r == '#') && (prev == -1 || !isWordRune(prev)) {
			j := i + size
			for j < len(s) {
				q, qs := utf8.DecodeRuneInString(s[j:])
				if r == '@' && !(q == '_' || q < utf8.RuneSelf && (unicode.IsLetter(q) || unicode.IsDigit(q))) {
					break
				}
				if r == '#' && !isWordRune(q) {
					break
				}
				j += qs
			}
			name := s[i+size : j]
			ok := name != ""
			if r == '@' && len(name) > 15 {
				ok = false
			}
			if r == '#' && strings.Trim(name, "0123456789") == "" {
				ok = false
			}
			if ok {
				if start < i {
					out = append(out, segment{Kind: "text", Text: s[start:i]})
				}
				kind := "mention"
				if r == '#' {
					kind = "hashtag"
				}
				out = append(out, segment{Kind: kind, Text: s[i:j]})
				start, i, prev = j, j, 'x'
				continue
			}
		}
		prev = r
		i += size
	}
	if start < len(s) {
		out = append(out, segment{Kind: "text", Text: s[start:]})
	}
	return out
}

// until renders how long after now t is.
func until(now time.Time, stamp string) string {
	t, err := store.ParseTime(stamp)
	if err != nil {
		return stamp
	}
	d := t.Sub(now)
	if d <= 0 {
		return "expired"
	}
	return "in " + human(d)
}

func human(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// pretty indents JSON for a <pre>; anything else is returned as is.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}

func prettyAny(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// draftArgs is what the draft template receives.
type draftArgsT struct {
	// Back is the calendar page the draft's forms return to (its week).
	CSRF, Acct, Back string
	CanAct           bool
	D                draftView
}

var funcs = template.FuncMap{
	"draftArgs": func(csrf, acct, back string, can bool, d draftView) draftArgsT {
		return draftArgsT{csrf, acct, back, can, d}
	},
	"add": func(a, b int) int { return a + b },
	"sub": func(a, b int) int { return a - b },
}
