package config_test

import (
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

// TestNameAndChatIDBounds pins each length limit of the names and ids a
// configuration holds, on both sides: an account or channel name is 1-32
// characters, an ntfy topic 1-64, a Telegram chat id 1-20 digits or @ and
// 5-32 characters.
func TestNameAndChatIDBounds(t *testing.T) {
	channel := func(fields string) string {
		return "[[notify.channels]]\n" + fields
	}
	telegram := func(chat string) string {
		return channel("name = \"t\"\ntype = \"telegram\"\nbot_token_env = \"T\"\nallowed_user_ids = [1]\nchat_id = \"" + chat + "\"\n")
	}
	ntfy := func(topic string) string {
		return channel("name = \"n\"\ntype = \"ntfy\"\ntopic = \"" + topic + "\"\n")
	}
	slack := func(name string) string {
		return channel("name = \"" + name + "\"\ntype = \"slack\"\nwebhook_url_env = \"S\"\n")
	}
	tests := []struct {
		name, file, badKey string // badKey "" means the file is valid
	}{
		{"account name of 32", "[accounts." + strings.Repeat("a", 32) + "]\n", ""},
		{"account name of 33", "[accounts." + strings.Repeat("a", 33) + "]\n", "accounts." + strings.Repeat("a", 33)},
		{"account name starting with _", "[accounts._a]\n", "accounts._a"},
		{"account name with upper case", "[accounts.Brand]\n", "accounts.Brand"},
		{"channel name of 32", slack("b-" + strings.Repeat("c", 30)), ""},
		{"channel name of 33", slack(strings.Repeat("c", 33)), "notify.channels[0].name"},
		{"channel name starting with -", slack("-c"), "notify.channels[0].name"},
		{"topic of 64", ntfy(strings.Repeat("T", 63) + "_"), ""},
		{"topic of 65", ntfy(strings.Repeat("T", 65)), "notify.channels[0].topic"},
		{"chat id of 20 digits", telegram(strings.Repeat("9", 20)), ""},
		{"negative chat id", telegram("-100123"), ""},
		{"chat id of 21 digits", telegram(strings.Repeat("9", 21)), "notify.channels[0].chat_id"},
		{"chat id of a lone minus", telegram("-"), "notify.channels[0].chat_id"},
		{"chat id of two minus signs", telegram("--1"), "notify.channels[0].chat_id"},
		{"channel @ of 5", telegram("@abc_1"), ""},
		{"channel @ of 4", telegram("@abcd"), "notify.channels[0].chat_id"},
		{"channel @ of 32", telegram("@" + strings.Repeat("z", 32)), ""},
		{"channel @ of 33", telegram("@" + strings.Repeat("z", 33)), "notify.channels[0].chat_id"},
		{"channel @ with -", telegram("@ab-cd"), "notify.channels[0].chat_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, home, "config.toml", tc.file)
			_, _, err := load(t, home, "", nil)
			if tc.badKey == "" {
				if err != nil {
					t.Fatalf("Load refused a valid file: %v", err)
				}
				return
			}
			es, ok := config.AsErrors(err)
			if !ok {
				t.Fatalf("Load = %v; want config.Errors naming %s", err, tc.badKey)
			}
			for _, e := range es {
				if e.Key == tc.badKey {
					return
				}
			}
			t.Errorf("no error for key %q in %v", tc.badKey, err)
		})
	}
}
