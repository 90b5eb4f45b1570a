// Package notify tells a person that something waits for them: an approval
// item queued or edited, an item about to expire, a mutation whose outcome
// is unknown, a scheduled post that failed or was moved to another slot.
//
// Nothing is sent from inside a tool call. The gateway writes one outbox
// row per matching channel in the transaction that queues the item
// (Outbox.Notice, through the gateway's Notifier interface); a Dispatcher
// in every long-lived process claims due rows, one process per row, and
// delivers them through the channels (webhook, ntfy, Slack, Discord,
// Telegram, email), retrying with backoff, merging bursts into digests and
// capping each channel's hourly messages.
package notify

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// Events. The names are the configuration's (config.NotifyEvents).
const (
	EventCreated   = gateway.NoticeCreated
	EventEdited    = gateway.NoticeEdited
	EventDecided   = gateway.NoticeDecided
	EventExpiring  = "approval.expiring"
	EventUnknown   = "mutation.unknown"
	EventPubFailed = "publish.failed"
	// EventRescheduled: a queued post or a recurring post's occurrence
	// missed its time by more than the queue's late grace (the process
	// was down) and moved to the next free slot, or back to the drafts.
	EventRescheduled = "publish.rescheduled"
	EventPublished   = "post.published"
	// EventHandOff: something X's API may not do for the account (a
	// reply, like, follow or quote post) was handed to a person, who does
	// it on x.com through the message's Do it on X link.
	EventHandOff = "handoff.created"
	// EventTest is what `tuitbot notify test` sends; no configuration
	// subscribes to it.
	EventTest = "notify.test"
)

// itemEvents are about a pending approval item: they are dropped when the
// item is decided (or edited) before they go out, and carry its links.
var itemEvents = map[string]bool{EventCreated: true, EventEdited: true, EventExpiring: true}

// Item is what a message says about one approval item (or, for the other
// events, about the mutation or post the event concerns). It is the
// outbox row's payload, a snapshot taken when the event happened.
type Item struct {
	Account    string          `json:"account"`
	ItemID     int64           `json:"item_id,omitempty"`
	Tool       string          `json:"tool"`
	Text       string          `json:"text,omitempty"`
	Params     json.RawMessage `json:"params,omitempty"`
	ParamsHash string          `json:"params_hash,omitempty"`
	// Equivalent is the typed tool a universal request does the work of.
	Equivalent string `json:"equivalent_tool,omitempty"`
	// TargetLine is the post or account the item acts on as read from X
	// when the message is made (describe.TargetLine); never stored.
	TargetLine string `json:"-"`
	// Content is ContentHash over the parameters exactly as they were
	// stored when the event happened. The payload's own copy of Params
	// is a re-encoding (escaping, spacing), never compared byte for byte.
	Content    string `json:"content_hash,omitempty"`
	Rule       string `json:"rule,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Caller     string `json:"caller,omitempty"`
	CreatedAt  string `json:"created_at,omitempty"`
	ExpiresAt  string `json:"expires_at,omitempty"`
	Status     string `json:"status,omitempty"`
	ReviewedBy string `json:"reviewed_by,omitempty"`
	// CorrelationID names the mutation of mutation.unknown and
	// post.published; Error says what failed (publish.failed).
	CorrelationID string `json:"correlation_id,omitempty"`
	Error         string `json:"error,omitempty"`
	// DraftID names the scheduled draft of publish.failed and
	// publish.rescheduled.
	DraftID int64 `json:"draft_id,omitempty"`
	// MissedSlot and ScheduledFor are the slot a rescheduled post missed
	// and the one it holds now (empty: it went back to the drafts).
	MissedSlot   string `json:"missed_slot,omitempty"`
	ScheduledFor string `json:"scheduled_for,omitempty"`
	// HandOffID and IntentURL are a hand-off's id and X's Web Intent page
	// where a person does it (handoff.created). The link only fills in
	// X's own page; the person presses its button.
	HandOffID int64  `json:"handoff_id,omitempty"`
	IntentURL string `json:"intent_url,omitempty"`
}

// Links are the signed links of one item for one channel; empty when
// approval links are off.
type Links struct {
	View, Approve, Reject string
	// ApproveCSRF and RejectCSRF are the values a POST to Approve or
	// Reject must carry (ntfy's one-tap actions send them in their body).
	ApproveCSRF, RejectCSRF string
}

// Message is what one channel delivery says: one item, or a digest of
// several, or "N more pending" after the hourly cap.
type Message struct {
	// ID is stable across retries of the same delivery (webhook-id).
	ID        string
	Event     string
	Account   string
	Timestamp time.Time
	Items     []Item
	// Links are per item, in Items' order.
	Links []Links
	// More counts items held back by the hourly cap and summed up here.
	More int
	// OneTap lets buttons act without opening the page.
	OneTap bool
	// Callback signs a Telegram button press for item i (nil: no buttons).
	Callback func(i int, approve bool) string
}

// Digest reports whether the message covers more than one item.
func (m Message) Digest() bool { return len(m.Items) > 1 || m.More > 0 }

// textOf is the post text of a call's parameters: "text", or a thread's
// tweets joined.
func textOf(params json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(params, &m) != nil {
		return ""
	}
	if t, ok := m["text"].(string); ok {
		return t
	}
	if ts, ok := m["tweets"].([]any); ok {
		var parts []string
		for _, t := range ts {
			if s, ok := t.(string); ok {
				parts = append(parts, s)
			} else if o, ok := t.(map[string]any); ok {
				if s, ok := o["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n\n")
	}
	return ""
}

// ContentHash identifies an item's exact content (gateway.ContentHash).
func ContentHash(tool string, params json.RawMessage) string {
	return gateway.ContentHash(tool, params)
}

// itemOf is the payload of a gateway notice.
func itemOf(n gateway.Notice) Item {
	it := n.Item
	return Item{
		Account: n.Account, ItemID: it.ID, Tool: it.Tool, Text: textOf(it.Params), Params: it.Params, ParamsHash: n.ParamsHash,
		Equivalent: it.EquivalentTool, Content: ContentHash(it.Tool, it.Params),
		Rule: it.MatchedRuleID, Reason: it.Reason, Caller: it.Caller, CreatedAt: it.CreatedAt, ExpiresAt: it.ExpiresAt,
		Status: it.Status, ReviewedBy: it.ReviewedBy,
	}
}

// Items reads approval items as they are now, so the dispatcher can drop
// an event whose item was decided or edited meanwhile, and sign links over
// the current content.
type Items interface {
	Item(ctx context.Context, account string, id int64) (*gateway.ApprovalItem, error)
}

// Targets reads from X the post or account an item acts on, in the
// words of describe.TargetLine, so a notice shows what a like, delete or
// follow touches as the review page does.
type Targets interface {
	TargetLine(ctx context.Context, account string, t describe.Target) string
}

// HandOffLinker issues the signed link of an open hand-off for a
// channel: the phone page with its card and Do it on X. A LinkMaker that
// implements it gives hand-off notices that link, as their View.
type HandOffLinker interface {
	HandOffLink(ctx context.Context, account string, handOffID int64, channel string) (string, error)
}

// LinkMaker issues the signed links of an item for a channel, and signs
// and checks Telegram button presses. approvallink implements it.
type LinkMaker interface {
	Links(ctx context.Context, account string, it *gateway.ApprovalItem, channel string) (Links, error)
	SignCallback(account string, it *gateway.ApprovalItem, rowID int64, approve bool) (string, error)
	CheckCallback(account string, it *gateway.ApprovalItem, rowID int64, approve bool, mac string) bool
}
