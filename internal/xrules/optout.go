package xrules

import (
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// RuleOptOut: "If a user says 'stop', stop". A user who writes an opt-out
// phrase to the account gets no automated reply, @mention or DM from it
// again until a person clears them.
const RuleOptOut = "stop_means_stop"

// DefaultOptOutPhrases are the phrases that opt a user out when
// x_api.opt_out_phrases is not set.
var DefaultOptOutPhrases = []string{"stop", "unsubscribe", "opt out", "opt-out", "optout", "leave me alone", "go away", "do not contact me", "don't contact me"}

// foldText brings text to one spelling per meaning: NFKC folds full-width
// and compatibility forms ("ｓｔｏｐ" is "stop"), case folding drops case,
// and every run of characters that are not letters or digits becomes a
// single space, so "Unsubscribe!" and "opt   out" match their phrases.
func foldText(s string) string {
	s = cases.Fold().String(norm.NFKC.String(s))
	var b strings.Builder
	space := true
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '\u2019' {
			if r == '\u2019' {
				r = '\''
			}
			b.WriteRune(r)
			space = false
			continue
		}
		if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

// SaysOptOut reports the first of phrases that text says as whole words
// ("please stop replying" says "stop", "stopwatch" does not), matched
// without regard to case or width. Phrases empty means
// DefaultOptOutPhrases.
func SaysOptOut(text string, phrases []string) (string, bool) {
	if len(phrases) == 0 {
		phrases = DefaultOptOutPhrases
	}
	words := " " + foldText(text) + " "
	for _, p := range phrases {
		f := foldText(p)
		if f == "" {
			continue
		}
		if strings.Contains(words, " "+f+" ") {
			return p, true
		}
	}
	return "", false
}
