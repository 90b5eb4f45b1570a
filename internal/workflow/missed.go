package workflow

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/store"
)

// Moved is a scheduled item whose time passed while nothing published it
// (the process was down) and that was moved: to the next free queue slot,
// or, for an occurrence of a recurring post with no free slot to go to,
// back to the drafts (To empty) for a person to schedule.
type Moved struct {
	DraftID     int64
	ContentType string
	Text        string
	// From is the time it missed, To the slot it holds now; To is empty
	// when it went back to the drafts.
	From, To string
	// Recurring is the recurring post the item is an occurrence of, and
	// Occurrence the time it was made for.
	Recurring  int64
	Occurrence string
}

// MoveNotifier hears of each move inside the transaction that makes it,
// so the notice is recorded exactly when the move is: once, whichever
// process moved it.
type MoveNotifier interface {
	Rescheduled(ctx context.Context, tx *sql.Tx, account string, m Moved) error
}

// RescheduleMissed applies late_grace_minutes to the account's queue and
// recurring posts: an item whose time is more than grace in the past moves
// to the next free queue slot (never onto a taken one), and s.Moves hears
// of it. Items still within the grace are left for the publisher, which
// posts them late. Other items scheduled at a chosen time are not moved.
// A queued item with no free slot to go to stays and publishes late; an
// occurrence of a recurring post goes back to the drafts instead, since it
// was meant for its own time and a person should choose another, and so
// does one whose free slot is not before the rule's next occurrence.
func (s *Service) RescheduleMissed(ctx context.Context, p queue.Policy, grace time.Duration) ([]Moved, error) {
	now := s.Now()
	cutoff := s.ts(now.Add(-grace))
	var moved []Moved
	err := s.DB.LockedTx(ctx, []string{store.AccountScope(s.account())}, func(tx *sql.Tx) error {
		moved = moved[:0]
		rows, err := tx.QueryContext(ctx, `SELECT id, content_type, content, scheduled_for, COALESCE(recurring_id, 0), COALESCE(occurrence_at, '') FROM drafts
			WHERE account_id = ? AND status = ? AND (queue_slot IS NOT NULL OR recurring_id IS NOT NULL) AND scheduled_for < ? ORDER BY scheduled_for, id`,
			s.account(), DraftScheduled, cutoff)
		if err != nil {
			return dbErr(err, "read missed queue slots")
		}
		var late []Moved
		for rows.Next() {
			var m Moved
			if err := rows.Scan(&m.DraftID, &m.ContentType, &m.Text, &m.From, &m.Recurring, &m.Occurrence); err != nil {
				rows.Close()
				return dbErr(err, "read missed queue slots")
			}
			late = append(late, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return dbErr(err, "read missed queue slots")
		}
		full := len(p.Rules) == 0
		for _, m := range late {
			var slot time.Time
			if !full {
				// Each move is written before the next slot is looked for,
				// so the bookings read inside this transaction include it.
				slots, err := s.freeSlots(ctx, tx, p, now.Add(time.Nanosecond), 1, m.DraftID)
				switch {
				case apperr.CodeOf(err) == apperr.QueueFull:
					full = true
				case err != nil:
					return err
				default:
					slot, m.To = slots[0], s.ts(slots[0])
				}
			}
			if m.To != "" && m.Recurring != 0 {
				// An occurrence never posts after the rule's next one: after
				// a long outage only the latest missed one takes a slot, and
				// the older ones wait in the drafts.
				next, err := s.nextOccurrence(ctx, tx, p.Loc, m.Recurring, m.Occurrence)
				if err != nil {
					return err
				}
				if !next.IsZero() && !slot.Before(next) {
					m.To = ""
				}
			}
			if m.To == "" && m.Recurring == 0 {
				// No slot to move to: a queued item stays and publishes late.
				continue
			}
			var res sql.Result
			if m.To != "" {
				res, err = tx.ExecContext(ctx, `UPDATE drafts SET scheduled_for = ?, queue_slot = ?, updated_at = ? WHERE id = ? AND account_id = ? AND status = ? AND scheduled_for = ?`,
					m.To, m.To, s.ts(now), m.DraftID, s.account(), DraftScheduled, m.From)
			} else {
				res, err = tx.ExecContext(ctx, `UPDATE drafts SET status = 'draft', scheduled_for = NULL, queue_slot = NULL, updated_at = ? WHERE id = ? AND account_id = ? AND status = ? AND scheduled_for = ?`,
					s.ts(now), m.DraftID, s.account(), DraftScheduled, m.From)
			}
			if err != nil {
				return dbErr(err, "move missed item")
			}
			if n, _ := res.RowsAffected(); n != 1 {
				continue
			}
			if m.ContentType == "thread" {
				var tweets []string
				if json.Unmarshal([]byte(m.Text), &tweets) == nil {
					m.Text = strings.Join(tweets, "\n\n")
				}
			}
			if s.Moves != nil {
				if err := s.Moves.Rescheduled(ctx, tx, s.account(), m); err != nil {
					return apperr.Wrap(apperr.DBError, err, "record publish.rescheduled: %v", err)
				}
			}
			moved = append(moved, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return moved, nil
}
