package notify

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// An error text quoting a channel's secret URL or the links of the
// message, in any spelling or cut short, keeps none of them.
func TestScrubMasksEverySpelling(t *testing.T) {
	const (
		hookURL = "https://discord.example/api/webhooks/1234/hook-key-4f1a9c"
		view    = "https://phone.example.ts.net/a/AQEAAAAAAAAAAgAAAABrCvlOU5j9eiJXImCzgZtbYPhNKQ"
		tok     = "AQEAAAAAAAAAAgAAAABrCvlOU5j9eiJXImCzgZtbYPhNKQ"
		csrf    = "csrf-value-b71e0c2d99"
	)
	ch := NewDiscord("guild", hookURL, nil, time.Now)
	s := newScrubber(ch, []Links{{View: view, ApproveCSRF: csrf}})
	jsonSlash := strings.ReplaceAll(hookURL, "/", `\/`)
	for name, in := range map[string]string{
		"plain URL":         "500 for " + hookURL,
		"JSON \\/":          `{"url":"` + jsonSlash + `"}`,
		"JSON \\u002f":      `{"url":"` + strings.ReplaceAll(hookURL, "/", `\u002f`) + `"}`,
		"query-encoded":     "next=" + url.QueryEscape(hookURL),
		"lower-case hex":    "next=" + strings.ToLower(url.QueryEscape(hookURL)),
		"path alone":        "no route for /api/webhooks/1234/hook-key-4f1a9c",
		"link":              "upstream error for " + view,
		"link in JSON":      `{"u":"` + strings.ReplaceAll(view, "/", `\/`) + `"}`,
		"token cut short":   "bad token " + tok[:30] + cut,
		"token alone":       "unknown token " + tok,
		"csrf":              "csrf=" + csrf + " refused",
		"encoded link":      "next=" + url.QueryEscape(view),
		"twice-encoded":     "next=" + url.QueryEscape(url.QueryEscape(view)),
		"the key of a path": "hook-key-4f1a9c is not a webhook",
	} {
		t.Run(name, func(t *testing.T) {
			got := s.scrub(in)
			for _, leak := range []string{"hook-key-4f1a9c", tok[12:30], csrf} {
				if strings.Contains(got, leak) {
					t.Errorf("scrub(%q) = %q keeps %q", in, got, leak)
				}
			}
		})
	}
	if got := s.scrub("status 503: slow down"); got != "status 503: slow down" {
		t.Errorf("an error without secrets changed: %q", got)
	}
}
