package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// Telegram sends through the Bot API (sendMessage) and, with one-tap
// links, takes Approve/Reject button presses by long polling getUpdates,
// so no public URL is needed. The bot token travels in the request path:
// errors name the host only.
type Telegram struct {
	name, base, token, chatID string
	allowed                   []int64
	client                    *http.Client
	now                       func() time.Time
}

// credentials: the bot token acts as the bot (and reads its updates).
func (t *Telegram) credentials() []string {
	return append(urlCredentials(t.base, false), t.token)
}

// NewTelegram builds the channel.
func NewTelegram(ch config.NotifyChannel, token string, client *http.Client, now func() time.Time) *Telegram {
	return &Telegram{name: ch.Name, base: strings.TrimRight(ch.APIBaseURL, "/"), token: token, chatID: ch.ChatID,
		allowed: slices.Clone(ch.AllowedUserIDs), client: client, now: now}
}

func (t *Telegram) Name() string { return t.name }
func (t *Telegram) Type() string { return config.ChannelTelegram }

// tgResponse is every Bot API answer.
type tgResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call invokes a Bot API method and decodes its result into out.
func (t *Telegram) call(ctx context.Context, method string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return &SendError{Permanent: true, Err: err}
	}
	b, err := postJSON(ctx, t.client, t.base+"/bot"+t.token+"/"+method, body, nil, t.now)
	if err != nil {
		var se *SendError
		if errors.As(err, &se) && se.Status != 0 {
			// The Bot API explains itself in the body and sets its own
			// retry_after; the body never holds the token.
			return t.apiError(method, se)
		}
		return err
	}
	var r tgResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return &SendError{Err: fmt.Errorf("telegram %s: unreadable answer: %w", method, err)}
	}
	if !r.OK {
		return &SendError{Status: r.ErrorCode, Permanent: r.ErrorCode >= 400 && r.ErrorCode < 500 && r.ErrorCode != 429 && r.ErrorCode != 408,
			RetryAfter: time.Duration(r.Parameters.RetryAfter) * time.Second, Err: fmt.Errorf("telegram %s: %s", method, r.Description)}
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return &SendError{Err: fmt.Errorf("telegram %s: unreadable result: %w", method, err)}
		}
	}
	return nil
}

func (t *Telegram) apiError(method string, se *SendError) error {
	var r tgResponse
	if json.Unmarshal(se.body, &r) == nil && r.Description != "" {
		se.Err = fmt.Errorf("telegram %s: %s", method, r.Description)
		if r.Parameters.RetryAfter > 0 {
			se.RetryAfter = time.Duration(r.Parameters.RetryAfter) * time.Second
		}
		return se
	}
	se.Err = fmt.Errorf("telegram %s: %w", method, se.Err)
	return se
}

type tgButton struct {
	Text         string `json:"text"`
	URL          string `json:"url,omitempty"`
	CallbackData string `json:"callback_data,omitempty"`
}

type tgMarkup struct {
	InlineKeyboard [][]tgButton `json:"inline_keyboard"`
}

// telegramLimit is below the 4,096 characters (UTF-16 units) of a
// message's text.
const telegramLimit = 4000

// TelegramRequest is the sendMessage request for m: plain text (no parse
// mode, so a post formats nothing), Approve and Reject buttons only when
// the text shows everything approving decides, uncut.
func TelegramRequest(chatID string, m Message) map[string]any {
	f := plain
	f.measure, f.limit = utf16Len, telegramLimit
	text, cut := render(oneLine(Title(m), 300)+"\n", m, f)
	req := map[string]any{"chat_id": chatID, "text": text, "link_preview_options": map[string]bool{"is_disabled": true}}
	var rows [][]tgButton
	if len(m.Items) == 1 {
		if m.Callback != nil && oneTap(m, cut) {
			a, r := m.Callback(0, true), m.Callback(0, false)
			if a != "" && r != "" {
				rows = append(rows, []tgButton{{Text: "Approve", CallbackData: a}, {Text: "Reject", CallbackData: r}})
			}
		}
		if l := m.Links[0].View; l != "" {
			rows = append(rows, []tgButton{{Text: "Review", URL: l}})
		}
	}
	if len(rows) > 0 {
		req["reply_markup"] = tgMarkup{InlineKeyboard: rows}
	}
	return req
}

func (t *Telegram) Send(ctx context.Context, m Message) (string, error) {
	var sent struct {
		MessageID int64 `json:"message_id"`
	}
	if err := t.call(ctx, "sendMessage", TelegramRequest(t.chatID, m), &sent); err != nil {
		return "", err
	}
	return strconv.FormatInt(sent.MessageID, 10), nil
}

// Callback data: "a:ROW:MAC" approves, "r:ROW:MAC" rejects; ROW is the
// outbox row of the item's message. Telegram allows at most 64 bytes.
const maxCallbackData = 64

// CallbackData encodes a button press.
func CallbackData(approve bool, row int64, mac string) string {
	verb := "r"
	if approve {
		verb = "a"
	}
	return verb + ":" + strconv.FormatInt(row, 10) + ":" + mac
}

func parseCallback(s string) (approve bool, row int64, mac string, ok bool) {
	if len(s) > maxCallbackData {
		return false, 0, "", false
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 || (parts[0] != "a" && parts[0] != "r") || parts[2] == "" {
		return false, 0, "", false
	}
	row, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || row <= 0 {
		return false, 0, "", false
	}
	return parts[0] == "a", row, parts[2], true
}

// Decider decides an approval item for a person who pressed a button.
type Decider interface {
	// Decide approves or rejects as d says; d.Shown binds the decision
	// to the content the pressed message showed.
	Decide(ctx context.Context, account string, id int64, approve bool, d gateway.Decision) (*gateway.ApprovalItem, error)
}

// Lease is a held lock; Acquire takes it or fails (another holder).
type Lease interface {
	Held(ctx context.Context) error
	Release()
}

// Acquire tries once to take a lock.
type Acquire func(ctx context.Context) (Lease, error)

// TelegramPoller takes button presses for one Telegram channel. Only one
// poller per channel runs across processes and hosts (acquire), since
// Telegram hands each update to one getUpdates caller.
type TelegramPoller struct {
	T       *Telegram
	Outbox  *Outbox
	Items   Items
	Links   LinkMaker
	Decide  Decider
	Acquire Acquire
	Log     *slog.Logger
	// PollTimeout is getUpdates' long-poll wait (default 25 s); Retry how
	// long to wait after an error or while another process polls.
	PollTimeout, Retry time.Duration
}

type tgUpdate struct {
	UpdateID int64 `json:"update_id"`
	Callback *struct {
		ID   string `json:"id"`
		From struct {
			ID int64 `json:"id"`
		} `json:"from"`
		Message *struct {
			MessageID int64 `json:"message_id"`
			Chat      struct {
				ID int64 `json:"id"`
			} `json:"chat"`
			Text string `json:"text"`
		} `json:"message"`
		Data string `json:"data"`
	} `json:"callback_query"`
}

// Run polls until ctx ends.
func (p *TelegramPoller) Run(ctx context.Context) {
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	if p.PollTimeout <= 0 {
		p.PollTimeout = 25 * time.Second
	}
	if p.Retry <= 0 {
		p.Retry = 10 * time.Second
	}
	for ctx.Err() == nil {
		lease, err := p.Acquire(ctx)
		if err != nil {
			if !sleepCtx(ctx, p.Retry) {
				return
			}
			continue
		}
		p.poll(ctx, lease)
		lease.Release()
	}
}

// poll runs getUpdates while the lease holds.
func (p *TelegramPoller) poll(ctx context.Context, lease Lease) {
	var offset int64
	for ctx.Err() == nil {
		if err := lease.Held(ctx); err != nil {
			p.Log.Warn("telegram: another process took over polling", "channel", p.T.name, "error", err)
			return
		}
		var ups []tgUpdate
		pctx, cancel := context.WithTimeout(ctx, p.PollTimeout+10*time.Second)
		err := p.T.call(pctx, "getUpdates", map[string]any{"offset": offset, "timeout": int(p.PollTimeout / time.Second),
			"allowed_updates": []string{"callback_query"}}, &ups)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.Log.Warn("telegram: getUpdates failed", "channel", p.T.name, "error", err)
			wait := p.Retry
			var se *SendError
			if errors.As(err, &se) && se.RetryAfter > wait {
				wait = se.RetryAfter
			}
			if !sleepCtx(ctx, wait) {
				return
			}
			continue
		}
		for _, u := range ups {
			offset = max(offset, u.UpdateID+1)
			if u.Callback != nil {
				p.press(ctx, u)
			}
		}
	}
}

// press acts on one button press: only for an allowed user, only with a
// MAC over the item's current content, and only once (the decision).
func (p *TelegramPoller) press(ctx context.Context, u tgUpdate) {
	cb := u.Callback
	answer := func(text string) {
		if err := p.T.call(ctx, "answerCallbackQuery", map[string]any{"callback_query_id": cb.ID, "text": text}, nil); err != nil {
			p.Log.Warn("telegram: answerCallbackQuery failed", "channel", p.T.name, "error", err)
		}
	}
	if !slices.Contains(p.T.allowed, cb.From.ID) {
		p.Log.Warn("telegram: button press by a user who may not decide; ignored", "channel", p.T.name, "user", cb.From.ID)
		answer("You are not allowed to decide here.")
		return
	}
	approve, rowID, mac, ok := parseCallback(cb.Data)
	if !ok {
		answer("This button is not valid.")
		return
	}
	row, err := p.Outbox.row(ctx, rowID)
	if err != nil || row.Channel != p.T.name || row.ItemID == 0 {
		answer("This button is not valid.")
		return
	}
	it, err := p.Items.Item(ctx, row.Account, row.ItemID)
	if err != nil {
		answer("This item no longer exists.")
		return
	}
	if !p.Links.CheckCallback(row.Account, it, row.ID, approve, mac) {
		// A MAC over other content: the item was edited since the
		// message, or the data was forged.
		answer("This message is out of date: the item changed. Use the newer message.")
		return
	}
	reviewer := "telegram:" + strconv.FormatInt(cb.From.ID, 10)
	// The MAC proved the message showed this content: the decision holds
	// only while the item still has it, whatever lands meanwhile.
	decided, err := p.Decide.Decide(ctx, row.Account, row.ItemID, approve, gateway.Decision{Reviewer: reviewer, Shown: ContentHash(it.Tool, it.Params)})
	if err != nil {
		switch apperr.CodeOf(err) {
		case apperr.ApprovalNotPending:
			answer("Already decided.")
			return
		case apperr.ApprovalChanged:
			answer("This message is out of date: the item changed. Nothing was decided; use the newer message.")
			return
		}
		p.Log.Warn("telegram: decision failed", "channel", p.T.name, "item", row.ItemID, "error", err)
		answer("The decision failed: " + oneLine(apperr.As(err).Message, 150))
		return
	}
	verb := "Rejected"
	if approve {
		verb = "Approved"
		if decided != nil && decided.Status == gateway.ApprovalFailed {
			verb = "Approved, but running it failed (" + decided.ErrorCode + ")"
		}
	}
	// The message says who decided, and loses its buttons, before the
	// press is answered.
	if cb.Message != nil {
		text := cb.Message.Text + "\n\n" + verb + " by " + reviewer + "."
		if err := p.T.call(ctx, "editMessageText", map[string]any{"chat_id": cb.Message.Chat.ID, "message_id": cb.Message.MessageID,
			"text": text, "reply_markup": tgMarkup{InlineKeyboard: [][]tgButton{}}}, nil); err != nil {
			p.Log.Warn("telegram: could not mark the message decided", "channel", p.T.name, "error", err)
		}
	}
	answer(verb + ".")
}

// sleepCtx waits d or until ctx ends; false means ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
