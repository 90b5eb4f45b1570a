package notify

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// actingLinks are full signed links, as approvallink makes them: a view, and
// approve and reject links with their CSRF values.
type actingLinks struct{ fakeLinks }

func (actingLinks) Links(_ context.Context, _ string, it *gateway.ApprovalItem, ch string) (Links, error) {
	base := fmt.Sprintf("https://phone.example/a/%s-%d-", ch, it.ID)
	return Links{View: base + "view", Approve: base + "approve", Reject: base + "reject", ApproveCSRF: "csrf-a", RejectCSRF: "csrf-r"}, nil
}

// delivered is what one channel's server received for a message: its text
// as a reader sees it (escapes undone where the format undoes them), and
// whether it carried a decision that acts without the review page.
type delivered struct {
	text string
	// wire is the text as sent, escapes and all.
	wire   string
	oneTap bool
	// limit is the channel's message length limit and length the length
	// it counts (0: none).
	limit, length int
}

// last reads what each channel's server got last.
func (e *everyChannel) last(t *testing.T) map[string]delivered {
	t.Helper()
	out := map[string]delivered{}
	body := func(name string) []byte {
		rs := e.hooks[name].requests()
		if len(rs) == 0 {
			t.Fatalf("%s received nothing", name)
		}
		return rs[len(rs)-1].Body
	}
	out[config.ChannelWebhook] = delivered{text: string(body(config.ChannelWebhook))}

	var nt struct {
		Title, Message string
		Actions        []map[string]any
	}
	mustJSON(t, body(config.ChannelNtfy), &nt)
	d := delivered{text: nt.Title + "\n" + nt.Message, limit: 4096, length: len(nt.Message)}
	for _, a := range nt.Actions {
		d.oneTap = d.oneTap || a["action"] == "http"
	}
	out[config.ChannelNtfy] = d

	var sl struct{ Text string }
	mustJSON(t, body(config.ChannelSlack), &sl)
	out[config.ChannelSlack] = delivered{text: slackUnescape(sl.Text), wire: sl.Text, limit: 40000, length: utf16Length(sl.Text)}

	var dc struct{ Content string }
	mustJSON(t, body(config.ChannelDiscord), &dc)
	out[config.ChannelDiscord] = delivered{text: discordUnescape(dc.Content), wire: dc.Content, limit: 2000, length: utf16Length(dc.Content)}

	sent := e.tg.sentMessages()
	if len(sent) == 0 {
		t.Fatal("telegram received nothing")
	}
	tg := sent[len(sent)-1]
	text, _ := tg["text"].(string)
	d = delivered{text: text, limit: 4096, length: utf16Length(text)}
	if _, ok := tg["parse_mode"]; ok {
		t.Errorf("telegram message has a parse_mode: post text would format")
	}
	if mk, ok := tg["reply_markup"].(map[string]any); ok {
		for _, row := range mk["inline_keyboard"].([]any) {
			for _, b := range row.([]any) {
				if _, ok := b.(map[string]any)["callback_data"]; ok {
					d.oneTap = true
				}
			}
		}
	}
	out[config.ChannelTelegram] = d

	mails := e.sink.mails()
	if len(mails) == 0 {
		t.Fatal("email received nothing")
	}
	out[config.ChannelEmail] = delivered{text: mailText(t, mails[len(mails)-1].Data)}
	return out
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

func utf16Length(s string) int { return len(utf16.Encode([]rune(s))) }

// slackUnescape is what Slack shows for escaped text.
func slackUnescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "\u200b", "").Replace(s)
}

// discordUnescape is what Discord shows: a backslash before punctuation
// drops, and zero-width spaces do not show.
func discordUnescape(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i := 0; i < len(r); i++ {
		if r[i] == '\\' && i+1 < len(r) && r[i+1] < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r[i+1]) {
			i++
		}
		if r[i] != '\u200b' {
			b.WriteRune(r[i])
		}
	}
	return b.String()
}

// mailText is a mail's decoded text (subject and body).
func mailText(t *testing.T, raw []byte) string {
	t.Helper()
	msg, err := mail.ReadMessage(bufio.NewReader(strings.NewReader(string(raw))))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	var r io.Reader = msg.Body
	if mt, params, _ := mime.ParseMediaType(msg.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
		p, err := multipart.NewReader(msg.Body, params["boundary"]).NextPart()
		if err != nil {
			t.Fatal(err)
		}
		r = p
	} else if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		r = quotedprintable.NewReader(msg.Body)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return subject + "\n" + strings.ReplaceAll(string(b), "\r\n", "\n")
}

// notifyOne queues one item with the given stored parameters and delivers
// its approval.created notice, with one-tap on, through every channel.
func notifyOne(t *testing.T, tool, params string, change ...func(*gateway.ApprovalItem)) map[string]delivered {
	t.Helper()
	e := newEveryChannel(t)
	w := newWorld(t, e.routes...)
	w.queueParams(1, tool, params, change...)
	w.runOnce(w.dispatcher(DispatcherOptions{Links: actingLinks{}, OneTap: true}, e.chans...))
	for _, r := range w.rows() {
		if r.Status != StatusDelivered {
			t.Fatalf("%s: %s (%s)", r.Channel, r.Status, r.LastError)
		}
	}
	return e.last(t)
}

// oneTapChannels can carry a decision that acts without the review page.
var oneTapChannels = map[string]bool{config.ChannelNtfy: true, config.ChannelTelegram: true}

// A notice that cannot show all of the post (cut to fit the channel), or
// what a like, delete or follow acts on, carries no one-tap decision:
// only the view link. A cut post says where it was cut and where the rest
// is. A short post with nothing else keeps its one-tap buttons.
func TestOneTapOnlyWhenTheNoticeShowsEverything(t *testing.T) {
	long := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing. ", 95)
	long += strings.Repeat("x", 4989-len(long)-len("buy $SCAM now at evil.example")) + "buy $SCAM now at evil.example"
	if len(long) != 4989 {
		t.Fatalf("post is %d characters", len(long))
	}
	tests := []struct {
		name, tool, params string
		oneTap             bool
	}{
		{"short post", "x_post_tweet", `{"text":"ship it"}`, true},
		{"thread", "x_post_thread", `{"tweets":["one","two"]}`, true},
		{"4,989-character post", "x_post_tweet", `{"text":"` + long + `"}`, false},
		{"like", "x_like_tweet", `{"tweet_id":"1234567890"}`, false},
		{"delete", "x_delete_tweet", `{"tweet_id":"1234567890"}`, false},
		{"follow", "x_follow_user", `{"target_user_id":"42"}`, false},
		{"reply", "x_reply_to_tweet", `{"text":"agreed","in_reply_to_id":"1234567890"}`, false},
		{"post with media", "x_post_tweet", `{"text":"look","media_ids":["99"]}`, false},
		{"raw request", "x_post", `{"method":"POST","path":"/2/tweets","body":"{\"text\":\"hi\"}"}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := notifyOne(t, tc.tool, tc.params)
			for name, d := range got {
				if oneTapChannels[name] && d.oneTap != tc.oneTap {
					t.Errorf("%s: one-tap decision %v, want %v", name, d.oneTap, tc.oneTap)
				}
				if !strings.Contains(d.text, "https://phone.example/a/"+name+"-1-view") {
					t.Errorf("%s: no view link:\n%s", name, d.text)
				}
				for _, acting := range []string{"-1-approve", "-1-reject", "csrf-a"} {
					if !oneTapChannels[name] && name != config.ChannelWebhook && strings.Contains(d.text, acting) {
						t.Errorf("%s carries %q", name, acting)
					}
				}
				if d.limit > 0 && d.length > d.limit {
					t.Errorf("%s: %d characters, over its limit of %d", name, d.length, d.limit)
				}
				if tc.name != "4,989-character post" {
					continue
				}
				if shows := strings.Contains(d.text, "buy $SCAM now at evil.example"); !shows && !strings.Contains(d.text, "whole post is on the review page") {
					t.Errorf("%s cut the post without saying so:\n%s", name, d.text)
				}
			}
		})
	}
}

// Each notice says what approving does in the review page's words: the
// action's name and effect, the post or account it acts on, a poll's
// choices, every post of a thread.
func TestNoticesSayWhatIsDecided(t *testing.T) {
	tests := []struct {
		name, tool, params string
		title              string
		want               []string
	}{
		{"like", "x_like_tweet", `{"tweet_id":"1234567890"}`, "Approval needed: Like",
			[]string{"Likes this post; its author may be told.", "The post this likes: post 1234567890"}},
		{"delete", "x_delete_tweet", `{"tweet_id":"1234567890"}`, "Approval needed: Delete post",
			[]string{"Removes this post from X for good", "The post this deletes: post 1234567890"}},
		{"follow", "x_follow_user", `{"target_user_id":"42"}`, "Approval needed: Follow",
			[]string{"Follows this account; it is told.", "The account this follows: user 42"}},
		{"poll", "x_post_tweet", `{"text":"Which one?","options":{"poll":{"options":["Tabs","Spaces"],"duration_minutes":1440}}}`,
			"Approval needed: Post", []string{"Which one?", "Poll: Tabs / Spaces, 1 day"}},
		{"thread", "x_post_thread", `{"tweets":["first post","second post","third post"]}`, "Approval needed: Thread",
			[]string{"Posts these posts as a thread", "Post 1 of 3:", "first post", "Post 2 of 3:", "second post", "Post 3 of 3:", "third post"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for name, d := range notifyOne(t, tc.tool, tc.params) {
				want := append([]string{tc.title}, tc.want...)
				if name == config.ChannelWebhook {
					// A program reads the words as fields.
					var body struct{ Data map[string]any }
					mustJSON(t, []byte(d.text), &body)
					b, _ := json.Marshal(body.Data)
					d.text = string(b)
					want = want[1:]
				}
				for _, w := range want {
					if name == config.ChannelWebhook && strings.HasPrefix(w, "Post ") && strings.HasSuffix(w, ":") {
						continue
					}
					if !strings.Contains(d.text, w) {
						t.Errorf("%s does not say %q:\n%s", name, w, d.text)
					}
				}
				if strings.Contains(d.text, "Approval needed: "+tc.tool) {
					t.Errorf("%s names the tool, not the action:\n%s", name, d.text)
				}
			}
		})
	}
}

// A digest too long for its channel spells out fewer items and cuts their
// posts; it stays within the limit, its code blocks closed and each view
// link whole.
func TestLongDigestsFitTheirChannel(t *testing.T) {
	m := Message{ID: "msg_9", Event: EventCreated, Account: "default", Timestamp: t0, OneTap: true}
	for i := range 12 {
		params, _ := json.Marshal(map[string]string{"text": strings.Repeat(fmt.Sprintf("post %d ```-# ", i), 25)})
		m.Items = append(m.Items, Item{Account: "default", ItemID: int64(i + 1), Tool: "x_post_tweet", Params: params,
			Rule: "user:review", Caller: "mcp", ExpiresAt: "2026-03-02T11:00:00.000Z"})
		m.Links = append(m.Links, Links{View: fmt.Sprintf("https://phone.example/a/view-%02d-xxxxxxxxxxxxxxxxxxxxxxxxxxxx", i+1)})
	}
	e := newEveryChannel(t)
	for _, c := range e.chans {
		if _, err := c.Send(context.Background(), m); err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
	}
	for name, d := range e.last(t) {
		if d.limit > 0 && d.length > d.limit {
			t.Errorf("%s: %d characters, over its limit of %d", name, d.length, d.limit)
		}
		if d.oneTap {
			t.Errorf("%s: a digest with one-tap", name)
		}
		if d.wire != "" && strings.Count(d.wire, "```")%2 != 0 {
			t.Errorf("%s: a code block left open:\n%s", name, d.wire)
		}
		links := regexp.MustCompile(`view-\d\d-x+`).FindAllString(d.text, -1)
		if len(links) == 0 {
			t.Errorf("%s: no view link", name)
		}
		for _, l := range links {
			if len(l) != len("view-01-xxxxxxxxxxxxxxxxxxxxxxxxxxxx") {
				t.Errorf("%s: a cut view link %q", name, l)
			}
		}
	}
}
