package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/redact"
	"github.com/tuitbot/tuitbot/internal/store"
)

// Row statuses.
const (
	StatusPending   = "pending"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
	StatusDropped   = "dropped"
)

// Route subscribes a channel to events.
type Route struct {
	Channel string
	Events  []string
}

// Outbox is the notify_outbox table: the only code that runs SQL on it.
type Outbox struct {
	db     *store.DB
	routes map[string][]string // event -> channels
	now    func() time.Time
	// wakeMu guards wakers: the dispatcher loops of this process, each
	// told (without blocking) when a row is written here.
	wakeMu sync.Mutex
	wakers map[chan struct{}]bool
}

// notifyChannel is the PostgreSQL channel that tells every process's
// dispatcher a row was committed.
const notifyChannel = "tuitbot_notify_outbox"

// subscribe returns a channel that receives a value when rows may have
// been written, and the function that stops it. Values do not queue: one
// pending wake stands for any number of rows.
func (o *Outbox) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	o.wakeMu.Lock()
	if o.wakers == nil {
		o.wakers = map[chan struct{}]bool{}
	}
	o.wakers[ch] = true
	o.wakeMu.Unlock()
	return ch, func() {
		o.wakeMu.Lock()
		delete(o.wakers, ch)
		o.wakeMu.Unlock()
	}
}

// wake tells this process's dispatcher loops to look for due rows.
func (o *Outbox) wake() {
	o.wakeMu.Lock()
	defer o.wakeMu.Unlock()
	for ch := range o.wakers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// NewOutbox returns the outbox of db, writing rows for the channels routes
// subscribe.
func NewOutbox(db *store.DB, routes []Route, now func() time.Time) *Outbox {
	if now == nil {
		now = time.Now
	}
	o := &Outbox{db: db, routes: map[string][]string{}, now: now}
	for _, r := range routes {
		for _, ev := range r.Events {
			o.routes[ev] = append(o.routes[ev], r.Channel)
		}
	}
	return o
}

// Subscribed reports whether any channel receives event.
func (o *Outbox) Subscribed(event string) bool { return len(o.routes[event]) > 0 }

// Notice records a gateway notice for every channel subscribed to it, in
// the gateway's transaction (it implements gateway.Notifier).
func (o *Outbox) Notice(ctx context.Context, tx gateway.TxExec, n gateway.Notice) error {
	key := n.Kind + ":" + strconv.FormatInt(n.Item.ID, 10)
	if n.Kind == gateway.NoticeEdited {
		key += ":" + n.ParamsHash
	}
	return o.add(ctx, tx, n.Kind, key, itemOf(n), o.now())
}

// Add records an event noticed outside the gateway's transactions (an
// item about to expire, an unknown outcome found in the audit). key makes
// it one row per channel however many processes notice it; it returns the
// rows added.
func (o *Outbox) Add(ctx context.Context, event, key string, it Item) (int, error) {
	var n int
	err := o.db.Tx(ctx, func(tx *sql.Tx) error {
		c := &countingExec{tx: tx}
		if err := o.add(ctx, c, event, event+":"+key, it, o.now()); err != nil {
			return err
		}
		n = c.n
		return nil
	})
	if err == nil && n > 0 {
		o.wake()
	}
	return n, err
}

// Record records an event for every channel subscribed to it in the
// caller's transaction, so it is written exactly when what it reports is
// (a missed queue slot moved); key makes it one row per channel.
func (o *Outbox) Record(ctx context.Context, tx gateway.TxExec, event, key string, it Item) error {
	return o.add(ctx, tx, event, event+":"+key, it, o.now())
}

// AddTo records one event for one channel, whatever it subscribes to
// (`tuitbot notify test`), and returns the row's id.
func (o *Outbox) AddTo(ctx context.Context, channel, event, key string, it Item) (int64, error) {
	payload, err := json.Marshal(it)
	if err != nil {
		return 0, fmt.Errorf("notification payload: %w", err)
	}
	now := store.FormatTime(o.now())
	if it.CreatedAt == "" {
		it.CreatedAt = now
	}
	var id int64
	err = o.db.QueryRowContext(ctx, `INSERT INTO notify_outbox (account_id, channel, event, dedup_key, item_id, payload, status, next_attempt_at, created_at)
		VALUES (?, ?, ?, ?, NULLIF(?, 0), ?, 'pending', ?, ?) RETURNING id`,
		accountOf(it), channel, event, event+":"+key, it.ItemID, string(payload), now, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record the notification: %w", err)
	}
	o.wake()
	return id, nil
}

type countingExec struct {
	tx *sql.Tx
	n  int
}

func (c *countingExec) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := c.tx.ExecContext(ctx, q, args...)
	if err == nil {
		if n, err := res.RowsAffected(); err == nil {
			c.n += int(n)
		}
	}
	return res, err
}

func accountOf(it Item) string {
	if it.Account == "" {
		return "default"
	}
	return it.Account
}

func (o *Outbox) add(ctx context.Context, tx gateway.TxExec, event, key string, it Item, now time.Time) error {
	chans := o.routes[event]
	if len(chans) == 0 {
		return nil
	}
	payload, err := json.Marshal(it)
	if err != nil {
		return fmt.Errorf("notification payload: %w", err)
	}
	at := store.FormatTime(now)
	for _, ch := range chans {
		// The same event noticed twice (two processes sweeping, an edit
		// back to the same text) stays one row.
		if _, err := tx.ExecContext(ctx, `INSERT INTO notify_outbox (account_id, channel, event, dedup_key, item_id, payload, status, next_attempt_at, created_at)
			VALUES (?, ?, ?, ?, NULLIF(?, 0), ?, 'pending', ?, ?) ON CONFLICT (account_id, channel, dedup_key) DO NOTHING`,
			accountOf(it), ch, event, key, it.ItemID, string(payload), at, at); err != nil {
			return fmt.Errorf("record the notification for channel %s: %w", ch, err)
		}
	}
	// The rows are the caller's transaction's: other processes hear of
	// them when it commits (PostgreSQL's NOTIFY is delivered then, and
	// never on a rollback). This process's dispatcher is woken now: on
	// SQLite its claim is a write, which waits for this transaction to
	// commit and then sees the rows; on PostgreSQL a pass that finds
	// nothing yet is followed by the one the commit's NOTIFY wakes.
	if o.db.Dialect == store.Postgres {
		if _, err := tx.ExecContext(ctx, store.NotifyQuery, notifyChannel); err != nil {
			return fmt.Errorf("wake the other processes' notifications: %w", err)
		}
	}
	o.wake()
	return nil
}

// Row is one outbox row.
type Row struct {
	ID          int64  `json:"id"`
	Account     string `json:"account"`
	Channel     string `json:"channel"`
	Event       string `json:"event"`
	ItemID      int64  `json:"item_id,omitempty"`
	Status      string `json:"status"`
	Attempts    int    `json:"attempts"`
	NextAttempt string `json:"next_attempt_at"`
	LastError   string `json:"last_error,omitempty"`
	CreatedAt   string `json:"created_at"`
	SentAt      string `json:"sent_at,omitempty"`
	BatchID     int64  `json:"batch_id,omitempty"`
	payload     Item
	messageRef  string
	dedupKey    string
}

const rowCols = `id, account_id, channel, event, COALESCE(item_id, 0), status, attempts, next_attempt_at, COALESCE(last_error, ''),
	created_at, COALESCE(sent_at, ''), COALESCE(batch_id, 0), payload, COALESCE(message_ref, ''), dedup_key`

func scanRow(sc interface{ Scan(...any) error }) (Row, error) {
	var r Row
	var payload string
	if err := sc.Scan(&r.ID, &r.Account, &r.Channel, &r.Event, &r.ItemID, &r.Status, &r.Attempts, &r.NextAttempt, &r.LastError,
		&r.CreatedAt, &r.SentAt, &r.BatchID, &payload, &r.messageRef, &r.dedupKey); err != nil {
		return r, err
	}
	// Errors are scrubbed before they are kept; a row kept by an older
	// version may still quote a link.
	r.LastError = redact.ApprovalLinks(r.LastError)
	if err := json.Unmarshal([]byte(payload), &r.payload); err != nil {
		return r, fmt.Errorf("outbox row %d: payload: %w", r.ID, err)
	}
	return r, nil
}

func scanRows(rows *sql.Rows) ([]Row, error) {
	defer rows.Close()
	out := []Row{}
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// claim leases up to limit due rows to owner until leaseUntil. On
// PostgreSQL rows another host is claiming are skipped, not waited for;
// SQLite's write transaction already excludes every other claimer.
// cond narrows the rows (a channel), with its own arguments.
func (o *Outbox) claim(ctx context.Context, owner string, now, leaseUntil time.Time, limit int, cond string, condArgs ...any) ([]Row, error) {
	lock := ""
	if o.db.Dialect == store.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	n := store.FormatTime(now)
	args := append([]any{owner, store.FormatTime(leaseUntil), n, n}, condArgs...)
	args = append(args, limit)
	rows, err := o.db.QueryContext(ctx, `UPDATE notify_outbox SET lease_owner = ?, lease_until = ?
		WHERE id IN (SELECT id FROM notify_outbox WHERE status = 'pending' AND next_attempt_at <= ?
			AND (lease_until IS NULL OR lease_until <= ?) AND `+cond+` ORDER BY id LIMIT ?`+lock+`)
		RETURNING `+rowCols, args...)
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	out, err := scanRows(rows)
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	return out, nil
}

// claimID leases the one pending row id, due or not.
func (o *Outbox) claimID(ctx context.Context, owner string, id int64, leaseUntil time.Time) ([]Row, error) {
	n := store.FormatTime(o.now())
	rows, err := o.db.QueryContext(ctx, `UPDATE notify_outbox SET lease_owner = ?, lease_until = ?
		WHERE id = ? AND status = 'pending' AND (lease_until IS NULL OR lease_until <= ?) RETURNING `+rowCols,
		owner, store.FormatTime(leaseUntil), id, n)
	if err != nil {
		return nil, fmt.Errorf("claim notification %d: %w", id, err)
	}
	return scanRows(rows)
}

// Get reads one row.
func (o *Outbox) Get(ctx context.Context, id int64) (Row, error) {
	r, err := o.row(ctx, id)
	if err != nil {
		return r, fmt.Errorf("notification %d: %w", id, err)
	}
	return r, nil
}

func idList(ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return "?" + strings.Repeat(", ?", len(ids)-1), args
}

// settle updates rows this owner holds and releases their lease. A row
// whose lease was lost (it ran out, and another process took the row) is
// left alone.
func (o *Outbox) settle(ctx context.Context, owner string, ids []int64, set string, args ...any) error {
	if len(ids) == 0 {
		return nil
	}
	in, idArgs := idList(ids)
	args = append(args, idArgs...)
	args = append(args, owner)
	_, err := o.db.ExecContext(context.WithoutCancel(ctx), `UPDATE notify_outbox SET `+set+`, lease_owner = NULL, lease_until = NULL
		WHERE id IN (`+in+`) AND lease_owner = ?`, args...)
	if err != nil {
		return fmt.Errorf("update notifications: %w", err)
	}
	return nil
}

func (o *Outbox) delivered(ctx context.Context, owner string, ids []int64, carrier int64, ref string, at time.Time) error {
	return o.settle(ctx, owner, ids, `status = 'delivered', attempts = attempts + 1, sent_at = ?, batch_id = ?, message_ref = NULLIF(?, ''), last_error = NULL`,
		store.FormatTime(at), carrier, ref)
}

func (o *Outbox) retryAt(ctx context.Context, owner string, ids []int64, next time.Time, msg string) error {
	return o.settle(ctx, owner, ids, `attempts = attempts + 1, next_attempt_at = ?, last_error = ?`, store.FormatTime(next), msg)
}

func (o *Outbox) failed(ctx context.Context, owner string, ids []int64, msg string) error {
	return o.settle(ctx, owner, ids, `status = 'failed', attempts = attempts + 1, last_error = ?`, msg)
}

func (o *Outbox) dropped(ctx context.Context, owner string, ids []int64, reason string) error {
	return o.settle(ctx, owner, ids, `status = 'dropped', last_error = ?`, reason)
}

// hold postpones rows without counting an attempt (a digest window, the
// hourly cap).
func (o *Outbox) hold(ctx context.Context, owner string, ids []int64, until time.Time, why string) error {
	return o.settle(ctx, owner, ids, `next_attempt_at = ?, last_error = ?`, store.FormatTime(until), why)
}

// channelLoad is what a channel sent lately: messages in the last hour,
// the oldest of them, and the latest message.
type channelLoad struct {
	sent           int
	oldest, latest time.Time
}

// load reads channel's messages since since (a message is the row that
// carried it: batch_id = id).
func (o *Outbox) load(ctx context.Context, channel string, since time.Time) (channelLoad, error) {
	var l channelLoad
	var oldest, latest sql.NullString
	err := o.db.QueryRowContext(ctx, `SELECT count(*), min(sent_at), max(sent_at) FROM notify_outbox
		WHERE channel = ? AND sent_at > ? AND batch_id = id`, channel, store.FormatTime(since)).Scan(&l.sent, &oldest, &latest)
	if err != nil {
		return l, fmt.Errorf("read channel %s's recent messages: %w", channel, err)
	}
	if oldest.Valid {
		l.oldest, _ = store.ParseTime(oldest.String)
	}
	if latest.Valid {
		l.latest, _ = store.ParseTime(latest.String)
	} else {
		// The hour's messages say nothing of a digest window before it.
		err := o.db.QueryRowContext(ctx, `SELECT max(sent_at) FROM notify_outbox WHERE channel = ? AND batch_id = id`, channel).Scan(&latest)
		if err != nil {
			return l, fmt.Errorf("read channel %s's last message: %w", channel, err)
		}
		if latest.Valid {
			l.latest, _ = store.ParseTime(latest.String)
		}
	}
	return l, nil
}

// Filter selects outbox rows for List.
type Filter struct {
	Channel, Status string
	Limit           int
}

// List returns rows, newest first.
func (o *Outbox) List(ctx context.Context, f Filter) ([]Row, error) {
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 50
	}
	if f.Status != "" && f.Status != StatusPending && f.Status != StatusDelivered && f.Status != StatusFailed && f.Status != StatusDropped {
		return nil, fmt.Errorf("status: %q is not allowed; allowed values: pending, delivered, failed, dropped", f.Status)
	}
	rows, err := o.db.QueryContext(ctx, `SELECT `+rowCols+` FROM notify_outbox
		WHERE (? = '' OR channel = ?) AND (? = '' OR status = ?) ORDER BY id DESC LIMIT ?`,
		f.Channel, f.Channel, f.Status, f.Status, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("read the outbox: %w", err)
	}
	return scanRows(rows)
}

// ErrNotFound is returned for a row id that does not exist.
var ErrNotFound = errors.New("no such notification")

// Retry makes a failed or dropped row pending again, due now.
func (o *Outbox) Retry(ctx context.Context, id int64) error {
	return o.change(ctx, id, "retry", `status = 'pending', attempts = 0, next_attempt_at = ?, last_error = NULL, lease_owner = NULL, lease_until = NULL`,
		`status IN ('failed', 'dropped')`, store.FormatTime(o.now()))
}

// Drop gives up on a pending or failed row.
func (o *Outbox) Drop(ctx context.Context, id int64) error {
	return o.change(ctx, id, "drop", `status = 'dropped', last_error = 'dropped by hand', lease_owner = NULL, lease_until = NULL`,
		`status IN ('pending', 'failed')`)
}

func (o *Outbox) change(ctx context.Context, id int64, verb, set, when string, args ...any) error {
	args = append(args, id)
	res, err := o.db.ExecContext(ctx, `UPDATE notify_outbox SET `+set+` WHERE id = ? AND `+when, args...)
	if err != nil {
		return fmt.Errorf("%s notification %d: %w", verb, id, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	var status string
	err = o.db.QueryRowContext(ctx, `SELECT status FROM notify_outbox WHERE id = ?`, id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s notification %d: %w", verb, id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s notification %d: %w", verb, id, err)
	}
	return fmt.Errorf("cannot %s notification %d: it is %s", verb, id, status)
}

// ChannelStatus is one channel's health as the outbox records it.
type ChannelStatus struct {
	Channel     string `json:"channel"`
	LastSuccess string `json:"last_success,omitempty"`
	LastError   string `json:"last_error,omitempty"`
	LastErrorAt string `json:"last_error_at,omitempty"`
	Pending     int    `json:"pending"`
	Failed      int    `json:"failed"`
}

// Status reads each channel's last success, last error and its pending and
// failed counts.
func (o *Outbox) Status(ctx context.Context, channels []string) ([]ChannelStatus, error) {
	out := make([]ChannelStatus, 0, len(channels))
	for _, ch := range channels {
		s := ChannelStatus{Channel: ch}
		var last sql.NullString
		err := o.db.QueryRowContext(ctx, `SELECT
			(SELECT max(sent_at) FROM notify_outbox WHERE channel = ?1 AND status = 'delivered'),
			(SELECT count(*) FROM notify_outbox WHERE channel = ?1 AND status = 'pending'),
			(SELECT count(*) FROM notify_outbox WHERE channel = ?1 AND status = 'failed')`, ch).Scan(&last, &s.Pending, &s.Failed)
		if err != nil {
			return nil, fmt.Errorf("read channel %s's status: %w", ch, err)
		}
		s.LastSuccess = last.String
		var msg, at string
		err = o.db.QueryRowContext(ctx, `SELECT last_error, next_attempt_at FROM notify_outbox
			WHERE channel = ? AND last_error IS NOT NULL AND last_error <> '' AND status IN ('pending', 'failed') AND attempts > 0
			ORDER BY id DESC LIMIT 1`, ch).Scan(&msg, &at)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("read channel %s's status: %w", ch, err)
		}
		s.LastError, s.LastErrorAt = redact.ApprovalLinks(msg), at
		out = append(out, s)
	}
	return out, nil
}

// Notified is when an item's notice last reached a channel.
type Notified struct {
	Channel string
	At      time.Time
}

// LastNotified returns, per item of account, the latest delivery of a
// notice about it ("notified via telegram 2 min ago").
func (o *Outbox) LastNotified(ctx context.Context, account string, ids []int64) (map[int64]Notified, error) {
	out := map[int64]Notified{}
	if len(ids) == 0 {
		return out, nil
	}
	in, args := idList(ids)
	rows, err := o.db.QueryContext(ctx, `SELECT item_id, channel, sent_at FROM notify_outbox
		WHERE account_id = ? AND status = 'delivered' AND item_id IN (`+in+`) ORDER BY sent_at`, append([]any{account}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read notifications: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var ch, at string
		if err := rows.Scan(&id, &ch, &at); err != nil {
			return nil, fmt.Errorf("read notifications: %w", err)
		}
		if t, err := store.ParseTime(at); err == nil {
			out[id] = Notified{Channel: ch, At: t}
		}
	}
	return out, rows.Err()
}

// row reads one row by id (the Telegram poller's button presses name it).
func (o *Outbox) row(ctx context.Context, id int64) (Row, error) {
	r, err := scanRow(o.db.QueryRowContext(ctx, `SELECT `+rowCols+` FROM notify_outbox WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}
