package xrequest

import (
	"net/url"
	"unicode/utf8"
)

// checkQuery validates the query pairs and returns them as url.Values,
// preserving the caller's order of values under each key. Repeated keys are
// allowed: they are legal in a query string and url.Values keeps them all.
//
// Invalid UTF-8 is refused because the idempotency fingerprint is JSON, and
// JSON encoding maps every invalid byte to U+FFFD: two different queries
// would then share one fingerprint and the second would be answered as a
// duplicate of the first.
func checkQuery(kvs []KV) (url.Values, error) {
	if len(kvs) > MaxQueryParams {
		return nil, blocked("query", "has %d parameters; at most %d are allowed", len(kvs), MaxQueryParams)
	}
	q := make(url.Values, len(kvs))
	for i, kv := range kvs {
		if kv.Key == "" {
			return nil, blocked("query", "parameter %d has an empty key", i)
		}
		if len(kv.Key) > MaxQueryKeyBytes {
			return nil, blocked("query", "key %s is longer than %d bytes", quote(kv.Key), MaxQueryKeyBytes)
		}
		if len(kv.Value) > MaxQueryValueBytes {
			return nil, blocked("query", "value of %s is longer than %d bytes", quote(kv.Key), MaxQueryValueBytes)
		}
		if why := badText(kv.Key); why != "" {
			return nil, blocked("query", "key %s %s", quote(kv.Key), why)
		}
		if why := badText(kv.Value); why != "" {
			return nil, blocked("query", "value of %s %s", quote(kv.Key), why)
		}
		q[kv.Key] = append(q[kv.Key], kv.Value)
	}
	return q, nil
}

// badText explains why s cannot travel in a query, or returns "". CR, LF
// and NUL are the injection risks; the other control characters are refused
// too because no X parameter needs them and they hide in logs.
func badText(s string) string {
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b == '\r' || b == '\n':
			return "must not contain CR or LF"
		case b == 0:
			return "must not contain a NUL byte"
		case b < 0x20 || b == 0x7f:
			return "must not contain control characters"
		}
	}
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	return ""
}

// PaginationStripped returns a copy of q without the cursor parameters
// pagination_token and next_token, so auto-pagination can add its own
// cursor without sending two. Key matching is exact, as X's parameter names
// are. The input slice is never modified.
func PaginationStripped(q []KV) []KV {
	out := make([]KV, 0, len(q))
	for _, kv := range q {
		if kv.Key == "pagination_token" || kv.Key == "next_token" {
			continue
		}
		out = append(out, kv)
	}
	return out
}
