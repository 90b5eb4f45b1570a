package notify

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/describe"
)

// shown is an item as a notice shows it: the review page's words for what
// approving does (internal/describe, actions.DescribeOptions), and the
// text the agent wrote, post by post.
type shown struct {
	// effect says what approving does; target names the post or account
	// it acts on ("The post this likes: 123").
	effect, target string
	// posts are the texts it posts, a thread's in order.
	posts []string
	// options are the posts' settings in the page's words ("Poll: A / B,
	// 1 day").
	options []string
	// media counts attached media, which no notice shows.
	media int
	// whole: the words and posts above are everything approving decides,
	// so a notice that shows them all may carry a one-tap decision.
	whole bool
}

// wholeKeys are the parameters a notice shows in full: the text, a
// thread's posts and the settings DescribeOptions puts in words. An item
// with any other parameter (a target, media, a raw request) is decided on
// the review page.
var wholeKeys = map[string]bool{"text": true, "tweets": true, "options": true}

// shownOf describes it. An item without parameters (a mutation of unknown
// outcome, a scheduled post) shows its text alone.
func shownOf(it Item) shown {
	if len(it.Params) == 0 {
		if it.Text == "" {
			return shown{}
		}
		return shown{posts: []string{it.Text}}
	}
	act := describe.Of(it.Tool, it.Equivalent, it.Params)
	s := shown{effect: act.Effect}
	if l := act.TargetLabel(); l != "" {
		what := it.TargetLine
		if what == "" {
			what = string(act.Target.Kind) + " " + act.Target.ID
		}
		s.target = l + ": " + what
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(it.Params, &p) != nil {
		return s
	}
	var text string
	if json.Unmarshal(p["text"], &text) == nil && text != "" {
		s.posts = []string{text}
	}
	var tweets []json.RawMessage
	if json.Unmarshal(p["tweets"], &tweets) == nil {
		for _, raw := range tweets {
			var t struct {
				Text string `json:"text"`
			}
			if json.Unmarshal(raw, &t.Text) != nil {
				_ = json.Unmarshal(raw, &t)
			}
			s.posts = append(s.posts, t.Text)
		}
	}
	s.options = actions.DescribeOptions(it.Params)
	s.media = countMedia(p["media_ids"])
	s.whole = act.Target.Kind == describe.KindNone && len(s.posts) > 0 && s.media == 0 && !describe.IsRaw(it.Tool)
	for k := range p {
		if !wholeKeys[k] && !(k == "media_ids" && s.media == 0) {
			s.whole = false
		}
	}
	return s
}

// countMedia counts media ids, a post's list or a thread's list of lists.
func countMedia(raw json.RawMessage) int {
	var flat []string
	if json.Unmarshal(raw, &flat) == nil {
		return len(flat)
	}
	var nested [][]string
	if json.Unmarshal(raw, &nested) != nil {
		return 0
	}
	n := 0
	for _, l := range nested {
		n += len(l)
	}
	return n
}

// oneTap reports whether m may carry a decision that acts without the
// review page: one-tap is on, m is about one item, and the message showed
// everything approving decides, uncut.
func oneTap(m Message, cut bool) bool {
	return m.OneTap && !m.Digest() && len(m.Items) == 1 && itemEvents[m.Event] && !cut && shownOf(m.Items[0]).whole
}

// format is how a channel writes a message's parts. The notice's own
// words (fact) are single lines in the channel's escaping; the agent's
// text (block) is set apart so that no line of it can pass for one of
// them.
type format struct {
	fact    func(string) string
	block   func(string) string
	details func(string) string
	link    func(view, label string) string
	// measure is the length the channel's limit counts; limit is that
	// limit for the whole message (0: none).
	measure func(string) int
	limit   int
}

// render writes m's items under head in format f. When the whole would
// pass f's limit it spells out fewer of a digest's items, then cuts the
// posts' text (and the targets' read from X) as little as it must; cut
// reports that it did. A cut post says so, and where the rest is.
func render(head string, m Message, f format) (out string, cut bool) {
	items := min(len(m.Items), maxDigestItems)
	out = renderCut(head, m, f, -1, items)
	if f.limit <= 0 || f.measure(out) <= f.limit {
		return out, false
	}
	fits := func(keep, items int) bool { return f.measure(renderCut(head, m, f, keep, items)) <= f.limit }
	for items > 1 && !fits(0, items) {
		items--
	}
	// The longest cut that fits.
	lo, hi := 0, 0
	for _, it := range m.Items[:items] {
		hi = max(hi, utf8.RuneCountInString(it.TargetLine))
		for _, p := range shownOf(it).posts {
			hi = max(hi, utf8.RuneCountInString(p))
		}
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid, items) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out = renderCut(head, m, f, lo, items)
	if f.measure(out) > f.limit {
		// Even one item's facts do not fit: cut the end.
		r := []rune(out)
		for len(r) > 0 && f.measure(string(r))+1 > f.limit {
			r = r[:len(r)-max(1, (f.measure(string(r))+1-f.limit)/2)]
		}
		out = string(r) + "…"
	}
	return out, true
}

// renderCut renders the first items of m with each post and target read
// from X cut to at most keep runes (-1: none).
func renderCut(head string, m Message, f format, keep, items int) string {
	var b strings.Builder
	line := func(s string) {
		if s != "" {
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	line(head)
	for i, it := range m.Items {
		if i >= items {
			line(f.fact(fmt.Sprintf("…and %d more, on the review page.", len(m.Items)-i)))
			break
		}
		if i > 0 {
			b.WriteString("\n")
		}
		if r := []rune(it.TargetLine); keep >= 0 && len(r) > keep {
			it.TargetLine = string(r[:keep]) + "…"
		}
		s := shownOf(it)
		if s.effect != "" && itemEvents[m.Event] {
			line(f.fact(s.effect))
		}
		line(f.fact(s.target))
		for j, p := range s.posts {
			if len(s.posts) > 1 {
				line(f.fact(fmt.Sprintf("Post %d of %d:", j+1, len(s.posts))))
			}
			text, rest := p, 0
			if r := []rune(p); keep >= 0 && len(r) > keep {
				text, rest = string(r[:keep]), len(r)-keep
			}
			if text != "" {
				line(f.block(text))
			}
			if rest > 0 {
				line(f.fact(fmt.Sprintf("(cut here: %d more characters; the whole post is on the review page)", rest)))
			}
		}
		for _, o := range s.options {
			line(f.fact(o))
		}
		if s.media > 0 {
			line(f.fact(fmt.Sprintf("Media attached: %d, shown on the review page", s.media)))
		}
		line(f.details(Details(it, m.Timestamp)))
		if i < len(m.Links) && m.Links[i].View != "" {
			line(f.link(m.Links[i].View, linkLabel(m.Event)))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// plain is the text format (ntfy, Telegram without parse mode, email):
// every line of the agent's text starts with a bar, and no line of the
// notice's own does.
var plain = format{
	fact:    func(s string) string { return oneLine(s, 1000) },
	block:   func(s string) string { return quoteLines(s, "│ ") },
	details: func(s string) string { return oneLine(s, 1000) },
	link:    func(v, label string) string { return label + ": " + v },
	measure: utf8.RuneCountInString,
}

// PlainText is the whole message as text: per item what approving does,
// its posts (each line behind a bar), settings, details and view link.
func PlainText(m Message) string {
	out, _ := render("", m, plain)
	return out
}

// lineBreaks are every character a reader's screen may break a line at.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\v", "\n", "\f", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// quoteLines prefixes every line of s, whatever breaks it.
func quoteLines(s, prefix string) string {
	lines := strings.Split(lineBreaks.Replace(s), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// utf16Len is a length as Telegram and Discord count it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// byteLen is a length as ntfy counts it.
func byteLen(s string) int { return len(s) }

// linkLabel names what a notice's link opens: a hand-off's page is done
// on X, not decided.
func linkLabel(event string) string {
	if event == EventHandOff {
		return "Do it on X"
	}
	return "Review and decide"
}
