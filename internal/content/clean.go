package content

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Models wrap answers in things nobody wants to post: a "Here's a tweet:"
// preamble, code fences, quotes around the whole text and a tail of
// hashtags. The functions here remove them and split multi-part answers.

// cleanPatterns are the patterns below, compiled on first use: only the
// content workflows need them, and a process that runs none (an MCP
// session that never drafts) keeps none.
type cleanPatterns struct {
	preamble, label, fence *regexp.Regexp
	// separator matches a line that only separates two parts.
	separator *regexp.Regexp
	// markerStyles are the numbering styles models use to mark thread
	// parts, most specific first. Each captures the part number in group
	// 1 and, for "n/m", the total in group 2.
	markerStyles []*regexp.Regexp
	// trailingMarker matches a " 3/8" or " (3/8)" counter at the end of a
	// part.
	trailingMarker     *regexp.Regexp
	bullet, topicLabel *regexp.Regexp
}

var patterns = sync.OnceValue(func() *cleanPatterns {
	return &cleanPatterns{
		preamble:  regexp.MustCompile(`(?i)^(?:here(?:'s| is| are)|sure|okay|ok|certainly|absolutely)\b[^\n]*:\s*$`),
		label:     regexp.MustCompile(`(?i)^\s*(?:\*\*)?(?:tweet|reply|post|draft|answer)(?:\s*\d{1,2})?(?:\*\*)?\s*:\s*(?:\*\*)?\s*`),
		fence:     regexp.MustCompile("(?m)^\\s*```[a-zA-Z]*\\s*$"),
		separator: regexp.MustCompile(`^\s*(?:-{3,}|\*{3,}|_{3,}|={3,}|—{1,})\s*$`),
		markerStyles: []*regexp.Regexp{
			regexp.MustCompile(`(?i)^\s*(?:\*\*)?\s*(?:tweet|post|part)\s*#?\s*(\d{1,2})\s*(?:/\s*\d{1,2})?\s*(?:\*\*)?\s*[:.)\-–—]?\s*(?:\*\*)?\s*`),
			regexp.MustCompile(`^\s*(?:\*\*)?\(?(\d{1,2})\s*/\s*(\d{1,2})\)?(?:\*\*)?[:.]?\s+`),
			regexp.MustCompile(`^\s*(?:\*\*)?(\d{1,2})\s*/(?:\*\*)?\s+`),
			regexp.MustCompile(`^\s*(?:\*\*)?\((\d{1,2})\)(?:\*\*)?\s+`),
			regexp.MustCompile(`^\s*(?:\*\*)?(\d{1,2})\)(?:\*\*)?\s+`),
			regexp.MustCompile(`^\s*(?:\*\*)?(\d{1,2})\.(?:\*\*)?\s+`),
		},
		trailingMarker: regexp.MustCompile(`\s*\(?(\d{1,2})\s*/\s*\d{1,2}\)?\s*$`),
		bullet:         regexp.MustCompile(`^\s*(?:[-*•·–—]+|\(?\d{1,2}[.)]|#{1,6})\s*`),
		topicLabel:     regexp.MustCompile(`(?i)^(?:topic|idea)\s*\d*\s*:\s*`),
	}
})

// quotePairs are the quote marks models wrap whole answers in.
var quotePairs = [][2]string{
	{`"`, `"`}, {"“", "”"}, {"'", "'"}, {"‘", "’"}, {"«", "»"}, {"„", "“"}, {"`", "`"}, {"「", "」"},
}

// cleanText turns one model answer into post text.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = patterns().fence.ReplaceAllString(s, "")
	s = strings.TrimSpace(s)
	if first, rest, ok := strings.Cut(s, "\n"); ok && patterns().preamble.MatchString(first) {
		s = strings.TrimSpace(rest)
	}
	s = patterns().label.ReplaceAllString(s, "")
	s = unwrapQuotes(s)
	s = stripHashtags(s)
	s = unwrapQuotes(s)
	return strings.TrimSpace(s)
}

// unwrapQuotes removes quote marks around the whole text, repeatedly, but
// only when the same mark does not also occur inside (then the quotes are
// part of the content: `"Ship it" is my motto, "always"`).
func unwrapQuotes(s string) string {
	for {
		s = strings.TrimSpace(s)
		changed := false
		for _, q := range quotePairs {
			if len(s) < len(q[0])+len(q[1]) || !strings.HasPrefix(s, q[0]) || !strings.HasSuffix(s, q[1]) {
				continue
			}
			inner := s[len(q[0]) : len(s)-len(q[1])]
			if strings.Contains(inner, q[0]) || strings.Contains(inner, q[1]) {
				continue
			}
			s = inner
			changed = true
			break
		}
		if !changed {
			return s
		}
	}
}

// hashtagAt reports whether s[i] ('#' or '＃') starts a hashtag, and where
// it ends. A hashtag follows a space, an opening bracket or quote, or the
// start, and contains a letter or underscore.
func hashtagAt(s string, i int) (end int, ok bool) {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r != '#' && r != '＃' {
		return 0, false
	}
	if i > 0 {
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(prev) && !strings.ContainsRune("([{\"'“‘", prev) {
			return 0, false
		}
	}
	j := i + size
	letter := false
	for j < len(s) {
		r, sz := utf8.DecodeRuneInString(s[j:])
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_') {
			break
		}
		if unicode.IsLetter(r) || r == '_' {
			letter = true
		}
		j += sz
	}
	// "#1" is a rank, not a hashtag.
	return j, letter
}

// stripHashtags drops a trailing run of hashtags (the "#AI #growth" tail)
// and turns inline hashtags into plain words.
func stripHashtags(s string) string {
	lines := strings.Split(s, "\n")
	// Trailing lines made only of hashtags go entirely.
	for len(lines) > 0 {
		last := strings.TrimSpace(lines[len(lines)-1])
		if last == "" || onlyHashtags(last) {
			lines = lines[:len(lines)-1]
			continue
		}
		break
	}
	if len(lines) == 0 {
		return ""
	}
	// Trailing hashtags at the end of the last line go too.
	last := lines[len(lines)-1]
	for {
		t := strings.TrimRightFunc(last, unicode.IsSpace)
		i := strings.LastIndexFunc(t, unicode.IsSpace) + 1
		word := t[i:]
		if word == "" || !onlyHashtags(word) || i == 0 {
			last = t
			break
		}
		last = t[:i]
	}
	lines[len(lines)-1] = last
	s = strings.Join(lines, "\n")

	var b strings.Builder
	for i := 0; i < len(s); {
		if end, ok := hashtagAt(s, i); ok {
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i+size : end])
			i = end
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func onlyHashtags(s string) bool {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return false
	}
	for _, f := range fields {
		f = strings.TrimRight(f, ".,!;")
		end, ok := hashtagAt(f, 0)
		if !ok || end != len(f) {
			return false
		}
	}
	return true
}

// marker reads a numbering marker of one style at the start of s: the
// part number and where the marker ends. An "n/m" marker with m < n is not
// a counter (it is more likely "2/ 1. first item").
func marker(re *regexp.Regexp, s string) (n, end int, ok bool) {
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return 0, 0, false
	}
	n, _ = strconv.Atoi(s[m[2]:m[3]])
	if len(m) >= 6 && m[4] >= 0 {
		if total, _ := strconv.Atoi(s[m[4]:m[5]]); total < n {
			return 0, 0, false
		}
	}
	return n, m[1], true
}

// parseThread splits a model answer into thread parts. It understands
// separator lines ("---"), numbered parts in the usual styles ("1/",
// "1/8", "Tweet 1:", "(1)", "1.", "1)") and, failing both, blank-line
// separated paragraphs. Numbering and per-part wrapping are removed.
func parseThread(s string) []string {
	s = strings.ToValidUTF8(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = patterns().fence.ReplaceAllString(s, "")
	s = strings.TrimSpace(s)
	if first, rest, ok := strings.Cut(s, "\n"); ok && patterns().preamble.MatchString(first) {
		s = rest
	}
	lines := strings.Split(s, "\n")

	var parts []string
	switch {
	case hasSeparator(lines):
		parts = splitOnSeparators(lines)
	default:
		if p, ok := splitOnMarkers(lines); ok {
			parts = p
		} else {
			parts = splitOnBlankLines(lines)
		}
	}

	out := make([]string, 0, len(parts))
	for _, p := range parts {
		p = stripMarkers(strings.TrimSpace(p), len(out)+1)
		p = cleanText(p)
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func hasSeparator(lines []string) bool {
	for _, l := range lines {
		if patterns().separator.MatchString(l) {
			return true
		}
	}
	return false
}

func splitOnSeparators(lines []string) []string {
	var parts []string
	var cur []string
	for _, l := range lines {
		if patterns().separator.MatchString(l) {
			parts = append(parts, strings.Join(cur, "\n"))
			cur = cur[:0]
			continue
		}
		cur = append(cur, l)
	}
	return append(parts, strings.Join(cur, "\n"))
}

// splitOnMarkers splits where lines start with the numbers 1, 2, 3... in one
// numbering style. A style counts only when at least two parts follow each
// other in order, so a list inside one part is not mistaken for the thread.
func splitOnMarkers(lines []string) ([]string, bool) {
	for _, re := range patterns().markerStyles {
		var starts []int
		next := 1
		for i, l := range lines {
			if n, _, ok := marker(re, l); ok && n == next {
				starts = append(starts, i)
				next++
			}
		}
		if len(starts) < 2 {
			continue
		}
		parts := make([]string, 0, len(starts))
		for k, st := range starts {
			end := len(lines)
			if k+1 < len(starts) {
				end = starts[k+1]
			}
			parts = append(parts, strings.Join(lines[st:end], "\n"))
		}
		// Text before the first marker is a preamble or a title; keep it
		// only if it is substantial.
		if pre := strings.TrimSpace(strings.Join(lines[:starts[0]], "\n")); utf8.RuneCountInString(pre) > 40 {
			parts = append([]string{pre}, parts...)
		}
		return parts, true
	}
	return nil, false
}

func splitOnBlankLines(lines []string) []string {
	var parts []string
	var cur []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				parts = append(parts, strings.Join(cur, "\n"))
				cur = nil
			}
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		parts = append(parts, strings.Join(cur, "\n"))
	}
	return parts
}

// stripMarkers removes numbering from the start and the end of part number
// pos. A leading number is removed only when it is the part's own position,
// so a part that opens a list ("1. Measure first") keeps it.
func stripMarkers(p string, pos int) string {
	for _, re := range patterns().markerStyles {
		n, end, ok := marker(re, p)
		if !ok {
			continue
		}
		if n == pos && end < len(p) {
			p = p[end:]
		}
		break
	}
	if m := patterns().trailingMarker.FindStringSubmatchIndex(p); m != nil && m[0] > 0 {
		if n, _ := strconv.Atoi(p[m[2]:m[3]]); n == pos {
			p = p[:m[0]]
		}
	}
	return strings.TrimSpace(p)
}

// maxTopicRunes bounds one suggested topic; longer lines are explanations,
// not topics.
const maxTopicRunes = 120

// parseTopics reads one topic per line from a model answer, dropping
// bullets, numbering, labels, quotes, headings and duplicates.
func parseTopics(s string) []string {
	s = strings.ToValidUTF8(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = patterns().fence.ReplaceAllString(s, "")
	seen := map[string]bool{}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasSuffix(l, ":") {
			continue
		}
		l = patterns().bullet.ReplaceAllString(l, "")
		l = strings.Trim(l, "* ")
		l = patterns().topicLabel.ReplaceAllString(l, "")
		// "Topic — why it works": keep the topic.
		for _, sep := range []string{" — ", " – ", " - ", ": "} {
			if head, _, ok := strings.Cut(l, sep); ok && head != "" {
				l = head
				break
			}
		}
		l = unwrapQuotes(strings.TrimRight(strings.TrimSpace(l), ".;,"))
		l = strings.Trim(l, "* ")
		if l == "" || utf8.RuneCountInString(l) > maxTopicRunes {
			continue
		}
		k := strings.ToLower(l)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, l)
	}
	return out
}
