package tweettext

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func TestWeightedLength(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
	}{
		{"empty", "", 0},
		{"ascii", "Hello, world!", 13},
		{"latin accents weigh one", "café naïve", 10},
		{"cyrillic weighs one", "Привет", 6},
		{"cjk weighs two", "你好世界", 8},
		{"hiragana weighs two", "こんにちは", 10},
		{"hangul weighs two", "안녕", 4},
		{"mixed latin and cjk", "Go语言", 6},
		{"general punctuation range weighs one", "\u2013\u2014\u2019\u201C\u201D", 5},
		{"ellipsis outside the ranges weighs two", "…", 2},
		{"hyphen inside the ranges weighs one", "\u2010", 1},
		{"bullet just past the ranges weighs two", "\u2022", 2},
		{"single emoji", "😀", 2},
		{"emoji with presentation selector", "❤️", 2},
		{"text-presentation selector is not an emoji", "☺\uFE0E", 4},
		{"skin tone modifier", "👍🏽", 2},
		{"zwj family", "👨\u200D👩\u200D👧\u200D👦", 2},
		{"zwj profession with skin tone", "🧑🏽\u200D💻", 2},
		{"rainbow flag", "🏳️\u200D🌈", 2},
		{"flag pair", "🇯🇵", 2},
		{"two flags", "🇯🇵🇺🇸", 4},
		{"keycap with selector", "1️⃣", 2},
		{"keycap without selector", "#⃣", 2},
		{"tag sequence flag", "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", 2},
		{"copyright sign alone is text", "©", 1},
		{"copyright sign with selector is emoji", "©️", 2},
		{"trailing joiner is counted on its own", "👍\u200D", 3},
		{"http url", "http://example.com", 23},
		{"https url with path and query", "https://example.com/a/b?c=d&e=f", 23},
		{"long url still 23", "https://example.com/" + strings.Repeat("a", 200), 23},
		{"short url counts 23", "http://t.co", 23},
		{"url in text", "read https://go.dev/doc today", 34},
		{"url trailing period stays outside", "see https://example.com/foo.", 28},
		{"wikipedia parens", "(https://en.wikipedia.org/wiki/Primer_(film))", 25},
		{"protocol-less gTLD", "example.com", 23},
		{"protocol-less with subdomain and path", "www.example.com/about", 23},
		{"protocol-less ccTLD", "foo.co.jp", 23},
		{"unknown TLD is not a url", "foo.notatld", 11},
		{"tld followed by letter is not a url", "foo.comx", 8},
		{"email address is not a url", "mail@example.com", 16},
		{"cashtag-like is not a url", "$example.com", 12},
		{"protocol url with unicode tld", "https://twitter.香港", 23},
		{"t.co keeps only the slug", "http://t.co/abc/def", 27},
		{"port is part of the url", "http://example.com:8080/x", 23},
		{"uppercase protocol", "HTTPS://WWW.EXAMPLE.COM", 23},
		{"label over 63 characters is not a host", strings.Repeat("a", 64) + ".com", 68},
		{"label of 63 characters is a host", strings.Repeat("a", 63) + ".com", 23},
		{"two urls", "a.com b.com", 47},
		{"invalid char still weighs", "A\uFFFE", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WeightedLength(tt.text); got != tt.want {
				t.Errorf("WeightedLength(%q) = %d, want %d", tt.text, got, tt.want)
			}
		})
	}
}

func TestWeightedLengthNFC(t *testing.T) {
	tests := []struct {
		name, composed, decomposed string
	}{
		{"e acute", "caf\u00E9", "cafe\u0301"},
		{"hangul syllable", "\uD55C", "\u1112\u1161\u11AB"},
		{"a ring", "\u00C5ngstr\u00F6m", "A\u030Angstro\u0308m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, d := WeightedLength(tt.composed), WeightedLength(tt.decomposed)
			if c != d {
				t.Errorf("composed %d != decomposed %d", c, d)
			}
		})
	}
	// The decomposed Hangul jamo would weigh 1 each (they are below 4352)
	// without normalisation; composed, the syllable weighs 2.
	if got := WeightedLength("\u1112\u1161\u11AB"); got != 2 {
		t.Errorf("decomposed hangul = %d, want 2", got)
	}
}

func TestParseBoundaries(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		wantLen    int
		wantValid  bool
		wantPerm   int
		wantValidR [2]int
		wantDispR  [2]int
	}{
		{"280 ascii", strings.Repeat("a", 280), 280, true, 1000, [2]int{0, 279}, [2]int{0, 279}},
		{"281 ascii", strings.Repeat("a", 281), 281, false, 1003, [2]int{0, 279}, [2]int{0, 280}},
		{"140 cjk", strings.Repeat("字", 140), 280, true, 1000, [2]int{0, 139}, [2]int{0, 139}},
		{"141 cjk", strings.Repeat("字", 141), 282, false, 1007, [2]int{0, 139}, [2]int{0, 140}},
		{"140 emoji", strings.Repeat("😀", 140), 280, true, 1000, [2]int{0, 279}, [2]int{0, 279}},
		{"141 emoji, ranges in utf-16", strings.Repeat("😀", 141), 282, false, 1007, [2]int{0, 279}, [2]int{0, 281}},
		{"url plus 257", "https://example.com/" + strings.Repeat("x", 50) + " " + strings.Repeat("a", 256), 280, true, 1000, [2]int{0, 326}, [2]int{0, 326}},
		{"url plus 258", "https://example.com/" + strings.Repeat("x", 50) + " " + strings.Repeat("a", 257), 281, false, 1003, [2]int{0, 326}, [2]int{0, 327}},
		{"half", strings.Repeat("a", 140), 140, true, 500, [2]int{0, 139}, [2]int{0, 139}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse(tt.text)
			want := Result{tt.wantLen, tt.wantValid, tt.wantPerm, tt.wantValidR, tt.wantDispR}
			if got != want {
				t.Errorf("Parse = %+v, want %+v", got, want)
			}
		})
	}
}

func TestParseValidity(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		wantValid bool
	}{
		{"plain", "hello", true},
		{"empty", "", false},
		{"spaces", "   ", false},
		{"newlines and tabs", "\n\t\r\n", false},
		{"ideographic space", "\u3000", false},
		{"zero-width space only", "\u200B\u200B", false},
		{"directional marks only", "\u200E\u202A", false},
		{"text with zero-width joiner", "a\u200Db", true},
		{"byte order mark", "hi\uFEFF", false},
		{"noncharacter fffe", "\uFFFEhi", false},
		{"noncharacter ffff", "hi\uFFFF", false},
		{"invalid utf-8", "hi\xff", false},
		{"replacement character itself is fine", "hi\uFFFD", true},
		{"directional marks around text", "\u2066abc\u2069", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(tt.text).Valid; got != tt.wantValid {
				t.Errorf("Parse(%q).Valid = %v, want %v", tt.text, got, tt.wantValid)
			}
		})
	}
}

func TestParseInvalidCharStopsValidRange(t *testing.T) {
	got := Parse("ab\uFFFFcd")
	if got.Valid {
		t.Fatal("text with U+FFFF reported valid")
	}
	if got.ValidRange != [2]int{0, 1} {
		t.Errorf("ValidRange = %v, want [0 1]", got.ValidRange)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		wantCode  apperr.Code
		wantInMsg string
	}{
		{"ok", "hello", "", ""},
		{"exactly 280", strings.Repeat("a", 280), "", ""},
		{"too long", strings.Repeat("a", 281), apperr.TweetTooLong, "281"},
		{"cjk too long", strings.Repeat("字", 141), apperr.TweetTooLong, "282"},
		{"empty", "", apperr.InvalidInput, "empty"},
		{"blank", " \n ", apperr.InvalidInput, "empty"},
		{"bom", "a\uFEFF", apperr.InvalidInput, "U+FEFF"},
		{"bad utf-8", "a\xc3", apperr.InvalidInput, "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check("text", tt.text)
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var ae *apperr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("Check = %v, want *apperr.Error", err)
			}
			if ae.Code != tt.wantCode {
				t.Errorf("code = %s, want %s", ae.Code, tt.wantCode)
			}
			if !strings.Contains(ae.Message, "text") || !strings.Contains(ae.Message, tt.wantInMsg) {
				t.Errorf("message %q lacks the field name or %q", ae.Message, tt.wantInMsg)
			}
		})
	}
	err := Check("tweets[2]", strings.Repeat("a", 300))
	ae := apperr.As(err)
	if ae.Extra["weighted_length"] != 300 || ae.Extra["max_weighted_length"] != MaxWeightedLength {
		t.Errorf("Extra = %v, want weighted_length 300 and max_weighted_length 280", ae.Extra)
	}
	if !strings.HasPrefix(ae.Message, "tweets[2] ") {
		t.Errorf("message %q does not start with the field", ae.Message)
	}
}

func TestExtractURLs(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"no links here", nil},
		{"http://example.com and https://go.dev/x", []string{"http://example.com", "https://go.dev/x"}},
		{"see https://example.com/foo.", []string{"https://example.com/foo"}},
		{"(https://en.wikipedia.org/wiki/Primer_(film))", []string{"https://en.wikipedia.org/wiki/Primer_(film)"}},
		{"https://example.com/a?b=c&d=e!", []string{"https://example.com/a?b=c&d=e"}},
		{"https://example.com/a?", []string{"https://example.com/a"}},
		{"http://t.co/abc/def", []string{"http://t.co/abc"}},
		{"http://t.co/" + strings.Repeat("a", 41), nil},
		{"example.com", []string{"example.com"}},
		{"www.example.com/a?b=c&d", []string{"www.example.com/a?b=c&d"}},
		{"foo.community bar", []string{"foo.community"}},
		{"foo.comx", nil},
		{"mail@example.com", nil},
		{"#example.com", nil},
		{"_a.com", nil},
		{"éa.com", []string{"a.com"}},
		{"http://foo_bar.baz.com", []string{"http://foo_bar.baz.com"}},
		{"http://xn--fsqu00a.xn--0zwm56d", []string{"http://xn--fsqu00a.xn--0zwm56d"}},
		{"http://例子.中国/x", []string{"http://例子.中国/x"}},
		{"例子.com", nil},
		{"\u202Ahttp://foo.com\u202C", []string{"http://foo.com"}},
		{"http://example.com:80x", []string{"http://example.com:80"}},
		{"http://example.com:x", []string{"http://example.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			rs := []rune(tt.text)
			var got []string
			for _, u := range extractURLs(rs) {
				got = append(got, string(rs[u.start:u.start+u.n]))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("extractURLs(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestPunycode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"bücher", "bcher-kva"},
		{"münchen", "mnchen-3ya"},
		{"例子", "fsqu00a"},
		{"测试", "0zwm56d"},
		{"правда", "80aafi6cg"},
	}
	for _, tt := range tests {
		got, ok := punycodeEncode([]rune(tt.in))
		if !ok || got != tt.want {
			t.Errorf("punycodeEncode(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	if n, ok := asciiLabelLen([]rune("example")); !ok || n != 7 {
		t.Errorf("asciiLabelLen(example) = %d, %v", n, ok)
	}
	if n, ok := asciiLabelLen([]rune("bücher")); !ok || n != len("xn--bcher-kva") {
		t.Errorf("asciiLabelLen(bücher) = %d, %v", n, ok)
	}
}

func TestTLDTableShape(t *testing.T) {
	tt := tlds()
	if tt.maxLen < 2 || tt.maxLen > 64 {
		t.Fatalf("maxLen = %d, outside the 2..64 tldEndAt supports", tt.maxLen)
	}
	for _, set := range []map[string]struct{}{tt.cc, tt.g} {
		for tld := range set {
			for _, r := range tld {
				if !isTLDRune(r) {
					t.Errorf("TLD %q holds %q, which tldEndAt never reads", tld, r)
				}
			}
		}
	}
	for _, must := range []string{"com", "org", "net", "io", "ai", "dev", "app", "co", "uk", "jp", "de", "xyz", "中国", "рф"} {
		if !isKnownTLD(must) {
			t.Errorf("common TLD %q missing", must)
		}
	}
}

func TestTruncateRunes(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"日本語テキスト", 3, "日本語"},
		{"😀😃😄", 2, "😀😃"},
		{"a\xffb", 2, "a\uFFFD"},
	}
	for _, tt := range tests {
		if got := TruncateRunes(tt.in, tt.n); got != tt.want {
			t.Errorf("TruncateRunes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestTruncateBytes(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello world", 8, "hello…"},
		{"日本語", 9, "日本語"},
		{"日本語", 8, "日…"},
		{"日本語", 6, "日…"},
		{"日本語", 5, "…"},
		{"日本語", 2, ""},
		{"hello", 2, "he"},
		{"hello", 0, ""},
		{"😀😀", 7, "😀…"},
		{"😀😀", 6, "…"},
		{"a😀b", 6, "a😀b"},
		{"a😀b", 5, "a…"},
	}
	for _, tt := range tests {
		got := TruncateBytes(tt.in, tt.n)
		if got != tt.want {
			t.Errorf("TruncateBytes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
		if len(got) > max(tt.n, 0) {
			t.Errorf("TruncateBytes(%q, %d) is %d bytes", tt.in, tt.n, len(got))
		}
	}
}

// truncationInputs is a spread of texts that mix widths, emoji and
// combining marks.
func truncationInputs() []string {
	base := []string{
		"", "a", "hello world", "日本語のテキストです。", "😀😃😄😁😆",
		"👨\u200D👩\u200D👧\u200D👦 family", "cafe\u0301 au lait", "🇯🇵🇺🇸🇫🇷",
		"mixed: a日😀b\u0301c🏳️\u200D🌈d", "\xff\xfeinvalid\xc3",
	}
	var out []string
	for _, b := range base {
		out = append(out, b, strings.Repeat(b, 7))
	}
	return out
}

func TestTruncationKeepsUTF8(t *testing.T) {
	for _, in := range truncationInputs() {
		for n := -1; n <= len(in)+4; n++ {
			if got := TruncateRunes(in, n); !utf8.ValidString(got) || utf8.RuneCountInString(got) > max(n, 0) {
				t.Fatalf("TruncateRunes(%q, %d) = %q", in, n, got)
			}
			if got := TruncateBytes(in, n); !utf8.ValidString(got) || len(got) > max(n, 0) {
				t.Fatalf("TruncateBytes(%q, %d) = %q", in, n, got)
			}
		}
	}
}

func TestFitWeighted(t *testing.T) {
	tests := []struct {
		name string
		text string
		max  int
		want string
	}{
		{"fits unchanged", "Hello world.", 280, "Hello world."},
		{"fits unchanged, not normalised", "cafe\u0301", 280, "cafe\u0301"},
		{"zero max", "Hello", 0, ""},
		{"sentence boundary", "First one. Second sentence is long.", 20, "First one."},
		{"question boundary", "Why? Because it is so.", 12, "Why?"},
		{"last sentence that fits", "One. Two. Three four five.", 12, "One. Two."},
		{"newline boundary", "Line one\nLine two is long", 15, "Line one"},
		{"word boundary", "alpha beta gamma delta", 13, "alpha beta"},
		{"word boundary drops trailing spaces", "alpha    beta gamma", 9, "alpha"},
		{"rune fallback", "abcdefghij", 4, "abcd"},
		{"cjk fallback", "日本語テキスト", 7, "日本語"},
		{"emoji sequence not split", "ab👨\u200D👩\u200D👧", 3, "ab"},
		{"flag not split", "a🇯🇵🇺🇸", 4, "a🇯🇵"},
		{"combining mark kept with base", "abe\u0301\u0302\u0303", 3, "ab"},
		{"url not split", "see https://example.com/path/that/is/long", 20, "see"},
		{"url kept when it fits", "see https://example.com/path/that/is/long more", 28, "see https://example.com/path/that/is/long"},
		{"nothing fits", "日本", 1, ""},
		{"leading spaces never kept alone", "   abcdef", 5, "   ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FitWeighted(tt.text, tt.max)
			if got != tt.want {
				t.Errorf("FitWeighted(%q, %d) = %q, want %q", tt.text, tt.max, got, tt.want)
			}
			if wl := WeightedLength(got); wl > max(tt.max, 0) {
				t.Errorf("result weighs %d > %d", wl, tt.max)
			}
		})
	}
}

func TestFitWeightedProperties(t *testing.T) {
	long := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 10) +
		"日本語😀👍🏽 https://example.com/x " + strings.Repeat("字", 50)
	for _, in := range append(truncationInputs(), long) {
		for m := 0; m <= 300; m += 7 {
			got := FitWeighted(in, m)
			if !utf8.ValidString(got) {
				t.Fatalf("FitWeighted(%q, %d) not valid UTF-8", in, m)
			}
			if wl := WeightedLength(got); wl > m {
				t.Fatalf("FitWeighted(%q, %d) weighs %d", in, m, wl)
			}
		}
	}
}

func BenchmarkWeightedLength(b *testing.B) {
	// A typical 200-character post: prose, a link, a hashtag, an emoji.
	text := "Shipped a new release of our CLI today: faster startup, safer retries and a proper audit log. " +
		"Release notes at https://example.com/blog/release-notes-v2 — feedback welcome! #golang 🚀 Thanks all."
	b.ReportAllocs()
	for b.Loop() {
		WeightedLength(text)
	}
}

func TestLinks(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"none", "hello @bob #go", nil},
		{"one", "see https://example.com/a?b=1 now", []string{"https://example.com/a?b=1"}},
		{"bare domain and cjk", "日本 example.com と go.dev", []string{"example.com", "go.dev"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nfc, spans := Links(tt.text)
			var got []string
			for _, s := range spans {
				got = append(got, nfc[s[0]:s[1]])
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Links(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestParseWithinALongLimit(t *testing.T) {
	long := strings.Repeat("word ", 200) // 1000 weighted characters
	tests := []struct {
		name  string
		text  string
		limit int
		valid bool
		perm  int
	}{
		{"over the ordinary limit", long, MaxWeightedLength, false, 3571},
		{"within the long limit", long, MaxLongWeightedLength, true, 40},
		{"CJK weighs two in long posts too", strings.Repeat("語", 12501), MaxLongWeightedLength, false, 1000},
		{"exactly the long limit", strings.Repeat("語", 12500), MaxLongWeightedLength, true, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseWithin(tc.text, tc.limit)
			if r.Valid != tc.valid || r.Permillage != tc.perm {
				t.Errorf("ParseWithin(%d runes, %d) = valid %t permillage %d, want %t %d", len([]rune(tc.text)), tc.limit, r.Valid, r.Permillage, tc.valid, tc.perm)
			}
		})
	}
}

// TestTLDTablesOnConcurrentFirstUse: the TLD tables are built on first
// use; texts measured at once from many goroutines (an MCP server checks
// several posts together) all see whole tables: each link counts 23.
func TestTLDTablesOnConcurrentFirstUse(t *testing.T) {
	texts := []struct {
		text string
		want int
	}{
		{"see example.com now", 4 + 23 + 4},
		{"read bücher.de", 5 + 23},
		{"example.co.uk", 23},
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, tc := range texts {
				if got := Parse(tc.text).WeightedLength; got != tc.want {
					t.Errorf("WeightedLength(%q) = %d, want %d", tc.text, got, tc.want)
				}
			}
		})
	}
	wg.Wait()
}
