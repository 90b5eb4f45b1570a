package llm

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/redact"
)

// maxMessageRunes bounds how much of a provider's error text is passed on.
const maxMessageRunes = 300

// keyLike matches strings shaped like provider credentials, so that a key
// echoed back by a server (or a proxy) is hidden even when it is not the
// configured one.
var keyLike = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:sk|pk|rk|gsk|xai)-[A-Za-z0-9_\-]{8,}|\bBearer\s+[A-Za-z0-9._~+/=\-]{8,}`)
})

// sanitize makes a provider message safe to show: the configured key and
// anything key-shaped is replaced, control characters become spaces,
// whitespace runs collapse, and the result is cut to maxMessageRunes on a
// rune boundary.
func sanitize(msg, apiKey string) string {
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "\uFFFD")
	}
	if k := strings.TrimSpace(apiKey); len(k) >= 4 {
		msg = strings.ReplaceAll(msg, k, "[redacted]")
	}
	msg = keyLike().ReplaceAllString(msg, "[redacted]")
	// A proxy or gateway URL quoted back may carry its own credentials.
	msg = redact.URLCredentials(msg)
	var b strings.Builder
	b.Grow(len(msg))
	space := false
	n := 0
	for _, r := range msg {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
				n++
			}
			space = true
			continue
		}
		if n >= maxMessageRunes {
			return strings.TrimRight(b.String(), " ") + "…"
		}
		space = false
		b.WriteRune(r)
		n++
	}
	return strings.TrimRight(b.String(), " ")
}
