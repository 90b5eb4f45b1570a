package xrequest

import (
	"net/netip"
	"strings"
)

// maxHostBytes is longer than any DNS name; anything longer is refused
// before the finer checks run.
const maxHostBytes = 253

// checkHost returns the lower-cased host or an error naming the attack.
//
// The exact-match allowlist at the end would refuse every attack on its own.
// The earlier checks exist only to give the caller a precise reason, which
// matters because agents retry with whatever they think the fix is.
func checkHost(h string) (string, error) {
	if h == "" {
		return DefaultHost, nil
	}
	if len(h) > maxHostBytes {
		return "", blocked("host", "is longer than %d bytes", maxHostBytes)
	}
	for i := 0; i < len(h); i++ {
		b := h[i]
		switch {
		case b < 0x20 || b == 0x7f:
			return "", blocked("host", "must not contain control characters")
		case b == ' ':
			return "", blocked("host", "must not contain whitespace")
		case b >= 0x80:
			return "", blocked("host", "must be plain ASCII (internationalised and look-alike names are refused)")
		}
	}
	switch {
	case strings.Contains(h, "@"):
		return "", blocked("host", "must not contain userinfo (user@host)")
	case strings.Contains(h, "://") || strings.ContainsAny(h, `/\?#`):
		return "", blocked("host", "must be a bare host name such as api.x.com, not a URL or path")
	case strings.Contains(h, "%"):
		return "", blocked("host", "must not be percent-encoded")
	case strings.ContainsAny(h, "[]"):
		return "", blocked("host", "must not be an IP address literal (bracketed IPv6)")
	}
	if isIPLiteral(h) {
		return "", blocked("host", "must not be an IP address literal")
	}
	if strings.Contains(h, ":") {
		return "", blocked("host", "must not include a port")
	}
	if strings.HasSuffix(h, ".") {
		return "", blocked("host", "must not end with a dot")
	}
	lower := asciiLower(h)
	if strings.HasPrefix(lower, "xn--") || strings.Contains(lower, ".xn--") {
		return "", blocked("host", "must not be punycode (xn--)")
	}
	for _, allowed := range AllowedHosts() {
		if lower == allowed {
			return lower, nil
		}
	}
	return "", blocked("host", "%s is not allowed; use api.x.com, upload.x.com or upload.twitter.com", quote(h))
}

// isIPLiteral reports whether h is, or would be read by some resolver as,
// an IP address. Besides what netip parses (dotted IPv4, IPv6, IPv4-mapped
// IPv6, zones), URL parsers and inet_aton accept a last label that is a
// bare decimal, octal or hex number ("2130706433", "0177.0.0.1",
// "0x7f000001"), so any name whose last label is numeric counts as one.
func isIPLiteral(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	// Two or more colons cannot be host:port; treat as IPv6 even when netip
	// rejects the exact spelling.
	if strings.Count(h, ":") >= 2 {
		return true
	}
	name := h
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[:i] // "127.0.0.1:80" is an IP literal with a port
	}
	name = strings.TrimSuffix(name, ".")
	last := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		last = name[i+1:]
	}
	return isNumericLabel(last)
}

// isNumericLabel reports whether s is a decimal number or 0x-prefixed hex
// number (octal is a subset of decimal digits), the forms WHATWG URL host
// parsing treats as IPv4.
func isNumericLabel(s string) bool {
	if s == "" {
		return false
	}
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		for i := 2; i < len(s); i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(b byte) bool {
	return ('0' <= b && b <= '9') || ('a' <= b && b <= 'f') || ('A' <= b && b <= 'F')
}

// asciiLower lower-cases ASCII letters only. strings.ToLower would also fold
// look-alikes such as the Kelvin sign into 'k'; those are refused earlier,
// but the allowlist comparison must not depend on that ordering.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}
