package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
)

type fakeSource struct {
	pending  []gateway.ApprovalItem
	audit    map[string][]gateway.AuditEntry
	failures []Item
	handOffs []gateway.HandOff
}

func (f *fakeSource) Accounts() []string { return []string{"default"} }
func (f *fakeSource) Pending(context.Context, string) ([]gateway.ApprovalItem, error) {
	return f.pending, nil
}
func (f *fakeSource) Mutations(_ context.Context, _, status string, _ time.Time) ([]gateway.AuditEntry, error) {
	return f.audit[status], nil
}
func (f *fakeSource) PublishFailures(context.Context, string, time.Time) ([]Item, error) {
	return f.failures, nil
}
func (f *fakeSource) HandOffs(context.Context, string) ([]gateway.HandOff, error) {
	return f.handOffs, nil
}

// Sweeps notice what no transaction records: an item about to expire, an
// unknown outcome, a published post, a failed scheduled post. Each becomes
// one row per subscribed channel, however often it is swept.
func TestSweepsRecordEachEventOnce(t *testing.T) {
	w := newWorld(t, Route{Channel: "hook", Events: []string{EventExpiring, EventUnknown, EventPubFailed, EventPublished, EventHandOff}})
	at := func(d time.Duration) string { return store.FormatTime(t0.Add(d)) }
	params := json.RawMessage(`{"text":"soon gone"}`)
	src := &fakeSource{
		pending: []gateway.ApprovalItem{
			{ID: 1, Tool: "x_post_tweet", Params: params, Status: "pending", ExpiresAt: at(20 * time.Minute)},
			{ID: 2, Tool: "x_post_tweet", Params: params, Status: "pending", ExpiresAt: at(2 * time.Hour)},
		},
		audit: map[string][]gateway.AuditEntry{
			"unknown": {{CorrelationID: "c-1", Tool: "x_post_tweet", ParamsSummary: `{"text":"did it post?"}`, Status: "unknown"},
				{CorrelationID: "c-2", Tool: "x_post_tweet", Status: "unknown", Resolution: "happened"}},
			"success": {{CorrelationID: "c-3", Tool: "x_post_tweet", Status: "success"}, {CorrelationID: "c-4", Tool: "x_like_tweet", Status: "success"}},
		},
		failures: []Item{{Tool: "scheduled_tweet", Text: "draft", DraftID: 9, Error: "failed"}},
		handOffs: []gateway.HandOff{{ID: 5, Effect: "x_like_tweet", TweetID: "77", IntentURL: "https://x.com/intent/like?tweet_id=77", Status: "open"}},
	}
	sweeps := Sweeps(w.out, src, 30*time.Minute)
	for pass := 0; pass < 2; pass++ {
		for _, s := range sweeps {
			if err := s(w.ctx, w.out, w.clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := map[string]int{}
	for _, r := range w.rows() {
		got[r.Event+" "+r.dedupKey]++
	}
	want := map[string]int{
		"approval.expiring approval.expiring:1": 1,
		"mutation.unknown mutation.unknown:c-1": 1,
		"post.published post.published:c-3":     1,
		"publish.failed publish.failed:9":       1,
		"handoff.created handoff.created:5":     1,
	}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("rows %v, want %v", got, want)
		}
	}
	// Only subscribed events are swept.
	none := NewOutbox(w.db, []Route{{Channel: "x", Events: []string{EventCreated}}}, w.clk.Now)
	if s := Sweeps(none, src, time.Minute); len(s) != 0 {
		t.Fatalf("%d sweeps for a channel that subscribes to none of their events", len(s))
	}
}

// TestHandOffMessage: a hand-off's message names what to do on X and
// carries X's Web Intent link, the ntfy notification opening it, and no
// button that approves.
func TestHandOffMessage(t *testing.T) {
	link := "https://x.com/intent/like?tweet_id=77"
	h := gateway.HandOff{ID: 5, Effect: "x_like_tweet", TweetID: "77", IntentURL: link, Status: gateway.HandOffOpen}
	it := itemOf(gateway.Notice{Kind: EventHandOff, Account: "default", Item: h.Item()})
	it.ItemID, it.HandOffID, it.IntentURL = 0, h.ID, h.IntentURL
	m := Message{Event: EventHandOff, Account: "default", Items: []Item{it}, Links: []Links{{}}}
	if title := Title(m); !strings.HasPrefix(title, "Do it on X: Like") {
		t.Fatalf("title %q", title)
	}
	if d := Details(it, t0); !strings.Contains(d, "do it on X: "+link) || !strings.Contains(d, "hand-off 5") {
		t.Fatalf("details %q", d)
	}
	b, err := NtfyBody("topic", m)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Click   string `json:"click"`
		Actions []struct {
			Label, URL string
		} `json:"actions"`
	}
	if err := json.Unmarshal(b, &body); err != nil || body.Click != link || len(body.Actions) != 1 || body.Actions[0].Label != "Do it on X" || body.Actions[0].URL != link {
		t.Fatalf("ntfy body %s (%v)", b, err)
	}
}

// handOffLinks issues a hand-off's phone link as approvallink does.
type handOffLinks struct{ actingLinks }

func (handOffLinks) HandOffLink(_ context.Context, _ string, id int64, ch string) (string, error) {
	return fmt.Sprintf("https://phone.example/a/%s-handoff-%d", ch, id), nil
}

// TestHandOffNoticeCarriesItsLink: a hand-off's notice on every channel
// carries its phone link (the page with the card and Do it on X) and X's
// intent link, and no decision that acts.
func TestHandOffNoticeCarriesItsLink(t *testing.T) {
	e := newEveryChannel(t)
	for i := range e.routes {
		e.routes[i].Events = []string{EventHandOff}
	}
	w := newWorld(t, e.routes...)
	intent := "https://x.com/intent/like?tweet_id=77"
	src := &fakeSource{handOffs: []gateway.HandOff{{ID: 5, Effect: "x_like_tweet", TweetID: "77", IntentURL: intent, Status: gateway.HandOffOpen}}}
	for _, s := range Sweeps(w.out, src, time.Minute) {
		if err := s(w.ctx, w.out, w.clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	w.runOnce(w.dispatcher(DispatcherOptions{Links: handOffLinks{}, OneTap: true}, e.chans...))
	for _, r := range w.rows() {
		if r.Status != StatusDelivered {
			t.Fatalf("%s: %s (%s)", r.Channel, r.Status, r.LastError)
		}
	}
	wire := map[string]string{}
	for name, h := range e.hooks {
		rs := h.requests()
		if len(rs) == 0 {
			t.Fatalf("%s received nothing", name)
		}
		wire[name] = string(rs[len(rs)-1].Body)
	}
	tg, _ := json.Marshal(e.tg.sentMessages())
	wire[config.ChannelTelegram] = string(tg)
	for name, d := range e.last(t) {
		if d.oneTap {
			t.Errorf("%s: the hand-off's notice carries a decision", name)
		}
		// What the reader sees, and what was sent (links stay whole there).
		wire[name] += "\n" + d.text
	}
	for name, got := range wire {
		link := fmt.Sprintf("https://phone.example/a/%s-handoff-5", name)
		if !strings.Contains(got, link) && !strings.Contains(got, strings.ReplaceAll(link, "/", `\/`)) {
			t.Errorf("%s: no phone link %s in\n%s", name, link, got)
		}
		if !strings.Contains(got, "tweet_id=77") {
			t.Errorf("%s: no Do it on X link in\n%s", name, got)
		}
		if strings.Contains(got, "Review and decide") {
			t.Errorf("%s: the hand-off's link is labelled as a decision:\n%s", name, got)
		}
	}
}
