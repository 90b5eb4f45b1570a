// Package redact hides credentials that travel inside text: the user info
// of URLs such as http://user:key@host/v1, and the values of their query
// and fragment parameters named like a credential (?key=, ?api_key=,
// #access_token=). Configuration output, logs and error messages pass
// through it so a key written into a URL is masked the same way a key in
// its own setting is.
package redact

import (
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Mask replaces a secret in every output. It reveals nothing of the value,
// not even its length or a prefix.
const Mask = "******"

// userInfo matches a URL scheme followed by an authority that carries user
// info. The user info runs to the last "@" before the path, query,
// fragment, whitespace or a quoting character, which is how URL parsers
// split an authority, so a password holding "@" is masked whole.
var userInfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s"'<>\x60]+@`) })

// anyURL matches a URL with a scheme, up to whitespace or a quoting
// character.
var anyURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]*://[^\s"'<>\x60]*`) })

// param matches one name=value pair of a query or fragment. It also finds
// the pairs of a URL nested in another's query (?next=https://h/?token=t).
var param = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([?&;#])([^?&;#=/\s]+)=([^?&;#\s]*)`) })

// URLCredentials returns s with the credentials of every URL in it
// replaced by Mask: the user info ("http://user:key@host/v1" becomes
// "http://******@host/v1") and the value of every query or fragment
// parameter whose name is a credential's (see SecretParam), so
// "https://h/v1?key=k&model=m" becomes "https://h/v1?key=******&model=m".
// Text without a URL is returned unchanged.
func URLCredentials(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	if strings.Contains(s, "@") {
		s = userInfo().ReplaceAllString(s, "${1}"+Mask+"@")
	}
	if !strings.ContainsAny(s, "?#") {
		return s
	}
	return anyURL().ReplaceAllStringFunc(s, maskParams)
}

// maskParams masks the secret parameters of one URL.
func maskParams(u string) string {
	return param().ReplaceAllStringFunc(u, func(p string) string {
		m := param().FindStringSubmatch(p)
		if m[3] == "" {
			return p
		}
		name, err := url.QueryUnescape(m[2])
		if err != nil {
			name = m[2]
		}
		if !SecretParam(name) {
			return p
		}
		return m[1] + m[2] + "=" + Mask
	})
}

// linkSlash is a "/" as text quoting a link may spell it: as is, escaped
// in JSON (\/, \u002f, escaped again when JSON is nested) or
// percent-encoded (%2F, %252F when encoded twice).
const linkSlash = `(/|\\+/|\\+u002[fF]|%2[fF]|%252[fF])`

// approvalLink matches the token of a signed approval link (/a/TOKEN),
// whatever the spelling of its slashes. The token's own characters
// (base64url) are the same in every spelling.
var approvalLink = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(linkSlash + `a` + linkSlash + `[A-Za-z0-9_-]{16,}`) })

// mayHoldLink is a cheap test that s may hold a link in some spelling.
func mayHoldLink(s string) bool { return strings.ContainsAny(s, "/\\%") }

// ApprovalLinks returns s with the token of every approval link path in it
// replaced by Mask, however the text escapes the link (a receiver's error
// answer quotes it as JSON or in an encoded query): such a link approves a
// post, so no log or stored error may hold one.
func ApprovalLinks(s string) string {
	if !mayHoldLink(s) {
		return s
	}
	return approvalLink().ReplaceAllString(s, "${1}a${2}"+Mask)
}

// LogAttr is a slog ReplaceAttr function that masks URL credentials and
// approval links in string, error and Stringer values, so a log line never
// carries a key a URL held or a link that acts.
func LogAttr(_ []string, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); strings.Contains(s, "://") || mayHoldLink(s) {
			a.Value = slog.StringValue(ApprovalLinks(URLCredentials(s)))
		}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			return a
		}
		if strings.Contains(s, "://") || mayHoldLink(s) {
			a.Value = slog.StringValue(ApprovalLinks(URLCredentials(s)))
		}
	}
	return a
}

// URLQuery returns the URL u with the value of every query parameter
// replaced by Mask, its user info masked and its fragment (never sent to a
// server) dropped, whatever the parameters are named. A signed URL (an S3
// presigned link, a CDN token) authorizes a download by the names
// SecretParam knows and by names it cannot know, so a record of such a URL
// keeps where it pointed and the parameter names, never a value. Text that
// does not parse as a URL is masked whole.
func URLQuery(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return Mask
	}
	if pu.User != nil {
		pu.User = url.User(Mask)
	}
	pu.RawQuery = maskValues(pu.RawQuery)
	pu.ForceQuery = false
	pu.Fragment, pu.RawFragment = "", ""
	return pu.String()
}

// maskValues masks every value of an escaped name=value list, keeping the
// order and names; a part with no "=" is masked whole unless it is empty.
func maskValues(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.FieldsFunc(raw, func(r rune) bool { return r == '&' || r == ';' })
	for i, p := range parts {
		name, _, ok := strings.Cut(p, "=")
		if !ok {
			parts[i] = Mask
			continue
		}
		parts[i] = name + "=" + Mask
	}
	return strings.Join(parts, "&")
}
