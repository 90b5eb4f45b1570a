package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestNotifyAddEditsTheConfigInitFile: `notify add` appends a channel to
// the file `config init` writes (which already has [notify] and
// [approval_links]), keeping every line of it, writing it 0600, and the
// result loads; a second channel of the same name, a missing or foreign
// flag and an unknown type are refused naming what is wrong.
func TestNotifyAddEditsTheConfigInitFile(t *testing.T) {
	h := newHome(t)
	h.ok(t, "config", "init")
	path := h.path("config.toml")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.ok(t, "notify", "add", "ntfy", "--name", "phone", "--topic-env", "NTFY_TOPIC")
	mustContain(t, "notify add", r.stdout, "phone", path, "[[notify.channels]]", `topic_env = "NTFY_TOPIC"`, "NTFY_TOPIC")
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(after), string(before)) {
		t.Errorf("the file's own lines changed:\n%s", after)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode after the write: %v, %v; want 0600", st.Mode().Perm(), err)
	}
	h.ok(t, "config", "validate")
	h.ok(t, "notify", "add", "slack", "--name", "team", "--webhook-url-env", "SLACK_WEBHOOK_URL", "--events", "approval.created,publish.failed")
	h.ok(t, "notify", "add", "email", "--name", "mail", "--smtp-host", "smtp.example.com", "--from", "bot@example.com",
		"--to", "me@example.com,you@example.com", "--password-env", "SMTP_PASSWORD")
	var st struct {
		Channels []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"channels"`
	}
	if err := json.Unmarshal([]byte(h.ok(t, "notify", "status", "--json").stdout), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Channels) != 3 || st.Channels[0].Name != "phone" || st.Channels[0].Type != "ntfy" || st.Channels[1].Name != "team" || st.Channels[2].Type != "email" {
		t.Errorf("notify status after two adds = %+v", st.Channels)
	}

	added, _ := os.ReadFile(path)
	for _, tc := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"duplicate name", []string{"ntfy", "--name", "phone", "--topic-env", "OTHER"}, []string{"--name", `"phone"`, "already"}},
		{"no name", []string{"ntfy", "--topic-env", "T"}, []string{"--name"}},
		{"ntfy without topic", []string{"ntfy", "--name", "p2"}, []string{"--topic-env"}},
		{"flag of another type", []string{"ntfy", "--name", "p2", "--topic-env", "T", "--webhook-url-env", "W"}, []string{"--webhook-url-env", "ntfy"}},
		{"unknown type", []string{"pager", "--name", "p2"}, []string{"pager", "ntfy", "telegram"}},
		{"bad env name", []string{"ntfy", "--name", "p2", "--topic-env", "not an env"}, []string{"topic_env"}},
		{"unknown event", []string{"slack", "--name", "s2", "--webhook-url-env", "S", "--events", "approval.maybe"}, []string{"approval.maybe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.fails(t, append([]string{"notify", "add"}, tc.args...)...)
			mustContain(t, "the refusal", r.stderr, tc.wants...)
			if b, _ := os.ReadFile(path); string(b) != string(added) {
				t.Errorf("a refused add changed the file")
			}
		})
	}
}

// TestNotifyTestPrintShowsTheNoticeWithoutSending: `notify test --print`
// shows the notice a channel would send, as that channel renders it, and
// sends nothing: it works with no channel, and with a channel whose server
// cannot be reached; the ntfy topic, a credential, is never printed.
func TestNotifyTestPrintShowsTheNoticeWithoutSending(t *testing.T) {
	h := newHome(t)
	r := h.ok(t, "notify", "test", "--print", "--sandbox")
	mustContain(t, "the notice with no channel", r.stdout, "tuitbot test notification", "If you can read it")

	h.ok(t, "notify", "add", "ntfy", "--name", "phone", "--topic-env", "NTFY_TOPIC", "--server", "http://127.0.0.1:1")
	h = h.with("NTFY_TOPIC=secret-topic-4711")
	r = h.ok(t, "notify", "test", "--channel", "phone", "--print", "--sandbox")
	mustContain(t, "the ntfy notice", r.stdout, "phone", "ntfy", `"title": "tuitbot test notification"`, `"topic"`, "not sent")
	if strings.Contains(r.stdout+r.stderr, "secret-topic-4711") {
		t.Errorf("the ntfy topic was printed:\n%s", r)
	}
	var outbox struct {
		Count *int `json:"count"`
	}
	if err := json.Unmarshal([]byte(h.ok(t, "notify", "outbox", "list", "--json", "--sandbox").stdout), &outbox); err != nil || outbox.Count == nil || *outbox.Count != 0 {
		t.Errorf("--print queued outbox rows: %v, %v", outbox.Count, err)
	}
}
