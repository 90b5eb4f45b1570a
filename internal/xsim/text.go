package xsim

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenSpan is a word of a post with its position in code points, which is
// how X reports entity offsets.
type tokenSpan struct {
	text       string // as written
	start, end int
}

// splitWords splits text at whitespace, keeping positions.
func splitWords(text string) []tokenSpan {
	var out []tokenSpan
	pos, start := 0, -1
	var b strings.Builder
	for _, r := range text {
		if unicode.IsSpace(r) {
			if start >= 0 {
				out = append(out, tokenSpan{text: b.String(), start: start, end: pos})
				b.Reset()
				start = -1
			}
		} else {
			if start < 0 {
				start = pos
			}
			b.WriteRune(r)
		}
		pos++
	}
	if start >= 0 {
		out = append(out, tokenSpan{text: b.String(), start: start, end: pos})
	}
	return out
}

func isURLWord(w string) bool {
	lw := strings.ToLower(w)
	return strings.HasPrefix(lw, "http://") || strings.HasPrefix(lw, "https://")
}

// trimEntity strips trailing punctuation that is not part of a handle or tag.
func trimEntity(w string) string {
	return strings.TrimRightFunc(w, func(r rune) bool {
		return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
	})
}

// mentionsOf returns the @handles in text (without the @).
func mentionsOf(text string) []string {
	var out []string
	for _, w := range splitWords(text) {
		t := strings.TrimLeft(w.text, "(\"'.")
		if len(t) > 1 && t[0] == '@' {
			if name := trimEntity(t[1:]); validUsername(name) {
				out = append(out, name)
			}
		}
	}
	return out
}

func hasLink(text string) bool {
	for _, w := range splitWords(text) {
		if isURLWord(w.text) {
			return true
		}
	}
	return false
}

// entitiesOf builds the entities object (mentions, hashtags, urls).
func entitiesOf(text string) map[string]any {
	var mentions, tags, urls []map[string]any
	for _, w := range splitWords(text) {
		lead := len([]rune(w.text)) - len([]rune(strings.TrimLeft(w.text, "(\"'.")))
		t := w.text[len(w.text)-len(strings.TrimLeft(w.text, "(\"'.")):]
		start := w.start + lead
		switch {
		case isURLWord(t):
			u := strings.TrimRight(t, ".,;:!?)\"'")
			n := utf8.RuneCountInString(u)
			urls = append(urls, map[string]any{"start": start, "end": start + n, "url": u, "expanded_url": u, "display_url": displayURL(u)})
		case len(t) > 1 && t[0] == '@':
			if name := trimEntity(t[1:]); validUsername(name) {
				mentions = append(mentions, map[string]any{"start": start, "end": start + 1 + utf8.RuneCountInString(name), "username": name})
			}
		case len(t) > 1 && t[0] == '#':
			if tag := trimEntity(t[1:]); tag != "" {
				tags = append(tags, map[string]any{"start": start, "end": start + 1 + utf8.RuneCountInString(tag), "tag": tag})
			}
		}
	}
	m := map[string]any{}
	if len(mentions) > 0 {
		m["mentions"] = mentions
	}
	if len(tags) > 0 {
		m["hashtags"] = tags
	}
	if len(urls) > 0 {
		m["urls"] = urls
	}
	return m
}

func displayURL(u string) string {
	d := u
	if i := strings.Index(d, "://"); i >= 0 {
		d = d[i+3:]
	}
	if utf8.RuneCountInString(d) > 26 {
		d = string([]rune(d)[:25]) + "…"
	}
	return d
}

// wordsOf lower-cases text into matchable tokens: words keep a leading # or
// @ and lose surrounding punctuation. With expand, a hashtag also yields
// its bare word so the keyword "golang" finds "#golang".
func wordsOf(text string, expand bool) []string {
	var out []string
	for _, w := range splitWords(strings.ToLower(text)) {
		if isURLWord(w.text) {
			out = append(out, strings.TrimRight(w.text, ".,;:!?)\"'"))
			continue
		}
		for _, part := range strings.FieldsFunc(w.text, func(r rune) bool {
			return !(r == '_' || r == '#' || r == '@' || r == '$' || r == '\'' || unicode.IsLetter(r) || unicode.IsDigit(r))
		}) {
			part = strings.Trim(part, "'")
			if part == "" {
				continue
			}
			out = append(out, part)
			if expand && (part[0] == '#' || part[0] == '$') && len(part) > 1 {
				out = append(out, part[1:])
			}
		}
	}
	return out
}
