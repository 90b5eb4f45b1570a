package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

const tgToken = "123456:TEST-bot-token"

// fakeTelegram is a local Bot API server speaking its JSON: sendMessage,
// getUpdates (long polling), answerCallbackQuery and editMessageText.
type fakeTelegram struct {
	srv     *httptest.Server
	mu      sync.Mutex
	sent    []map[string]any
	edits   []map[string]any
	updates []map[string]any
	arrived chan struct{}       // a new update was queued
	answers chan map[string]any // every answerCallbackQuery
	nextID  int64
}

func newFakeTelegram(t *testing.T) *fakeTelegram {
	t.Helper()
	f := &fakeTelegram{arrived: make(chan struct{}, 16), answers: make(chan map[string]any, 16), nextID: 100}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeTelegram) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeTelegram) serve(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+tgToken+"/")
	if !ok {
		f.reply(w, 404, map[string]any{"ok": false, "error_code": 404, "description": "Not Found"})
		return
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.reply(w, 400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: can't parse JSON"})
		return
	}
	switch method {
	case "sendMessage":
		f.mu.Lock()
		f.sent = append(f.sent, req)
		f.nextID++
		id := f.nextID
		f.mu.Unlock()
		f.reply(w, 200, map[string]any{"ok": true, "result": map[string]any{"message_id": id, "chat": map[string]any{"id": -1001}, "text": req["text"]}})
	case "getUpdates":
		offset, _ := req["offset"].(float64)
		timeout, _ := req["timeout"].(float64)
		deadline := time.After(time.Duration(timeout) * time.Second)
		for {
			f.mu.Lock()
			var out []map[string]any
			for _, u := range f.updates {
				if u["update_id"].(int64) >= int64(offset) {
					out = append(out, u)
				}
			}
			f.mu.Unlock()
			if len(out) > 0 {
				f.reply(w, 200, map[string]any{"ok": true, "result": out})
				return
			}
			select {
			case <-f.arrived:
			case <-deadline:
				f.reply(w, 200, map[string]any{"ok": true, "result": []any{}})
				return
			case <-r.Context().Done():
				return
			}
		}
	case "answerCallbackQuery":
		f.answers <- req
		f.reply(w, 200, map[string]any{"ok": true, "result": true})
	case "editMessageText":
		f.mu.Lock()
		f.edits = append(f.edits, req)
		f.mu.Unlock()
		f.reply(w, 200, map[string]any{"ok": true, "result": map[string]any{"message_id": req["message_id"]}})
	default:
		f.reply(w, 404, map[string]any{"ok": false, "error_code": 404, "description": "Not Found: method not found"})
	}
}

// press queues a callback_query update as Telegram sends it.
func (f *fakeTelegram) press(from int64, data string, messageID int64, text string) {
	f.mu.Lock()
	id := int64(len(f.updates) + 1)
	f.updates = append(f.updates, map[string]any{"update_id": id, "callback_query": map[string]any{
		"id": fmt.Sprintf("cb%d", id), "from": map[string]any{"id": from, "is_bot": false, "first_name": "A"},
		"message":       map[string]any{"message_id": messageID, "chat": map[string]any{"id": -1001, "type": "supergroup"}, "text": text},
		"chat_instance": "1", "data": data}})
	f.mu.Unlock()
	f.arrived <- struct{}{}
}

func (f *fakeTelegram) sentMessages() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.sent...)
}

func (f *fakeTelegram) editsMade() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.edits...)
}

// fakeLinks signs button presses over the item's content hash.
type fakeLinks struct{}

func (fakeLinks) Links(_ context.Context, _ string, it *gateway.ApprovalItem, ch string) (Links, error) {
	return Links{View: fmt.Sprintf("https://phone.example/a/view-%s-%d-xxxxxxxxxxxx", ch, it.ID)}, nil
}

func (fakeLinks) SignCallback(account string, it *gateway.ApprovalItem, row int64, approve bool) (string, error) {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%s|%d|%t", account, it.ID, ContentHash(it.Tool, it.Params), row, approve)))
	return CallbackData(approve, row, hex.EncodeToString(sum[:8])), nil
}

func (l fakeLinks) CheckCallback(account string, it *gateway.ApprovalItem, row int64, approve bool, mac string) bool {
	want, _ := l.SignCallback(account, it, row, approve)
	return strings.HasSuffix(want, ":"+mac)
}

// fakeDecider decides on the fake queue and records who did. Like the
// gateway, it decides only while the item has the content the decision
// names (Decision.Shown).
type fakeDecider struct {
	items *fakeItems
	// before, when set, runs first: a change landing between the press's
	// check and its decision.
	before func()
	mu     sync.Mutex
	by     []string
	shown  []string
}

func (d *fakeDecider) Decide(_ context.Context, _ string, id int64, approve bool, dec gateway.Decision) (*gateway.ApprovalItem, error) {
	if d.before != nil {
		d.before()
	}
	reviewer := dec.Reviewer
	d.mu.Lock()
	defer d.mu.Unlock()
	d.shown = append(d.shown, dec.Shown)
	it, err := d.items.Item(context.Background(), "", id)
	if err != nil {
		return nil, err
	}
	if it.Status != gateway.ApprovalPending {
		return nil, apperr.New(apperr.ApprovalNotPending, "approval item %d is %s, not pending", id, it.Status)
	}
	if dec.Shown != ContentHash(it.Tool, it.Params) {
		return nil, apperr.New(apperr.ApprovalChanged, "approval item %d changed since you saw it", id)
	}
	status := gateway.ApprovalRejected
	if approve {
		status = gateway.ApprovalExecuted
	}
	d.items.set(id, func(it *gateway.ApprovalItem) { it.Status, it.ReviewedBy = status, reviewer })
	d.by = append(d.by, reviewer)
	it.Status = status
	return it, nil
}

func (d *fakeDecider) reviewers() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.by...)
}

type heldLease struct{}

func (heldLease) Held(context.Context) error { return nil }
func (heldLease) Release()                   {}

// The bot sends Approve/Reject buttons whose data fits Telegram's 64 bytes
// and carries a MAC; a press by a user not allowed, or with a forged MAC,
// decides nothing; an allowed press decides once, as telegram:<id>, and
// the message is edited to say who decided.
func TestTelegramButtonsDecideOnlyForAllowedUsers(t *testing.T) {
	w := newWorld(t, Route{Channel: "tg", Events: []string{EventCreated}})
	tg := newFakeTelegram(t)
	ch := NewTelegram(config.NotifyChannel{Name: "tg", ChatID: "-1001", AllowedUserIDs: []int64{42}, APIBaseURL: tg.srv.URL}, tgToken, tg.srv.Client(), time.Now)
	w.queue(9, "reply to @someone")
	d := w.dispatcher(DispatcherOptions{Links: fakeLinks{}, OneTap: true}, ch)
	w.runOnce(d)
	sent := tg.sentMessages()
	if len(sent) != 1 || sent[0]["chat_id"] != "-1001" || !strings.Contains(sent[0]["text"].(string), "reply to @someone") {
		t.Fatalf("sendMessage %v", sent)
	}
	kb := sent[0]["reply_markup"].(map[string]any)["inline_keyboard"].([]any)
	buttons := kb[0].([]any)
	approve := buttons[0].(map[string]any)["callback_data"].(string)
	reject := buttons[1].(map[string]any)["callback_data"].(string)
	if len(approve) > 64 || len(reject) > 64 || !strings.HasPrefix(approve, "a:") || !strings.HasPrefix(reject, "r:") {
		t.Fatalf("callback data %q / %q", approve, reject)
	}
	if view := kb[1].([]any)[0].(map[string]any)["url"]; view != "https://phone.example/a/view-tg-9-xxxxxxxxxxxx" {
		t.Fatalf("view button %v", view)
	}
	if r := w.rows()[0]; r.Status != StatusDelivered || r.messageRef != "101" {
		t.Fatalf("row %+v ref %q", r, r.messageRef)
	}

	dec := &fakeDecider{items: w.items}
	p := &TelegramPoller{T: ch, Outbox: w.out, Items: w.items, Links: fakeLinks{}, Decide: dec,
		Acquire: func(context.Context) (Lease, error) { return heldLease{}, nil }, PollTimeout: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	answer := func() string {
		t.Helper()
		select {
		case a := <-tg.answers:
			return a["text"].(string)
		case <-time.After(10 * time.Second):
			t.Fatal("no answerCallbackQuery")
		}
		return ""
	}
	tg.press(666, approve, 101, "text")
	if a := answer(); !strings.Contains(a, "not allowed") || len(dec.reviewers()) != 0 {
		t.Fatalf("a stranger's press: answer %q, decisions %v", a, dec.reviewers())
	}
	forged := approve[:len(approve)-4] + "0000"
	tg.press(42, forged, 101, "text")
	if a := answer(); !strings.Contains(a, "out of date") || len(dec.reviewers()) != 0 {
		t.Fatalf("a forged MAC: answer %q, decisions %v", a, dec.reviewers())
	}
	tg.press(42, approve, 101, "Approval needed")
	if a := answer(); a != "Approved." {
		t.Fatalf("an allowed press: answer %q", a)
	}
	if got := dec.reviewers(); len(got) != 1 || got[0] != "telegram:42" {
		t.Fatalf("decisions %v", got)
	}
	edits := tg.editsMade()
	if len(edits) != 1 || !strings.Contains(edits[0]["text"].(string), "Approved by telegram:42") || edits[0]["message_id"] != 101.0 {
		t.Fatalf("edits %v", edits)
	}
	// A second press (another device) decides nothing more.
	tg.press(42, reject, 101, "text")
	if a := answer(); a != "Already decided." || len(dec.reviewers()) != 1 {
		t.Fatalf("second press: %q, decisions %v", a, dec.reviewers())
	}
}

// A Bot API refusal is classified by its own error_code and retry_after,
// and the token never appears in the error.
func TestTelegramErrorsHideTheToken(t *testing.T) {
	tg := newFakeTelegram(t)
	ch := NewTelegram(config.NotifyChannel{Name: "tg", ChatID: "1", APIBaseURL: tg.srv.URL}, "999:wrong-token", tg.srv.Client(), time.Now)
	_, err := ch.Send(context.Background(), oneItem("x", Links{}))
	var se *SendError
	if err == nil || !errors.As(err, &se) || !se.Permanent || se.Status != 404 {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), "wrong-token") || strings.Contains(err.Error(), "999:") {
		t.Fatalf("error shows the token: %v", err)
	}
}

// A press decides only the content its message showed: the decision names
// the hash the press's MAC was checked against, and an edit landing
// between that check and the decision decides nothing and says the
// message is out of date.
func TestTelegramPressDecidesOnlyWhatItsMessageShowed(t *testing.T) {
	w := newWorld(t, Route{Channel: "tg", Events: []string{EventCreated}})
	tg := newFakeTelegram(t)
	ch := NewTelegram(config.NotifyChannel{Name: "tg", ChatID: "-1001", AllowedUserIDs: []int64{42}, APIBaseURL: tg.srv.URL}, tgToken, tg.srv.Client(), time.Now)
	shown := w.queue(9, "T0 as the message showed it")
	w.runOnce(w.dispatcher(DispatcherOptions{Links: fakeLinks{}, OneTap: true}, ch))
	sent := tg.sentMessages()
	if len(sent) != 1 {
		t.Fatalf("sendMessage %v", sent)
	}
	approve := sent[0]["reply_markup"].(map[string]any)["inline_keyboard"].([]any)[0].([]any)[0].(map[string]any)["callback_data"].(string)
	dec := &fakeDecider{items: w.items, before: func() {
		w.items.set(9, func(it *gateway.ApprovalItem) { it.Params = json.RawMessage(`{"text":"T1 from the web"}`) })
	}}
	p := &TelegramPoller{T: ch, Outbox: w.out, Items: w.items, Links: fakeLinks{}, Decide: dec,
		Acquire: func(context.Context) (Lease, error) { return heldLease{}, nil }, PollTimeout: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	tg.press(42, approve, 101, "text")
	var a string
	select {
	case got := <-tg.answers:
		a = got["text"].(string)
	case <-time.After(10 * time.Second):
		t.Fatal("no answerCallbackQuery")
	}
	if !strings.Contains(a, "out of date") || len(dec.reviewers()) != 0 {
		t.Fatalf("a press whose item changed before the decision: answer %q, decisions %v", a, dec.reviewers())
	}
	dec.mu.Lock()
	defer dec.mu.Unlock()
	if want := ContentHash(shown.Tool, shown.Params); len(dec.shown) != 1 || dec.shown[0] != want {
		t.Fatalf("the decision named %q, want the hash of the content the message showed %q", dec.shown, want)
	}
	if it, _ := w.items.Item(context.Background(), "", 9); it.Status != gateway.ApprovalPending {
		t.Fatalf("item %s after a refused press", it.Status)
	}
}
