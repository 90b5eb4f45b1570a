// Package tweettext measures and trims post text the way X counts it:
// twitter-text v3 weighted length (NFC first, CJK and emoji weigh two, every
// link weighs 23, an emoji sequence weighs two however many code points it
// has), and rune-safe truncation for everything else the product shortens.
//
// Counting follows twitter-text's parseTweet and URL extractor rule for rule
// (the official conformance cases pass). Two tables are hand-maintained and
// may lag X: the TLDs a link may end in, and the emoji grammar, which
// follows UTS #51 sequences rather than a fixed list, so emoji newer than
// twitter-text's list also count as one.
package tweettext

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// MaxWeightedLength is the longest post X accepts, in weighted characters.
const MaxWeightedLength = 280

// MaxLongWeightedLength is the longest post X accepts from an account with
// a paid subscription. X does not document how it weighs such long posts;
// the twitter-text weighting of ordinary posts is applied to them too,
// which can only count a post as longer than X does, never shorter.
const MaxLongWeightedLength = 25000

// The v3 configuration of twitter-text. Weights are in hundredths of a
// character (scale 100).
const (
	scale                = 100
	defaultWeight        = 200
	transformedURLLength = 23
)

// charWeight returns the v3 weight of one code point: 100 inside the
// configured ranges (Latin and most alphabetic scripts, spaces and general
// punctuation), 200 everywhere else (CJK, emoji, symbols).
func charWeight(r rune) int {
	switch {
	case r >= 0 && r <= 4351,
		r >= 8192 && r <= 8205,
		r >= 8208 && r <= 8223,
		r >= 8242 && r <= 8247:
		return 100
	}
	return defaultWeight
}

// Result is the outcome of Parse. Ranges are inclusive and counted in
// UTF-16 code units of the text as given, the way X reports them.
type Result struct {
	// WeightedLength is what X counts against MaxWeightedLength.
	WeightedLength int
	// Valid is false for empty or blank text, text over the limit, text with
	// characters X refuses (U+FFFE, U+FEFF, U+FFFF) and invalid UTF-8.
	Valid bool
	// Permillage is WeightedLength as thousandths of the limit (1000 = full).
	Permillage int
	// ValidRange is the part of the text that fits the limit.
	ValidRange [2]int
	// DisplayRange is the whole text.
	DisplayRange [2]int
}

// unit is one counted piece of normalised text: a URL, an emoji sequence or
// a single code point, as rune indices [start, end).
type unit struct {
	start, end int
	weight     int // in 1/scale characters
}

// analysis is text after NFC, cut into counted units.
type analysis struct {
	text  string // NFC form, valid UTF-8
	rs    []rune
	units []unit
}

func analyse(text string, emoji bool) analysis {
	nf := norm.NFC.String(text)
	rs := []rune(nf)
	urls := extractURLs(rs)
	var emojis [][2]int
	if emoji {
		emojis = emojiSpans(rs)
	}
	units := make([]unit, 0, len(rs))
	ui, ei := 0, 0
	for i := 0; i < len(rs); {
		for ui < len(urls) && urls[ui].start < i {
			ui++
		}
		for ei < len(emojis) && emojis[ei][0] < i {
			ei++
		}
		switch {
		case ui < len(urls) && urls[ui].start == i:
			end := min(i+max(urls[ui].n, 1), len(rs))
			units = append(units, unit{start: i, end: end, weight: transformedURLLength * scale})
			i = end
		case ei < len(emojis) && emojis[ei][0] == i:
			units = append(units, unit{start: i, end: emojis[ei][1], weight: defaultWeight})
			i = emojis[ei][1]
		default:
			units = append(units, unit{start: i, end: i + 1, weight: charWeight(rs[i])})
			i++
		}
	}
	return analysis{text: nf, rs: rs, units: units}
}

// Parse measures text as X does and says whether X would accept it.
func Parse(text string) Result {
	return parse(text, true, MaxWeightedLength)
}

// ParseWithin is Parse against a limit of limit weighted characters, for
// accounts whose posts may be longer (MaxLongWeightedLength).
func ParseWithin(text string, limit int) Result {
	return parse(text, true, limit)
}

// WeightedLength returns the twitter-text v3 weighted length of text.
func WeightedLength(text string) int {
	return parse(text, true, MaxWeightedLength).WeightedLength
}

// parse implements Parse; emoji=false gives the pre-emoji (v2) counting,
// which the conformance suite also covers.
func parse(text string, emoji bool, limit int) Result {
	validUTF8 := utf8.ValidString(text)
	if !validUTF8 {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	a := analyse(text, emoji)
	budget := limit * scale
	total, pos16, validEnd := 0, 0, 0
	clean := true
	for _, u := range a.units {
		total += u.weight
		for _, r := range a.rs[u.start:u.end] {
			pos16 += utf16.RuneLen(r)
		}
		// Like the reference, only the last character of a unit is checked;
		// URLs and emoji cannot end in a refused character anyway.
		if clean && isInvalidRune(a.rs[u.end-1]) {
			clean = false
		}
		if clean && total <= budget {
			validEnd = pos16 - 1
		}
	}
	origLen16 := 0
	for _, r := range text {
		origLen16 += utf16.RuneLen(r)
	}
	// Normalisation may change the length; the reference shifts the valid
	// end by the difference so it indexes the text as given.
	validEnd += origLen16 - pos16
	// A heavy expansion early in the text can push that below zero, which
	// is no index at all.
	validEnd = max(validEnd, 0)
	wl := total / scale
	return Result{
		WeightedLength: wl,
		Valid:          validUTF8 && clean && wl > 0 && wl <= limit && !isBlank(a.rs),
		Permillage:     int(math.Floor(float64(wl) / float64(limit) * 1000)),
		ValidRange:     [2]int{0, validEnd},
		DisplayRange:   [2]int{0, max(origLen16-1, 0)},
	}
}

// isBlank reports text with nothing visible: only white space and format
// characters (zero-width spaces, joiners, direction marks).
func isBlank(rs []rune) bool {
	for _, r := range rs {
		if !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// Check validates text as the body of one post and returns an *apperr.Error
// naming field: invalid_input for invalid UTF-8, blank text or a refused
// character, tweet_too_long (with weighted_length and max_weighted_length)
// when it is over the limit. It returns nil when X would accept the text.
func Check(field, text string) error {
	if !utf8.ValidString(text) {
		return apperr.New(apperr.InvalidInput, "%s is not valid UTF-8", field)
	}
	for i, r := range text {
		if isInvalidRune(r) {
			return apperr.New(apperr.InvalidInput,
				"%s contains U+%04X at byte %d, a character X does not accept", field, r, i)
		}
	}
	res := Parse(text)
	if isBlank([]rune(text)) {
		return apperr.New(apperr.InvalidInput, "%s must not be empty or blank", field)
	}
	if res.WeightedLength > MaxWeightedLength {
		return apperr.New(apperr.TweetTooLong, "%s is %d weighted characters; the limit is %d",
			field, res.WeightedLength, MaxWeightedLength).
			With("weighted_length", res.WeightedLength).
			With("max_weighted_length", MaxWeightedLength)
	}
	return nil
}
