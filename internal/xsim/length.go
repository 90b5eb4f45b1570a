package xsim

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// This file is X's weighted length of a post (the twitter-text v3
// configuration), written apart from the product's own counter
// (internal/tweettext) on purpose: the emulator judges the product's posts
// with an implementation that shares no code with it, so a counting bug in
// the product shows up as a refused post in emulator-backed tests instead of
// hiding behind them. It is deliberately small: it covers what X's
// conformance cases pin down (weights, NFC, emoji sequences, URLs with and
// without a protocol, label lengths after punycode) with a compact TLD list
// of its own, not twitter-text's full one.

// The v3 configuration: weights are in hundredths of a character.
const (
	lenScale      = 100
	lenDefault    = 200
	lenLight      = 100
	lenURL        = 23
	maxPostLength = 280
)

// lightRanges are the code points that count one character; all others
// count two.
var lightRanges = [][2]rune{{0, 4351}, {8192, 8205}, {8208, 8223}, {8242, 8247}}

func runeWeight(r rune) int {
	for _, rg := range lightRanges {
		if r >= rg[0] && r <= rg[1] {
			return lenLight
		}
	}
	return lenDefault
}

// weightedLength is the v3 weighted length of a post.
func weightedLength(text string) int { return countWeighted(text, true) }

// countWeighted counts text; without emoji it is the configuration before
// emoji parsing (each code point of a sequence weighs on its own), which
// X's conformance file also tests.
func countWeighted(text string, emoji bool) int {
	rs := []rune(norm.NFC.String(text))
	urls := findLinks(rs)
	total := 0
	for i := 0; i < len(rs); {
		if len(urls) > 0 && urls[0][0] == i {
			total += lenURL * lenScale
			i = urls[0][1]
			urls = urls[1:]
			continue
		}
		if emoji {
			if n := emojiAt(rs, i); n > 0 {
				total += lenDefault
				i += n
				continue
			}
		}
		total += runeWeight(rs[i])
		i++
	}
	return total / lenScale
}

// --- Emoji ---------------------------------------------------------------

const (
	zeroWidthJoiner = 0x200D
	emojiSelector   = 0xFE0F
	enclosingKeycap = 0x20E3
)

// emojiAt returns how many code points the emoji sequence at i spans (0 when
// none starts there): a keycap, a flag, or a pictograph with its selector,
// skin tone, tags and zero-width-joined followers. The whole sequence
// weighs as one emoji.
func emojiAt(rs []rune, i int) int {
	r := rs[i]
	switch {
	case r == '#' || r == '*' || r >= '0' && r <= '9':
		j := i + 1
		if j < len(rs) && rs[j] == emojiSelector {
			j++
		}
		if j < len(rs) && rs[j] == enclosingKeycap {
			return j + 1 - i
		}
		return 0
	case isRegionalIndicator(r):
		if i+1 < len(rs) && isRegionalIndicator(rs[i+1]) {
			return 2
		}
		return 1
	case !isPictograph(r):
		return 0
	}
	j := pictographEnd(rs, i)
	if j == i+1 && textByDefault(r) {
		// A pictograph that is text unless asked otherwise (©, ®) is a
		// plain character.
		return 0
	}
	// Only an emoji-presented start (an emoji-plane pictograph, or an older
	// symbol with a selector or modifier) begins a joined sequence; a
	// joiner after plain text ("™\u200d…") joins nothing.
	if r < 0x1F000 && j == i+1 {
		return j - i
	}
	for j+1 < len(rs) && rs[j] == zeroWidthJoiner && isPictograph(rs[j+1]) {
		j = pictographEnd(rs, j+1)
	}
	return j - i
}

// pictographEnd skips a pictograph at i and what modifies it.
func pictographEnd(rs []rune, i int) int {
	j := i + 1
	for j < len(rs) {
		switch r := rs[j]; {
		case r == emojiSelector, r >= 0x1F3FB && r <= 0x1F3FF, r >= 0xE0020 && r <= 0xE007F:
			j++
		default:
			return j
		}
	}
	return j
}

func isRegionalIndicator(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// textByDefault are the pictographs below U+1100 (which weigh one as text):
// only with a selector or a modifier do they form an emoji.
func textByDefault(r rune) bool { return r == 0xA9 || r == 0xAE }

// pictographBlocks approximate the code points that start emoji: the
// Miscellaneous Symbols and Dingbats, arrows and the like in the BMP, and
// the emoji planes above. Where the border is loose it does not matter: a
// lone code point there weighs the same as an emoji.
var pictographBlocks = [][2]rune{
	{0xA9, 0xA9}, {0xAE, 0xAE}, {0x203C, 0x203C}, {0x2049, 0x2049}, {0x2122, 0x2122}, {0x2139, 0x2139},
	{0x2194, 0x21AA}, {0x231A, 0x23FF}, {0x24C2, 0x24C2}, {0x25AA, 0x25FE}, {0x2600, 0x27BF},
	{0x2934, 0x2935}, {0x2B05, 0x2B55}, {0x3030, 0x3030}, {0x303D, 0x303D}, {0x3297, 0x3299},
	{0x1F000, 0x1F1E5}, {0x1F200, 0x1F3FA}, {0x1F400, 0x1FAFF},
}

func isPictograph(r rune) bool {
	for _, b := range pictographBlocks {
		if r >= b[0] && r <= b[1] {
			return true
		}
	}
	return false
}

// --- Links ---------------------------------------------------------------

// findLinks returns the [start, end) code point spans of the links in rs,
// in order.
func findLinks(rs []rune) [][2]int {
	var out [][2]int
	for i := 0; i < len(rs); {
		if !linkMayStartAfter(rs, i) {
			i++
			continue
		}
		if end, ok := linkAt(rs, i); ok {
			out = append(out, [2]int{i, end})
			i = end
			continue
		}
		i++
	}
	return out
}

// linkMayStartAfter: a link never continues a word, a handle, a cashtag or
// a hashtag. Direction marks before it are fine.
func linkMayStartAfter(rs []rune, i int) bool {
	if i == 0 {
		return true
	}
	p := rs[i-1]
	return !(isASCIILetterOrDigit(p) || strings.ContainsRune("@＠$#＃", p) || p == 0xFFFE || p == 0xFEFF || p == 0xFFFF)
}

// linkAt matches a link starting at i: with http(s)://, a host on a known
// TLD; without, an ASCII host on a known TLD, not glued to a preceding '-',
// '_', '.' or '/', and on a country TLD only with a subdomain or a path
// ("example.jp/x", not "example.jp"; .co and .tv are used like generic TLDs).
func linkAt(rs []rune, i int) (int, bool) {
	scheme := 0
	for _, p := range []string{"https://", "http://"} {
		if hasPrefixFoldRunes(rs[i:], p) {
			scheme = len(p)
			break
		}
	}
	if scheme == 0 && i > 0 && strings.ContainsRune("-_./", rs[i-1]) {
		return 0, false
	}
	h := i + scheme
	run := h
	for run < len(rs) && hostRune(rs[run], scheme > 0) {
		run++
	}
	// The longest host on a known TLD that is not followed by more of an
	// ASCII word wins, as with a backtracking pattern.
	end, tld := 0, ""
	for e := run; e > h; e-- {
		if e < len(rs) && (isASCIILetterOrDigit(rs[e]) || strings.ContainsRune("@+-", rs[e])) {
			continue
		}
		if t, ok := hostTLD(rs[h:e]); ok {
			end, tld = e, t
			break
		}
	}
	if end == 0 {
		return 0, false
	}
	if !labelsFit(string(rs[h:end])) {
		return 0, false
	}
	j := end
	if j+1 < len(rs) && rs[j] == ':' && isASCIIDigit(rs[j+1]) {
		j++
		for j < len(rs) && isASCIIDigit(rs[j]) {
			j++
		}
	}
	withPath := j < len(rs) && rs[j] == '/'
	if j < len(rs) && (rs[j] == '/' || rs[j] == '?') {
		j = pathEnd(rs, j)
	}
	if scheme == 0 && countryTLDs()[tld] && tld != "co" && tld != "tv" && !withPath && strings.Count(string(rs[h:end]), ".") == 1 {
		return 0, false
	}
	return j, true
}

// hostRune: after a scheme a host may hold anything but punctuation,
// spaces and invisible marks (internationalised names); without one only
// ASCII letters, digits, '-' and accented Latin letters.
func hostRune(r rune, schemed bool) bool {
	switch {
	case r == '.' || r == '-' || r == '_' || isASCIILetterOrDigit(r):
		return true
	case r < 0x80:
		return false
	case !schemed:
		return r >= 0xC0 && r <= 0x24F && r != 0xD7 && r != 0xF7
	}
	return !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) && r != 0xFFFE && r != 0xFFFF && !unicode.IsPunct(r)
}

// hostTLD checks the shape of a host (labels not empty, not starting or
// ending with '-', '_' only in subdomains) and returns its TLD when known.
func hostTLD(host []rune) (string, bool) {
	labels := strings.Split(string(host), ".")
	if len(labels) < 2 {
		return "", false
	}
	for k, l := range labels {
		if l == "" || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") || strings.HasPrefix(l, "_") || strings.HasSuffix(l, "_") {
			return "", false
		}
		if k >= len(labels)-2 && strings.Contains(l, "_") {
			return "", false
		}
	}
	tld := strings.ToLower(labels[len(labels)-1])
	return tld, genericTLDs()[tld] || countryTLDs()[tld] || strings.HasPrefix(tld, "xn--")
}

// labelsFit: no label is longer than 63 characters once punycode-encoded,
// as DNS requires.
func labelsFit(host string) bool {
	for _, l := range strings.Split(host, ".") {
		if asciiLabelLen(l) > 63 {
			return false
		}
	}
	return true
}

// pathEnd returns where the path or query starting at j ends: at a space or
// a character links do not hold, minus trailing punctuation and an
// unbalanced closing parenthesis.
func pathEnd(rs []rune, j int) int {
	e := j
	for e < len(rs) && isPathRune(rs[e]) {
		e++
	}
	for e > j {
		last := rs[e-1]
		if last == ')' && balanced(rs[j:e]) {
			break
		}
		if !strings.ContainsRune(".,;:!?'\"*)]", last) {
			break
		}
		e--
	}
	return e
}

func balanced(rs []rune) bool {
	n := 0
	for _, r := range rs {
		switch r {
		case '(':
			n++
		case ')':
			n--
		}
	}
	return n == 0
}

func isPathRune(r rune) bool {
	switch {
	case isASCIILetterOrDigit(r), strings.ContainsRune("!*';:=+,.$/%#[]-_~&|@?()", r):
		return true
	case r == 0x2013, r >= 0x0400 && r <= 0x04FF: // en dash, Cyrillic
		return true
	case r >= 0xC0 && r <= 0x24F && r != 0xD7 && r != 0xF7: // Latin letters with accents
		return true
	}
	return false
}

func isASCIIDigit(r rune) bool { return r >= '0' && r <= '9' }

func isASCIILetterOrDigit(r rune) bool {
	return isASCIIDigit(r) || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

func hasPrefixFoldRunes(rs []rune, p string) bool {
	if len(rs) < len(p) {
		return false
	}
	return strings.EqualFold(string(rs[:len(p)]), p)
}

// asciiLabelLen is the length of a host label in DNS form: as is when
// ASCII, else "xn--" and its punycode (RFC 3492).
func asciiLabelLen(label string) int {
	rs := []rune(strings.ToLower(label))
	basic := 0
	for _, r := range rs {
		if r < 0x80 {
			basic++
		}
	}
	if basic == len(rs) {
		return len(rs)
	}
	return len("xn--") + punycodeLen(rs, basic)
}

// punycodeLen is the length of the punycode encoding of rs, which holds
// basic ASCII code points.
func punycodeLen(rs []rune, basic int) int {
	const (
		base, tmin, tmax, skew, damp = 36, 1, 26, 38, 700
	)
	adapt := func(delta, points int, first bool) int {
		if first {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / points
		k := 0
		for delta > ((base-tmin)*tmax)/2 {
			delta /= base - tmin
			k += base
		}
		return k + (base-tmin+1)*delta/(delta+skew)
	}
	out := basic
	if basic > 0 {
		out++ // the delimiter
	}
	n, delta, bias, h := 0x80, 0, 72, basic
	for h < len(rs) {
		m := rune(0x7FFFFFFF)
		for _, r := range rs {
			if int(r) >= n && r < m {
				m = r
			}
		}
		delta += (int(m) - n) * (h + 1)
		n = int(m)
		for _, r := range rs {
			if int(r) < n {
				delta++
			}
			if int(r) == n {
				q := delta
				for k := base; ; k += base {
					t := k - bias
					if t < tmin {
						t = tmin
					} else if t > tmax {
						t = tmax
					}
					if q < t {
						break
					}
					out++
					q = (q - t) / (base - t)
				}
				out++
				bias = adapt(delta, h+1, h == basic)
				delta = 0
				h++
			}
		}
		delta++
		n++
	}
	return out
}

// --- Long posts ----------------------------------------------------------

// maxLongPostLength is the longest post of a subscriber (Basic, Premium,
// PremiumPlus). X does not document how it weighs long posts; the emulator
// weighs them as ordinary posts.
const maxLongPostLength = 25000

// subscriptionOf is u's X subscription.
func subscriptionOf(u *User) string {
	switch {
	case u.SubscriptionType != "":
		return u.SubscriptionType
	case u.Verified:
		// The blue check comes with a paid subscription.
		return "Premium"
	}
	return "None"
}

// maxLengthOf is the longest post u may write.
func maxLengthOf(u *User) int {
	switch subscriptionOf(u) {
	case "Basic", "Premium", "PremiumPlus":
		return maxLongPostLength
	}
	return maxPostLength
}

// isLongPost reports a post longer than an ordinary one: X keeps its
// whole text as a note and shows it cut short.
func isLongPost(text string) bool { return weightedLength(text) > maxPostLength }

// truncateLongPost is the text X shows of a long post: the longest start
// of it that, with an ellipsis after it, still fits an ordinary post.
func truncateLongPost(text string) string {
	rs := []rune(text)
	const ellipsis = "…"
	fits := func(n int) bool {
		return weightedLength(strings.TrimRightFunc(string(rs[:n]), unicode.IsSpace)+ellipsis) <= maxPostLength
	}
	// Weight grows with every code point taken, so the longest start
	// that fits is found by halving.
	lo, hi := 0, len(rs)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.TrimRightFunc(string(rs[:lo]), unicode.IsSpace) + ellipsis
}
