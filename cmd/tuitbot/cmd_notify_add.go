package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuitbot/tuitbot/internal/config"
)

// channelFlag is one flag of `notify add`: the key it sets and the channel
// types it applies to.
type channelFlag struct {
	name, usage string
	types       []string
	// required lists the types that cannot do without it.
	required []string
	set      func(ch *config.NotifyChannel, v string) error
}

func channelFlags() []channelFlag {
	str := func(f func(ch *config.NotifyChannel) *string) func(*config.NotifyChannel, string) error {
		return func(ch *config.NotifyChannel, v string) error { *f(ch) = v; return nil }
	}
	list := func(f func(ch *config.NotifyChannel) *[]string) func(*config.NotifyChannel, string) error {
		return func(ch *config.NotifyChannel, v string) error { *f(ch) = splitList(v); return nil }
	}
	all := config.ChannelTypes()
	return []channelFlag{
		{"events", "comma-separated events this channel gets (default notify.events)", all, nil,
			list(func(ch *config.NotifyChannel) *[]string { return &ch.Events })},
		{"url", "the URL the webhook posts to", []string{config.ChannelWebhook}, []string{config.ChannelWebhook},
			str(func(ch *config.NotifyChannel) *string { return &ch.URL })},
		{"secret-env", "environment variable holding the webhook's signing secret", []string{config.ChannelWebhook}, nil,
			str(func(ch *config.NotifyChannel) *string { return &ch.SecretEnv })},
		{"topic-env", "environment variable holding the ntfy topic (a credential: whoever knows it reads every notice)", []string{config.ChannelNtfy}, []string{config.ChannelNtfy},
			str(func(ch *config.NotifyChannel) *string { return &ch.TopicEnv })},
		{"server", "the ntfy server (default https://ntfy.sh)", []string{config.ChannelNtfy}, nil,
			str(func(ch *config.NotifyChannel) *string { return &ch.Server })},
		{"token-env", "environment variable holding the ntfy access token", []string{config.ChannelNtfy}, nil,
			str(func(ch *config.NotifyChannel) *string { return &ch.TokenEnv })},
		{"webhook-url-env", "environment variable holding the Slack or Discord webhook URL", []string{config.ChannelSlack, config.ChannelDiscord}, []string{config.ChannelSlack, config.ChannelDiscord},
			str(func(ch *config.NotifyChannel) *string { return &ch.WebhookURLEnv })},
		{"bot-token-env", "environment variable holding the Telegram bot token", []string{config.ChannelTelegram}, []string{config.ChannelTelegram},
			str(func(ch *config.NotifyChannel) *string { return &ch.BotTokenEnv })},
		{"chat-id", "the Telegram chat to send to", []string{config.ChannelTelegram}, []string{config.ChannelTelegram},
			str(func(ch *config.NotifyChannel) *string { return &ch.ChatID })},
		{"allowed-user-ids", "comma-separated Telegram user ids whose button presses count", []string{config.ChannelTelegram}, nil,
			func(ch *config.NotifyChannel, v string) error {
				for _, s := range splitList(v) {
					id, err := strconv.ParseInt(s, 10, 64)
					if err != nil {
						return fmt.Errorf("--allowed-user-ids: %q is not a Telegram user id", s)
					}
					ch.AllowedUserIDs = append(ch.AllowedUserIDs, id)
				}
				return nil
			}},
		{"smtp-host", "the SMTP server", []string{config.ChannelEmail}, []string{config.ChannelEmail},
			str(func(ch *config.NotifyChannel) *string { return &ch.SMTPHost })},
		{"smtp-port", "the SMTP port", []string{config.ChannelEmail}, nil,
			func(ch *config.NotifyChannel, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("--smtp-port: %q is not a port number", v)
				}
				ch.SMTPPort = n
				return nil
			}},
		{"from", "the sender address", []string{config.ChannelEmail}, []string{config.ChannelEmail},
			str(func(ch *config.NotifyChannel) *string { return &ch.From })},
		{"to", "comma-separated recipient addresses", []string{config.ChannelEmail}, []string{config.ChannelEmail},
			list(func(ch *config.NotifyChannel) *[]string { return &ch.To })},
		{"username", "the SMTP user name", []string{config.ChannelEmail}, nil,
			str(func(ch *config.NotifyChannel) *string { return &ch.Username })},
		{"password-env", "environment variable holding the SMTP password", []string{config.ChannelEmail}, nil,
			str(func(ch *config.NotifyChannel) *string { return &ch.PasswordEnv })},
		{"tls", "starttls, tls or none", []string{config.ChannelEmail}, nil,
			str(func(ch *config.NotifyChannel) *string { return &ch.TLS })},
	}
}

func splitList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// notifyAddCmd appends a [[notify.channels]] entry to the config file, so
// nobody has to paste TOML into a file that may already hold the tables
// the paste would define again.
func (c *cli) notifyAddCmd() *cobra.Command {
	var name string
	var asJSON *bool
	flags := channelFlags()
	values := make([]string, len(flags))
	cmd := &cobra.Command{
		Use:   "add TYPE --name NAME",
		Short: "Add a notification channel to the config file: " + strings.Join(config.ChannelTypes(), ", "),
		Long: "Append a [[notify.channels]] entry to the config file (-c, or the home's config.toml), keeping\n" +
			"everything already in it, comments included. The file is written 0600, and only when the\n" +
			"result loads. Secrets are never written: each is named by an environment variable (the *-env\n" +
			"flags), which tuitbot reads when it sends.",
		Example: "  tuitbot notify add ntfy --name phone --topic-env NTFY_TOPIC\n" +
			"  tuitbot notify add slack --name team --webhook-url-env SLACK_WEBHOOK_URL\n" +
			"  tuitbot notify add telegram --name tg --bot-token-env TELEGRAM_BOT_TOKEN --chat-id 123456789 --allowed-user-ids 123456789",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			typ := args[0]
			if !slices.Contains(config.ChannelTypes(), typ) {
				return usageError{fmt.Errorf("channel type %q: allowed types are %s", typ, strings.Join(config.ChannelTypes(), ", "))}
			}
			if name == "" {
				return usageError{errors.New("--name: required; the name `notify test --channel` and the events use")}
			}
			ch := config.NotifyChannel{Name: name, Type: typ}
			for i, f := range flags {
				given := cmd.Flags().Changed(f.name)
				switch {
				case given && !slices.Contains(f.types, typ):
					return usageError{fmt.Errorf("--%s does not apply to a %s channel (it is for %s)", f.name, typ, strings.Join(f.types, ", "))}
				case !given && slices.Contains(f.required, typ):
					return usageError{fmt.Errorf("--%s: required for a %s channel", f.name, typ)}
				case given:
					if err := f.set(&ch, values[i]); err != nil {
						return usageError{err}
					}
				}
			}
			cfg, err := c.loadConfig()
			if err != nil {
				return err
			}
			if _, ok := cfg.Notify.Channel(name); ok {
				return usageError{fmt.Errorf("--name: a channel named %q is already in %s; pick another name", name, cfg.ConfigPath)}
			}
			// The new channel is checked with the configuration it joins,
			// so a refusal names its key before the file is touched.
			if err := cfg.CheckNewChannel(ch); err != nil {
				return usageError{err}
			}
			path := cfg.ConfigPath
			old, _, err := readConfigFile(path)
			if err != nil {
				return err
			}
			updated, err := config.AddNotifyChannel(old, ch)
			if err != nil {
				return err
			}
			if _, err := loadEdited(path, updated); err != nil {
				return configError(fmt.Errorf("%s does not take the new channel as it is written (%v); add it by hand", path, err))
			}
			if err := writeConfigFile(path, updated, 0o600); err != nil {
				return err
			}
			return c.answer(*asJSON, ChannelAdded{File: path, Channel: config.MaskedChannel(ch)}, func(w io.Writer) {
				fmt.Fprintf(w, "added the %s channel %q to %s (written 0600):\n\n%s\n", typ, name, path, strings.TrimPrefix(updated, old+"\n"))
				if envs := ch.EnvNames(); len(envs) > 0 {
					fmt.Fprintf(w, "tuitbot reads %s from the environment when it sends; then try: tuitbot notify test --channel %s\n", strings.Join(envs, ", "), name)
				}
			})
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the channel's name (what notify test --channel takes)")
	for i, f := range flags {
		cmd.Flags().StringVar(&values[i], f.name, "", f.usage)
	}
	asJSON = jsonFlag(cmd, "file, channel (the entry added)")
	return cmd
}
