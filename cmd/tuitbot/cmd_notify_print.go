package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/notify"
)

// NoticePreview is `tuitbot notify test --print`: the test notice as a
// channel would render it, which is not sent.
type NoticePreview struct {
	Channel string `json:"channel,omitempty"`
	Type    string `json:"type,omitempty"`
	Title   string `json:"title"`
	Text    string `json:"text"`
	// Payload is the request body the channel would send (every type but
	// email, which sends the title and text); an ntfy topic is masked.
	Payload json.RawMessage `json:"payload,omitempty"`
}

// previewTestNotice renders the test notice for channel ("" for the words
// every channel uses), so a notice can be seen with no outside service.
func previewTestNotice(a *app.App, channel string) (NoticePreview, error) {
	m := notify.Message{ID: "preview", Event: notify.EventTest, Account: a.Account, Timestamp: a.Now(),
		Items: []notify.Item{app.TestNotice(a.Account)}, Links: []notify.Links{{}}}
	p := NoticePreview{Title: notify.Title(m), Text: notify.PlainText(m)}
	if channel == "" {
		return p, nil
	}
	ch, ok := a.Cfg.Notify.Channel(channel)
	if !ok {
		return p, apperr.New(apperr.InvalidInput, "--channel: no channel named %q in [[notify.channels]]", channel)
	}
	p.Channel, p.Type = ch.Name, ch.Type
	var body []byte
	var err error
	switch ch.Type {
	case config.ChannelNtfy:
		// The topic is a credential: the preview never shows it.
		body, err = notify.NtfyBody(config.Mask, m)
	case config.ChannelWebhook:
		body, err = notify.WebhookBody(m)
	case config.ChannelSlack:
		body, err = notify.SlackBody(m)
	case config.ChannelDiscord:
		body, err = notify.DiscordBody(m)
	case config.ChannelTelegram:
		body, err = json.Marshal(notify.TelegramRequest(ch.ChatID, m))
	}
	if err != nil {
		return p, err
	}
	if body != nil {
		var b bytes.Buffer
		if err := json.Indent(&b, body, "", "  "); err != nil {
			return p, err
		}
		p.Payload = b.Bytes()
	}
	return p, nil
}

func printNoticePreview(w io.Writer, p NoticePreview) {
	if p.Channel == "" {
		fmt.Fprint(w, "the test notice every channel sends (not sent):\n\n")
	} else {
		fmt.Fprintf(w, "channel %s (%s) would send this test notice (not sent):\n\n", p.Channel, p.Type)
	}
	fmt.Fprintf(w, "%s\n%s\n", p.Title, p.Text)
	if p.Payload != nil {
		fmt.Fprintf(w, "\nrequest body:\n%s\n", p.Payload)
	}
}
