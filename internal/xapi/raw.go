package xapi

import (
	"context"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"unicode"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// RawRequest is a universal-tool request. Host is a logical host ("" means
// api.x.com); Path starts with "/" and carries no query.
type RawRequest struct {
	Method string
	Host   string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// RawResponse is X's answer, whatever its status.
type RawResponse struct {
	Status     int
	Header     http.Header
	Body       []byte
	RateLimit  *RateLimitState
	RetryCount int
	// OutcomeUnknown is true when a POST was answered with a 5xx: X may or
	// may not have applied it.
	OutcomeUnknown bool
	// Endpoint is the ledger key the request was recorded under.
	Endpoint string
}

// blockedRawHeaders are headers a caller must not set: the client owns
// authentication and framing, and an idempotency header would let the
// standard transport silently replay a POST.
var blockedRawHeaders = map[string]bool{
	"Authorization":       true,
	"Proxy-Authorization": true,
	"Host":                true,
	"Cookie":              true,
	"Content-Length":      true,
	"Transfer-Encoding":   true,
	"Connection":          true,
	"Proxy-Connection":    true,
	"Keep-Alive":          true,
	"Te":                  true,
	"Trailer":             true,
	"Upgrade":             true,
	"Idempotency-Key":     true,
	"X-Idempotency-Key":   true,
}

// Raw sends a universal request. It never fails on an HTTP status: 3xx, 4xx
// and 5xx come back as a RawResponse. Errors mean the request was refused
// before sending (apperr.XRequestBlocked, x_not_configured) or no answer
// arrived (x_network_error; x_outcome_unknown for a POST that may have
// reached X). GET, PUT and DELETE are retried on 429, 5xx and network
// errors; POST only on 429 or when the connection was never made.
func (c *Client) Raw(ctx context.Context, rr RawRequest) (*RawResponse, error) {
	method := strings.ToUpper(strings.TrimSpace(rr.Method))
	switch method {
	case "GET", "POST", "PUT", "DELETE":
	default:
		return nil, apperr.New(apperr.XRequestBlocked, "method: %q is not allowed (GET, POST, PUT, DELETE)", truncate(rr.Method, 20))
	}
	if _, err := c.resolveHost(rr.Host); err != nil {
		return nil, err
	}
	if err := checkRawPath(rr.Path); err != nil {
		return nil, err
	}
	header := http.Header{}
	for k, vs := range rr.Header {
		if !validHeaderName(k) {
			return nil, apperr.New(apperr.XRequestBlocked, "header: %q is not a valid header name", truncate(k, 60))
		}
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if blockedRawHeaders[ck] {
			return nil, apperr.New(apperr.XRequestBlocked, "header: %s may not be set by the caller", ck)
		}
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, apperr.New(apperr.XRequestBlocked, "header: value of %s contains a control character", ck)
			}
			header.Add(ck, v)
		}
	}
	var body []byte
	if len(rr.Body) > 0 {
		body = append([]byte(nil), rr.Body...)
	}
	r := newRequest(method, rr.Host, rr.Path, rr.Query, body)
	r.raw = true
	r.header = header
	if method == "POST" {
		r.class = classCreate
	}
	res, err := c.exec(ctx, r)
	if err != nil {
		return nil, err
	}
	if method == "GET" && res.status == http.StatusOK && dmEventsRoute(rr.Path) {
		// A universal read of DM events learns who wrote to the account
		// as the typed one does.
		if events, err := ParseDMEvents(res.body); err == nil {
			c.noteDMSenders(ctx, events)
		}
	}
	if method == "GET" && res.status == http.StatusOK && c.mentions != nil {
		if user, ok := mentionsRoute(rr.Path); ok {
			c.noteMentions(ctx, user, res.body)
		}
	}
	return &RawResponse{
		Status:         res.status,
		Header:         res.header,
		Body:           res.body,
		RateLimit:      res.rateLimit,
		RetryCount:     res.retries,
		OutcomeUnknown: res.outcomeUnknown,
		Endpoint:       r.endpoint,
	}, nil
}

// checkRawPath keeps the path a plain absolute path: no query, fragment,
// traversal or control characters (the query travels in Query).
func checkRawPath(p string) error {
	switch {
	case p == "" || p[0] != '/':
		return apperr.New(apperr.XRequestBlocked, "path: must start with /")
	case strings.HasPrefix(p, "//"):
		return apperr.New(apperr.XRequestBlocked, "path: must not start with //")
	case strings.ContainsAny(p, "?#\\"):
		return apperr.New(apperr.XRequestBlocked, "path: must not contain ?, # or \\ (pass the query separately)")
	case len(p) > 2048:
		return apperr.New(apperr.XRequestBlocked, "path: longer than 2048 bytes")
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return apperr.New(apperr.XRequestBlocked, "path: contains a control or space character")
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." {
			return apperr.New(apperr.XRequestBlocked, "path: must not contain . or .. segments")
		}
	}
	lower := strings.ToLower(p)
	if strings.Contains(lower, "%2e") || strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
		return apperr.New(apperr.XRequestBlocked, "path: must not contain encoded dots or slashes")
	}
	if _, err := url.PathUnescape(p); err != nil {
		return apperr.New(apperr.XRequestBlocked, "path: invalid percent-encoding")
	}
	return nil
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		ch := k[i]
		if ch <= ' ' || ch >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", ch) >= 0 {
			return false
		}
	}
	return true
}

// safeHeader copies X's response headers without cookies and without any
// header that would carry the bearer token back to the caller.
func safeHeader(h http.Header, token string) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		if k == "Set-Cookie" || k == "Authorization" {
			continue
		}
		leak := false
		for _, v := range vs {
			if token != "" && strings.Contains(v, token) {
				leak = true
			}
		}
		if !leak {
			out[k] = append([]string(nil), vs...)
		}
	}
	return out
}
