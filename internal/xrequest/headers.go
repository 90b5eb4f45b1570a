package xrequest

import (
	"mime"
	"net/http"
	"strings"
)

// AllowedHeaders returns, in canonical form, the only request headers a
// universal request may carry, in a fresh slice the caller may keep.
//
// It is an allow-list because a block-list loses to the next routing hint
// some front end trusts (X-Original-Host, X-Override-URL, Client-IP, ...):
// anything not named here is refused. Each entry is a header X's API
// documents or tolerates and that an agent can have a reason to set:
//
//   - Accept: content negotiation; X answers JSON, and an agent may say so
//     explicitly (tuitbot sends application/json when it is absent).
//   - Accept-Language: the language of localised strings in some answers
//     (trends, error texts); it selects nothing on the account.
//   - Content-Type: restated by agents that copy X's examples; only
//     application/json is accepted, because the body is checked as JSON.
//   - If-None-Match: a conditional read with an ETag X returned; it can
//     only turn an answer into 304.
//   - User-Agent: identifies the calling agent in X's logs; tuitbot sends
//     its own when it is absent.
//
// Deliberately left out: Accept-Encoding (setting it by hand turns off the
// transport's transparent decompression, so the JSON would arrive
// compressed), caching and conditional-write headers X does not document,
// and every credential, framing, forwarding and override header.
func AllowedHeaders() []string {
	return []string{"Accept", "Accept-Language", "Content-Type", "If-None-Match", "User-Agent"}
}

// headerAllowed reports whether a caller may set the named header (ASCII
// case ignored).
func headerAllowed(name string) bool {
	n := asciiLower(name)
	for _, a := range AllowedHeaders() {
		if n == asciiLower(a) {
			return true
		}
	}
	return false
}

// checkContentType accepts application/json with at most a UTF-8 charset.
// The body is validated as JSON; declaring another type (form encoding in
// particular) would make X parse bytes that were never checked as what
// they claim to be, and could hide parameters inside a JSON string.
func checkContentType(v string) error {
	mt, params, err := mime.ParseMediaType(v)
	if err == nil && mt == "application/json" {
		cs, hasCS := params["charset"]
		if len(params) == 0 || (len(params) == 1 && hasCS && asciiLower(cs) == "utf-8") {
			return nil
		}
	}
	return blocked("headers", "value of \"Content-Type\" must be application/json (optionally with charset=utf-8); the body is sent as JSON")
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
		if headerAllowed(kv.Key) {
			continue
		}
		n := asciiLower(kv.Key)
		if !seenRefused[n] {
			seenRefused[n] = true
			refused = append(refused, n)
		}
	}
	if len(refused) > 0 {
		allowed := AllowedHeaders()
		for i, a := range allowed {
			allowed[i] = asciiLower(a)
		}
		return nil, blocked("headers", "may not set %s (only %s are allowed; tuitbot sets credentials, framing and routing itself)",
			strings.Join(refused, ", "), strings.Join(allowed, ", ")).
			With("blocked_headers", refused).With("allowed_headers", AllowedHeaders())
	}
	for _, kv := range kvs {
		if asciiLower(kv.Key) == "content-type" {
			if err := checkContentType(kv.Value); err != nil {
				return nil, err
			}
		}
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
