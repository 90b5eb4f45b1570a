package notify

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
)

// HTTPClient is how channels reach their destinations: a bounded wait and
// no redirects (a webhook that redirects would take its signed body, and a
// Slack or Discord URL is itself a secret).
func HTTPClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, CheckRedirect: noRedirect}
}

// Routes are the channels' subscriptions.
func Routes(n config.Notify) []Route {
	out := make([]Route, 0, len(n.Channels))
	for _, ch := range n.Channels {
		out = append(out, Route{Channel: ch.Name, Events: n.EventsFor(ch)})
	}
	return out
}

// Build makes the configured channels, reading each secret from the
// environment variable its *_env key names. A missing secret fails naming
// the key and the variable, never showing a value.
func Build(n config.Notify, getenv func(string) string, client *http.Client, now func() time.Time) ([]Channel, error) {
	if client == nil {
		client = HTTPClient()
	}
	if now == nil {
		now = time.Now
	}
	var out []Channel
	for i, ch := range n.Channels {
		key := fmt.Sprintf("notify.channels[%d]", i)
		secret := func(field, env string, required bool) (string, error) {
			if env == "" {
				return "", nil
			}
			v := strings.TrimSpace(getenv(env))
			if v == "" && required {
				return "", fmt.Errorf("%s.%s: the environment variable %s is not set (channel %s)", key, field, env, ch.Name)
			}
			return v, nil
		}
		var c Channel
		switch ch.Type {
		case config.ChannelWebhook:
			s, err := secret("secret_env", ch.SecretEnv, true)
			if err != nil {
				return nil, err
			}
			w, err := NewWebhook(ch.Name, ch.URL, s, client, now)
			if err != nil {
				return nil, fmt.Errorf("%s.secret_env: %s holds %v (channel %s)", key, ch.SecretEnv, err, ch.Name)
			}
			c = w
		case config.ChannelNtfy:
			topic := ch.Topic
			if ch.TopicEnv != "" {
				t, err := secret("topic_env", ch.TopicEnv, true)
				if err != nil {
					return nil, err
				}
				if !config.NtfyTopic(t) {
					return nil, fmt.Errorf("%s.topic_env: %s does not hold a topic: use 1-64 of A-Z, a-z, 0-9, _ and - (channel %s)", key, ch.TopicEnv, ch.Name)
				}
				topic = t
			}
			tok, err := secret("token_env", ch.TokenEnv, true)
			if err != nil {
				return nil, err
			}
			c = NewNtfy(ch.Name, ch.Server, topic, tok, client, now)
		case config.ChannelSlack, config.ChannelDiscord:
			u, err := secret("webhook_url_env", ch.WebhookURLEnv, true)
			if err != nil {
				return nil, err
			}
			if !strings.HasPrefix(u, "https://") && !loopbackHTTP(u) {
				return nil, fmt.Errorf("%s.webhook_url_env: %s must hold an https:// URL (channel %s)", key, ch.WebhookURLEnv, ch.Name)
			}
			if ch.Type == config.ChannelSlack {
				c = NewSlack(ch.Name, u, client, now)
			} else {
				c = NewDiscord(ch.Name, u, client, now)
			}
		case config.ChannelTelegram:
			tok, err := secret("bot_token_env", ch.BotTokenEnv, true)
			if err != nil {
				return nil, err
			}
			// Telegram's long poll outlasts the usual request timeout.
			tc := *client
			tc.Timeout = 0
			c = NewTelegram(ch, tok, &tc, now)
		case config.ChannelEmail:
			pw, err := secret("password_env", ch.PasswordEnv, ch.Username != "")
			if err != nil {
				return nil, err
			}
			c = NewEmail(ch, pw)
		default:
			return nil, fmt.Errorf("%s.type: %q is not a channel type", key, ch.Type)
		}
		out = append(out, c)
	}
	return out, nil
}

// loopbackHTTP accepts plain http to this machine (local receivers, tests).
func loopbackHTTP(u string) bool {
	for _, p := range []string{"http://127.0.0.1:", "http://127.0.0.1/", "http://localhost:", "http://localhost/", "http://[::1]:"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}
