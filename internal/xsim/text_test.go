package xsim

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWeightedLength(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello", 5},
		{"漢字", 4},
		{"go https://example.com/a/very/long/path/indeed ok", 3 + 23 + 3},
		{"😀", 2},
		{strings.Repeat("a", 280), 280},
	}
	for _, tc := range cases {
		if got := weightedLength(tc.text); got != tc.want {
			t.Errorf("weightedLength(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// TestBareCountryDomainIsNotALink: without a scheme, twitter-text links a
// name on a country TLD only with a subdomain or a path, except .co and .tv
// (its invalidShortDomain rule).
func TestBareCountryDomainIsNotALink(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"example.jp", 10},
		{"example.co", 23},
		{"example.tv", 23},
		{"sub.example.jp", 23},
		{"example.jp/x", 23},
		{"https://example.jp", 23},
		{"example.com", 23},
	} {
		if got := weightedLength(tc.text); got != tc.want {
			t.Errorf("weightedLength(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestEntities(t *testing.T) {
	e := entitiesOf("Hi @gopher_gabe, see #golang tips at https://example.com/x. (@ana)")
	m := e["mentions"].([]map[string]any)
	if len(m) != 2 || m[0]["username"] != "gopher_gabe" || m[0]["start"] != 3 || m[0]["end"] != 15 || m[1]["username"] != "ana" {
		t.Fatalf("mentions = %v", m)
	}
	h := e["hashtags"].([]map[string]any)
	if h[0]["tag"] != "golang" || h[0]["start"] != 21 || h[0]["end"] != 28 {
		t.Fatalf("hashtags = %v", h)
	}
	u := e["urls"].([]map[string]any)
	if u[0]["url"] != "https://example.com/x" {
		t.Fatalf("urls = %v", u)
	}
	if got := mentionsOf("@a @b_c! not@this"); strings.Join(got, ",") != "a,b_c" {
		t.Fatalf("mentionsOf = %v", got)
	}
}

func FuzzTweetText(f *testing.F) {
	for _, s := range []string{"", "hello @x #y https://z.w", "漢字 @ # https://", "(\"'.@a", "\xff\xfe @\xff", "..#.. @@@ ##", "http://a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n := utf8.RuneCountInString(text)
		if wl := weightedLength(text); wl < 0 || wl > 23*n+2*n {
			t.Fatalf("weightedLength = %d for %d runes", wl, n)
		}
		for kind, list := range entitiesOf(text) {
			for _, ent := range list.([]map[string]any) {
				s, e := ent["start"].(int), ent["end"].(int)
				if s < 0 || e <= s || e > n {
					t.Fatalf("%s entity [%d,%d) outside %d runes", kind, s, e, n)
				}
			}
		}
		for _, m := range mentionsOf(text) {
			if !validUsername(m) {
				t.Fatalf("invalid mention %q", m)
			}
		}
		for _, w := range wordsOf(text, true) {
			if w == "" {
				t.Fatal("empty word")
			}
		}
		_ = hasLink(text)
		_ = guessLang(text)
	})
}

func FuzzPageToken(f *testing.F) {
	f.Add("0000000000000000")
	f.Add(encodePageToken(12345))
	f.Add("zz")
	f.Fuzz(func(t *testing.T, tok string) {
		v, ok := decodePageToken(tok)
		if !ok {
			return
		}
		if again := encodePageToken(v); !strings.EqualFold(again, tok) {
			t.Fatalf("token %q decodes to %d which encodes to %q", tok, v, again)
		}
	})
}
