package notify

import (
	"context"
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
)

// oneItem is a message about one item with its links.
func oneItem(text string, links Links) Message {
	params, _ := json.Marshal(map[string]string{"text": text})
	return Message{ID: "msg_1", Event: EventCreated, Account: "default", Timestamp: t0, OneTap: true,
		Items: []Item{{Account: "default", ItemID: 4, Tool: "x_post_tweet", Text: text, Params: params, Rule: "user:review", Caller: "mcp",
			ExpiresAt: "2026-03-02T11:00:00.000Z"}},
		Links: []Links{links}}
}

var someLinks = Links{View: "https://phone.example/a/VIEWTOKENVIEWTOKENVIEW", Approve: "https://phone.example/a/APPROVETOKENAPPROVE",
	Reject: "https://phone.example/a/REJECTTOKENREJECTTOK", ApproveCSRF: "csrf-value", RejectCSRF: "csrf-reject"}

// ntfy gets its JSON publish format: Click opens the view link, and with
// one-tap links an http action POSTs the approve link with its CSRF value.
func TestNtfyPayload(t *testing.T) {
	rcv := newReceiver(t)
	n := NewNtfy("phone", rcv.srv.URL, "tuitbot-abc", "tk_secret", rcv.srv.Client(), time.Now)
	if _, err := n.Send(context.Background(), oneItem("ship it", someLinks)); err != nil {
		t.Fatal(err)
	}
	got := rcv.requests()[0]
	if got.Path != "/" || got.Header.Get("Authorization") != "Bearer tk_secret" || got.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("path %q headers %v", got.Path, got.Header)
	}
	var body struct {
		Topic, Title, Message, Click string
		Actions                      []map[string]any
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Topic != "tuitbot-abc" || body.Click != someLinks.View || !strings.Contains(body.Message, "ship it") ||
		body.Title != "Approval needed: Post" {
		t.Fatalf("body %+v", body)
	}
	if len(body.Actions) != 3 {
		t.Fatalf("actions %v", body.Actions)
	}
	ap := body.Actions[1]
	if ap["action"] != "http" || ap["url"] != someLinks.Approve || ap["method"] != "POST" || ap["body"] != (url.Values{"csrf": {"csrf-value"}}).Encode() {
		t.Fatalf("approve action %v", ap)
	}
	// Without one-tap there is no acting button, only the view.
	m := oneItem("ship it", someLinks)
	m.OneTap = false
	b, _ := NtfyBody("t", m)
	if strings.Contains(string(b), someLinks.Approve) {
		t.Fatalf("approve link without one_tap: %s", b)
	}
}

// Slack text is escaped: a post cannot mention a channel or forge a link.
func TestSlackEscapesPostText(t *testing.T) {
	rcv := newReceiver(t)
	s := NewSlack("team", rcv.srv.URL+"/services/T/B/X", rcv.srv.Client(), time.Now)
	hostile := "<!channel> <!here> <@U123> <https://evil.example|your bank> a & b"
	if _, err := s.Send(context.Background(), oneItem(hostile, Links{View: someLinks.View})); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Text      string `json:"text"`
		LinkNames bool   `json:"link_names"`
	}
	if err := json.Unmarshal(rcv.requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<!channel>", "<!here>", "<@U123>", "<https://evil.example"} {
		if strings.Contains(body.Text, bad) {
			t.Errorf("Slack text holds %q unescaped:\n%s", bad, body.Text)
		}
	}
	if !strings.Contains(body.Text, "&lt;!channel&gt;") || !strings.Contains(body.Text, "a &amp; b") || body.LinkNames {
		t.Fatalf("text %q link_names %v", body.Text, body.LinkNames)
	}
	if !strings.Contains(body.Text, "<"+someLinks.View+"|Review and decide>") {
		t.Fatalf("the view link is missing: %s", body.Text)
	}
}

// Discord always sends allowed_mentions {"parse": []}, and @everyone in a
// post does not even read as a mention.
func TestDiscordNeutralisesMentions(t *testing.T) {
	rcv := newReceiver(t)
	d := NewDiscord("guild", rcv.srv.URL+"/api/webhooks/1/x", rcv.srv.Client(), time.Now)
	if _, err := d.Send(context.Background(), oneItem("@everyone @here <@123> look", Links{})); err != nil {
		t.Fatal(err)
	}
	raw := rcv.requests()[0].Body
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(body["allowed_mentions"], map[string]any{"parse": []any{}}) {
		t.Fatalf("allowed_mentions = %v (raw %s)", body["allowed_mentions"], raw)
	}
	content := body["content"].(string)
	for _, bad := range []string{"@everyone", "@here", "<@123>"} {
		if strings.Contains(content, bad) {
			t.Errorf("content holds %q: %q", bad, content)
		}
	}
}

// A channel whose secret variable is unset fails naming the key and the
// variable, never a value.
func TestBuildNamesTheMissingSecret(t *testing.T) {
	n := config.Notify{Channels: []config.NotifyChannel{
		{Name: "ok", Type: "slack", WebhookURLEnv: "SLACK_URL"},
		{Name: "hook", Type: "webhook", URL: "https://h.example", SecretEnv: "HOOK_SECRET"},
	}}
	env := map[string]string{"SLACK_URL": "https://hooks.slack.com/services/T/B/secretpart"}
	_, err := Build(n, func(k string) string { return env[k] }, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "notify.channels[1].secret_env") || !strings.Contains(err.Error(), "HOOK_SECRET") {
		t.Fatalf("err = %v", err)
	}
	env["HOOK_SECRET"] = "not-a-whsec-value"
	_, err = Build(n, func(k string) string { return env[k] }, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "whsec_") || strings.Contains(err.Error(), "not-a-whsec-value") {
		t.Fatalf("err = %v", err)
	}
	env["HOOK_SECRET"] = testSecret
	chans, err := Build(n, func(k string) string { return env[k] }, nil, nil)
	if err != nil || len(chans) != 2 || chans[0].Type() != "slack" || chans[1].Name() != "hook" {
		t.Fatalf("chans %v err %v", chans, err)
	}
	env["SLACK_URL"] = "http://hooks.example.com/plain"
	if _, err := Build(n, func(k string) string { return env[k] }, nil, nil); err == nil || strings.Contains(err.Error(), "plain") {
		t.Fatalf("a plain http webhook URL: %v", err)
	}
}

// An ntfy topic may come from topic_env: the channel publishes to it, a
// missing or malformed value fails naming the key and variable without
// quoting the value, and the status target names neither topic.
func TestNtfyTopicFromTheEnvironment(t *testing.T) {
	rcv := newReceiver(t)
	n := config.Notify{Channels: []config.NotifyChannel{
		{Name: "phone", Type: "ntfy", Server: rcv.srv.URL, TopicEnv: "NTFY_TOPIC"},
		{Name: "old", Type: "ntfy", Server: rcv.srv.URL, Topic: "literal-topic-in-file-8d2e"},
	}}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if _, err := Build(n, getenv, nil, nil); err == nil || !strings.Contains(err.Error(), "notify.channels[0].topic_env") || !strings.Contains(err.Error(), "NTFY_TOPIC") {
		t.Fatalf("unset topic_env: %v", err)
	}
	env["NTFY_TOPIC"] = "not a topic/9f"
	if _, err := Build(n, getenv, nil, nil); err == nil || !strings.Contains(err.Error(), "notify.channels[0].topic_env") || strings.Contains(err.Error(), "not a topic/9f") {
		t.Fatalf("malformed topic: %v", err)
	}
	env["NTFY_TOPIC"] = "env-topic-nobody-guesses-41c7"
	chans, err := Build(n, getenv, rcv.srv.Client(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chans[0].Send(context.Background(), oneItem("hello", Links{})); err != nil {
		t.Fatal(err)
	}
	if got := rcv.requests(); len(got) != 1 || !strings.Contains(string(got[0].Body), `"topic":"env-topic-nobody-guesses-41c7"`) {
		t.Fatalf("published %+v", got)
	}
	for i, want := range []string{"(the topic in $NTFY_TOPIC)", "(topic " + config.Mask + ")"} {
		got := Target(n.Channels[i])
		if !strings.HasSuffix(got, want) || strings.Contains(got, "literal-topic") || strings.Contains(got, "li"+config.Mask) {
			t.Errorf("Target(%s) = %q, want it to end %q", n.Channels[i].Name, got, want)
		}
	}
}
