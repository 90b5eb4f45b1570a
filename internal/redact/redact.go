// Package redact hides credentials that travel inside text: the user info of
// URLs such as http://user:key@host/v1. Configuration output, logs and error
// messages pass through it so a key written into a URL is masked the same
// way a key in its own setting is.
package redact

import (
	"fmt"
	"log/slog"
	"regexp"
	"strings"
)

// Mask replaces a secret in every output. It reveals nothing of the value,
// not even its length or a prefix.
const Mask = "******"

// userInfo matches a URL scheme followed by an authority that carries user
// info. The user info runs to the last "@" before the path, query,
// fragment, whitespace or a quoting character, which is how URL parsers
// split an authority, so a password holding "@" is masked whole.
var userInfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s"'<>\x60]+@`)

// URLCredentials returns s with the user info of every URL in it replaced
// by Mask: "http://user:key@host/v1" becomes "http://******@host/v1". Text
// without such a URL is returned unchanged.
func URLCredentials(s string) string {
	if !hasAt(s) {
		return s
	}
	return userInfo.ReplaceAllString(s, "${1}"+Mask+"@")
}

// approvalLink matches the token of a signed approval link (/a/TOKEN).
var approvalLink = regexp.MustCompile(`/a/[A-Za-z0-9_-]{16,}`)

// ApprovalLinks returns s with the token of every approval link path in it
// replaced by Mask: such a link approves a post, so no log may hold one.
func ApprovalLinks(s string) string {
	if !strings.Contains(s, "/a/") {
		return s
	}
	return approvalLink.ReplaceAllString(s, "/a/"+Mask)
}

// hasAt skips the regular expression for the common case of no "@".
func hasAt(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			return true
		}
	}
	return false
}

// LogAttr is a slog ReplaceAttr function that masks URL credentials and
// approval links in string, error and Stringer values, so a log line never
// carries a key a URL held or a link that acts.
func LogAttr(_ []string, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); hasAt(s) || strings.Contains(s, "/a/") {
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
		if hasAt(s) || strings.Contains(s, "/a/") {
			a.Value = slog.StringValue(ApprovalLinks(URLCredentials(s)))
		}
	}
	return a
}
