package content

import (
	"strings"
	"unicode"
)

// SimilarityThreshold is the word-set Jaccard similarity at or above which a
// reply counts as a repeat of an earlier one.
const SimilarityThreshold = 0.8

// RecentRepliesCompared is how many of ReplyInput.RecentReplies are checked.
const RecentRepliesCompared = 20

// Jaccard returns the Jaccard similarity of the word sets of a and b:
// |A∩B| / |A∪B|, from 0 (no word in common) to 1 (same words). Words are
// case-folded runs of letters and digits; each Han or kana character
// is a word of its own, since Chinese and Japanese do not separate words
// with spaces. Two texts without any word score 0.
func Jaccard(a, b string) float64 {
	wa, wb := wordSet(a), wordSet(b)
	if len(wa) == 0 && len(wb) == 0 {
		return 0
	}
	inter := 0
	for w := range wa {
		if wb[w] {
			inter++
		}
	}
	union := len(wa) + len(wb) - inter
	return float64(inter) / float64(union)
}

func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			set[cur.String()] = true
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case isIdeographic(r):
			flush()
			set[string(unicode.ToLower(r))] = true
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			cur.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '’':
			// "don't" and "dont" are the same word.
		default:
			flush()
		}
	}
	flush()
	return set
}

func isIdeographic(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// mostSimilar returns the highest Jaccard similarity of text to any of the
// first RecentRepliesCompared recent texts.
func mostSimilar(text string, recent []string) float64 {
	if len(recent) > RecentRepliesCompared {
		recent = recent[:RecentRepliesCompared]
	}
	best := 0.0
	for _, r := range recent {
		if s := Jaccard(text, r); s > best {
			best = s
		}
	}
	return best
}
