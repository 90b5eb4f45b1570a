package xrequest

import (
	"net/http"
	"strings"
)

// IsBlockedHeader reports whether a caller may not set the named header
// (ASCII case ignored).
//
// Blocked are tuitbot's own fields (credentials, host), message framing
// that would let a caller smuggle a second request (content-length,
// transfer-encoding, connection and the other hop-by-hop fields), and
// routing hints some front ends trust (forwarded-for style client
// addresses, method and URL overrides). Method overrides matter most: they
// could turn an ungated x_get into a write at a server that honours them.
func IsBlockedHeader(name string) bool {
	n := asciiLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "cookie2", "set-cookie", "host",
		"content-length", "transfer-encoding", "te", "trailer", "connection", "keep-alive",
		"upgrade", "expect", "proxy-connection", "forwarded", "via",
		"x-real-ip", "x-client-ip", "true-client-ip", "x-originating-ip",
		"x-http-method-override", "x-http-method", "x-method-override",
		"x-original-url", "x-rewrite-url":
		return true
	}
	return strings.HasPrefix(n, "x-forwarded-") || strings.HasPrefix(n, "proxy-")
}

// checkHeaders validates the caller's headers and returns them with
// canonical names.
//
// Duplicate names (in any case) are refused: http.Header would merge them
// into one field with two values, and servers disagree on which one wins,
// so what the audit row shows and what X acts on could differ.
//
// Values may hold visible ASCII, space and tab only. CR, LF and NUL would
// split the header block; the other bytes have no use in an X request.
func checkHeaders(kvs []KV) (http.Header, error) {
	if len(kvs) > MaxHeaders {
		return nil, blocked("headers", "has %d entries; at most %d are allowed", len(kvs), MaxHeaders)
	}
	total := 0
	for _, kv := range kvs {
		total += len(kv.Key) + len(kv.Value)
	}
	if total > MaxHeaderBytes {
		return nil, blocked("headers", "names and values total %d bytes; at most %d are allowed", total, MaxHeaderBytes)
	}
	for i, kv := range kvs {
		if kv.Key == "" {
			return nil, blocked("headers", "entry %d has an empty name", i)
		}
		if strings.ContainsAny(kv.Key, "\r\n\x00") {
			return nil, blocked("headers", "name %s must not contain CR, LF or NUL", quote(kv.Key))
		}
		if !isToken(kv.Key) {
			return nil, blocked("headers", "name %s is not a valid HTTP header name", quote(kv.Key))
		}
		// The value is never echoed: it may be a secret the caller should
		// not have put here, and errors end up in envelopes and logs.
		if strings.ContainsAny(kv.Value, "\r\n\x00") {
			return nil, blocked("headers", "value of %s must not contain CR, LF or NUL", quote(kv.Key))
		}
		if !isFieldValue(kv.Value) {
			return nil, blocked("headers", "value of %s may hold only visible ASCII, space and tab", quote(kv.Key))
		}
	}
	var refused []string
	seenRefused := map[string]bool{}
	for _, kv := range kvs {
		if !IsBlockedHeader(kv.Key) {
			continue
		}
		n := asciiLower(kv.Key)
		if !seenRefused[n] {
			seenRefused[n] = true
			refused = append(refused, n)
		}
	}
	if len(refused) > 0 {
		return nil, blocked("headers", "may not set %s (tuitbot sets credentials and framing itself)",
			strings.Join(refused, ", ")).With("blocked_headers", refused)
	}
	h := make(http.Header, len(kvs))
	for _, kv := range kvs {
		name := http.CanonicalHeaderKey(kv.Key)
		if _, dup := h[name]; dup {
			return nil, blocked("headers", "name %s appears more than once", quote(kv.Key))
		}
		h[name] = []string{kv.Value}
	}
	return h, nil
}

// isToken reports whether s is an RFC 9110 token (the grammar of a field
// name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return true
}

func isTokenByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

func isFieldValue(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b != '\t' && (b < 0x20 || b > 0x7e) {
			return false
		}
	}
	return true
}
