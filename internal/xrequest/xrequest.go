// Package xrequest validates the parameters of the universal X API tools
// (x_get, x_post, x_put, x_delete) before any request is built.
//
// Everything here is a pure function: no network, no I/O, no clock. The
// universal tools can reach any X endpoint, so this package is the SSRF and
// request-smuggling boundary: a request that passes Check can only go to one
// of three X hosts over HTTPS, with a path that means the same thing to every
// decoder on the way, and with no header outside a short allow-list (see
// AllowedHeaders), so credentials, framing and routing stay tuitbot's.
//
// Every failure is an *apperr.Error with code apperr.XRequestBlocked. Its
// message starts with the parameter at fault ("method", "host", "path",
// "query", "headers" or "body") and its Extra["param"] carries the same name,
// so an agent can fix the call without guessing.
package xrequest

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// Limits. They are far above anything X's API needs and low enough that a
// hostile caller cannot make tuitbot build huge requests or audit rows.
const (
	// DefaultHost is used when a request names no host.
	DefaultHost = "api.x.com"
	// MaxPathBytes bounds the path as given by the caller.
	MaxPathBytes = 2048
	// MaxHeaders bounds the number of caller-supplied headers before any
	// is looked at; the allow-list and the duplicate rule leave far fewer.
	MaxHeaders = 20
	// MaxHeaderBytes bounds the sum of all header name and value lengths.
	MaxHeaderBytes = 8 << 10
	// MaxQueryParams bounds the number of query parameters.
	MaxQueryParams = 50
	// MaxQueryKeyBytes bounds one query key.
	MaxQueryKeyBytes = 128
	// MaxQueryValueBytes bounds one query value.
	MaxQueryValueBytes = 4096
	// MaxBodyBytes bounds the JSON body of x_post and x_put.
	MaxBodyBytes = 1 << 20
	// MaxBodyDepth bounds JSON nesting so canonicalisation cannot be driven
	// into deep recursion.
	MaxBodyDepth = 64
)

// AllowedHosts returns the only hosts a universal request may name, in a
// fresh slice the caller may keep.
func AllowedHosts() []string {
	return []string{"api.x.com", "upload.x.com", "upload.twitter.com"}
}

// KV is one key/value pair as the tools receive it.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Request is the raw, untrusted input of a universal tool call.
type Request struct {
	Method  string
	Host    string
	Path    string
	Query   []KV
	Headers []KV
	Body    string
}

// Checked is a request that passed every rule. Its fields are what is sent:
// Host is lower-cased, Path is the fully percent-decoded canonical path,
// Header keys are canonicalised. Query and Header are never nil; Body is nil
// when the caller sent none.
type Checked struct {
	Method string
	Host   string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// URL returns https:// + Host + Path, plus the encoded query when there is
// one. Path holds only characters that need no escaping, so the URL's
// string form carries the checked path byte for byte.
func (c *Checked) URL() *url.URL {
	return &url.URL{
		Scheme:   "https",
		Host:     c.Host,
		Path:     c.Path,
		RawQuery: c.Query.Encode(),
	}
}

// Check validates r and returns what may be sent. The first broken rule is
// reported, in the order method, host, path, query, headers, body.
func Check(r Request) (*Checked, error) {
	method, err := checkMethod(r.Method)
	if err != nil {
		return nil, err
	}
	host, err := checkHost(r.Host)
	if err != nil {
		return nil, err
	}
	path, err := checkPath(r.Path)
	if err != nil {
		return nil, err
	}
	query, err := checkQuery(r.Query)
	if err != nil {
		return nil, err
	}
	header, err := checkHeaders(r.Headers)
	if err != nil {
		return nil, err
	}
	body, err := checkBody(method, r.Body)
	if err != nil {
		return nil, err
	}
	return &Checked{
		Method: method,
		Host:   host,
		Path:   path,
		Query:  query,
		Header: header,
		Body:   body,
	}, nil
}

// checkMethod accepts the four verbs exactly. The method comes from the tool
// name, not from the agent, so a lower-case or unknown verb is a wiring bug
// and is refused rather than normalised.
func checkMethod(m string) (string, error) {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete:
		return m, nil
	case "":
		return "", blocked("method", "is required (GET, POST, PUT or DELETE)")
	}
	return "", blocked("method", "%s is not allowed; use GET, POST, PUT or DELETE", quote(m))
}

// blocked builds the package's one error shape. format must not contain the
// parameter name; it is prefixed here so every message starts with it.
func blocked(param, format string, args ...any) *apperr.Error {
	return apperr.New(apperr.XRequestBlocked, "%s: %s", param, fmt.Sprintf(format, args...)).With("param", param)
}

// maxEcho bounds how much caller input is echoed back in an error message.
const maxEcho = 64

// quote renders untrusted input for an error message: Go-quoted so control
// characters and invalid UTF-8 are visible, and cut on a rune boundary so a
// long input cannot bloat the envelope.
func quote(s string) string {
	return strconv.Quote(truncate(s, maxEcho))
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence and
// marks the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
