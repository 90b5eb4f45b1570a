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

// Moved is a queued item whose slot passed while nothing published it
// (the process was down) and that was moved to the next free slot.
type Moved struct {
	DraftID     int64
	ContentType string
	Text        string
	// From is the slot it missed, To the one it holds now.
	From, To string
}

// MoveNotifier hears of each move inside the transaction that makes it,
// so the notice is recorded exactly when the move is: once, whichever
// process moved it.
type MoveNotifier interface {
	Rescheduled(ctx context.Context, tx *sql.Tx, account string, m Moved) error
}

// RescheduleMissed applies late_grace_minutes to the account's queue: an
// item whose slot is more than grace in the past moves to the next free
// slot (never onto a taken one), and s.Moves hears of it. Items still
// within the grace are left for the publisher, which posts them late.
// Items scheduled at a chosen time (not in a queue slot) are not moved.
// When the queue has no slots or no free slot is left the item stays and
// publishes late; the error says so.
func (s *Service) RescheduleMissed(ctx context.Context, p queue.Policy, grace time.Duration) ([]Moved, error) {
	if len(p.Rules) == 0 {
		return nil, nil
	}
	now := s.Now()
	cutoff := s.ts(now.Add(-grace))
	var moved []Moved
	err := s.DB.LockedTx(ctx, []string{store.AccountScope(s.account())}, func(tx *sql.Tx) error {
		moved = moved[:0]
		rows, err := tx.QueryContext(ctx, `SELECT id, content_type, content, scheduled_for FROM drafts
			WHERE account_id = ? AND status = ? AND queue_slot IS NOT NULL AND scheduled_for < ? ORDER BY scheduled_for, id`,
			s.account(), DraftScheduled, cutoff)
		if err != nil {
			return dbErr(err, "read missed queue slots")
		}
		var late []Moved
		for rows.Next() {
			var m Moved
			if err := rows.Scan(&m.DraftID, &m.ContentType, &m.Text, &m.From); err != nil {
				rows.Close()
				return dbErr(err, "read missed queue slots")
			}
			late = append(late, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return dbErr(err, "read missed queue slots")
		}
		for _, m := range late {
			// Each move is written before the next slot is looked for, so
			// the bookings read inside this transaction include it.
			slots, err := s.freeSlots(ctx, tx, p, now.Add(time.Nanosecond), 1, m.DraftID)
			if apperr.CodeOf(err) == apperr.QueueFull {
				// No slot to move to: the rest stay and publish late.
				return nil
			}
			if err != nil {
				return err
			}
			m.To = s.ts(slots[0])
			if _, err := tx.ExecContext(ctx, `UPDATE drafts SET scheduled_for = ?, queue_slot = ?, updated_at = ? WHERE id = ? AND account_id = ? AND status = ? AND scheduled_for = ?`,
				m.To, m.To, s.ts(now), m.DraftID, s.account(), DraftScheduled, m.From); err != nil {
				return dbErr(err, "move missed queue item")
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
