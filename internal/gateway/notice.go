package gateway

import (
	"context"
	"database/sql"
)

// Notice kinds: what happened to an approval item. The names are the
// notification events they become.
const (
	NoticeCreated = "approval.created"
	NoticeEdited  = "approval.edited"
	NoticeDecided = "approval.decided"
)

// TxExec runs a statement in the caller's transaction.
type TxExec interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Notice is one change to an approval item that a person may be told of.
type Notice struct {
	Kind    string
	Account string
	Item    ApprovalItem
	// ParamsHash is the item's fingerprint after the change.
	ParamsHash string
}

// Notifier records a notice in the transaction that queues, edits or
// decides the item, so the notice exists exactly when the change does.
// It must only write through tx: nothing may be sent from inside a tool
// call, and its error undoes the change.
type Notifier interface {
	Notice(ctx context.Context, tx TxExec, n Notice) error
}

// DecideHook runs inside the transaction that claims an item for a
// decision, after the claim; its error undoes the claim. A signed link
// records its single use this way.
type DecideHook func(ctx context.Context, tx *sql.Tx) error

// notice hands n to the notifier, when there is one.
func (g *Gateway) notice(ctx context.Context, tx TxExec, kind string, it ApprovalItem, hash string) error {
	if g.opts.Notifier == nil {
		return nil
	}
	return g.opts.Notifier.Notice(ctx, tx, Notice{Kind: kind, Account: g.opts.AccountID, Item: it, ParamsHash: hash})
}
