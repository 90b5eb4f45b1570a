package notify

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// allEvents are the item events every test channel subscribes to.
var allEvents = []string{EventCreated, EventEdited, EventExpiring}

// everyChannel is one channel of each type, each speaking to a local server
// of its own wire format, and how many messages each server took.
type everyChannel struct {
	chans    []Channel
	hooks    map[string]*receiver
	tg       *fakeTelegram
	sink     *smtpSink
	routes   []Route
	received func() map[string]int
}

func newEveryChannel(t *testing.T) *everyChannel {
	t.Helper()
	e := &everyChannel{hooks: map[string]*receiver{}, tg: newFakeTelegram(t), sink: &smtpSink{}}
	for _, name := range []string{config.ChannelWebhook, config.ChannelNtfy, config.ChannelSlack, config.ChannelDiscord} {
		e.hooks[name] = newReceiver(t)
	}
	wh, err := NewWebhook(config.ChannelWebhook, e.hooks[config.ChannelWebhook].srv.URL+"/in", testSecret, http.DefaultClient, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	port := startSMTP(t, e.sink, nil)
	e.chans = []Channel{
		wh,
		NewNtfy(config.ChannelNtfy, e.hooks[config.ChannelNtfy].srv.URL, "topic", "", http.DefaultClient, time.Now),
		NewSlack(config.ChannelSlack, e.hooks[config.ChannelSlack].srv.URL+"/services/T/B/X", http.DefaultClient, time.Now),
		NewDiscord(config.ChannelDiscord, e.hooks[config.ChannelDiscord].srv.URL+"/api/webhooks/1/x", http.DefaultClient, time.Now),
		NewTelegram(config.NotifyChannel{Name: config.ChannelTelegram, ChatID: "-1001", AllowedUserIDs: []int64{42}, APIBaseURL: e.tg.srv.URL},
			tgToken, http.DefaultClient, time.Now),
		NewEmail(config.NotifyChannel{Name: config.ChannelEmail, SMTPHost: "127.0.0.1", SMTPPort: port, From: "bot@example.com",
			To: []string{"me@example.com"}, TLS: "none"}, ""),
	}
	for _, c := range e.chans {
		e.routes = append(e.routes, Route{Channel: c.Name(), Events: allEvents})
	}
	e.received = func() map[string]int {
		out := map[string]int{}
		for name, r := range e.hooks {
			out[name] = len(r.requests())
		}
		out[config.ChannelTelegram] = len(e.tg.sentMessages())
		out[config.ChannelEmail] = len(e.sink.mails())
		return out
	}
	return e
}

// queueParams records approval.created for a pending item whose stored
// parameters are exactly params, as the gateway stores and hands them on.
func (w *world) queueParams(id int64, tool string, params string, change ...func(*gateway.ApprovalItem)) gateway.ApprovalItem {
	w.t.Helper()
	it := gateway.ApprovalItem{ID: id, Tool: tool, Params: json.RawMessage(params), OriginalParams: json.RawMessage(params),
		MatchedRuleID: "user:review", Reason: "posts need review", Caller: "mcp", Status: gateway.ApprovalPending,
		CreatedAt: store.FormatTime(w.clk.Now()), ExpiresAt: store.FormatTime(w.clk.Now().Add(24 * time.Hour))}
	for _, c := range change {
		c(&it)
	}
	w.items.put(it)
	err := w.db.Tx(w.ctx, func(tx *sql.Tx) error {
		return w.out.Notice(w.ctx, tx, gateway.Notice{Kind: gateway.NoticeCreated, Account: "default", Item: it, ParamsHash: fmt.Sprint("h", id)})
	})
	if err != nil {
		w.t.Fatalf("record notice: %v", err)
	}
	return it
}

// A post is notified whatever characters it holds: the dispatcher compares
// the parameters stored when the notice was recorded with those stored
// now, not with a re-encoding of them, so "Q&A", "<3", a line separator or
// an escaped lone surrogate is not taken for an edit. Every channel type
// gets every post, on both backends.
func TestEveryCharacterIsNotifiedOnEveryChannel(t *testing.T) {
	// The parameters as the gateway stores them: canonical JSON without
	// HTML escaping, or a spelling with escapes a client sent.
	stored := []struct{ name, params string }{
		{"html specials", `{"text":"Q&A <3 a > b"}`},
		{"html specials escaped", `{"text":"Q\u0026A \u003c3 a \u003e b"}`},
		{"non-ascii", `{"text":"café, naïve, 東京, Ελληνικά"}`},
		{"emoji", `{"text":"ship it 🚀 👩‍👩‍👧 🇫🇷"}`},
		{"line and paragraph separators", "{\"text\":\"one\u2028two\u2029three\"}"},
		{"escaped lone surrogates", `{"text":"half \ud800 and \udfff"}`},
		{"thread", `{"tweets":["1/ Q&A","2/ <tags> & more"]}`},
	}
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEveryChannel(t)
		w := newWorld(t, e.routes...)
		for i, s := range stored {
			tool := "x_post_tweet"
			if s.name == "thread" {
				tool = "x_post_thread"
			}
			w.queueParams(int64(i+1), tool, s.params)
		}
		w.runOnce(w.dispatcher(DispatcherOptions{}, e.chans...))
		for _, r := range w.rows() {
			if r.Status != StatusDelivered {
				t.Errorf("item %d (%s) on %s: %s (%s)", r.ItemID, stored[r.ItemID-1].name, r.Channel, r.Status, r.LastError)
			}
		}
		for name, n := range e.received() {
			if n != len(stored) {
				t.Errorf("%s received %d messages, want %d", name, n, len(stored))
			}
		}
	})
}
