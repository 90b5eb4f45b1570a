package xrequest

import (
	"errors"
	"strings"
)

// maxDecodeRounds bounds how many layers of percent-encoding are peeled.
// X paths never need more than one; a few more are tolerated so an agent
// that double-encodes an id still gets a precise error or a clean path,
// and anything deeper is refused outright.
const maxDecodeRounds = 4

var errBadEscape = errors.New("invalid percent escape")

// checkPath validates p and returns its canonical form: the path with every
// layer of percent-encoding removed. That canonical form is what is sent.
//
// Each layer (the raw input and every decoded form) is checked against the
// same rules, because a server or proxy on the way may decode any number of
// times: a rule that only looked at the raw input would let "%252e%252e"
// through as a traversal after two decodes.
func checkPath(p string) (string, error) {
	if p == "" {
		return "", blocked("path", "is required and must start with '/'")
	}
	if len(p) > MaxPathBytes {
		return "", blocked("path", "is longer than %d bytes", MaxPathBytes)
	}
	if p[0] != '/' {
		return "", blocked("path", "must start with '/' (for example /2/tweets)")
	}
	if len(p) > 1 && p[1] == '/' {
		return "", blocked("path", "must start with exactly one '/'")
	}
	layer := p
	for round := 0; ; round++ {
		if err := checkPathLayer(p, layer, round > 0); err != nil {
			return "", err
		}
		if !strings.Contains(layer, "%") {
			return layer, nil
		}
		if round == maxDecodeRounds {
			return "", blocked("path", "is percent-encoded more than %d times", maxDecodeRounds)
		}
		next, err := percentDecode(layer)
		if err != nil {
			if round == 0 {
				return "", blocked("path", "has an invalid percent escape ('%%' must be followed by two hex digits)")
			}
			return "", blocked("path", "decodes to an invalid percent escape (a literal '%%' is not allowed in a path)")
		}
		layer = next
	}
}

// checkPathLayer applies the character and segment rules to one decoding
// layer s of the caller's path orig. encoded says whether s came from
// decoding, so the message can say the offending character was hidden
// behind percent-encoding.
func checkPathLayer(orig, s string, encoded bool) error {
	how := ""
	if encoded {
		how = " (percent-encoded)"
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b == 0:
			return blocked("path", "must not contain a NUL byte (%%00)%s", how)
		case b < 0x20 || b == 0x7f:
			return blocked("path", "must not contain control characters%s", how)
		case b >= 0x80:
			return blocked("path", "must be ASCII%s", how)
		case b == ' ':
			return blocked("path", "must not contain whitespace%s", how)
		case b == '\\':
			return blocked("path", "must not contain a backslash%s", how)
		case b == '?':
			return blocked("path", "must not contain '?'%s; pass parameters in query", how)
		case b == '#':
			return blocked("path", "must not contain '#'%s; fragments are never sent", how)
		case b == ';':
			// Matrix parameters ("/2/tweets;v=1/ID") are stripped by some
			// servers and kept by others, so a path carrying one means
			// different endpoints to tuitbot's classifier and to X. No X
			// endpoint takes them; the path is named so the agent sees
			// which spelling was refused.
			return blocked("path", "%s must not contain ';'%s; matrix parameters are not allowed", quote(orig), how)
		case b == '{' || b == '}':
			return blocked("path", "contains a template brace%s; replace placeholders like {id} with real values", how)
		case !pathByteAllowed(b):
			return blocked("path", "must not contain %q%s", string(rune(b)), how)
		}
	}
	if strings.Contains(s, "//") {
		return blocked("path", "must not contain '//'%s", how)
	}
	for seg := range strings.SplitSeq(s, "/") {
		if isDotSegment(seg) {
			return blocked("path", "must not contain '.' or '..' segments%s", how)
		}
	}
	return nil
}

// pathByteAllowed is the set of bytes a path may hold: RFC 3986 unreserved
// characters, the sub-delimiters Go's URL encoder leaves alone in a path
// except ';' (matrix parameters), '/', and '%' (decoded away before
// sending). Keeping to bytes the encoder
// never rewrites is what makes the sent path equal the checked one.
func pathByteAllowed(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '-', '.', '_', '~', '/', '%', '$', '&', '+', ',', '=', ':', '@':
		return true
	}
	return false
}

// isDotSegment reports segments that some server normalises as "here" or
// "up": ".", "..", and variants like "..." that Windows treats the same
// way. The servlet form "..;param" never gets here: ';' is refused first.
func isDotSegment(seg string) bool {
	if seg == "" {
		return false
	}
	return strings.Trim(seg, ".") == ""
}

// percentDecode decodes every %XX once. Unlike url.PathUnescape it treats
// '+' as a literal and fails on any '%' not followed by two hex digits.
func percentDecode(s string) (string, error) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", errBadEscape
		}
		b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
