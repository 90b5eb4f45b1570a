package tweettext

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits the reference extractor applies to URLs.
const (
	maxURLLength  = 4096 // protocol + URL, in UTF-16 units
	maxTcoSlugLen = 40
	maxLabelLen   = 63 // DNS label, after IDNA ToASCII
)

// urlSpan is one URL the counter replaces by transformedURLLength: it starts
// at rune index start and the counter skips n runes.
type urlSpan struct {
	start, n int
}

// urlMatch is one match of the URL grammar, before the validity checks.
type urlMatch struct {
	start, end     int // whole URL
	domStart       int // == start when there is no protocol
	domEnd         int
	protocol, path bool
}

// urlScanner finds URLs the way twitter-text's extractor does: a URL starts
// after a permitted preceding character, has an optional http(s) protocol,
// a host that ends in a known TLD (or Punycode label), an optional port,
// path and query. The regular expression of the reference backtracks over
// the host's labels; the same choice (the longest host whose last label is
// a TLD) is computed here in one right-to-left pass so scanning stays linear.
type urlScanner struct {
	rs []rune
	// runEnd[p] is the end of the run of label characters starting at p.
	runEnd []int
	// underscore[p] is the first '_' at or after p within its run (or
	// len(rs)); host names (unlike subdomains) may not contain one.
	underscore []int
	// host[p] is, for a host beginning at p, the index where its last label
	// before the TLD starts, or -1 when no host starts at p.
	host []int
	// tldEnd[p] is the end of the TLD that follows the name label at p.
	tldEnd []int
}

func newURLScanner(rs []rune) *urlScanner {
	n := len(rs)
	backing := make([]int, 4*(n+1))
	s := &urlScanner{
		rs:         rs,
		runEnd:     backing[0 : n+1],
		underscore: backing[n+1 : 2*(n+1)],
		host:       backing[2*(n+1) : 3*(n+1)],
		tldEnd:     backing[3*(n+1):],
	}
	s.runEnd[n], s.underscore[n], s.host[n] = n, n, -1
	// Every position of a run shares the label end, so the TLD after it is
	// looked up once per run.
	tldFor, tldAfter := -1, -1
	for p := n - 1; p >= 0; p-- {
		r := rs[p]
		s.host[p] = -1
		if !isLabelRune(r) {
			s.runEnd[p], s.underscore[p] = p, n
			continue
		}
		s.runEnd[p] = s.runEnd[p+1]
		if r == '_' {
			s.underscore[p] = p
		} else {
			s.underscore[p] = s.underscore[p+1]
		}
		e := s.runEnd[p]
		// A subdomain label: domain characters at both ends, then a dot.
		if !isDomainRune(r) || e >= n || rs[e] != '.' || !isDomainRune(rs[e-1]) {
			continue
		}
		if h := s.host[e+1]; h >= 0 {
			s.host[p] = h // a longer host wins, as the greedy regex does
			continue
		}
		if s.underscore[p] < e {
			continue
		}
		if tldFor != e {
			tldFor, tldAfter = e, tldEndAt(rs, e+1)
		}
		if tldAfter > 0 {
			s.host[p], s.tldEnd[p] = p, tldAfter
		}
	}
	return s
}

// tldEndAt returns the end of the TLD starting at rs[t] or -1. Known TLDs
// must not be followed by an ASCII letter, digit, '@', '+' or '-'; the
// longest one that fits wins. A Punycode label "xn--..." is accepted too.
func tldEndAt(rs []rune, t int) int {
	n := len(rs)
	var buf [4 * 64]byte
	var offs [65]int
	w, b, maxLen := 0, 0, tlds().maxLen
	for t+w < n && w < maxLen && w < 64 && isTLDRune(rs[t+w]) {
		lr := unicode.ToLower(rs[t+w])
		if b+4 > len(buf) {
			break
		}
		b += utf8.EncodeRune(buf[b:], lr)
		w++
		offs[w] = b
	}
	for l := w; l >= 1; l-- {
		if isKnownTLD(string(buf[:offs[l]])) && tldFollowerOK(rs, t+l) {
			return t + l
		}
	}
	if hasPrefixFold(rs[t:], "xn--") {
		j := t + 4
		for j < n && isPunycodeRune(rs[j]) {
			j++
		}
		if j > t+4 {
			return j
		}
	}
	return -1
}

func tldFollowerOK(rs []rune, i int) bool {
	if i >= len(rs) {
		return true
	}
	r := rs[i]
	return !(isASCIIAlnum(r) || r == '@' || r == '+' || r == '-')
}

// matchAt matches the URL grammar starting at rune index st.
func (s *urlScanner) matchAt(st int) (urlMatch, bool) {
	rs := s.rs
	n := len(rs)
	if st >= n {
		return urlMatch{}, false
	}
	m := urlMatch{start: st, domStart: st}
	for _, proto := range []string{"https://", "http://"} {
		if hasPrefixFold(rs[st:], proto) {
			if ds := st + len(proto); s.host[ds] >= 0 {
				m.protocol, m.domStart = true, ds
			}
			break
		}
	}
	name := s.host[m.domStart]
	if name < 0 {
		return urlMatch{}, false
	}
	m.domEnd = s.tldEnd[name]
	e := m.domEnd
	if e+1 < n && rs[e] == ':' && isASCIIDigit(rs[e+1]) {
		e += 2
		for e < n && isASCIIDigit(rs[e]) {
			e++
		}
	}
	if e < n && rs[e] == '/' {
		m.path = true
		e = pathEnd(rs, e+1)
	}
	if e < n && rs[e] == '?' {
		if q := queryEnd(rs, e+1); q > 0 {
			e = q
		}
	}
	m.end = e
	return m, true
}

// pathEnd returns the end of the longest path (starting after its '/') that
// ends in a path-ending character or a balanced parenthesis group, so
// trailing punctuation stays outside the URL.
func pathEnd(rs []rune, p int) int {
	good := p
	for p < len(rs) {
		r := rs[p]
		if isPathRune(r) {
			p++
			if isPathEndRune(r) {
				good = p
			}
			continue
		}
		if r == '(' {
			if e := balancedParensEnd(rs, p); e > 0 {
				p, good = e, e
				continue
			}
		}
		break
	}
	return good
}

// balancedParensEnd matches "(x)" or "(x(y)z)" in a path, returning its end
// or -1.
func balancedParensEnd(rs []rune, p int) int {
	n := len(rs)
	run := func(i int) int {
		for i < n && isPathRune(rs[i]) {
			i++
		}
		return i
	}
	k := run(p + 1)
	if k < n && rs[k] == ')' && k > p+1 {
		return k + 1
	}
	if k < n && rs[k] == '(' {
		m := run(k + 1)
		if m > k+1 && m < n && rs[m] == ')' {
			m = run(m + 1)
			if m < n && rs[m] == ')' {
				return m + 1
			}
		}
	}
	return -1
}

// queryEnd returns the end of the query starting after its '?', or -1 when
// no query-ending character follows.
func queryEnd(rs []rune, p int) int {
	good := -1
	for ; p < len(rs) && isQueryRune(rs[p]); p++ {
		if isQueryEndRune(rs[p]) {
			good = p + 1
		}
	}
	return good
}

// extractURLs returns the URLs of rs in order.
func extractURLs(rs []rune) []urlSpan {
	hasDot := false
	for _, r := range rs {
		if r == '.' {
			hasDot = true
			break
		}
	}
	if !hasDot {
		return nil
	}
	sc := newURLScanner(rs)
	var out []urlSpan
	for p := 0; p < len(rs); {
		if isURLPrecedingRune(rs[p]) {
			if m, ok := sc.matchAt(p + 1); ok {
				out = acceptURL(out, rs, m, rs[p])
				p = m.end
				continue
			}
		}
		if p == 0 {
			if m, ok := sc.matchAt(0); ok {
				out = acceptURL(out, rs, m, -1)
				p = m.end
				continue
			}
		}
		p++
	}
	return out
}

// acceptURL applies the extractor's checks to a grammar match and appends
// the URLs it yields. before is the preceding rune, or -1 at the start.
func acceptURL(out []urlSpan, rs []rune, m urlMatch, before rune) []urlSpan {
	url := rs[m.start:m.end]
	domain := rs[m.domStart:m.domEnd]
	protoLen := len("https://") // assumed for protocol-less URLs
	if m.protocol {
		protoLen = m.domStart - m.start
	}
	if !validURLLengths(url, protoLen, domain) {
		return out
	}
	if m.protocol {
		if end, slug, ok := tcoPrefix(url); ok {
			if slug > maxTcoSlugLen {
				return out
			}
			// t.co links end after the slug (and query).
			return append(out, urlSpan{start: m.start, n: end})
		}
		return append(out, urlSpan{start: m.start, n: m.end - m.start})
	}
	if before >= 0 && strings.ContainsRune("-_./", before) {
		return out
	}
	// Without a protocol only the ASCII parts of the host count as links.
	hosts := asciiHosts(domain)
	if len(hosts) == 0 {
		return out
	}
	for i, h := range hosts {
		span := urlSpan{start: m.domStart + h[0], n: h[1] - h[0]}
		if i == len(hosts)-1 && m.path {
			// The last host takes the path and query along; the length is
			// that of the URL with the host replaced, as the reference
			// computes it.
			span.n += (m.end - m.start) - len(domain)
		}
		out = append(out, span)
	}
	return out
}

// validURLLengths mirrors the reference's IDNA check: a Punycode host must be
// ASCII, every label must be 1..63 characters after ToASCII, and protocol
// plus URL must fit maxURLLength.
func validURLLengths(url []rune, protoLen int, domain []rune) bool {
	if hasPrefix(domain, "xn--") && len(asciiHosts(domain)) == 0 {
		return false
	}
	start := 0
	for i := 0; i <= len(domain); i++ {
		if i < len(domain) && domain[i] != '.' {
			continue
		}
		n, ok := asciiLabelLen(domain[start:i])
		if !ok || n < 1 || n > maxLabelLen {
			return false
		}
		start = i + 1
	}
	return protoLen+utf16Len(url) <= maxURLLength
}

// asciiHosts finds, left to right, the host names made of ASCII (and Latin
// accented) labels ending in a TLD inside a protocol-less host, as
// [start, end) rune offsets into domain.
func asciiHosts(domain []rune) [][2]int {
	n := len(domain)
	// tld[p] is where the TLD starts for a host beginning at p (-1: none);
	// end[p] is where that TLD ends.
	tld := make([]int, n+1)
	end := make([]int, n+1)
	runEnd := make([]int, n+1)
	tld[n], runEnd[n] = -1, n
	for p := n - 1; p >= 0; p-- {
		tld[p] = -1
		if !isASCIIHostRune(domain[p]) {
			runEnd[p] = p
			continue
		}
		runEnd[p] = runEnd[p+1]
		e := runEnd[p]
		if e >= n || domain[e] != '.' {
			continue
		}
		if t := tld[e+1]; t >= 0 {
			tld[p], end[p] = t, end[e+1]
		} else if te := tldEndAt(domain, e+1); te > 0 {
			tld[p], end[p] = e+1, te
		}
	}
	var hosts [][2]int
	for p := 0; p < n; {
		if tld[p] >= 0 {
			hosts = append(hosts, [2]int{p, end[p]})
			p = end[p]
			continue
		}
		p++
	}
	return hosts
}

// tcoPrefix matches https?://t.co/SLUG(?QUERY)? at the start of url and
// returns the match length and the slug length.
func tcoPrefix(url []rune) (end, slug int, ok bool) {
	var p int
	switch {
	case hasPrefixFold(url, "https://t.co/"):
		p = len("https://t.co/")
	case hasPrefixFold(url, "http://t.co/"):
		p = len("http://t.co/")
	default:
		return 0, 0, false
	}
	s := p
	for p < len(url) && isASCIIAlnum(url[p]) {
		p++
	}
	if p == s {
		return 0, 0, false
	}
	slug = p - s
	if p < len(url) && url[p] == '?' {
		if q := queryEnd(url, p+1); q > 0 {
			p = q
		}
	}
	return p, slug, true
}

func hasPrefixFold(rs []rune, prefix string) bool {
	if len(rs) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if unicode.ToLower(rs[i]) != rune(prefix[i]) {
			return false
		}
	}
	return true
}

func hasPrefix(rs []rune, prefix string) bool {
	if len(rs) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if rs[i] != rune(prefix[i]) {
			return false
		}
	}
	return true
}

func utf16Len(rs []rune) int {
	n := 0
	for _, r := range rs {
		n += utf16.RuneLen(r)
	}
	return n
}

// Character classes of the reference's URL grammar.

func isASCIIDigit(r rune) bool { return r >= '0' && r <= '9' }
func isASCIIAlpha(r rune) bool { return (r|0x20) >= 'a' && (r|0x20) <= 'z' }
func isASCIIAlnum(r rune) bool { return isASCIIDigit(r) || isASCIIAlpha(r) }

func isPunycodeRune(r rune) bool { return r == '-' || isASCIIAlnum(r) }

// isInvalidRune reports the characters X refuses in a post.
func isInvalidRune(r rune) bool { return r == nonChar1 || r == bomChar || r == nonChar2 }

func isDirectionalRune(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || r == 0x061C || r == 0x200E || r == 0x200F ||
		(r >= 0x2066 && r <= 0x2069)
}

// isURLSpaceRune is the reference's list of spaces.
func isURLSpaceRune(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0D, r == 0x20, r == 0x85, r == 0xA0, r == 0x1680, r == 0x180E,
		r >= 0x2000 && r <= 0x200A, r == 0x2028, r == 0x2029, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// isDomainRune: anything but the reference's punctuation, spaces, invalid
// characters and directional marks. Note that '"' and '`' are not in its
// punctuation list.
func isDomainRune(r rune) bool {
	if r < 0x80 {
		return asciiClasses[r]&clsNotDomain == 0
	}
	return !isURLSpaceRune(r) && !isInvalidRune(r) && !isDirectionalRune(r)
}

// isLabelRune: characters inside a host label (subdomains may hold '_').
func isLabelRune(r rune) bool { return r == '-' || r == '_' || isDomainRune(r) }

func isURLPrecedingRune(r rune) bool {
	if r < 0x80 {
		return asciiClasses[r]&clsNotPreceding == 0
	}
	return r != '＠' && r != '＃' && !isInvalidRune(r)
}

func isLatinAccentRune(r rune) bool {
	switch {
	case r >= 0xC0 && r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x24F,
		r == 0x253, r == 0x254, r == 0x256, r == 0x257, r == 0x259, r == 0x25B, r == 0x263,
		r == 0x268, r == 0x26F, r == 0x272, r == 0x289, r == 0x28B, r == 0x2BB,
		r >= 0x300 && r <= 0x36F, r >= 0x1E00 && r <= 0x1EFF:
		return true
	}
	return false
}

func isCyrillicRune(r rune) bool { return r >= 0x400 && r <= 0x4FF }

func isPathRune(r rune) bool {
	if r < 0x80 {
		return asciiClasses[r]&clsPath != 0
	}
	return isCyrillicRune(r) || isLatinAccentRune(r) || r == 0x2013
}

func isPathEndRune(r rune) bool {
	if r < 0x80 {
		return asciiClasses[r]&clsPathEnd != 0
	}
	return isCyrillicRune(r) || isLatinAccentRune(r)
}

func isQueryRune(r rune) bool { return r >= 0 && r < 0x80 && asciiClasses[r]&clsQuery != 0 }

func isQueryEndRune(r rune) bool { return r >= 0 && r < 0x80 && asciiClasses[r]&clsQueryEnd != 0 }

// ASCII membership of the grammar's character classes, one bit per class.
const (
	clsNotDomain    = 1 << iota // the reference's punctuation and spaces
	clsNotPreceding             // may not come right before a URL
	clsPath
	clsPathEnd
	clsQuery
	clsQueryEnd
)

// asciiClasses is computed once and only read afterwards.
var asciiClasses = func() (t [128]uint8) {
	set := func(bit uint8, chars string) {
		for i := 0; i < len(chars); i++ {
			t[chars[i]] |= bit
		}
	}
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	set(clsNotDomain, `!'#%&()*+,\-./:;<=>?@[]^_{|}~$`+" \t\n\v\f\r")
	set(clsNotPreceding, alnum+"@$#")
	set(clsPath, alnum+"!*';:=+,.$/%#[]-_~@|&")
	set(clsPathEnd, alnum+"+-=_#/")
	set(clsQuery, alnum+"!?*'@();:&=+$/%#[]-_.,~|")
	set(clsQueryEnd, alnum+"-_&=#/")
	return t
}()

func isASCIIHostRune(r rune) bool { return r == '-' || isASCIIAlnum(r) || isLatinAccentRune(r) }
