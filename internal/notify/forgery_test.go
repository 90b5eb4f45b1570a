package notify

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// hostileLines are post lines that try to pass for the notice's own words
// or to format: every Markdown construct Discord renders, Slack's, and a
// copy of the details line.
var hostileLines = []string{
	"# URGENT: approve now",
	"## second heading",
	"-# rule user:trusted_auto · asked by human · expires in 23h59 · item 4",
	"> quoted words",
	">>> quoted block",
	"- a list item",
	"* another list item",
	"1. numbered item",
	"**bold** *italic* _italic_ __underline__ ~~strike~~ ||spoiler||",
	"`code` and a fence",
	"```",
	"rule user:trusted_auto · asked by human · item 4",
	"```",
	"[Approve here](https://evil.example) <https://evil.example|your bank>",
	"<@123> <@&456> <#789> <t:0:R> </deploy:1> <:emoji:1> <!channel>",
	"ends in a backtick `",
}

// hostilePost is the post: its lines joined by every kind of line break a
// reader's screen honours.
func hostilePost() string {
	breaks := []string{"\n", "\r\n", "\u2028", "\u2029", "\r", "\n"}
	var b strings.Builder
	for i, l := range hostileLines {
		if i > 0 {
			b.WriteString(breaks[i%len(breaks)])
		}
		b.WriteString(l)
	}
	return b.String()
}

// splitLines splits at every line break.
func splitLines(s string) []string {
	return regexp.MustCompile("\r\n|[\n\r\v\f\u0085\u2028\u2029]").Split(s, -1)
}

// discordMarkup is the ASCII punctuation Discord's Markdown may act on.
const discordMarkup = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// unescapedAt is the index of the first Markdown character of line that no
// backslash escapes (-1: none).
func unescapedAt(line string) int {
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte(discordMarkup, line[i]) >= 0 {
			return i
		}
	}
	return -1
}

// A post cannot format a notice or pass for its own words. In Discord the
// post is in a code block it cannot close, and every other line escapes
// each Markdown character (headings, subtext, lists, quotes, code,
// emphasis, spoilers, masked links, mentions); in Slack the post is in a
// code block it cannot close; in plain text (ntfy, Telegram, email) every
// line of the post starts with a bar. An agent-chosen caller name cannot
// add a line either. The one details line is the notice's.
func TestPostsCannotForgeTheNotice(t *testing.T) {
	params, _ := json.Marshal(map[string]string{"text": hostilePost()})
	got := notifyOne(t, "x_post_tweet", string(params), func(it *gateway.ApprovalItem) {
		it.Caller = "human\n# big **caller** <@1>"
	})
	for _, name := range []string{config.ChannelDiscord, config.ChannelSlack} {
		t.Run(name, func(t *testing.T) {
			raw := got[name].wire
			segs := strings.Split(raw, "```")
			if len(segs)%2 != 1 {
				t.Fatalf("unbalanced code fences: %d", len(segs)-1)
			}
			var inside, outside []string
			for i, s := range segs {
				if i%2 == 1 {
					inside = append(inside, strings.ReplaceAll(s, "\u200b", ""))
				} else {
					outside = append(outside, strings.Split(s, "\n")...)
				}
			}
			in := strings.Join(inside, "\n")
			if name == config.ChannelSlack {
				in = slackUnescape(in)
			}
			for _, l := range hostileLines {
				if l == "```" {
					continue
				}
				if !strings.Contains(in, strings.ReplaceAll(l, "```", "``")) && !strings.Contains(in, l) {
					t.Errorf("post line %q is not inside a code block", l)
				}
			}
			details := 0
			for i, l := range outside {
				switch {
				case l == "":
				case strings.HasPrefix(l, "[Review and decide](<https://phone.example/a/"), strings.HasPrefix(l, "<https://phone.example/a/"):
				case name == config.ChannelSlack:
					if strings.Contains(l, "trusted_auto") || strings.ContainsAny(l, "<>") || strings.HasPrefix(l, ">") {
						t.Errorf("Slack line %q is out of its code block", l)
					}
					if strings.HasPrefix(l, "rule ") {
						details++
					}
				default:
					body := l
					if i == 0 {
						body = strings.TrimSuffix(strings.TrimPrefix(l, "**"), "**")
					} else if b, ok := strings.CutPrefix(l, "-# "); ok {
						body = b
						details++
					}
					if at := unescapedAt(body); at >= 0 {
						t.Errorf("Discord line %q has unescaped %q at %d", l, body[at], at)
					}
				}
			}
			if details != 1 {
				t.Errorf("%d details lines outside the post, want 1:\n%s", details, raw)
			}
		})
	}
	for _, name := range []string{config.ChannelNtfy, config.ChannelTelegram, config.ChannelEmail} {
		t.Run(name, func(t *testing.T) {
			details := 0
			for _, l := range splitLines(got[name].text) {
				if strings.HasPrefix(l, "rule ") {
					details++
					if !strings.HasPrefix(l, "rule user:review") {
						t.Errorf("a details line that is not the notice's: %q", l)
					}
				}
				for _, h := range hostileLines {
					if strings.Contains(l, h) && !strings.HasPrefix(l, "│ ") {
						t.Errorf("post line %q is shown without its bar: %q", h, l)
					}
				}
				if strings.HasPrefix(l, "# big") {
					t.Errorf("the caller's name made a line: %q", l)
				}
			}
			if details != 1 {
				t.Errorf("%d details lines, want 1:\n%s", details, got[name].text)
			}
		})
	}
}
