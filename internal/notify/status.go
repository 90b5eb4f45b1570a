package notify

import (
	"context"
	"net/url"
	"strings"

	"github.com/tuitbot/tuitbot/internal/config"
)

// Report is get_notification_status' data and `tuitbot notify status`:
// each channel without its secrets, and how its deliveries go.
type Report struct {
	Channels []ChannelReport `json:"channels"`
	// LinksEnabled says whether messages carry signed approval links (the
	// links themselves are never reported).
	LinksEnabled bool `json:"links_enabled"`
}

// ChannelReport is one channel.
type ChannelReport struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Target string   `json:"target"`
	Events []string `json:"events"`
	ChannelStatus
}

// Target describes where a channel delivers without anything secret: a
// host, never a path, query, token or topic.
func Target(ch config.NotifyChannel) string {
	host := func(s string) string {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return "(invalid URL)"
		}
		return u.Scheme + "://" + u.Host
	}
	switch ch.Type {
	case config.ChannelWebhook:
		return host(ch.URL)
	case config.ChannelNtfy:
		// The topic reads every notice: not even a hint of it.
		if ch.TopicEnv != "" {
			return host(ch.Server) + " (the topic in $" + ch.TopicEnv + ")"
		}
		return host(ch.Server) + " (topic " + config.Mask + ")"
	case config.ChannelSlack, config.ChannelDiscord:
		return "the webhook URL in $" + ch.WebhookURLEnv
	case config.ChannelTelegram:
		return host(ch.APIBaseURL) + " (chat " + maskMiddle(ch.ChatID) + ")"
	case config.ChannelEmail:
		return ch.SMTPHost + " (" + strings.Join(ch.To, ", ") + ")"
	}
	return ""
}

// maskMiddle keeps a hint of a name that is not a credential (a Telegram
// chat id: only the bot can write to it) without giving it away.
func maskMiddle(s string) string {
	r := []rune(s)
	if len(r) <= 4 {
		return config.Mask
	}
	return string(r[:2]) + config.Mask + string(r[len(r)-1:])
}

// Report reads every configured channel's status.
func (o *Outbox) Report(ctx context.Context, n config.Notify, linksEnabled bool) (Report, error) {
	names := make([]string, len(n.Channels))
	for i, ch := range n.Channels {
		names[i] = ch.Name
	}
	st, err := o.Status(ctx, names)
	if err != nil {
		return Report{}, err
	}
	out := Report{Channels: make([]ChannelReport, len(n.Channels)), LinksEnabled: linksEnabled}
	for i, ch := range n.Channels {
		out.Channels[i] = ChannelReport{Name: ch.Name, Type: ch.Type, Target: Target(ch), Events: n.EventsFor(ch), ChannelStatus: st[i]}
	}
	return out, nil
}
