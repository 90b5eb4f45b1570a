package notify

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
)

// Source is what the sweeps read, per account: events no transaction of
// the gateway records by itself.
type Source interface {
	Accounts() []string
	// Pending lists the account's pending approval items.
	Pending(ctx context.Context, account string) ([]gateway.ApprovalItem, error)
	// Mutations lists the account's audit rows of status since.
	Mutations(ctx context.Context, account, status string, since time.Time) ([]gateway.AuditEntry, error)
	// PublishFailures lists scheduled posts that failed since.
	PublishFailures(ctx context.Context, account string, since time.Time) ([]Item, error)
	// HandOffs lists the account's open hand-offs.
	HandOffs(ctx context.Context, account string) ([]gateway.HandOff, error)
}

// lookBack is how far back the audit sweeps look: an event older than
// this when a process first sweeps is history, not news.
const lookBack = time.Hour

// postTools are the mutations post.published reports.
var postTools = map[string]bool{"x_post_tweet": true, "x_reply_to_tweet": true, "x_quote_tweet": true, "x_post_thread": true, "x_post": true}

// Sweeps returns the sweeps for the events some channel subscribes to.
// expiring is how long before its expiry a pending item is announced.
func Sweeps(out *Outbox, src Source, expiring time.Duration) []Sweep {
	var s []Sweep
	if out.Subscribed(EventExpiring) {
		s = append(s, expiringSweep(src, expiring))
	}
	if out.Subscribed(EventUnknown) {
		s = append(s, auditSweep(src, EventUnknown, "unknown", nil), auditSweep(src, EventUnknown, "interrupted", nil))
	}
	if out.Subscribed(EventPublished) {
		s = append(s, auditSweep(src, EventPublished, "success", func(e gateway.AuditEntry) bool { return postTools[e.Tool] }))
	}
	if out.Subscribed(EventPubFailed) {
		s = append(s, publishFailedSweep(src))
	}
	if out.Subscribed(EventHandOff) {
		s = append(s, handOffSweep(src))
	}
	return s
}

// handOffSweep announces each open hand-off once: the card of an approval
// item, with X's Web Intent link in place of Approve.
func handOffSweep(src Source) Sweep {
	return func(ctx context.Context, out *Outbox, _ time.Time) error {
		var errs []error
		for _, acc := range src.Accounts() {
			hs, err := src.HandOffs(ctx, acc)
			if err != nil {
				errs = append(errs, fmt.Errorf("account %s: %w", acc, err))
				continue
			}
			for _, h := range hs {
				it := h.Item()
				n := itemOf(gateway.Notice{Kind: EventHandOff, Account: acc, Item: it})
				n.ItemID, n.HandOffID, n.IntentURL, n.Status = 0, h.ID, h.IntentURL, gateway.HandOffOpen
				if _, err := out.Add(ctx, EventHandOff, strconv.FormatInt(h.ID, 10), n); err != nil {
					errs = append(errs, err)
				}
			}
		}
		return errors.Join(errs...)
	}
}

// expiringSweep announces pending items that expire within before.
func expiringSweep(src Source, before time.Duration) Sweep {
	return func(ctx context.Context, out *Outbox, now time.Time) error {
		var errs []error
		for _, acc := range src.Accounts() {
			items, err := src.Pending(ctx, acc)
			if err != nil {
				errs = append(errs, fmt.Errorf("account %s: %w", acc, err))
				continue
			}
			for _, it := range items {
				exp, err := store.ParseTime(it.ExpiresAt)
				if err != nil || !exp.After(now) || exp.Sub(now) > before {
					continue
				}
				n := gateway.Notice{Kind: EventExpiring, Account: acc, Item: it}
				if _, err := out.Add(ctx, EventExpiring, strconv.FormatInt(it.ID, 10), itemOf(n)); err != nil {
					errs = append(errs, err)
				}
			}
		}
		return errors.Join(errs...)
	}
}

// auditSweep announces audit rows of status (that keep passes) as event.
func auditSweep(src Source, event, status string, keep func(gateway.AuditEntry) bool) Sweep {
	return func(ctx context.Context, out *Outbox, now time.Time) error {
		var errs []error
		for _, acc := range src.Accounts() {
			rows, err := src.Mutations(ctx, acc, status, now.Add(-lookBack))
			if err != nil {
				errs = append(errs, fmt.Errorf("account %s: %w", acc, err))
				continue
			}
			for _, e := range rows {
				if keep != nil && !keep(e) || e.Resolution != "" {
					continue
				}
				it := Item{Account: acc, Tool: e.Tool, Text: textOf([]byte(e.ParamsSummary)), CorrelationID: e.CorrelationID,
					Caller: e.Caller, CreatedAt: e.CreatedAt, Status: e.Status, ItemID: e.ApprovalID}
				if e.ErrorMessage != nil {
					it.Error = *e.ErrorMessage
				}
				if _, err := out.Add(ctx, event, e.CorrelationID, it); err != nil {
					errs = append(errs, err)
				}
			}
		}
		return errors.Join(errs...)
	}
}

func publishFailedSweep(src Source) Sweep {
	return func(ctx context.Context, out *Outbox, now time.Time) error {
		var errs []error
		for _, acc := range src.Accounts() {
			items, err := src.PublishFailures(ctx, acc, now.Add(-lookBack))
			if err != nil {
				errs = append(errs, fmt.Errorf("account %s: %w", acc, err))
				continue
			}
			for _, it := range items {
				it.Account = acc
				if _, err := out.Add(ctx, EventPubFailed, strconv.FormatInt(it.DraftID, 10), it); err != nil {
					errs = append(errs, err)
				}
			}
		}
		return errors.Join(errs...)
	}
}
