package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/tuitbot/tuitbot/internal/redact"
)

// Mask is what a set secret looks like in every output. It reveals nothing
// of the value, not even a prefix.
const Mask = redact.Mask

// Masked returns the configuration as nested maps with every secret masked.
// Credentials written into a URL (llm.base_url = "http://user:key@host/v1",
// a proxy address) are masked too, in whatever key they appear.
func Masked(cfg *Config) map[string]any {
	c := *cfg
	out := map[string]any{}
	for _, f := range Fields(&c) {
		v := f.Value.Interface()
		switch {
		case f.Secret && f.Value.String() != "":
			v = Mask
		case f.Secret:
			v = ""
		case f.Value.Kind() == reflect.String:
			v = redact.URLCredentials(f.Value.String())
		case f.Value.Kind() == reflect.Slice:
			list := make([]string, f.Value.Len())
			for i := range list {
				list[i] = redact.URLCredentials(f.Value.Index(i).String())
			}
			v = list
		}
		if f.Section == "" {
			out[f.Key] = v
			continue
		}
		sec, _ := out[f.Section].(map[string]any)
		if sec == nil {
			sec = map[string]any{}
			out[f.Section] = sec
		}
		sec[f.Key] = v
	}
	if pol, ok := out["mcp_policy"].(map[string]any); ok {
		pol["rules"] = cfg.MCPPolicy.Rules
		pol["rate_limits"] = cfg.MCPPolicy.RateLimits
	}
	if n, ok := out["notify"].(map[string]any); ok {
		chans := make([]NotifyChannel, len(cfg.Notify.Channels))
		for i, ch := range cfg.Notify.Channels {
			chans[i] = MaskedChannel(ch)
		}
		n["channels"] = chans
	}
	return out
}

// MaskedTOML renders Masked as TOML, for `config show`.
func MaskedTOML(cfg *Config) (string, error) {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(Masked(cfg)); err != nil {
		return "", fmt.Errorf("encode config: %w", err)
	}
	return b.String(), nil
}

// MaskedJSON renders Masked as JSON.
func MaskedJSON(cfg *Config) ([]byte, error) {
	return json.MarshalIndent(Masked(cfg), "", "  ")
}

func literal(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		b, _ := json.Marshal(v.String())
		return string(b)
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			b, _ := json.Marshal(v.Index(i).String())
			parts[i] = string(b)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(v.Interface())
	}
}

// ExampleTOML is a commented example file holding every default.
func ExampleTOML() string {
	def := Default()
	var b strings.Builder
	b.WriteString("# tuitbot configuration. Every key is optional: the value shown is the default.\n")
	b.WriteString("# Any key can be overridden from the environment as TUITBOT_<SECTION>__<KEY>\n")
	b.WriteString("# (top-level keys: TUITBOT_<KEY>); lists are comma-separated, and an empty value\n")
	b.WriteString("# means an empty list. Secrets are better kept in the environment.\n\n")
	section := ""
	for _, f := range Fields(&def) {
		if f.Section != section {
			section = f.Section
			fmt.Fprintf(&b, "\n[%s]\n", section)
		}
		fmt.Fprintf(&b, "# %s\n", f.Doc())
		line := fmt.Sprintf("%s = %s", f.Key, literal(f.Value))
		if f.Secret || f.Value.Kind() == reflect.String && f.Value.String() == "" {
			line = "# " + line
		}
		b.WriteString(line + "\n")
	}
	b.WriteString(`
# User policy rules are evaluated after the built-in hard rules (priority 0-99,
# which cannot be overridden) and the template; priorities below 100 are rejected.
# [[mcp_policy.rules]]
# id = "user:no-follows-at-night"
# priority = 200
# label = "No follows at night"
# enabled = true
# conditions = { tools = ["x_follow_user"], schedule_window = { start_hour = 22, end_hour = 6, timezone = "Europe/Berlin", days = ["mon", "tue"] } }
# action = { type = "deny", reason = "no follows at night" }
#
# [[mcp_policy.rate_limits]]
# key = "likes-daily"
# dimension = "tool"          # global | tool | category | budget
# match_value = "x_like_tweet"
# max_count = 50
# period_seconds = 86400
#
# Further X accounts: each [accounts.NAME] section may override mode,
# approval_mode, [mcp_policy] (template, rules, limits, budget), [limits],
# [schedule], [intervals], [business], [scoring] and [targets]; everything
# else is inherited from the settings above. Log each one in with
# ` + "`tuitbot auth --account NAME`" + `.
# [accounts.brand_b]
# mode = "composer"
# limits = { max_replies_per_day = 2 }
# business = { brand_voice = "playful" }
# [accounts.brand_b.mcp_policy]
# template = "agency_mode"
#
# Notification channels: secrets are never written here, only the name of
# the environment variable that holds them (the *_env keys). An ntfy topic
# is one: anyone who knows it reads the notices and their approval links.
# [[notify.channels]]
# name = "phone"
# type = "ntfy"               # webhook | ntfy | slack | discord | telegram | email
# topic_env = "NTFY_TOPIC"    # holds a topic nobody can guess
# token_env = "NTFY_TOKEN"
#
# [[notify.channels]]
# name = "ops"
# type = "webhook"
# url = "https://hooks.example.com/tuitbot"
# secret_env = "TUITBOT_WEBHOOK_SECRET"   # a Standard Webhooks secret: whsec_ + base64
`)
	return b.String()
}

// Reference is the markdown configuration reference for docs/config.md.
func Reference() string {
	def := Default()
	var b strings.Builder
	b.WriteString("# Configuration reference\n\n<!-- Generated by `tuitbot docs`; do not edit. -->\n\n")
	b.WriteString("The file is `~/.tuitbot/config.toml` (or `$TUITBOT_HOME/config.toml`, or `-c FILE`). ")
	b.WriteString("Every key has a default; environment variables override the file. Secrets are masked in every output.\n\n")
	b.WriteString("| Key | Default | Environment | Meaning |\n|---|---|---|---|\n")
	for _, f := range Fields(&def) {
		d := literal(f.Value)
		if f.Secret {
			d = "(secret)"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s |\n", f.Name(), strings.ReplaceAll(d, "|", "\\|"), f.EnvName(), f.Doc())
	}
	b.WriteString("\nPolicy rules (`[[mcp_policy.rules]]`) and limits (`[[mcp_policy.rate_limits]]`) are file-only; see `tuitbot config init` for an example.\n")
	b.WriteString("\n## What a limit counts\n\n")
	b.WriteString("A limit (`[[mcp_policy.rate_limits]]`, `max_mutations_per_hour`, a template's limits) counts the mutations that ran or may have run; ")
	b.WriteString("one that X refused, or that failed before it was sent, is given back. ")
	b.WriteString("`dimension = \"global\"` counts every call once. `dimension = \"tool\"` and `dimension = \"category\"` count what the tool posts, however it is posted:\n\n")
	b.WriteString("- A call counts once against a limit that names its own tool or category, or the typed tool a universal request does the work of ")
	b.WriteString("(`x_post` to `/2/tweets` counts against an `x_post_tweet` limit; a reply body against `x_reply_to_tweet`).\n")
	b.WriteString("- `x_post_thread` posts its first post as `x_post_tweet` does and each later post as a reply to the one before, as `x_reply_to_tweet` does. ")
	b.WriteString("So a limit on `x_post_tweet` counts a thread's first post, a limit on `x_reply_to_tweet` counts its other posts (a thread of 3 counts 2), ")
	b.WriteString("and a limit on the `write` category counts all of them; a limit on `x_post_thread` or the `thread` category counts the thread once. ")
	b.WriteString("A thread that does not fit every such limit is refused whole, before anything is posted.\n")
	b.WriteString("- `dimension = \"budget\"` counts the estimated X spend in USD (a thread: every post).\n")
	b.WriteString("- `limits.max_dms_per_day` is a limit on the `dm` category over 24 hours, kept on the same counters: ")
	b.WriteString("past it a message is refused with `policy_denied_rate_limited` naming `limits.max_dms_per_day`.\n")
	b.WriteString("\n## Notification channels\n\n")
	b.WriteString("Each `[[notify.channels]]` entry has a `name` (1-32 of `a-z`, `0-9`, `_`, `-`), a `type`, optional `events` ")
	b.WriteString("(default `notify.events`) and the keys of its type. Channels are file-only. Secrets are kept out of the file: ")
	b.WriteString("each `*_env` key names the environment variable that holds one, and its value is masked in every output. ")
	b.WriteString("An ntfy topic is a secret too: anyone who knows it reads every notice published to it, approval links included. ")
	b.WriteString("Prefer `topic_env`; a `topic` written in the file still works, and is masked in every output like the other secrets.\n\n")
	b.WriteString("| Type | Keys |\n|---|---|\n")
	for _, t := range ChannelTypes() {
		fmt.Fprintf(&b, "| `%s` | `%s` |\n", t, strings.Join(keysOfType[t], "`, `"))
	}
	b.WriteString("\nDefaults: ntfy `server` = `" + defaultNtfyServer + "`; telegram `api_base_url` = `" + defaultTelegramAPI + "`; ")
	b.WriteString(fmt.Sprintf("email `smtp_port` = `%d`, `tls` = `%s` (`tls`, `starttls`, or `none` for a loopback server only).\n", defaultSMTPPort, defaultSMTPTLS))
	b.WriteString("\n## Accounts\n\n")
	b.WriteString("The top-level settings describe the account named `default`. Each `[accounts.NAME]` section adds an X account ")
	b.WriteString("(NAME: 1-32 of `a-z`, `0-9`, `_`, `-`) that may override these keys: `" + strings.Join(AccountKeys(), "`, `") + "`. ")
	b.WriteString("A key the section leaves out, or a key inside an overridden section, keeps the top-level value. ")
	b.WriteString("Sections are file-only. Log an account in with `tuitbot auth --account NAME`; its tokens are kept in `tokens/NAME.json` ")
	b.WriteString("(mode 0600) and refreshed under their own lock. Tool calls name an account with their `account` argument; ")
	b.WriteString("without one they act for `mcp serve --account NAME`, else `default_account`, else `default`. ")
	b.WriteString("Audit rows, approval items, idempotency, limits, budgets and the cost ledger are kept per account.\n")
	return b.String()
}

// WriteExample writes the example file to path with mode 0600, refusing to
// replace an existing file unless force is set. The file is written to a
// temporary name first and then moved into place, so a reader never sees a
// half-written file and a replaced file never keeps a looser mode.
func WriteExample(path string, force bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s is a directory; give a file path", path)
		}
		if !force {
			return fmt.Errorf("%s already exists; pass --force to overwrite it", path)
		}
	}
	tmp, err := os.CreateTemp(dir, ".config-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op once moved into place
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.WriteString(ExampleTOML()); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if force {
		if err := os.Rename(tmp.Name(), path); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	// A hard link fails if path appeared since the check above, so a file
	// created concurrently is never replaced without force.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; pass --force to overwrite it", path)
		}
		// Some file systems have no hard links; exclusive creation still
		// guarantees nothing is overwritten.
		return writeExclusive(path)
	}
	return nil
}

func writeExclusive(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; pass --force to overwrite it", path)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteString(ExampleTOML()); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// InSandbox is c as a sandbox process uses it: every X address (the
// logical hosts and the OAuth endpoints) goes to the sandbox emulator at
// emulator, so that is what is shown, rather than x.com addresses that
// are never reached. emulator "" names the emulator without an address
// (none is running).
func (c Config) InSandbox(emulator string) Config {
	at := "sandbox emulator (on a loopback port each --sandbox command starts or joins)"
	if emulator != "" {
		at = "sandbox emulator at " + emulator
	}
	c.XAPI.APIBaseURL, c.XAPI.UploadBaseURL, c.XAPI.LegacyUploadURL = at, at, at
	c.XAPI.AuthorizeURL, c.XAPI.TokenURL = at, at
	return c
}
