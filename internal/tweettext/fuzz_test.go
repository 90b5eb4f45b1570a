package tweettext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func fuzzSeeds() []string {
	return []string{
		"", "hello", "https://example.com/a?b=c", "www.example.com/x.", "日本語😀",
		"👨\u200D👩\u200D👧\u200D👦", "🏳️\u200D🌈🇯🇵1️⃣", "cafe\u0301 \uFB2C", "a\uFFFEb",
		"(http://a.co/b_(c)) t.co/x", "xn--fsqu00a.xn--0zwm56d", "\u202Ahttp://foo.پاکستان/\u202C",
		"One. Two! Three? Four\nfive", "\xff\xfe\xc3", strings.Repeat("a.", 40) + "com",
	}
}

func FuzzWeightedLength(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r := Parse(text)
		if r.WeightedLength < 0 {
			t.Fatalf("negative length %d", r.WeightedLength)
		}
		if got := WeightedLength(text); got != r.WeightedLength {
			t.Fatalf("WeightedLength %d != Parse %d", got, r.WeightedLength)
		}
		if r.Valid && (r.WeightedLength < 1 || r.WeightedLength > MaxWeightedLength || !utf8.ValidString(text)) {
			t.Fatalf("valid result %+v for %q", r, text)
		}
		if r.ValidRange[0] != 0 || r.ValidRange[1] < 0 || r.DisplayRange[0] != 0 || r.DisplayRange[1] < 0 {
			t.Fatalf("bad ranges %+v", r)
		}
		if utf8.ValidString(text) {
			if n := WeightedLength(norm.NFC.String(text)); n != r.WeightedLength {
				t.Fatalf("NFC form weighs %d, text %d", n, r.WeightedLength)
			}
		}
		if fit := FitWeighted(text, MaxWeightedLength); WeightedLength(fit) > MaxWeightedLength {
			t.Fatalf("FitWeighted result over the limit")
		}
	})
}

func FuzzFitWeighted(f *testing.F) {
	for i, s := range fuzzSeeds() {
		f.Add(s, i*5)
	}
	f.Fuzz(func(t *testing.T, text string, limit int) {
		limit %= 400
		got := FitWeighted(text, limit)
		if !utf8.ValidString(got) {
			t.Fatalf("FitWeighted(%q, %d) = %q is not valid UTF-8", text, limit, got)
		}
		if wl := WeightedLength(got); wl > max(limit, 0) {
			t.Fatalf("FitWeighted(%q, %d) = %q weighs %d", text, limit, got, wl)
		}
		clean := strings.ToValidUTF8(text, "\uFFFD")
		if limit > 0 && WeightedLength(clean) <= limit {
			if got != clean {
				t.Fatalf("FitWeighted changed text that fits: %q -> %q", text, got)
			}
		} else if !strings.HasPrefix(norm.NFC.String(clean), got) {
			t.Fatalf("FitWeighted(%q, %d) = %q is not a prefix of the NFC text", text, limit, got)
		}
		if b := TruncateBytes(text, limit); !utf8.ValidString(b) || len(b) > max(limit, 0) {
			t.Fatalf("TruncateBytes(%q, %d) = %q", text, limit, b)
		}
	})
}

func FuzzTruncate(f *testing.F) {
	for i, s := range fuzzSeeds() {
		f.Add(s, i)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		b := TruncateBytes(s, n)
		if !utf8.ValidString(b) || len(b) > max(n, 0) {
			t.Fatalf("TruncateBytes(%q, %d) = %q", s, n, b)
		}
		if utf8.ValidString(s) && len(s) <= n && b != s {
			t.Fatalf("TruncateBytes cut %q that fits %d bytes", s, n)
		}
		r := TruncateRunes(s, n)
		if !utf8.ValidString(r) || utf8.RuneCountInString(r) > max(n, 0) {
			t.Fatalf("TruncateRunes(%q, %d) = %q", s, n, r)
		}
		if !strings.HasPrefix(strings.ToValidUTF8(s, "\uFFFD"), r) {
			t.Fatalf("TruncateRunes(%q, %d) = %q is not a prefix", s, n, r)
		}
	})
}
