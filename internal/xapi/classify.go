package xapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// maxXMessage bounds the part of an error message that comes from X.
const maxXMessage = 300

// Legacy v1.1 error codes X still sends in errors[].code.
const (
	legacyCodeSuspended = 64
	legacyCodeLocked    = 326
	legacyCodeDuplicate = 187
)

// Problem is one entry of X's errors[] (partial errors of a 200 lookup, or
// the list form of an error body).
type Problem struct {
	Title        string `json:"title,omitempty"`
	Detail       string `json:"detail,omitempty"`
	Type         string `json:"type,omitempty"`
	Status       int    `json:"status,omitempty"`
	ResourceType string `json:"resource_type,omitempty"`
	ResourceID   string `json:"resource_id,omitempty"`
	Parameter    string `json:"parameter,omitempty"`
	Value        string `json:"value,omitempty"`
	// Message and Code are the legacy {message, code} form.
	Message string `json:"message,omitempty"`
	Code    int    `json:"code,omitempty"`
}

// UnmarshalJSON tolerates X's occasional string-typed numbers and
// non-string values without failing the whole response.
func (p *Problem) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*p = Problem{
		Title:        rawString(m["title"]),
		Detail:       rawString(m["detail"]),
		Type:         rawString(m["type"]),
		Status:       rawInt(m["status"]),
		ResourceType: rawString(m["resource_type"]),
		ResourceID:   rawString(m["resource_id"]),
		Parameter:    rawString(m["parameter"]),
		Value:        rawString(m["value"]),
		Message:      rawString(m["message"]),
		Code:         rawInt(m["code"]),
	}
	return nil
}

// xErrorBody is the union of the error shapes X answers with: problem+json
// at the top level, errors[] (problem or legacy), and the OAuth form.
type xErrorBody struct {
	Problem
	Errors           []Problem
	OAuthError       string
	OAuthDescription string
	Reason           string
}

func parseErrorBody(body []byte) (xErrorBody, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return xErrorBody{}, false
	}
	var out xErrorBody
	_ = out.Problem.UnmarshalJSON(body)
	if raw, ok := m["errors"]; ok {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			for _, item := range list {
				var p Problem
				if p.UnmarshalJSON(item) == nil {
					out.Errors = append(out.Errors, p)
				}
			}
		}
	}
	out.OAuthError = rawString(m["error"])
	out.OAuthDescription = rawString(m["error_description"])
	out.Reason = rawString(m["reason"])
	return out, true
}

func rawString(r json.RawMessage) string {
	if len(r) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	return ""
}

func rawInt(r json.RawMessage) int {
	if len(r) == 0 {
		return 0
	}
	var n json.Number
	if json.Unmarshal(r, &n) == nil {
		if v, err := n.Int64(); err == nil && v > -1<<31 && v < 1<<31 {
			return int(v)
		}
		return 0
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		var v int
		if _, err := fmt.Sscanf(strings.TrimSpace(s), "%d", &v); err == nil {
			return v
		}
	}
	return 0
}

// summary is the sanitised text X gave: title, detail and type (or the
// legacy message/code), never headers and never the raw body.
func (b xErrorBody) summary() string {
	var parts []string
	add := func(s string) {
		s = cleanText(s)
		if s == "" {
			return
		}
		for _, p := range parts {
			if p == s {
				return
			}
		}
		parts = append(parts, s)
	}
	add(b.Title)
	add(b.Detail)
	if b.Title == "" && b.Detail == "" {
		for _, e := range b.Errors {
			add(e.Title)
			add(e.Detail)
			if e.Message != "" {
				if e.Code != 0 {
					add(fmt.Sprintf("%s (code %d)", e.Message, e.Code))
				} else {
					add(e.Message)
				}
			}
			if len(parts) > 0 {
				break
			}
		}
	}
	if len(parts) == 0 {
		add(b.OAuthError)
		add(b.OAuthDescription)
	}
	typ := b.Type
	if typ == "" && len(b.Errors) > 0 {
		typ = b.Errors[0].Type
	}
	if t := cleanText(typ); t != "" {
		parts = append(parts, "("+t+")")
	}
	return truncate(strings.Join(parts, ": "), maxXMessage)
}

// searchText is every textual field X sent, lower-cased, for matching.
func (b xErrorBody) searchText() string {
	var sb strings.Builder
	for _, s := range []string{b.Title, b.Detail, b.Type, b.Message, b.Reason, b.OAuthError, b.OAuthDescription} {
		sb.WriteString(strings.ToLower(s))
		sb.WriteByte('\n')
	}
	for _, e := range b.Errors {
		for _, s := range []string{e.Title, e.Detail, e.Type, e.Message} {
			sb.WriteString(strings.ToLower(s))
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func (b xErrorBody) hasCode(codes ...int) bool {
	for _, e := range append([]Problem{b.Problem}, b.Errors...) {
		for _, c := range codes {
			if e.Code == c {
				return true
			}
		}
	}
	return false
}

// Classify maps an X error response to an apperr code with a sanitised
// message. It never fails: unparseable bodies yield a message with the
// status only. Headers are used for rate-limit timing only.
func Classify(status int, header http.Header, body []byte, now time.Time) *apperr.Error {
	parsed, _ := parseErrorBody(body)
	text := parsed.summary()
	lower := parsed.searchText()
	with := func(code apperr.Code, lead string) *apperr.Error {
		msg := lead
		if text != "" {
			msg += ": " + text
		}
		return apperr.New(code, "%s", msg).With("http_status", status)
	}
	switch {
	case status == http.StatusTooManyRequests:
		e := with(apperr.XRateLimited, "X rate limit reached (429)")
		if w, until, ok := retryAfter(header, now); ok {
			e.With("retry_after_ms", w.Milliseconds()).With("rate_limit_reset", until.UTC().Format(time.RFC3339))
		}
		return e
	case status == http.StatusUnauthorized:
		e := with(apperr.XAuthExpired, "X rejected the access token (401)")
		e.Message += "; run `tuitbot auth` to sign in again"
		return e
	case status == http.StatusForbidden:
		switch {
		case parsed.hasCode(legacyCodeDuplicate) || strings.Contains(lower, "duplicate"):
			return with(apperr.XDuplicateContent, "X refused the post as duplicate content (403)")
		case parsed.hasCode(legacyCodeSuspended, legacyCodeLocked) ||
			containsWord(lower, "suspended") || containsWord(lower, "locked"):
			return with(apperr.XAccountRestricted, "X says the account is suspended or locked (403)")
		case strings.Contains(lower, "access level"):
			// X's client-forbidden answer for an endpoint or feature
			// outside the app's access level: a higher tier is needed.
			return with(apperr.XFeatureUnavailable, "X reserves this feature for a higher API access level (403)")
		case strings.Contains(lower, "scope") && (strings.Contains(lower, "dm.read") || strings.Contains(lower, "dm.write")):
			// The login did not ask for the optional direct-message scopes.
			return with(apperr.XForbidden, "X refused the request (403)").
				WithHints(apperr.Hint{Do: "run `tuitbot auth --scopes +dm` to grant the direct-message scopes"})
		default:
			return with(apperr.XForbidden, "X refused the request (403)")
		}
	case status == http.StatusNotFound:
		return with(apperr.XNotFound, "X found no such resource (404)")
	case status >= 300 && status < 400:
		return with(apperr.XAPIError, fmt.Sprintf("X answered with a redirect (%d), which the client never follows", status))
	default:
		return with(apperr.XAPIError, fmt.Sprintf("X answered %d", status))
	}
}

// classifyProblems turns the errors[] of a 200 single-resource lookup that
// returned no data into an error.
func classifyProblems(ps []Problem) *apperr.Error {
	if len(ps) == 0 {
		return apperr.New(apperr.XAPIError, "X returned neither data nor errors")
	}
	b := xErrorBody{Errors: ps}
	text := b.summary()
	p := ps[0]
	switch {
	case strings.HasSuffix(p.Type, "/resource-not-found"):
		return apperr.New(apperr.XNotFound, "X found no such resource: %s", text)
	case strings.HasSuffix(p.Type, "/not-authorized-for-resource"), strings.HasSuffix(p.Type, "/resource-unavailable"):
		return apperr.New(apperr.XForbidden, "X refused access to the resource: %s", text)
	default:
		return apperr.New(apperr.XAPIError, "X returned an error: %s", text)
	}
}

// containsWord reports whether w occurs in s delimited by non-letters, so
// "locked" does not match "blocked".
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (start == 0 || !unicode.IsLetter(before)) && (end == len(s) || !unicode.IsLetter(after)) {
			return true
		}
		i = start + 1
	}
}

// cleanText drops control characters and collapses whitespace so X's text
// cannot forge log lines or envelope structure.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var sb strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = sb.Len() > 0
			continue
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// truncate shortens s to at most max bytes without splitting a rune.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ell = "…"
	cut := max - len(ell)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}
