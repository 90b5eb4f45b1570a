package workflow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tuitbot/tuitbot/internal/actions"
	"slices"
	"sort"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/store"
)

// QueueHorizon is how far ahead a free slot is looked for; past it the
// queue answers queue_full.
const QueueHorizon = 366 * 24 * time.Hour

// bookedWhere selects the drafts that occupy their scheduled time: a draft
// unscheduled, deleted or failed holds no time. The unique index on
// (account, queue_slot) has the same condition, so such a draft frees its
// slot whatever path changed its status.
const bookedWhere = `status NOT IN ('draft', 'deleted', 'failed')`

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// booking is one scheduled item as the queue sees it.
type booking struct {
	At      time.Time
	DraftID int64
}

// bookings reads the items booked in [lo, hi), earliest first, leaving out
// draft skip (one being moved).
func (s *Service) bookings(ctx context.Context, q querier, lo, hi time.Time, skip int64) ([]booking, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, scheduled_for FROM drafts
		WHERE account_id = ? AND scheduled_for >= ? AND scheduled_for < ? AND `+bookedWhere+` ORDER BY scheduled_for, id`,
		s.account(), s.ts(lo), s.ts(hi))
	if err != nil {
		return nil, dbErr(err, "read scheduled drafts")
	}
	defer rows.Close()
	var out []booking
	for rows.Next() {
		var b booking
		var at string
		if err := rows.Scan(&b.DraftID, &at); err != nil {
			return nil, dbErr(err, "read scheduled drafts")
		}
		if b.At, err = store.ParseTime(at); err != nil {
			return nil, dbErr(err, "read scheduled drafts")
		}
		if b.DraftID != skip {
			out = append(out, b)
		}
	}
	return out, dbErr(rows.Err(), "read scheduled drafts")
}

func times(bs []booking) []time.Time {
	out := make([]time.Time, len(bs))
	for i, b := range bs {
		out[i] = b.At
	}
	return out
}

// QueueSlot is one slot of the queue and whether it is free.
type QueueSlot struct {
	At      string `json:"at"`
	Weekday string `json:"weekday"`
	// Status is free, taken, min_gap or max_per_day.
	Status  string `json:"status"`
	DraftID int64  `json:"draft_id,omitempty"`
}

func checkQueue(p queue.Policy) error {
	if len(p.Rules) == 0 {
		return apperr.New(apperr.QueueNotConfigured, "queue.slots: no slots are configured for this account; add e.g. slots = [\"mon-fri 09:00\"] under [queue]")
	}
	return nil
}

// QueueSlots lists the slots in [from, from+days) with what occupies each.
// It reads the drafts table only.
func (s *Service) QueueSlots(ctx context.Context, p queue.Policy, from time.Time, days int) ([]QueueSlot, error) {
	if err := checkQueue(p); err != nil {
		return nil, err
	}
	to := from.AddDate(0, 0, days)
	lo, hi := p.Needs(from, to)
	bs, err := s.bookings(ctx, s.DB, lo, hi, 0)
	if err != nil {
		return nil, err
	}
	booked := times(bs)
	out := []QueueSlot{}
	for _, at := range queue.Expand(p.Rules, p.Loc, from, to) {
		st := p.Status(at, booked)
		qs := QueueSlot{At: at.In(p.Loc).Format(time.RFC3339), Weekday: at.In(p.Loc).Weekday().String(), Status: "free"}
		if st != queue.Free {
			qs.Status = st
		}
		if st == queue.Taken {
			i := sort.Search(len(bs), func(i int) bool { return !bs[i].At.Before(at) })
			qs.DraftID = bs[i].DraftID
		}
		out = append(out, qs)
	}
	return out, nil
}

// QueuedOutside lists the items queued at from or later whose slot is not
// a slot of rules (read in p's timezone): what replacing the queue's slots
// with rules would leave outside every slot. Each keeps its time.
func (s *Service) QueuedOutside(ctx context.Context, p queue.Policy, rules []queue.Rule, from time.Time) ([]QueueSlot, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT id, queue_slot FROM drafts
		WHERE account_id = ? AND queue_slot IS NOT NULL AND queue_slot >= ? AND `+bookedWhere+` ORDER BY queue_slot, id`,
		s.account(), s.ts(from))
	if err != nil {
		return nil, dbErr(err, "read queued drafts")
	}
	defer rows.Close()
	out := []QueueSlot{}
	for rows.Next() {
		var id int64
		var slot string
		if err := rows.Scan(&id, &slot); err != nil {
			return nil, dbErr(err, "read queued drafts")
		}
		at, err := store.ParseTime(slot)
		if err != nil {
			return nil, dbErr(err, "read queued drafts")
		}
		near := queue.Expand(rules, p.Loc, at.Add(-time.Minute), at.Add(time.Minute))
		if !slices.ContainsFunc(near, at.Equal) {
			out = append(out, QueueSlot{At: at.In(p.Loc).Format(time.RFC3339), Weekday: at.In(p.Loc).Weekday().String(), Status: "outside", DraftID: id})
		}
	}
	return out, dbErr(rows.Err(), "read queued drafts")
}

// freeSlots finds up to n free slots after after, reading what is booked a
// window at a time: two days first, doubling up to the horizon, so a queue
// with room soon costs one short read. A full queue would cost a read of
// every booking up to its first free slot; the account's frontier (see
// frontier) remembers how far no slot is free, so the search starts there
// and reads only the bookings around it.
func (s *Service) freeSlots(ctx context.Context, q querier, p queue.Policy, after time.Time, n int, skip int64) ([]time.Time, error) {
	if err := checkQueue(p); err != nil {
		return nil, err
	}
	end := after.Add(QueueHorizon)
	var err error
	// A draft being moved (skip) may hold a slot the frontier counts as
	// taken: that search starts where it was asked to.
	var f frontier
	start := after
	if skip == 0 {
		if f, err = s.readFrontier(ctx, q, p); err != nil {
			return nil, err
		}
		if f.covers(after) {
			start = f.hi
		}
	}
	var out []time.Time
	span := firstSpan
	for from := start; from.Before(end) && len(out) < n; span *= 2 {
		to := from.Add(span)
		if to.After(end) {
			to = end
		}
		lo, hi := p.Needs(from, to)
		var bs []booking
		if f.covers(after) && from.Equal(f.hi) && f.window != nil && !lo.Before(f.winLo) && !hi.After(f.winHi) {
			// Read with the frontier, in the same query: every booking
			// of a window that holds this one.
			bs = f.window
		} else if bs, err = s.bookings(ctx, q, lo, hi, skip); err != nil {
			return nil, err
		}
		// The slots already chosen count as booked for the next ones.
		booked := append(times(bs), out...)
		sort.Slice(booked, func(i, j int) bool { return booked[i].Before(booked[j]) })
		out = append(out, p.FreeSlots(from, to, booked, n-len(out))...)
		from = to
	}
	if len(out) == 0 {
		return nil, apperr.New(apperr.QueueFull, "no free queue slot in the %d days after %s", int(QueueHorizon/(24*time.Hour)), after.In(p.Loc).Format(time.RFC3339))
	}
	if skip == 0 && out[0].After(start) {
		lo := after
		if f.covers(after) {
			lo = f.lo
		}
		if err := s.writeFrontier(ctx, q, p, f.version, lo, out[0]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// firstSpan is the first window a search reads: two days.
const firstSpan = 2 * 24 * time.Hour

// frontier is what the account's queue_state row says: no slot in
// [lo, hi) is free, if version is still the row's version and the queue
// is the one it was found for. window holds the bookings in
// [winLo, winHi), the first window a search from hi reads, read in the
// same query (nil when not read).
type frontier struct {
	version      int64
	valid        bool
	lo, hi       time.Time
	winLo, winHi time.Time
	window       []booking
}

func (f frontier) covers(t time.Time) bool {
	return f.valid && !t.Before(f.lo) && t.Before(f.hi)
}

// policyKey names a queue's slots and limits: a frontier found for one
// says nothing about another.
func policyKey(p queue.Policy) string {
	return fmt.Sprintf("%v|%s|%d|%d", p.Rules, p.Loc, p.MinGap, p.MaxPerDay)
}

// readFrontier reads the account's frontier and the bookings of the
// window a search from it reads first, in one indexed read, making the
// row first if the account has none (so that a change that frees a slot
// has a version to move).
func (s *Service) readFrontier(ctx context.Context, q querier, p queue.Policy) (frontier, error) {
	var f frontier
	rows, err := q.QueryContext(ctx, `SELECT s.version, s.frontier_version, s.policy, s.lo, s.hi, s.win_lo, s.win_hi, d.id, d.scheduled_for
		FROM queue_state s LEFT JOIN drafts d ON d.account_id = s.account_id AND d.scheduled_for >= s.win_lo AND d.scheduled_for < s.win_hi
			AND d.`+bookedWhere+`
		WHERE s.account_id = ?`, s.account())
	if err != nil {
		return f, dbErr(err, "read the queue's frontier")
	}
	defer rows.Close()
	found := false
	var fv int64
	var pol, lo, hi, winLo, winHi string
	for rows.Next() {
		var id sql.NullInt64
		var at sql.NullString
		if err := rows.Scan(&f.version, &fv, &pol, &lo, &hi, &winLo, &winHi, &id, &at); err != nil {
			return f, dbErr(err, "read the queue's frontier")
		}
		found = true
		if id.Valid {
			t, err := store.ParseTime(at.String)
			if err != nil {
				return f, dbErr(err, "read the queue's frontier")
			}
			f.window = append(f.window, booking{At: t, DraftID: id.Int64})
		}
	}
	if err := rows.Err(); err != nil {
		return f, dbErr(err, "read the queue's frontier")
	}
	rows.Close()
	if !found {
		if _, err := q.ExecContext(ctx, `INSERT INTO queue_state (account_id) VALUES (?) ON CONFLICT (account_id) DO NOTHING`, s.account()); err != nil {
			return f, dbErr(err, "read the queue's frontier")
		}
		err = q.QueryRowContext(ctx, `SELECT version FROM queue_state WHERE account_id = ?`, s.account()).Scan(&f.version)
		return f, dbErr(err, "read the queue's frontier")
	}
	if fv != f.version || pol != policyKey(p) {
		return f, nil
	}
	var errs [4]error
	f.lo, errs[0] = store.ParseTime(lo)
	f.hi, errs[1] = store.ParseTime(hi)
	f.winLo, errs[2] = store.ParseTime(winLo)
	f.winHi, errs[3] = store.ParseTime(winHi)
	if errors.Join(errs[:]...) != nil {
		return frontier{version: f.version}, nil
	}
	if f.window == nil {
		f.window = []booking{}
	}
	// The index hands them over in time order already; sorting keeps
	// that true whatever plan the database picks.
	sort.Slice(f.window, func(i, j int) bool { return f.window[i].At.Before(f.window[j].At) })
	f.valid = true
	return f, nil
}

// writeFrontier records that no slot in [lo, hi) is free, as found from
// the bookings read after version was; it writes nothing if a change
// that can free a slot came since (the version moved).
func (s *Service) writeFrontier(ctx context.Context, q querier, p queue.Policy, version int64, lo, hi time.Time) error {
	winLo, winHi := p.Needs(hi, hi.Add(firstSpan))
	_, err := q.ExecContext(ctx, `UPDATE queue_state SET frontier_version = version, policy = ?, lo = ?, hi = ?, win_lo = ?, win_hi = ?
		WHERE account_id = ? AND version = ?`,
		policyKey(p), s.ts(lo), s.ts(hi), s.ts(winLo), s.ts(winHi), s.account(), version)
	return dbErr(err, "record the queue's frontier")
}

// NextFreeSlots returns up to n free slots after after, earliest first,
// that can all be taken together.
func (s *Service) NextFreeSlots(ctx context.Context, p queue.Policy, after time.Time, n int) ([]time.Time, error) {
	if now := s.Now(); after.Before(now) {
		after = now
	}
	return s.freeSlots(ctx, s.DB, p, after.Add(time.Nanosecond), n, 0)
}

// Queue positions for ScheduleInQueue.
const (
	PositionNext       = "next"
	PositionLast       = "last"
	PositionFirstAfter = "first_after"
)

// QueueRequest is schedule_in_queue's input after parsing: an existing
// draft or new content, and where in the queue it goes.
type QueueRequest struct {
	DraftID  int64
	Content  string
	Tweets   []string
	Topic    string
	Position string
	After    *time.Time
	// Options are the post settings sent with the post (x_post_tweet's
	// options); nil keeps a queued draft's own.
	Options *actions.PostOptions
	// Slot, when set, is the one slot to take (a draft dropped on it in
	// the calendar): refused unless it is a free slot of the queue.
	Slot *time.Time
}

// ScheduleInQueue places a draft (or new content, stored as one) in a free
// slot of the queue. Choosing the slot and taking it happen in one
// transaction under the account's write lock; the unique index on
// (account, slot) refuses a second holder whatever path wrote it. Nothing
// reaches X now: when the slot comes, the publisher sends it through the
// gateway, which in composer mode queues it for approval.
func (c *Composer) ScheduleInQueue(ctx context.Context, p queue.Policy, r QueueRequest) (*ComposeResult, error) {
	if err := checkQueue(p); err != nil {
		return nil, err
	}
	switch {
	case r.DraftID != 0 && (r.Content != "" || len(r.Tweets) > 0):
		return nil, apperr.New(apperr.InvalidInput, "draft_id, content, tweets: give a draft_id or new content, not both")
	case r.DraftID == 0 && r.Content == "" && len(r.Tweets) == 0:
		return nil, apperr.New(apperr.InvalidInput, "draft_id: required (or pass content or tweets)")
	case r.Content != "" && len(r.Tweets) > 0:
		return nil, apperr.New(apperr.InvalidInput, "content, tweets: give one, not both")
	}
	now := c.Now()
	after := now
	switch r.Position {
	case "", PositionNext:
		if r.After != nil {
			return nil, apperr.New(apperr.InvalidInput, "after: only position first_after takes it")
		}
	case PositionLast:
		if r.After != nil {
			return nil, apperr.New(apperr.InvalidInput, "after: only position first_after takes it")
		}
	case PositionFirstAfter:
		if r.After == nil {
			return nil, apperr.New(apperr.InvalidInput, "after: required with position first_after")
		}
		if r.After.After(now) {
			after = *r.After
		}
	default:
		return nil, apperr.New(apperr.InvalidInput, "position: %q is not allowed; allowed values: next, last, first_after", r.Position)
	}
	if r.Slot != nil {
		if r.Position != "" || r.After != nil {
			return nil, apperr.New(apperr.InvalidInput, "slot: give a slot or a position, not both")
		}
		if !r.Slot.After(now) {
			return nil, apperr.New(apperr.ValidationError, "slot: %s has passed", r.Slot.In(p.Loc).Format(time.RFC3339))
		}
	}
	opts, err := actions.CheckOptions("options", r.Options)
	if err != nil {
		return nil, err
	}
	storedOpts := optionsColumn(opts)
	var existing *Draft
	if r.DraftID != 0 {
		d, err := c.Draft(ctx, r.DraftID)
		if err != nil {
			return nil, err
		}
		if d.Status != "draft" && d.Status != DraftScheduled {
			return nil, apperr.New(apperr.ValidationError, "draft_id: draft %d is %s; only drafts and scheduled items can be queued", r.DraftID, d.Status)
		}
		existing = d
	} else if err := c.validateDraft(ctx, r.Content, r.Tweets); err != nil {
		return nil, err
	}
	dec, err := c.Gateway.Admit(ctx, actions.QueueTool, policy.CatContent)
	if err != nil {
		return nil, err
	}
	res := &ComposeResult{}
	err = c.DB.LockedTx(ctx, []string{store.AccountScope(c.account())}, func(tx *sql.Tx) error {
		from := after
		if r.Position == PositionLast {
			last, err := c.lastQueued(ctx, tx, r.DraftID)
			if err != nil {
				return err
			}
			if last.After(from) {
				from = last
			}
		}
		if r.Slot != nil {
			from = r.Slot.Add(-time.Nanosecond)
		}
		slots, err := c.freeSlots(ctx, tx, p, from.Add(time.Nanosecond), 1, r.DraftID)
		if r.Slot != nil && (apperr.CodeOf(err) == apperr.QueueFull || err == nil && !slots[0].Equal(*r.Slot)) {
			return apperr.New(apperr.ValidationError, "slot: %s is not a free slot of the queue (taken meanwhile, too close to a scheduled post, on a full day, or not a slot)", r.Slot.In(p.Loc).Format(time.RFC3339))
		}
		if err != nil {
			return err
		}
		slot := c.ts(slots[0])
		if dec.Outcome == policy.DryRun {
			res.DryRun, res.ScheduledFor, res.Status = true, slot, DraftScheduled
			res.Note = fmt.Sprintf("dry run (rule %s): the item would take this slot; nothing was stored", dec.RuleID)
			return nil
		}
		ts := c.ts(now)
		if existing != nil {
			_, err := tx.ExecContext(ctx, `UPDATE drafts SET status = ?, scheduled_for = ?, queue_slot = ?, options = COALESCE(?, options), updated_at = ? WHERE id = ? AND account_id = ?`,
				DraftScheduled, slot, slot, storedOpts, ts, existing.ID, c.account())
			if err != nil {
				return dbErr(err, "take queue slot")
			}
			res.Draft = *existing
			if opts != nil {
				res.Options = opts
			}
			res.Status, res.ScheduledFor, res.UpdatedAt = DraftScheduled, slot, ts
			return nil
		}
		d := Draft{ContentType: "tweet", Text: r.Content, Tweets: r.Tweets, Topic: r.Topic, Source: "mcp", Status: DraftScheduled, ScheduledFor: slot, Options: opts, CreatedAt: ts, UpdatedAt: ts}
		body := r.Content
		if len(r.Tweets) > 0 {
			d.ContentType = "thread"
			b, _ := json.Marshal(r.Tweets)
			body = string(b)
		}
		err = tx.QueryRowContext(ctx, `INSERT INTO drafts (account_id, content_type, content, topic, source, status, scheduled_for, queue_slot, options, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, c.account(), d.ContentType, body, d.Topic, d.Source, d.Status, slot, slot, storedOpts, ts, ts).Scan(&d.ID)
		if err != nil {
			return dbErr(err, "take queue slot")
		}
		res.Draft = d
		return nil
	})
	if err != nil {
		return nil, err
	}
	if res.DryRun {
		return res, nil
	}
	if c.ComposerMode() {
		res.Note = "placed in the queue; when its slot comes the publisher sends it through the gateway, which queues it for approval in composer mode"
	} else {
		res.Note = "placed in the queue; `tuitbot run` posts it through the gateway when its slot comes"
	}
	return res, nil
}

// lastQueued is the latest slot held in the queue (zero when none),
// leaving out draft skip.
func (c *Composer) lastQueued(ctx context.Context, tx *sql.Tx, skip int64) (time.Time, error) {
	var last sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT MAX(queue_slot) FROM drafts WHERE account_id = ? AND queue_slot IS NOT NULL AND id != ? AND `+bookedWhere,
		c.account(), skip).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, dbErr(err, "read the queue's end")
	}
	if !last.Valid {
		return time.Time{}, nil
	}
	t, err := store.ParseTime(last.String)
	return t, dbErr(err, "read the queue's end")
}
