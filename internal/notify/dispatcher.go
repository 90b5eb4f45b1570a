package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
)

// Hold reasons kept in last_error while a row waits without having failed.
const (
	heldCap    = "held: hourly cap reached"
	heldDigest = "held: digest window"
)

// DispatcherOptions configure a Dispatcher.
type DispatcherOptions struct {
	Outbox   *Outbox
	Channels []Channel
	// Items reads approval items as they are now; without it no event is
	// dropped for a decided item and no links are made.
	Items Items
	// Links makes signed links (nil: messages carry none).
	Links LinkMaker
	// Targets reads the post or account an item acts on (nil: a notice
	// names it by its id).
	Targets Targets
	OneTap  bool
	// BatchWindow merges item events queued within it of a channel's last
	// message into one digest (0: none).
	BatchWindow time.Duration
	// MaxPerHour caps each channel's messages per hour (0: no cap).
	MaxPerHour int
	// Sweeps notice events that no transaction records (approval.expiring,
	// mutation.unknown, ...), every SweepEvery.
	Sweeps     []Sweep
	SweepEvery time.Duration
	// PollEvery is how often due rows are looked for (default 500 ms)
	// besides when a row is written: by this process, or by another
	// process or host (PostgreSQL tells every listening process as the
	// row's transaction commits; on SQLite each process watches for new
	// rows every watchEvery). It is what finds rows whose retry comes due,
	// and rows written while not listening.
	PollEvery time.Duration
	// Listening, when set, is called once this dispatcher hears of rows
	// other processes write, and again after each reconnect.
	Listening func()
	// Lease is how long a claimed row is this process's alone (default
	// 2 min); SendTimeout bounds one delivery (default 30 s).
	Lease, SendTimeout time.Duration
	// MaxAttempts before a row is failed (default 10).
	MaxAttempts int
	Now         func() time.Time
	Log         *slog.Logger
	// OnDelivered, when set, is told each delivery's channel and how long
	// after its event it went out (for metrics).
	OnDelivered func(channel string, latency time.Duration)
}

// Sweep finds events at now and records them (Outbox.Add).
type Sweep func(ctx context.Context, out *Outbox, now time.Time) error

// Dispatcher delivers the outbox. Each long-lived process runs one; the
// claim's lease makes every row one process's to send.
type Dispatcher struct {
	o       DispatcherOptions
	chans   map[string]Channel
	owner   string
	targets targetCache
}

// NewDispatcher returns a dispatcher over o.
func NewDispatcher(o DispatcherOptions) *Dispatcher {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.PollEvery <= 0 {
		o.PollEvery = 500 * time.Millisecond
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = 30 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = 30 * time.Second
	}
	d := &Dispatcher{o: o, chans: map[string]Channel{}, owner: newOwner()}
	for _, c := range o.Channels {
		d.chans[c.Name()] = c
	}
	return d
}

func newOwner() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Run delivers until ctx ends. Each channel has a loop of its own, so a
// channel that hangs until its timeout never holds up another.
func (d *Dispatcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.listen(ctx)
	}()
	for name := range d.chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.loop(ctx, func(ctx context.Context) (int, error) { return d.runChannel(ctx, name) })
		}()
	}
	var lastSweep time.Time
	d.loop(ctx, func(ctx context.Context) (int, error) {
		if len(d.o.Sweeps) > 0 && d.o.Now().Sub(lastSweep) >= d.o.SweepEvery {
			lastSweep = d.o.Now()
			d.sweep(ctx)
		}
		return d.runForeign(ctx)
	})
	wg.Wait()
}

// loop runs pass every PollEvery, and as soon as a row is written, until
// ctx ends. A row written during a pass leaves a wake behind, so the next
// pass starts at once.
func (d *Dispatcher) loop(ctx context.Context, pass func(context.Context) (int, error)) {
	wake, stop := d.o.Outbox.subscribe()
	defer stop()
	poll := time.NewTicker(d.o.PollEvery)
	defer poll.Stop()
	for {
		if _, err := pass(ctx); err != nil && ctx.Err() == nil {
			d.o.Log.Warn("notifications: dispatch pass failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		case <-wake:
		}
	}
}

// watchEvery is how often a SQLite process looks for outbox rows other
// processes committed: the wait it adds to their delivery, at most.
const watchEvery = 5 * time.Millisecond

// newestRow reads what changes when any process adds an outbox row.
const newestRow = `SELECT COALESCE(MAX(id), 0) FROM notify_outbox`

// listen wakes this process's loops whenever another process (or this
// one) commits an outbox row, until ctx ends: on PostgreSQL by the
// commit's NOTIFY, on SQLite by watching the newest row's id after each
// commit (store.WatchCommits). A lost connection is listened on again
// after PollEvery; meanwhile the poll finds the rows.
func (d *Dispatcher) listen(ctx context.Context) {
	db := d.o.Outbox.db
	for {
		var err error
		if db.Dialect == store.Postgres {
			err = db.Listen(ctx, notifyChannel, d.o.Listening, d.o.Outbox.wake)
		} else {
			err = db.WatchCommits(ctx, watchEvery, newestRow, d.o.Listening, d.o.Outbox.wake)
		}
		if ctx.Err() != nil {
			return
		}
		d.o.Log.Warn("notifications: not woken by other processes until listening again", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(d.o.PollEvery):
		}
	}
}

func (d *Dispatcher) sweep(ctx context.Context) {
	for _, s := range d.o.Sweeps {
		if err := s(ctx, d.o.Outbox, d.o.Now()); err != nil && ctx.Err() == nil {
			d.o.Log.Warn("notifications: sweep failed", "error", err)
		}
	}
}

// claimLimit bounds one pass; the rest waits for the next.
const claimLimit = 50

// RunOnce makes one pass over every channel (concurrently) and over rows
// of channels this process does not have; it returns how many rows it
// settled (delivered, failed, dropped, held or put back for a retry).
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	var (
		mu      sync.Mutex
		settled int
		errs    []error
		wg      sync.WaitGroup
	)
	add := func(n int, err error) {
		mu.Lock()
		defer mu.Unlock()
		settled += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	for name := range d.chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			add(d.runChannel(ctx, name))
		}()
	}
	add(d.runForeign(ctx))
	wg.Wait()
	return settled, errors.Join(errs...)
}

// runChannel claims and delivers channel's due rows.
func (d *Dispatcher) runChannel(ctx context.Context, channel string) (int, error) {
	now := d.o.Now()
	rows, err := d.o.Outbox.claim(ctx, d.owner, now, now.Add(d.o.Lease), claimLimit, `channel = ?`, channel)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return d.process(ctx, rows, now)
}

// runForeign fails the due rows of channels this process does not have
// (removed from the configuration): nobody could send them.
func (d *Dispatcher) runForeign(ctx context.Context) (int, error) {
	names := make([]any, 0, len(d.chans))
	for name := range d.chans {
		names = append(names, name)
	}
	cond := `1 = 1`
	if len(names) > 0 {
		cond = `channel NOT IN (?` + strings.Repeat(", ?", len(names)-1) + `)`
	}
	now := d.o.Now()
	rows, err := d.o.Outbox.claim(ctx, d.owner, now, now.Add(d.o.Lease), claimLimit, cond, names...)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return d.process(ctx, rows, now)
}

// Deliver claims the pending row id and delivers it now, whatever its
// next attempt time (`tuitbot notify test`).
func (d *Dispatcher) Deliver(ctx context.Context, id int64) error {
	now := d.o.Now()
	rows, err := d.o.Outbox.claimID(ctx, d.owner, id, now.Add(d.o.Lease))
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("notification %d is not pending, or another process is sending it", id)
	}
	_, err = d.process(ctx, rows, now)
	return err
}

// process settles claimed rows.
func (d *Dispatcher) process(ctx context.Context, rows []Row, now time.Time) (int, error) {
	// Past this, a send could outlive the lease and another process
	// could take the row: leave the rest to be claimed again.
	deadline := now.Add(d.o.Lease - d.o.SendTimeout)
	settled := 0
	byChannel := map[string][]pendingRow{}
	var order []string
	for _, r := range rows {
		if _, ok := d.chans[r.Channel]; !ok {
			settled++
			d.settleErr(ctx, d.o.Outbox.failed(ctx, d.owner, []int64{r.ID}, "channel "+r.Channel+" is not configured in this process"))
			continue
		}
		p := pendingRow{Row: r}
		if itemEvents[r.Event] && d.o.Items != nil && r.ItemID != 0 {
			cur, why, err := d.current(ctx, r)
			if err != nil {
				// Reading the item failed: try again next pass.
				d.settleErr(ctx, d.o.Outbox.hold(ctx, d.owner, []int64{r.ID}, now.Add(d.o.PollEvery), "read the item: "+err.Error()))
				continue
			}
			if why != "" {
				settled++
				d.settleErr(ctx, d.o.Outbox.dropped(ctx, d.owner, []int64{r.ID}, why))
				continue
			}
			p.item = cur
		}
		if _, seen := byChannel[r.Channel]; !seen {
			order = append(order, r.Channel)
		}
		byChannel[r.Channel] = append(byChannel[r.Channel], p)
	}
	for _, ch := range order {
		n, err := d.deliverChannel(ctx, d.chans[ch], byChannel[ch], now, deadline)
		settled += n
		if err != nil {
			return settled, err
		}
	}
	return settled, nil
}

// pendingRow is a claimed row with its item as it is now.
type pendingRow struct {
	Row
	item *gateway.ApprovalItem
}

// current reads r's item and says why r is moot ("" when it is not): the
// item was decided, expired or edited since the event.
func (d *Dispatcher) current(ctx context.Context, r Row) (*gateway.ApprovalItem, string, error) {
	it, err := d.o.Items.Item(ctx, r.Account, r.ItemID)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, "the item no longer exists", nil
	}
	if err != nil {
		return nil, "", err
	}
	if it.Status != gateway.ApprovalPending {
		return nil, "the item was " + it.Status + " before the notice went out", nil
	}
	if !sameContent(r.payload, it) {
		return nil, "the item was edited before the notice went out; the edit's notice carries the new text", nil
	}
	return it, "", nil
}

// sameContent reports whether the item still holds the content the event
// was about: the hash of the parameters as stored then against those
// stored now. A row recorded before the payload kept that hash compares
// the decoded parameters, since its copy was re-encoded.
func sameContent(was Item, now *gateway.ApprovalItem) bool {
	if was.Content != "" {
		return was.Tool == now.Tool && was.Content == ContentHash(now.Tool, now.Params)
	}
	return was.Tool == now.Tool && sameJSON(was.Params, now.Params)
}

// sameJSON reports whether a and b decode to equal values.
func sameJSON(a, b json.RawMessage) bool {
	decode := func(raw json.RawMessage) (any, bool) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		return v, dec.Decode(&v) == nil
	}
	va, okA := decode(a)
	vb, okB := decode(b)
	return okA && okB && reflect.DeepEqual(va, vb)
}

// deliverChannel sends one channel's claimed rows: held for the hourly
// cap or the digest window, else as single messages or one digest.
func (d *Dispatcher) deliverChannel(ctx context.Context, ch Channel, rows []pendingRow, now, deadline time.Time) (int, error) {
	load, err := d.o.Outbox.load(ctx, ch.Name(), now.Add(-time.Hour))
	if err != nil {
		return 0, err
	}
	var single, digest []pendingRow
	capped := false
	for _, r := range rows {
		if r.LastError == heldCap {
			capped = true
		}
		if itemEvents[r.Event] {
			digest = append(digest, r)
		} else {
			single = append(single, r)
		}
	}
	// A digest window holds item events that follow the last message
	// closely; the cap's release is sent at once.
	if w := d.o.BatchWindow; w > 0 && len(digest) > 0 && !capped && !load.latest.IsZero() && now.Before(load.latest.Add(w)) {
		settledN := len(digest)
		d.settleErr(ctx, d.o.Outbox.hold(ctx, d.owner, ids(digest), load.latest.Add(w), heldDigest))
		digest = nil
		if len(single) == 0 {
			return settledN, nil
		}
	}
	var msgs [][]pendingRow
	for _, r := range single {
		msgs = append(msgs, []pendingRow{r})
	}
	switch {
	case len(digest) == 1 && !capped:
		msgs = append(msgs, digest)
	case len(digest) > 0 && d.o.BatchWindow == 0 && !capped:
		for _, r := range digest {
			msgs = append(msgs, []pendingRow{r})
		}
	case len(digest) > 0:
		msgs = append(msgs, digest)
	}
	settled := 0
	for i, m := range msgs {
		if d.o.MaxPerHour > 0 && load.sent >= d.o.MaxPerHour {
			var rest []pendingRow
			for _, mm := range msgs[i:] {
				rest = append(rest, mm...)
			}
			d.settleErr(ctx, d.o.Outbox.hold(ctx, d.owner, ids(rest), load.oldest.Add(time.Hour), heldCap))
			return settled + len(rest), nil
		}
		if d.o.Now().After(deadline) {
			return settled, nil
		}
		if err := d.send(ctx, ch, m, capped); err != nil {
			return settled, err
		}
		settled += len(m)
		load.sent++
		if load.oldest.IsZero() {
			load.oldest = d.o.Now()
		}
	}
	return settled, nil
}

func ids(rows []pendingRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// send delivers one message made of rows and records the outcome.
func (d *Dispatcher) send(ctx context.Context, ch Channel, rows []pendingRow, capped bool) error {
	carrier := rows[0]
	m := Message{ID: fmt.Sprintf("msg_%d", carrier.ID), Event: carrier.Event, Account: carrier.Account, Timestamp: d.o.Now(), OneTap: d.o.OneTap}
	for _, r := range rows {
		it := r.payload
		if it.Account == "" {
			it.Account = r.Account
		}
		if r.item != nil && d.o.Targets != nil {
			if t := describe.Of(it.Tool, it.Equivalent, it.Params).Target; t.Kind != describe.KindNone {
				tctx, cancel := context.WithTimeout(ctx, min(targetTimeout, d.o.SendTimeout))
				it.TargetLine = d.targets.line(tctx, d.o.Targets, r.Account, t, d.o.Now())
				cancel()
			}
		}
		m.Items = append(m.Items, it)
		var l Links
		if r.item != nil && d.o.Links != nil {
			var err error
			if l, err = d.o.Links.Links(ctx, r.Account, r.item, ch.Name()); err != nil {
				d.o.Log.Warn("notifications: no links for the item", "channel", ch.Name(), "item", r.ItemID, "error", err)
				l = Links{}
			}
		} else if hl, ok := d.o.Links.(HandOffLinker); ok && r.Event == EventHandOff && it.HandOffID != 0 {
			// A hand-off's link shows its card on the phone, with Do it on
			// X; it decides nothing, so it is the message's view link.
			var err error
			if l.View, err = hl.HandOffLink(ctx, r.Account, it.HandOffID, ch.Name()); err != nil {
				d.o.Log.Warn("notifications: no link for the hand-off", "channel", ch.Name(), "handoff", it.HandOffID, "error", err)
			}
		}
		m.Links = append(m.Links, l)
	}
	if capped && len(rows) > 1 {
		m.More = len(rows)
	}
	if d.o.Links != nil && d.o.OneTap {
		m.Callback = func(i int, approve bool) string {
			r := rows[i]
			if r.item == nil {
				return ""
			}
			mac, err := d.o.Links.SignCallback(r.Account, r.item, r.ID, approve)
			if err != nil {
				return ""
			}
			return mac
		}
	}
	sctx, cancel := context.WithTimeout(ctx, d.o.SendTimeout)
	ref, err := ch.Send(sctx, m)
	cancel()
	now := d.o.Now()
	if err == nil {
		if d.o.OnDelivered != nil {
			for _, r := range rows {
				if t, perr := store.ParseTime(r.CreatedAt); perr == nil {
					d.o.OnDelivered(ch.Name(), now.Sub(t))
				}
			}
		}
		return d.o.Outbox.delivered(ctx, d.owner, ids(rows), carrier.ID, ref, now)
	}
	if ctx.Err() != nil {
		// Shutting down: the lease runs out and another pass sends it.
		return ctx.Err()
	}
	// What the destination answered may quote the links or the channel's
	// own secrets, in any escaping: mask them before the text is logged
	// or kept where get_notification_status reads it.
	msg := newScrubber(ch, m.Links).scrub(err.Error())
	var se *SendError
	errors.As(err, &se)
	attempts := carrier.Attempts + 1
	if se != nil && se.Permanent {
		d.o.Log.Warn("notifications: the channel refused the message; check its configuration", "channel", ch.Name(), "error", msg)
		return d.o.Outbox.failed(ctx, d.owner, ids(rows), msg)
	}
	if attempts >= d.o.MaxAttempts {
		d.o.Log.Warn("notifications: giving up after repeated failures", "channel", ch.Name(), "attempts", attempts, "error", msg)
		return d.o.Outbox.failed(ctx, d.owner, ids(rows), msg)
	}
	wait := backoff(attempts)
	if se != nil && se.RetryAfter > wait {
		wait = min(se.RetryAfter, time.Hour)
	}
	d.o.Log.Info("notifications: delivery failed; retrying", "channel", ch.Name(), "attempt", attempts, "retry_in", wait.Round(time.Second), "error", msg)
	return d.o.Outbox.retryAt(ctx, d.owner, ids(rows), now.Add(wait), msg)
}

// backoff is the wait before attempt n+1: 5 s doubling to 15 min, with a
// fifth of jitter so processes do not retry in step.
func backoff(attempts int) time.Duration {
	base := 5 * time.Second
	for i := 1; i < attempts && base < 15*time.Minute; i++ {
		base *= 2
	}
	base = min(base, 15*time.Minute)
	j, _ := rand.Int(rand.Reader, big.NewInt(int64(base/5)+1))
	return base - base/10 + time.Duration(j.Int64())
}

func (d *Dispatcher) settleErr(ctx context.Context, err error) {
	if err != nil && ctx.Err() == nil {
		d.o.Log.Warn("notifications: could not record a delivery outcome", "error", err)
	}
}
