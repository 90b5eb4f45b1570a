package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
)

// Ntfy publishes to an ntfy topic as JSON. Click opens the view link; with
// one-tap links, an http action button POSTs the approve link.
type Ntfy struct {
	name, server, topic, token string
	client                     *http.Client
	now                        func() time.Time
}

// NewNtfy builds the channel; token may be empty (a public topic).
func NewNtfy(name, server, topic, token string, client *http.Client, now func() time.Time) *Ntfy {
	return &Ntfy{name: name, server: strings.TrimRight(server, "/"), topic: topic, token: token, client: client, now: now}
}

func (n *Ntfy) Name() string { return n.name }

// credentials: the topic reads every notice, the token may publish.
func (n *Ntfy) credentials() []string {
	return append(urlCredentials(n.server, false), n.topic, n.token)
}
func (n *Ntfy) Type() string { return config.ChannelNtfy }

type ntfyAction struct {
	Action  string            `json:"action"`
	Label   string            `json:"label"`
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	Clear   bool              `json:"clear,omitempty"`
}

// ntfyLimit is ntfy's message size in bytes; a longer one becomes an
// attachment, or is refused.
const ntfyLimit = 4096

// NtfyBody is the JSON published for m. Its Approve and Reject actions
// come only with a message that shows everything approving decides.
func NtfyBody(topic string, m Message) ([]byte, error) {
	body := struct {
		Topic    string       `json:"topic"`
		Title    string       `json:"title"`
		Message  string       `json:"message"`
		Click    string       `json:"click,omitempty"`
		Tags     []string     `json:"tags,omitempty"`
		Priority int          `json:"priority,omitempty"`
		Actions  []ntfyAction `json:"actions,omitempty"`
	}{Topic: topic, Title: oneLine(Title(m), 200), Tags: []string{"tuitbot"}}
	f := plain
	f.measure, f.limit = byteLen, ntfyLimit
	var cut bool
	body.Message, cut = render("", m, f)
	if len(m.Links) == 1 {
		l := m.Links[0]
		body.Click = l.View
		if l.View != "" {
			body.Actions = append(body.Actions, ntfyAction{Action: "view", Label: "Review", URL: l.View})
		}
		if oneTap(m, cut) && l.Approve != "" && l.ApproveCSRF != "" && l.RejectCSRF != "" {
			hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
			body.Actions = append(body.Actions,
				ntfyAction{Action: "http", Label: "Approve", URL: l.Approve, Method: http.MethodPost, Headers: hdr,
					Body: url.Values{"csrf": {l.ApproveCSRF}}.Encode(), Clear: true},
				ntfyAction{Action: "http", Label: "Reject", URL: l.Reject, Method: http.MethodPost, Headers: hdr,
					Body: url.Values{"csrf": {l.RejectCSRF}}.Encode(), Clear: true})
		}
	}
	if len(m.Items) == 1 && m.Items[0].IntentURL != "" {
		// A hand-off: the phone opens X's own page, where the person
		// presses X's button; nothing here decides anything.
		body.Click = m.Items[0].IntentURL
		body.Actions = append(body.Actions, ntfyAction{Action: "view", Label: "Do it on X", URL: m.Items[0].IntentURL})
	}
	if m.Event == EventUnknown || m.Event == EventPubFailed || m.Event == EventExpiring {
		body.Priority = 4
	}
	return json.Marshal(body)
}

func (n *Ntfy) Send(ctx context.Context, m Message) (string, error) {
	body, err := NtfyBody(n.topic, m)
	if err != nil {
		return "", &SendError{Permanent: true, Err: err}
	}
	h := map[string]string{}
	if n.token != "" {
		h["Authorization"] = "Bearer " + n.token
	}
	_, err = postJSON(ctx, n.client, n.server+"/", body, h, n.now)
	return "", err
}

// chatHook is a chat service's incoming webhook (Slack, Discord): one
// JSON POST to a secret URL, the body built by the service's own format.
type chatHook struct {
	name, typ, url string
	body           func(Message) ([]byte, error)
	client         *http.Client
	now            func() time.Time
}

// NewSlack builds a Slack channel; url is the secret webhook URL. Every
// text is escaped, so a post that says <!channel> or <https://evil|bank>
// is shown, never acted on.
func NewSlack(name, url string, client *http.Client, now func() time.Time) Channel {
	return &chatHook{name: name, typ: config.ChannelSlack, url: url, body: SlackBody, client: client, now: now}
}

// NewDiscord builds a Discord channel; url is the secret webhook URL. It
// posts with allowed_mentions parse [] so no text pings anyone, and
// @everyone and @here are broken up so they do not even look like one.
func NewDiscord(name, url string, client *http.Client, now func() time.Time) Channel {
	return &chatHook{name: name, typ: config.ChannelDiscord, url: url, body: DiscordBody, client: client, now: now}
}

func (c *chatHook) Name() string { return c.name }
func (c *chatHook) Type() string { return c.typ }

// credentials: a Slack or Discord webhook URL is its own key.
func (c *chatHook) credentials() []string { return urlCredentials(c.url, true) }

func (c *chatHook) Send(ctx context.Context, m Message) (string, error) {
	body, err := c.body(m)
	if err != nil {
		return "", &SendError{Permanent: true, Err: err}
	}
	_, err = postJSON(ctx, c.client, c.url, body, nil, c.now)
	return "", err
}

// slackEscape escapes the three characters Slack's text format gives
// meaning to; what remains cannot mention, link or format anything.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// breakBackticks puts a zero-width space after every backtick, so no run
// of them can close the code block the text is in.
func breakBackticks(s string) string {
	return strings.ReplaceAll(s, "`", "`\u200b")
}

// slackFormat: the agent's text goes in a code block, where mrkdwn
// formats nothing and which it cannot close; the notice's own lines are
// single lines, escaped.
var slackFormat = format{
	fact:    func(s string) string { return slackEscape(oneLine(s, 1000)) },
	block:   func(s string) string { return "```" + slackEscape(breakBackticks(lineBreaks.Replace(s))) + "```" },
	details: func(s string) string { return slackEscape(oneLine(s, 1000)) },
	// The link is ours (base URL and a base64url token); only the label
	// is text.
	link:    func(v, label string) string { return "<" + slackEscape(v) + "|" + label + ">" },
	measure: utf16Len,
	limit:   slackLimit,
}

// slackLimit is below the 40,000 characters past which Slack truncates a
// message's text.
const slackLimit = 39000

// SlackBody is the JSON posted for m.
func SlackBody(m Message) ([]byte, error) {
	text, _ := render("*"+slackEscape(oneLine(Title(m), 300))+"*", m, slackFormat)
	return json.Marshal(struct {
		Text        string `json:"text"`
		Mrkdwn      bool   `json:"mrkdwn"`
		LinkNames   bool   `json:"link_names"`
		UnfurlLinks bool   `json:"unfurl_links"`
		UnfurlMedia bool   `json:"unfurl_media"`
	}{Text: text, Mrkdwn: true})
}

// discordMentions breaks up what reads as a mention: allowed_mentions
// already stops the ping, this stops the look.
var discordMentions = strings.NewReplacer("@everyone", "@\u200beveryone", "@here", "@\u200bhere", "<@", "<\u200b@", "<#", "<\u200b#")

// discordEscape makes untrusted text one literal line of Discord
// markdown: every ASCII punctuation character gets a backslash, which
// Discord drops when it shows the text, so no heading (#), subtext (-#),
// list (-, *, 1.), quote (>), code (`), emphasis (*, _, ~), spoiler (|),
// masked link ([](…)), mention, emoji or timestamp (<…>) is rendered.
func discordEscape(s string) string {
	s = oneLine(s, 1000)
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return discordMentions.Replace(b.String())
}

// discordFormat: the agent's text goes in a code block, where Discord
// renders no markdown and which it cannot close; the notice's own lines
// are escaped, the details as Discord's small print.
var discordFormat = format{
	fact: discordEscape,
	block: func(s string) string {
		return "```\n" + discordMentions.Replace(breakBackticks(lineBreaks.Replace(s))) + "\n```"
	},
	details: func(s string) string { return "-# " + discordEscape(s) },
	link:    func(v, label string) string { return "[" + label + "](<" + v + ">)" },
	measure: utf16Len,
	limit:   discordLimit,
}

// discordLimit is a Discord message's content length.
const discordLimit = 2000

// DiscordBody is the JSON posted for m.
func DiscordBody(m Message) ([]byte, error) {
	content, _ := render("**"+discordEscape(oneLine(Title(m), 300))+"**", m, discordFormat)
	type mentions struct {
		Parse []string `json:"parse"`
	}
	return json.Marshal(struct {
		Content         string   `json:"content"`
		AllowedMentions mentions `json:"allowed_mentions"`
	}{content, mentions{Parse: []string{}}})
}
