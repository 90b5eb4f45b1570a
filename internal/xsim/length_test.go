package xsim_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/xsim"
	"github.com/tuitbot/tuitbot/internal/xspec"
)

// TestLengthConformance holds the emulator's own counter against every
// weighted-length case of twitter-text's conformance file.
func TestLengthConformance(t *testing.T) {
	raw := xspec.File(t, filepath.Join("twitter-text", "validate.yml"))
	// Only the counter suites are decoded: the others have other shapes.
	var doc struct {
		Tests map[string]yaml.Node `yaml:"tests"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse validate.yml: %v", err)
	}
	for _, suite := range []struct {
		name  string
		emoji bool // the plain suite predates emoji parsing
	}{
		{"WeightedTweetsCounterTest", false},
		{"WeightedTweetsWithDiscountedEmojiCounterTest", true},
		{"UnicodeDirectionalMarkerCounterTest", true},
	} {
		node, ok := doc.Tests[suite.name]
		if !ok {
			t.Fatalf("validate.yml has no tests.%s", suite.name)
		}
		var cases []struct {
			Description string `yaml:"description"`
			Text        string `yaml:"text"`
			Expected    struct {
				WeightedLength *int `yaml:"weightedLength"`
			} `yaml:"expected"`
		}
		if err := node.Decode(&cases); err != nil {
			t.Fatalf("decode tests.%s: %v", suite.name, err)
		}
		if len(cases) == 0 {
			t.Fatalf("tests.%s is empty", suite.name)
		}
		t.Run(suite.name, func(t *testing.T) {
			for _, c := range cases {
				if c.Expected.WeightedLength == nil {
					t.Fatalf("%s: no weightedLength", c.Description)
				}
				if got := xsim.CountWeighted(c.Text, suite.emoji); got != *c.Expected.WeightedLength {
					t.Errorf("%s: weighted length %d, want %d (text %.80q)", c.Description, got, *c.Expected.WeightedLength, c.Text)
				}
			}
		})
	}
}

// TestLengthAgreesWithTheProduct compares the emulator's counter with the
// product's (internal/tweettext), two implementations sharing no code, on
// random posts built from the pieces where length rules bite: ASCII, accents
// in both normal forms, CJK, the light punctuation ranges, emoji with
// selectors, skin tones, joiners, flags and keycaps, and links with and
// without a scheme on the TLDs the emulator knows, next to look-alikes that
// are not links. Links stand between spaces, as in posts: how a link glued
// to arbitrary neighbours is cut is twitter-text's regular-expression
// backtracking, which the emulator's small counter does not reproduce.
// Joiners appear only inside real emoji sequences: how a joiner between two
// text-style symbols counts depends on twitter-text's emoji data, which
// both counters only approximate. A bare name on a country TLD
// ("example.jp") is left out too: twitter-text does not link it, the
// product does (TestBareCountryDomainIsNotALink pins the emulator's side).
func TestLengthAgreesWithTheProduct(t *testing.T) {
	links := []string{
		"https://example.com", "http://test.co", "https://www.twitter.com/jack", "HTTPS://Example.ORG/a/b?c=d",
		"https://go.dev/doc/", "http://example.co.uk/path_(x)", "(http://example.co.uk/path_(x))", "https://例え.jp/パス",
		"https://xn--r8jz45g.jp", "example.com", "www.example.org/x", "example.co", "sub.example.jp", "foo.co.jp",
		"go.to/x", "notalink.zzz", "https://nota.tldzz", "a.b", "http://", "https://example.com.", "example.com,",
		"https://a_b.example.com", "https://ex_ample.com", "https://-a.com", "https://example.com:8080/x",
	}
	pieces := []string{
		"a", "Z", "7", " ", " ", "\n", ".", ",", "!", "(", ")", "@", "#", "-", "_", "/", ":",
		"é", "e\u0301", "A\u030a", "ß", "ñ", "Ω", "ж", "ي", "א", "\u05e9\u05bc\u05c1",
		"漢", "字", "あ", "ア", "한", "，", "。",
		"\u2000", "\u200b", "\u2013", "\u2019", "\u201c", "\u2032", "\u2026", "\u2122", "\u00a9", "\u00ae",
		"😀", "🐱", "👍🏽", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "🇯🇵", "🇫🇷", "1\ufe0f\u20e3", "#\u20e3",
		"☺", "☺\ufe0f", "❤\ufe0f", "✈", "\u00a9\ufe0f", "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
	}
	for _, l := range links {
		pieces = append(pieces, " "+l+" ")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.IntN(24); n >= 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			if rng.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		text := b.String()
		if got, want := xsim.CountWeighted(text, true), tweettext.WeightedLength(text); got != want {
			t.Fatalf("emulator counts %d, product counts %d for %q", got, want, text)
		}
	}
}
