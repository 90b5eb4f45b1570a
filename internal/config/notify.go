package config

import (
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Notify configures the notifications a person gets when an item waits for
// them, and where they go ([[notify.channels]]).
type Notify struct {
	PublicBaseURL      string   `toml:"public_base_url" doc:"Base URL a phone reaches this machine at (https://, or http:// to a loopback host for local use); approval links are PUBLIC_BASE_URL/a/TOKEN. Empty: messages carry no links."`
	Events             []string `toml:"events" doc:"Events sent to every channel that names none of its own: approval.created, approval.edited, approval.expiring, mutation.unknown, publish.failed, publish.rescheduled, approval.decided, post.published."`
	BatchWindowSeconds int      `toml:"batch_window_seconds" doc:"Items queued within this many seconds of a channel's last message become one digest for that channel (0 = one message per item)."`
	MaxPerHour         int      `toml:"max_per_hour" doc:"Most messages a channel sends in an hour; past it one \"N more pending\" message is sent when the hour ends (0 = no cap)."`
	ExpiringMinutes    int      `toml:"expiring_minutes" doc:"approval.expiring is sent this many minutes before a pending item expires."`
	// Channels are file-only: their secrets are named by *_env keys and
	// read from the environment, never written in the file.
	Channels []NotifyChannel `toml:"channels" doc:"Where notifications go ([[notify.channels]])."`
}

// NotifyChannel is one [[notify.channels]] entry. Which keys apply depends
// on Type. Secrets are named (the *_env keys, tagged secret:"env"), not
// given; the one secret the file may hold, an ntfy topic, is tagged
// secret:"true" and masked in every output.
type NotifyChannel struct {
	Name   string   `toml:"name" json:"name"`
	Type   string   `toml:"type" json:"type"`
	Events []string `toml:"events,omitempty" json:"events,omitempty"`

	// webhook
	URL       string `toml:"url,omitempty" json:"url,omitempty"`
	SecretEnv string `toml:"secret_env,omitempty" json:"secret_env,omitempty" secret:"env"`
	// ntfy. Anyone who knows a topic reads what is published to it, the
	// approval links included: it is a credential like a token.
	Server   string `toml:"server,omitempty" json:"server,omitempty"`
	Topic    string `toml:"topic,omitempty" json:"topic,omitempty" secret:"true"`
	TopicEnv string `toml:"topic_env,omitempty" json:"topic_env,omitempty" secret:"env"`
	TokenEnv string `toml:"token_env,omitempty" json:"token_env,omitempty" secret:"env"`
	// slack, discord
	WebhookURLEnv string `toml:"webhook_url_env,omitempty" json:"webhook_url_env,omitempty" secret:"env"`
	// telegram
	BotTokenEnv    string  `toml:"bot_token_env,omitempty" json:"bot_token_env,omitempty" secret:"env"`
	ChatID         string  `toml:"chat_id,omitempty" json:"chat_id,omitempty"`
	AllowedUserIDs []int64 `toml:"allowed_user_ids,omitempty" json:"allowed_user_ids,omitempty"`
	APIBaseURL     string  `toml:"api_base_url,omitempty" json:"api_base_url,omitempty"`
	// email
	SMTPHost    string   `toml:"smtp_host,omitempty" json:"smtp_host,omitempty"`
	SMTPPort    int      `toml:"smtp_port,omitzero" json:"smtp_port,omitempty"`
	From        string   `toml:"from,omitempty" json:"from,omitempty"`
	To          []string `toml:"to,omitempty" json:"to,omitempty"`
	Username    string   `toml:"username,omitempty" json:"username,omitempty"`
	PasswordEnv string   `toml:"password_env,omitempty" json:"password_env,omitempty" secret:"env"`
	TLS         string   `toml:"tls,omitempty" json:"tls,omitempty"`
}

// ApprovalLinks configures signed one-time approve/reject links.
type ApprovalLinks struct {
	Enabled    bool   `toml:"enabled" doc:"Put signed one-time view/approve/reject links (PUBLIC_BASE_URL/a/TOKEN) into notifications, and a hand-off's link to its page with Do it on X; needs notify.public_base_url."`
	TTLMinutes int    `toml:"ttl_minutes" doc:"Minutes a link stays valid (never past the item's own expiry)."`
	OneTap     bool   `toml:"one_tap" doc:"Let ntfy and Telegram buttons approve or reject without opening the page, on notices that show the whole decision uncut (a post or thread with no target, media or raw request); others carry only the view link."`
	Listen     string `toml:"listen" doc:"Optional extra host:port on which tuitbot web serves only the /a/ links (empty = only the review page's own listener serves them)."`
}

// Channel types.
const (
	ChannelWebhook  = "webhook"
	ChannelNtfy     = "ntfy"
	ChannelSlack    = "slack"
	ChannelDiscord  = "discord"
	ChannelTelegram = "telegram"
	ChannelEmail    = "email"
)

// ChannelTypes lists the channel types in documentation order.
func ChannelTypes() []string {
	return []string{ChannelWebhook, ChannelNtfy, ChannelSlack, ChannelDiscord, ChannelTelegram, ChannelEmail}
}

// notifyEvents are the events a channel can be sent; the last two are off
// unless named.
var notifyEvents = []string{
	"approval.created", "approval.edited", "approval.expiring", "mutation.unknown", "publish.failed", "publish.rescheduled",
	"handoff.created", "approval.decided", "post.published",
}

// NotifyEvents lists every event name a channel can subscribe to.
func NotifyEvents() []string { return slices.Clone(notifyEvents) }

// DefaultNotifyEvents are the events sent when the configuration names none.
func DefaultNotifyEvents() []string { return slices.Clone(notifyEvents[:7]) }

// EventsFor is the event list a channel receives: its own, else notify.events.
func (n Notify) EventsFor(ch NotifyChannel) []string {
	if len(ch.Events) > 0 {
		return ch.Events
	}
	return n.Events
}

// Channel returns the channel called name.
func (n Notify) Channel(name string) (NotifyChannel, bool) {
	for _, ch := range n.Channels {
		if ch.Name == name {
			return ch, true
		}
	}
	return NotifyChannel{}, false
}

// EnvNames lists the environment variables that hold this channel's
// secrets (its secret:"env" keys that are set), so the process can mask
// their values wherever they appear.
func (ch NotifyChannel) EnvNames() []string {
	_, named := ch.secretKeys()
	return named
}

// secretKeys returns the values of the channel's set secret keys: those
// that hold a credential, and those that name an environment variable
// holding one.
func (ch NotifyChannel) secretKeys() (held, named []string) {
	rv := reflect.ValueOf(ch)
	for i, sf := range channelFields() {
		v := rv.Field(i)
		if sf.Type.Kind() != reflect.String || v.String() == "" {
			continue
		}
		switch sf.Tag.Get("secret") {
		case secretHeld:
			held = append(held, v.String())
		case secretNamed:
			named = append(named, v.String())
		}
	}
	return held, named
}

// channelFields lists NotifyChannel's fields by index, as reflect.Value's
// Field(i) reads them.
func channelFields() []reflect.StructField {
	rt := reflect.TypeOf(NotifyChannel{})
	out := make([]reflect.StructField, rt.NumField())
	for i := range out {
		out[i] = rt.Field(i)
	}
	return out
}

// SecretEnvNames lists every environment variable the configuration names
// as holding a secret (the LLM key, each channel's secrets).
func (c *Config) SecretEnvNames() []string {
	var out []string
	for _, f := range Fields(c) {
		if f.SecretEnv && f.Value.String() != "" {
			out = append(out, f.Value.String())
		}
	}
	for _, ch := range c.Notify.Channels {
		out = append(out, ch.EnvNames()...)
	}
	return out
}

// MaskedChannel is a channel as outputs show it: every secret it holds
// (an ntfy topic) masked, and any credentials or query a URL carries
// masked.
func MaskedChannel(ch NotifyChannel) NotifyChannel {
	rv := reflect.ValueOf(&ch).Elem()
	for i, sf := range channelFields() {
		if sf.Tag.Get("secret") == secretHeld && rv.Field(i).String() != "" {
			rv.Field(i).SetString(Mask)
		}
	}
	ch.URL = maskURL(ch.URL)
	ch.Server = maskURL(ch.Server)
	ch.APIBaseURL = maskURL(ch.APIBaseURL)
	ch.AllowedUserIDs = slices.Clone(ch.AllowedUserIDs)
	ch.To = slices.Clone(ch.To)
	ch.Events = slices.Clone(ch.Events)
	return ch
}

// maskURL hides user info and query values: a webhook receiver's token
// often rides in the query.
func maskURL(s string) string {
	if s == "" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return Mask
	}
	if u.User != nil {
		u.User = url.User(Mask)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{Mask}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// The lengths are checked apart from the patterns, as in validName.
var (
	envName       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	topicPattern  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })
	digitsPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+$`) })
	wordPattern   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_]+$`) })
)

// NtfyTopic reports whether s is an ntfy topic: 1-64 of A-Z, a-z, 0-9, _
// and -.
func NtfyTopic(s string) bool { return len(s) <= 64 && topicPattern().MatchString(s) }

// telegramChat reports whether s is a Telegram chat id: 1-20 digits,
// negative for a group, or @ and a channel name of 5-32 letters, digits
// and _.
func telegramChat(s string) bool {
	if name, ok := strings.CutPrefix(s, "@"); ok {
		return len(name) >= 5 && len(name) <= 32 && wordPattern().MatchString(name)
	}
	digits := strings.TrimPrefix(s, "-")
	return len(digits) <= 20 && digitsPattern().MatchString(digits)
}

// NotifyWarnings are what `config validate` points out in the channels
// without refusing them: an ntfy topic written in the file, where whoever
// reads the file (an agent with file access, a backup) reads every notice
// and its links.
func (c *Config) NotifyWarnings() []string {
	var out []string
	for i, ch := range c.Notify.Channels {
		if ch.Type == ChannelNtfy && ch.Topic != "" {
			out = append(out, fmt.Sprintf("notify.channels[%d].topic (channel %s) is written in the file: anyone who reads the topic reads every notice and its approval links; keep it in the environment with topic_env", i, ch.Name))
		}
	}
	return out
}

// validateNotify checks [notify], [[notify.channels]] and [approval_links].
func (c *Config) validateNotify(add func(key, format string, args ...any)) {
	n := c.Notify
	if n.PublicBaseURL != "" {
		if !operatorURL(n.PublicBaseURL) {
			add("notify.public_base_url", "%q must be an https:// URL with a host, without user info (plain http is allowed only for 127.0.0.1/localhost)", maskURL(n.PublicBaseURL))
		} else if u, _ := url.Parse(n.PublicBaseURL); u.RawQuery != "" || u.Fragment != "" {
			add("notify.public_base_url", "%q must not carry a query or fragment", maskURL(n.PublicBaseURL))
		}
	}
	checkEvents := func(key string, evs []string) {
		for _, e := range evs {
			if !slices.Contains(notifyEvents, e) {
				add(key, "%q is not an event; allowed values: %s", e, strings.Join(notifyEvents, ", "))
			}
		}
	}
	checkEvents("notify.events", n.Events)
	if n.BatchWindowSeconds < 0 || n.BatchWindowSeconds > 3600 {
		add("notify.batch_window_seconds", "must be between 0 (no digests) and 3600 (got %d)", n.BatchWindowSeconds)
	}
	if n.MaxPerHour < 0 {
		add("notify.max_per_hour", "must not be negative (0 = no cap; got %d)", n.MaxPerHour)
	}
	if n.ExpiringMinutes <= 0 {
		add("notify.expiring_minutes", "must be greater than 0 (got %d)", n.ExpiringMinutes)
	}
	seen := map[string]bool{}
	for i, ch := range n.Channels {
		key := fmt.Sprintf("notify.channels[%d]", i)
		switch {
		case ch.Name == "":
			add(key+".name", "is required (1-32 of a-z, 0-9, _ and -)")
		case !validName(ch.Name):
			add(key+".name", "%q: use 1-32 of a-z, 0-9, _ and -, starting with a letter or digit", ch.Name)
		case seen[ch.Name]:
			add(key+".name", "%q names another channel too; channel names are unique", ch.Name)
		}
		seen[ch.Name] = true
		checkEvents(key+".events", ch.Events)
		c.validateChannel(key, ch, add)
	}
	l := c.ApprovalLinks
	if l.TTLMinutes <= 0 {
		add("approval_links.ttl_minutes", "must be greater than 0 (got %d)", l.TTLMinutes)
	}
	if l.Enabled && n.PublicBaseURL == "" {
		add("approval_links.enabled", "needs notify.public_base_url: the links must name an address a phone can reach")
	}
	if l.Listen != "" {
		if _, port, err := net.SplitHostPort(l.Listen); err != nil || port == "" {
			add("approval_links.listen", "%q: want host:port", l.Listen)
		}
	}
}

// validateChannel checks the keys of one channel's type, naming each field.
func (c *Config) validateChannel(key string, ch NotifyChannel, add func(key, format string, args ...any)) {
	need := func(field, v string) bool {
		if strings.TrimSpace(v) == "" {
			add(key+"."+field, "is required for a %s channel", ch.Type)
			return false
		}
		return true
	}
	env := func(field, v string, required bool) {
		if v == "" {
			if required {
				add(key+"."+field, "is required for a %s channel: the name of the environment variable that holds the secret", ch.Type)
			}
			return
		}
		if !envName().MatchString(v) {
			add(key+"."+field, "%q is not an environment variable name (the secret itself never goes in the file)", v)
		}
	}
	url := func(field, v string) {
		if v != "" && !operatorURL(v) {
			add(key+"."+field, "%q must be an https:// URL with a host, without user info (plain http is allowed only for 127.0.0.1/localhost)", maskURL(v))
		}
	}
	// Keys of another type are a mistake worth naming: a secret_env on a
	// slack channel would silently never be read.
	foreign := map[string]bool{}
	for _, f := range channelKeys(ch) {
		foreign[f] = true
	}
	for _, f := range keysOfType[ch.Type] {
		delete(foreign, f)
	}
	switch ch.Type {
	case ChannelWebhook:
		if need("url", ch.URL) {
			url("url", ch.URL)
		}
		env("secret_env", ch.SecretEnv, true)
	case ChannelNtfy:
		url("server", ch.Server)
		// The topic is a credential: never quote it back.
		switch {
		case ch.Topic != "" && ch.TopicEnv != "":
			add(key+".topic", "and topic_env are both set; keep only topic_env (the topic is a secret: anyone who knows it reads the notices)")
		case ch.Topic == "" && ch.TopicEnv == "":
			add(key+".topic_env", "is required for an ntfy channel: the name of the environment variable that holds the topic (or give topic itself)")
		case ch.Topic != "" && !NtfyTopic(ch.Topic):
			add(key+".topic", "is not a topic: use 1-64 of A-Z, a-z, 0-9, _ and -")
		}
		env("topic_env", ch.TopicEnv, false)
		env("token_env", ch.TokenEnv, false)
	case ChannelSlack, ChannelDiscord:
		env("webhook_url_env", ch.WebhookURLEnv, true)
	case ChannelTelegram:
		env("bot_token_env", ch.BotTokenEnv, true)
		if need("chat_id", ch.ChatID) && !telegramChat(ch.ChatID) {
			add(key+".chat_id", "%q is not a Telegram chat id (a number, or @channelname)", ch.ChatID)
		}
		if len(ch.AllowedUserIDs) == 0 {
			add(key+".allowed_user_ids", "is required for a telegram channel: the Telegram user ids whose button presses count")
		}
		for _, id := range ch.AllowedUserIDs {
			if id <= 0 {
				add(key+".allowed_user_ids", "%d is not a Telegram user id", id)
			}
		}
		url("api_base_url", ch.APIBaseURL)
	case ChannelEmail:
		if need("smtp_host", ch.SMTPHost) && strings.ContainsAny(ch.SMTPHost, " /:@\r\n") {
			add(key+".smtp_host", "%q: want a host name or address without a port (the port is smtp_port)", ch.SMTPHost)
		}
		if ch.SMTPPort < 1 || ch.SMTPPort > 65535 {
			add(key+".smtp_port", "must be a port 1-65535 (got %d)", ch.SMTPPort)
		}
		if need("from", ch.From) {
			if _, err := mail.ParseAddress(ch.From); err != nil || strings.ContainsAny(ch.From, "\r\n") {
				add(key+".from", "%q is not an email address", ch.From)
			}
		}
		if len(ch.To) == 0 {
			add(key+".to", "is required for an email channel: at least one address")
		}
		for _, to := range ch.To {
			if _, err := mail.ParseAddress(to); err != nil || strings.ContainsAny(to, "\r\n") {
				add(key+".to", "%q is not an email address", to)
			}
		}
		env("password_env", ch.PasswordEnv, ch.Username != "")
		switch ch.TLS {
		case "starttls", "tls":
		case "none":
			// Only a server on this machine may be spoken to in clear: the
			// message carries a link that must not cross a network unread.
			if ip := net.ParseIP(ch.SMTPHost); ch.SMTPHost != "localhost" && (ip == nil || !ip.IsLoopback()) {
				add(key+".tls", "\"none\" is allowed only for an SMTP server on loopback (127.0.0.1, ::1, localhost); use starttls or tls")
			}
		default:
			add(key+".tls", "%q is not allowed; allowed values: starttls, tls, none", ch.TLS)
		}
	case "":
		add(key+".type", "is required; allowed values: %s", strings.Join(ChannelTypes(), ", "))
		return
	default:
		add(key+".type", "%q is not allowed; allowed values: %s", ch.Type, strings.Join(ChannelTypes(), ", "))
		return
	}
	for _, f := range channelKeyOrder {
		if foreign[f] {
			add(key+"."+f, "does not apply to a %s channel; its keys are: %s", ch.Type, strings.Join(append([]string{"name", "type", "events"}, keysOfType[ch.Type]...), ", "))
		}
	}
}

// keysOfType are the type-specific keys each channel type reads.
var keysOfType = map[string][]string{
	ChannelWebhook:  {"url", "secret_env"},
	ChannelNtfy:     {"server", "topic_env", "topic", "token_env"},
	ChannelSlack:    {"webhook_url_env"},
	ChannelDiscord:  {"webhook_url_env"},
	ChannelTelegram: {"bot_token_env", "chat_id", "allowed_user_ids", "api_base_url"},
	ChannelEmail:    {"smtp_host", "smtp_port", "from", "to", "username", "password_env", "tls"},
}

var channelKeyOrder = []string{"url", "secret_env", "server", "topic_env", "topic", "token_env", "webhook_url_env", "bot_token_env",
	"chat_id", "allowed_user_ids", "api_base_url", "smtp_host", "smtp_port", "from", "to", "username", "password_env", "tls"}

// channelKeys lists the type-specific keys that are set on ch. Defaults
// are only ever filled in for a channel's own type, so they never show up
// here as foreign.
func channelKeys(ch NotifyChannel) []string {
	set := map[string]bool{
		"url": ch.URL != "", "secret_env": ch.SecretEnv != "", "server": ch.Server != "",
		"topic": ch.Topic != "", "topic_env": ch.TopicEnv != "", "token_env": ch.TokenEnv != "", "webhook_url_env": ch.WebhookURLEnv != "",
		"bot_token_env": ch.BotTokenEnv != "", "chat_id": ch.ChatID != "", "allowed_user_ids": len(ch.AllowedUserIDs) > 0,
		"api_base_url": ch.APIBaseURL != "", "smtp_host": ch.SMTPHost != "",
		"smtp_port": ch.SMTPPort != 0, "from": ch.From != "", "to": len(ch.To) > 0,
		"username": ch.Username != "", "password_env": ch.PasswordEnv != "", "tls": ch.TLS != "",
	}
	var out []string
	for _, k := range channelKeyOrder {
		if set[k] {
			out = append(out, k)
		}
	}
	return out
}

const (
	defaultNtfyServer  = "https://ntfy.sh"
	defaultTelegramAPI = "https://api.telegram.org"
	defaultSMTPPort    = 587
	defaultSMTPTLS     = "starttls"
)

// applyChannelDefaults fills the keys a channel may leave out.
func (c *Config) applyChannelDefaults() {
	for i := range c.Notify.Channels {
		ch := &c.Notify.Channels[i]
		switch ch.Type {
		case ChannelNtfy:
			if ch.Server == "" {
				ch.Server = defaultNtfyServer
			}
		case ChannelTelegram:
			if ch.APIBaseURL == "" {
				ch.APIBaseURL = defaultTelegramAPI
			}
		case ChannelEmail:
			if ch.SMTPPort == 0 {
				ch.SMTPPort = defaultSMTPPort
			}
			if ch.TLS == "" {
				ch.TLS = defaultSMTPTLS
			}
		}
	}
}
