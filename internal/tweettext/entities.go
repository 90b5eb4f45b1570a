package tweettext

import (
	"golang.org/x/text/unicode/norm"
)

// Links finds the links X would count (and shorten) in text. It returns
// text in NFC, the form X counts, and each link as a [start, end) range of
// byte offsets into that form, in order. A review page uses it to show a
// post's links exactly as the weighted count sees them.
func Links(text string) (nfc string, links [][2]int) {
	nfc = norm.NFC.String(text)
	rs := []rune(nfc)
	spans := extractURLs(rs)
	if len(spans) == 0 {
		return nfc, nil
	}
	// Rune index to byte offset, one pass.
	offs := make([]int, len(rs)+1)
	b := 0
	for i, r := range rs {
		offs[i] = b
		b += len(string(r))
	}
	offs[len(rs)] = b
	for _, s := range spans {
		end := min(s.start+max(s.n, 1), len(rs))
		links = append(links, [2]int{offs[s.start], offs[end]})
	}
	return nfc, links
}
