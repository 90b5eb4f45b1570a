package tweettext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const ellipsis = "…"

// TruncateRunes returns the first maxRunes code points of s (all of s when
// it is shorter). Invalid UTF-8 is replaced by U+FFFD first, so the result
// is always valid UTF-8.
func TruncateRunes(s string, maxRunes int) string {
	if maxRunes <= 0 {
		return ""
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	n := 0
	for i := range s {
		if n == maxRunes {
			return s[:i]
		}
		n++
	}
	return s
}

// TruncateBytes returns s cut to at most maxBytes bytes on a code point
// boundary. When it cuts it appends "…" (3 bytes), which counts towards
// maxBytes; below 3 bytes there is no room for it and the cut stands
// alone. Invalid UTF-8 is replaced by U+FFFD first.
func TruncateBytes(s string, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxBytes {
		return s
	}
	if maxBytes < len(ellipsis) {
		return cutAtRuneStart(s, maxBytes)
	}
	return cutAtRuneStart(s, maxBytes-len(ellipsis)) + ellipsis
}

// cutAtRuneStart returns the longest prefix of s no longer than n bytes that
// ends on a code point boundary.
func cutAtRuneStart(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// FitWeighted returns text trimmed so that its weighted length is at most
// max. Text that already fits comes back unchanged. Otherwise the result
// is a prefix of the NFC form of text, cut at the last sentence end (". ",
// "! ", "? " or a line break) that fits, else at the last space that fits,
// else after the last whole character that fits; links and emoji
// sequences are never split, nor is a character from its combining marks.
// Trailing white space is dropped. max <= 0 gives "".
func FitWeighted(text string, max int) string {
	if max <= 0 {
		return ""
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	a := analyse(text, true)
	budget := max * scale
	total := 0
	for _, u := range a.units {
		total += u.weight
	}
	if total <= budget {
		return text
	}
	rs := a.rs
	n := len(rs)
	boundary := make([]bool, n+1)
	boundary[n] = true
	limit, sum := 0, 0
	for _, u := range a.units {
		boundary[u.start] = true
		if sum+u.weight <= budget && limit == u.start {
			sum += u.weight
			limit = u.end
		}
	}
	byteOff := make([]int, n+1)
	for i, r := range rs {
		byteOff[i+1] = byteOff[i] + utf8.RuneLen(r)
	}
	firstVisible := n
	for i, r := range rs {
		if !unicode.IsSpace(r) {
			firstVisible = i
			break
		}
	}
	for limit > 0 {
		cut := chooseCut(rs, limit, boundary, firstVisible)
		if cut <= firstVisible {
			return ""
		}
		out := strings.TrimRightFunc(a.text[:byteOff[cut]], unicode.IsSpace)
		// Cutting can change how a link at the end is read; verify.
		if WeightedLength(out) <= max {
			return out
		}
		limit--
		for limit > 0 && !boundary[limit] {
			limit--
		}
	}
	return ""
}

// chooseCut picks where to cut rs, at or before limit (a unit boundary).
func chooseCut(rs []rune, limit int, boundary []bool, firstVisible int) int {
	// The last sentence end or line break.
	for c := limit; c > firstVisible; c-- {
		if !boundary[c] {
			continue
		}
		if rs[c] == '\n' {
			return c
		}
		if strings.ContainsRune(".!?", rs[c-1]) && unicode.IsSpace(rs[c]) {
			return c
		}
	}
	// The last space.
	for c := limit; c > firstVisible; c-- {
		if boundary[c] && unicode.IsSpace(rs[c]) {
			return c
		}
	}
	// The last whole character.
	c := limit
	for c > 0 && (!boundary[c] || (c < len(rs) && isExtender(rs[c])) || rs[c-1] == zwj) {
		c--
	}
	return c
}

// isExtender reports code points that belong to the character before them:
// combining marks, joiners, variation selectors, skin-tone modifiers, tags
// and the keycap mark.
func isExtender(r rune) bool {
	switch {
	case unicode.IsMark(r), r == zwj, r == zwnj, r >= 0xFE00 && r <= 0xFE0F,
		r >= 0xE0100 && r <= 0xE01EF, isModifier(r), isTagChar(r), r == tagCancel:
		return true
	}
	return false
}
