package xrequest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// canonicalRequest fixes the field order of the fingerprint material.
type canonicalRequest struct {
	Method string      `json:"method"`
	Host   string      `json:"host"`
	Path   string      `json:"path"`
	Query  [][2]string `json:"query"`
	// Body is left out when there is none, so an absent body and a JSON
	// null body (which X may treat differently) do not collide.
	Body json.RawMessage `json:"body,omitempty"`
}

// CanonicalJSON returns the idempotency fingerprint material of c: method,
// host, canonical path, every query pair sorted by key then value, and the
// whole body re-encoded with sorted object keys. Header values are left out
// (they carry nothing that changes the effect, and may carry secrets), as
// are header names.
//
// Two requests that X would execute identically produce identical bytes;
// the gateway hashes these bytes together with the tool name.
func CanonicalJSON(c *Checked) ([]byte, error) {
	if c == nil {
		return nil, apperr.New(apperr.InternalError, "xrequest: CanonicalJSON of a nil request")
	}
	cr := canonicalRequest{
		Method: c.Method,
		Host:   c.Host,
		Path:   c.Path,
		Query:  sortedPairs(c.Query),
	}
	if c.Body != nil {
		b, err := canonicalBody(c.Body)
		if err != nil {
			return nil, blocked("body", "%v", err)
		}
		cr.Body = b
	}
	out, err := json.Marshal(cr)
	if err != nil {
		return nil, apperr.Wrap(apperr.SerializationError, err, "encode canonical request")
	}
	return out, nil
}

// sortedPairs flattens q into pairs sorted by key, then value. It never
// returns nil, so the fingerprint always has "query":[] rather than null.
func sortedPairs(q url.Values) [][2]string {
	pairs := make([][2]string, 0, len(q))
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, [2]string{k, v})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][0] != pairs[j][0] {
			return pairs[i][0] < pairs[j][0]
		}
		return pairs[i][1] < pairs[j][1]
	})
	return pairs
}

// maxSummaryValue bounds each query value in an audit summary.
const maxSummaryValue = 256

// Summary returns an audit-safe description of c: method, host, path,
// query pairs (sorted; long values cut, values of credential-like keys
// replaced by "[redacted]"), header names only, and the body size in bytes.
// Header values are never included.
//
// Keys: "method", "host", "path" (string), "query" ([]map[string]string
// with "key" and "value"), "header_names" ([]string, sorted canonical
// names), "body_bytes" (int).
func Summary(c *Checked) map[string]any {
	if c == nil {
		return map[string]any{}
	}
	pairs := sortedPairs(c.Query)
	query := make([]map[string]string, 0, len(pairs))
	for _, p := range pairs {
		v := p[1]
		if secretKey(p[0]) {
			v = "[redacted]"
		} else {
			v = truncate(v, maxSummaryValue)
		}
		query = append(query, map[string]string{"key": p[0], "value": v})
	}
	names := make([]string, 0, len(c.Header))
	for n := range c.Header {
		names = append(names, n)
	}
	sort.Strings(names)
	return map[string]any{
		"method":       c.Method,
		"host":         c.Host,
		"path":         c.Path,
		"query":        query,
		"header_names": names,
		"body_bytes":   len(c.Body),
	}
}

// secretKey reports query keys whose values are credentials by name. X's
// API takes no credentials in the query, so such a key is a caller mistake
// whose value must not reach the audit log.
func secretKey(k string) bool {
	k = asciiLower(k)
	for _, s := range []string{"token", "secret", "password", "passwd", "api_key", "apikey", "access_key", "signature"} {
		if strings.Contains(k, s) {
			// Pagination cursors are opaque but not secret, and auditing
			// them is what makes a paged read reproducible.
			return k != "pagination_token" && k != "next_token"
		}
	}
	return false
}

// String keeps header and query values out of debug output and logs, in
// case a caller formats a Checked with %v.
func (c *Checked) String() string {
	if c == nil {
		return "<nil>"
	}
	keys := make([]string, 0, len(c.Query))
	for k := range c.Query {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	names := make([]string, 0, len(c.Header))
	for n := range c.Header {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Sprintf("%s https://%s%s query_keys=%v header_names=%v body=%dB",
		c.Method, c.Host, c.Path, keys, names, len(c.Body))
}
