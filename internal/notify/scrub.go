package notify

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tuitbot/tuitbot/internal/redact"
)

// credentialed is a channel that knows the credentials its destination
// could quote back in an error: a webhook URL, a bot token, a topic.
type credentialed interface {
	credentials() []string
}

// scrubber masks, in the error text a channel's destination answered, the
// credentials it knows (the channel's own, the links and CSRF values of
// the message) in every spelling a receiver may quote them in, and any
// approval link however escaped. An error kept in the outbox is read by
// get_notification_status and `notify status`: a link in it would let the
// agent approve its own post.
type scrubber struct{ known []string }

// newScrubber knows ch's credentials and those of the links sent.
func newScrubber(ch Channel, links []Links) scrubber {
	var vals []string
	if c, ok := ch.(credentialed); ok {
		vals = append(vals, c.credentials()...)
	}
	for _, l := range links {
		for _, u := range []string{l.View, l.Approve, l.Reject} {
			if u == "" {
				continue
			}
			vals = append(vals, u)
			if i := strings.LastIndex(u, "/a/"); i >= 0 {
				vals = append(vals, u[i+len("/a/"):])
			}
		}
		vals = append(vals, l.ApproveCSRF, l.RejectCSRF)
	}
	var known []string
	for _, v := range vals {
		if v != "" {
			known = append(known, spellings(v)...)
		}
	}
	// Longest first, so a URL is masked whole before a part of it.
	slices.SortFunc(known, func(a, b string) int { return len(b) - len(a) })
	return scrubber{known: slices.Compact(known)}
}

// cut is the mark snippet puts where it shortened a text.
const cut = "…"

// tokenRun matches the base64url run a shortened text ends in before cut.
var tokenRun = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9_-]{12,}` + cut) })

func (s scrubber) scrub(text string) string {
	for _, v := range s.known {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, redact.Mask)
		}
	}
	// A snippet may cut a credential short: its head is still most of it.
	if strings.Contains(text, cut) {
		text = tokenRun().ReplaceAllStringFunc(text, func(m string) string {
			head := strings.TrimSuffix(m, cut)
			for _, v := range s.known {
				if strings.HasPrefix(v, head) {
					return redact.Mask + cut
				}
			}
			return m
		})
	}
	return redact.ApprovalLinks(redact.URLCredentials(text))
}

// spellings are the ways a receiver may quote v in its answer: as is,
// inside a JSON string (with "/" also as \/ or \u002f), and percent-encoded
// (upper- or lower-case hex) as a query value or a path.
func spellings(v string) []string {
	out := []string{v}
	if b, err := json.Marshal(v); err == nil {
		j := strings.TrimSuffix(strings.TrimPrefix(string(b), `"`), `"`)
		out = append(out, j, strings.ReplaceAll(j, "/", `\/`), strings.ReplaceAll(j, "/", `\u002f`), strings.ReplaceAll(j, "/", `\u002F`))
	}
	for _, e := range []string{url.QueryEscape(v), url.PathEscape(v)} {
		out = append(out, e, lowerHex().ReplaceAllStringFunc(e, strings.ToLower))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var lowerHex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%[0-9A-F]{2}`) })

// urlCredentials are the parts of a URL that may be secret: its user
// info's password and its query values and, for a URL that is itself a
// secret (a Slack or Discord webhook, whose path is its key), the whole URL,
// its path and the path's last segment.
func urlCredentials(raw string, secret bool) []string {
	var out []string
	if secret {
		out = append(out, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	if secret && len(u.Path) > 1 {
		out = append(out, u.Path)
		// The last segment is the key itself (Slack's and Discord's).
		if last := u.Path[strings.LastIndex(u.Path, "/")+1:]; len(last) >= 8 {
			out = append(out, last)
		}
	}
	if p, ok := u.User.Password(); ok && p != "" {
		out = append(out, p)
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
