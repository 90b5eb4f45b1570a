package config_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

const everyChannel = `
[notify]
public_base_url = "https://phone.example.ts.net"
batch_window_seconds = 0
max_per_hour = 12

[approval_links]
enabled = true
ttl_minutes = 30
one_tap = true

[[notify.channels]]
name = "hook"
type = "webhook"
url = "https://hooks.example.com/in"
secret_env = "HOOK_SECRET"

[[notify.channels]]
name = "phone"
type = "ntfy"
topic = "tuitbot-abc"
events = ["approval.created", "approval.decided"]

[[notify.channels]]
name = "team"
type = "slack"
webhook_url_env = "SLACK_HOOK"

[[notify.channels]]
name = "guild"
type = "discord"
webhook_url_env = "DISCORD_HOOK"

[[notify.channels]]
name = "tg"
type = "telegram"
bot_token_env = "TG_TOKEN"
chat_id = "-1001234"
allowed_user_ids = [42]

[[notify.channels]]
name = "mail"
type = "email"
smtp_host = "smtp.example.com"
from = "bot@example.com"
to = ["me@example.com"]
username = "bot"
password_env = "SMTP_PASSWORD"
`

func TestNotifyChannelsLoadWithDefaults(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "config.toml", everyChannel)
	cfg, _ := mustLoad(t, home, "", nil)
	n := cfg.Notify
	if len(n.Channels) != 6 {
		t.Fatalf("channels = %d, want 6", len(n.Channels))
	}
	if n.BatchWindowSeconds != 0 || n.MaxPerHour != 12 || n.PublicBaseURL != "https://phone.example.ts.net" {
		t.Errorf("notify = %+v", n)
	}
	if !cfg.ApprovalLinks.Enabled || cfg.ApprovalLinks.TTLMinutes != 30 || !cfg.ApprovalLinks.OneTap {
		t.Errorf("approval_links = %+v", cfg.ApprovalLinks)
	}
	ntfy, _ := n.Channel("phone")
	if ntfy.Server != "https://ntfy.sh" {
		t.Errorf("ntfy server default = %q", ntfy.Server)
	}
	if got := n.EventsFor(ntfy); !reflect.DeepEqual(got, []string{"approval.created", "approval.decided"}) {
		t.Errorf("ntfy events = %v", got)
	}
	hook, _ := n.Channel("hook")
	if got := n.EventsFor(hook); !reflect.DeepEqual(got, config.DefaultNotifyEvents()) {
		t.Errorf("webhook events = %v, want the defaults", got)
	}
	if slices.Contains(config.DefaultNotifyEvents(), "approval.decided") || slices.Contains(config.DefaultNotifyEvents(), "post.published") {
		t.Error("approval.decided and post.published must be off by default")
	}
	tg, _ := n.Channel("tg")
	if tg.APIBaseURL != "https://api.telegram.org" {
		t.Errorf("telegram api_base_url default = %q", tg.APIBaseURL)
	}
	mail, _ := n.Channel("mail")
	if mail.SMTPPort != 587 || mail.TLS != "starttls" {
		t.Errorf("email defaults = port %d tls %q", mail.SMTPPort, mail.TLS)
	}
	want := []string{"HOOK_SECRET", "SLACK_HOOK", "DISCORD_HOOK", "TG_TOKEN", "SMTP_PASSWORD"}
	if got := cfg.SecretEnvNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("SecretEnvNames = %v, want %v", got, want)
	}
}

func TestNotifyEnvOverrides(t *testing.T) {
	cfg, _ := mustLoad(t, t.TempDir(), "", env{
		"TUITBOT_NOTIFY__PUBLIC_BASE_URL":      "http://127.0.0.1:8767",
		"TUITBOT_NOTIFY__BATCH_WINDOW_SECONDS": "5",
		"TUITBOT_APPROVAL_LINKS__TTL_MINUTES":  "15",
	})
	if cfg.Notify.PublicBaseURL != "http://127.0.0.1:8767" || cfg.Notify.BatchWindowSeconds != 5 || cfg.ApprovalLinks.TTLMinutes != 15 {
		t.Errorf("env overrides not applied: %+v %+v", cfg.Notify, cfg.ApprovalLinks)
	}
}

func TestBadNotifyValues(t *testing.T) {
	tests := []struct {
		name, file, key string
		want            []string
	}{
		{"public url http", "[notify]\npublic_base_url = \"http://phone.example.com\"\n", "notify.public_base_url", []string{"https://"}},
		{"public url query", "[notify]\npublic_base_url = \"https://a.example.com/?x=1\"\n", "notify.public_base_url", []string{"query"}},
		{"event", "[notify]\nevents = [\"approval.maybe\"]\n", "notify.events", []string{"approval.maybe", "approval.created"}},
		{"batch window", "[notify]\nbatch_window_seconds = -1\n", "notify.batch_window_seconds", []string{"0"}},
		{"max per hour", "[notify]\nmax_per_hour = -3\n", "notify.max_per_hour", []string{"negative"}},
		{"links need base", "[approval_links]\nenabled = true\n", "approval_links.enabled", []string{"notify.public_base_url"}},
		{"links ttl", "[approval_links]\nttl_minutes = 0\n", "approval_links.ttl_minutes", []string{"greater than 0"}},
		{"links listen", "[approval_links]\nlisten = \"nowhere\"\n", "approval_links.listen", []string{"host:port"}},
		{"no name", "[[notify.channels]]\ntype = \"slack\"\nwebhook_url_env = \"S\"\n", "notify.channels[0].name", []string{"required"}},
		{"bad name", "[[notify.channels]]\nname = \"My Phone\"\ntype = \"slack\"\nwebhook_url_env = \"S\"\n", "notify.channels[0].name", []string{"My Phone"}},
		{"duplicate name", "[[notify.channels]]\nname = \"a\"\ntype = \"slack\"\nwebhook_url_env = \"S\"\n[[notify.channels]]\nname = \"a\"\ntype = \"discord\"\nwebhook_url_env = \"D\"\n",
			"notify.channels[1].name", []string{"unique"}},
		{"no type", "[[notify.channels]]\nname = \"a\"\n", "notify.channels[0].type", []string{"webhook", "email"}},
		{"bad type", "[[notify.channels]]\nname = \"a\"\ntype = \"pager\"\n", "notify.channels[0].type", []string{"pager", "telegram"}},
		{"channel event", "[[notify.channels]]\nname = \"a\"\ntype = \"slack\"\nwebhook_url_env = \"S\"\nevents = [\"x\"]\n", "notify.channels[0].events", []string{"\"x\""}},
		{"webhook url", "[[notify.channels]]\nname = \"a\"\ntype = \"webhook\"\nsecret_env = \"S\"\n", "notify.channels[0].url", []string{"required"}},
		{"webhook http", "[[notify.channels]]\nname = \"a\"\ntype = \"webhook\"\nurl = \"http://hooks.example.com\"\nsecret_env = \"S\"\n", "notify.channels[0].url", []string{"https://"}},
		{"webhook secret", "[[notify.channels]]\nname = \"a\"\ntype = \"webhook\"\nurl = \"https://h.example.com\"\n", "notify.channels[0].secret_env", []string{"required", "environment variable"}},
		{"secret in file", "[[notify.channels]]\nname = \"a\"\ntype = \"webhook\"\nurl = \"https://h.example.com\"\nsecret_env = \"whsec_abc+/=\"\n", "notify.channels[0].secret_env", []string{"not an environment variable name"}},
		{"foreign key", "[[notify.channels]]\nname = \"a\"\ntype = \"slack\"\nwebhook_url_env = \"S\"\nsecret_env = \"X\"\n", "notify.channels[0].secret_env", []string{"does not apply", "webhook_url_env"}},
		{"unknown key", "[[notify.channels]]\nname = \"a\"\ntype = \"slack\"\nwebhook_url = \"https://hooks.slack.com/x\"\n", "notify.channels.webhook_url", []string{"unknown key", "webhook_url_env"}},
		{"ntfy topic", "[[notify.channels]]\nname = \"a\"\ntype = \"ntfy\"\ntopic = \"a b\"\n", "notify.channels[0].topic", []string{"1-64"}},
		{"ntfy no topic", "[[notify.channels]]\nname = \"a\"\ntype = \"ntfy\"\n", "notify.channels[0].topic_env", []string{"required", "environment variable"}},
		{"ntfy both topics", "[[notify.channels]]\nname = \"a\"\ntype = \"ntfy\"\ntopic = \"abc\"\ntopic_env = \"T\"\n", "notify.channels[0].topic", []string{"topic_env", "secret"}},
		{"ntfy topic in env key", "[[notify.channels]]\nname = \"a\"\ntype = \"ntfy\"\ntopic_env = \"tuitbot-7f3a-9c\"\n", "notify.channels[0].topic_env", []string{"not an environment variable name"}},
		{"topic_env on slack", "[[notify.channels]]\nname = \"a\"\ntype = \"slack\"\nwebhook_url_env = \"S\"\ntopic_env = \"T\"\n", "notify.channels[0].topic_env", []string{"does not apply"}},
		{"slack env", "[[notify.channels]]\nname = \"a\"\ntype = \"slack\"\n", "notify.channels[0].webhook_url_env", []string{"required"}},
		{"telegram users", "[[notify.channels]]\nname = \"a\"\ntype = \"telegram\"\nbot_token_env = \"T\"\nchat_id = \"1\"\n", "notify.channels[0].allowed_user_ids", []string{"required"}},
		{"telegram chat", "[[notify.channels]]\nname = \"a\"\ntype = \"telegram\"\nbot_token_env = \"T\"\nchat_id = \"x y\"\nallowed_user_ids = [1]\n", "notify.channels[0].chat_id", []string{"x y"}},
		{"telegram api", "[[notify.channels]]\nname = \"a\"\ntype = \"telegram\"\nbot_token_env = \"T\"\nchat_id = \"1\"\nallowed_user_ids = [1]\napi_base_url = \"http://tg.example.com\"\n", "notify.channels[0].api_base_url", []string{"https://"}},
		{"email to", "[[notify.channels]]\nname = \"a\"\ntype = \"email\"\nsmtp_host = \"m.example.com\"\nfrom = \"a@example.com\"\n", "notify.channels[0].to", []string{"required"}},
		{"email from header", "[[notify.channels]]\nname = \"a\"\ntype = \"email\"\nsmtp_host = \"m.example.com\"\nfrom = \"a@example.com\\r\\nBcc: x@evil.example\"\nto = [\"b@example.com\"]\n", "notify.channels[0].from", []string{"not an email address"}},
		{"email clear text", "[[notify.channels]]\nname = \"a\"\ntype = \"email\"\nsmtp_host = \"m.example.com\"\nfrom = \"a@example.com\"\nto = [\"b@example.com\"]\ntls = \"none\"\n", "notify.channels[0].tls", []string{"loopback"}},
		{"email port", "[[notify.channels]]\nname = \"a\"\ntype = \"email\"\nsmtp_host = \"m.example.com\"\nsmtp_port = 70000\nfrom = \"a@example.com\"\nto = [\"b@example.com\"]\n", "notify.channels[0].smtp_port", []string{"1-65535"}},
		{"email password", "[[notify.channels]]\nname = \"a\"\ntype = \"email\"\nsmtp_host = \"m.example.com\"\nfrom = \"a@example.com\"\nto = [\"b@example.com\"]\nusername = \"u\"\n", "notify.channels[0].password_env", []string{"required"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, home, "config.toml", tc.file)
			_, _, err := load(t, home, "", nil)
			if err == nil {
				t.Fatal("Load accepted a bad value")
			}
			es, ok := config.AsErrors(err)
			if !ok {
				t.Fatalf("error %T (%v) is not config.Errors", err, err)
			}
			for _, e := range es {
				if e.Key == tc.key {
					assertContainsAll(t, e.Message, tc.want...)
					return
				}
			}
			t.Errorf("no error for key %q in %v", tc.key, err)
		})
	}
}

// A loopback SMTP server may be spoken to in clear (local relays, tests).
func TestEmailClearTextOnLoopback(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "config.toml", "[[notify.channels]]\nname = \"a\"\ntype = \"email\"\nsmtp_host = \"127.0.0.1\"\nsmtp_port = 2525\nfrom = \"a@example.com\"\nto = [\"b@example.com\"]\ntls = \"none\"\n")
	if _, _, err := load(t, home, "", nil); err != nil {
		t.Fatal(err)
	}
}

// No output of the configuration shows what a channel's URL carries in its
// user info or query, and the secrets themselves never enter it at all.
func TestNotifyChannelsMaskedInEveryOutput(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "config.toml", `
[[notify.channels]]
name = "hook"
type = "webhook"
url = "https://hooks.example.com/in?token=sekrit-query-token"
secret_env = "HOOK_SECRET"
`)
	cfg, _ := mustLoad(t, home, "", env{"HOOK_SECRET": "whsec_c2VjcmV0LXZhbHVlLW5ldmVyLXNob3du"})
	tomlOut, err := config.MaskedTOML(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jsonOut, err := config.MaskedJSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"toml": tomlOut, "json": string(jsonOut)} {
		for _, leak := range []string{"sekrit-query-token", "whsec_"} {
			if strings.Contains(out, leak) {
				t.Errorf("%s output contains %q", name, leak)
			}
		}
		if !strings.Contains(out, "hooks.example.com") || !strings.Contains(out, "HOOK_SECRET") {
			t.Errorf("%s output lacks the channel's visible parts:\n%s", name, out)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(jsonOut, &m); err != nil {
		t.Fatal(err)
	}
	chans := m["notify"].(map[string]any)["channels"].([]any)
	if got := chans[0].(map[string]any)["name"]; got != "hook" {
		t.Errorf("channel name in JSON = %v", got)
	}
	if cfg.Notify.Channels[0].URL != "https://hooks.example.com/in?token=sekrit-query-token" {
		t.Error("masking changed the configuration itself")
	}
}

// A refused URL is quoted in the error without what its user info and
// query carry.
func TestRejectedChannelURLMasked(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "config.toml", "[[notify.channels]]\nname = \"a\"\ntype = \"webhook\"\nsecret_env = \"S\"\nurl = \"http://u:hunter2hunter2@h.example.com/?token=sekrit-query-token\"\n")
	_, _, err := load(t, home, "", nil)
	if err == nil {
		t.Fatal("accepted")
	}
	assertContainsAll(t, err.Error(), "notify.channels[0].url", "h.example.com")
	for _, leak := range []string{"hunter2hunter2", "sekrit-query-token"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("error %q contains %q", err, leak)
		}
	}
}

// An ntfy topic reads every notice published to it, links included: a
// literal topic is masked in every output and known as a secret (so the
// logs mask it), its refusal never quotes it, and topic_env names a
// variable whose value is treated the same way.
func TestNtfyTopicIsASecret(t *testing.T) {
	const literal, fromEnv = "tuitbot-literal-topic-4b1d", "tuitbot-env-topic-93ce"
	home := t.TempDir()
	writeFile(t, home, "config.toml", `
[[notify.channels]]
name = "phone"
type = "ntfy"
topic = "`+literal+`"

[[notify.channels]]
name = "tablet"
type = "ntfy"
topic_env = "NTFY_TOPIC"
token_env = "NTFY_TOKEN"
`)
	cfg, _ := mustLoad(t, home, "", env{"NTFY_TOPIC": fromEnv})
	tomlOut, err := config.MaskedTOML(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jsonOut, err := config.MaskedJSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"toml": tomlOut, "json": string(jsonOut)} {
		if strings.Contains(out, literal) {
			t.Errorf("%s output shows the topic:\n%s", name, out)
		}
		assertContainsAll(t, out, "NTFY_TOPIC", config.Mask)
	}
	if got, want := cfg.SecretEnvNames(), []string{"NTFY_TOPIC", "NTFY_TOKEN"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SecretEnvNames = %v, want %v", got, want)
	}
	vals := cfg.SecretValues(env{"NTFY_TOPIC": fromEnv}.getenv)
	if !slices.Contains(vals, literal) || !slices.Contains(vals, fromEnv) {
		t.Errorf("SecretValues = %v, want both topics", vals)
	}
	if cfg.Notify.Channels[0].Topic != literal {
		t.Error("masking changed the configuration itself")
	}
	w := cfg.NotifyWarnings()
	if len(w) != 1 || !strings.Contains(w[0], "notify.channels[0].topic") || !strings.Contains(w[0], "topic_env") || strings.Contains(w[0], literal) {
		t.Errorf("NotifyWarnings = %q, want one for the literal topic, without it", w)
	}

	writeFile(t, home, "config.toml", "[[notify.channels]]\nname = \"a\"\ntype = \"ntfy\"\ntopic = \"secret topic!\"\n")
	if _, _, err := load(t, home, "", nil); err == nil || strings.Contains(err.Error(), "secret topic!") {
		t.Errorf("a bad topic is refused without quoting it; got %v", err)
	}
}

// Every secret setting is found from the tags, and none is forgotten: the
// list holds the keys that are secret and only those.
func TestSecretSettingsListEveryCredential(t *testing.T) {
	got := map[string]bool{}
	for _, s := range config.SecretSettings() {
		got[s.Key] = s.Env
	}
	want := map[string]bool{
		"x_api.client_secret": false, "llm.api_key": false, "llm.api_key_env": true, "storage.database_url": false,
		"notify.channels[].secret_env": true, "notify.channels[].topic": false, "notify.channels[].topic_env": true,
		"notify.channels[].token_env": true, "notify.channels[].webhook_url_env": true, "notify.channels[].bot_token_env": true,
		"notify.channels[].password_env": true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SecretSettings = %v\nwant %v", got, want)
	}
}
