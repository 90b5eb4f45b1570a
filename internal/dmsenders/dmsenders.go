// Package dmsenders keeps, per account, the users who sent the account a
// direct message first. X's developer guidelines allow an automated DM
// "only after the user DMs you first": the X client records here the
// senders of every DM event list it reads, and the automation rules ask
// here before an automated DM, so that what one process read holds for
// every process of the home and after a restart.
package dmsenders

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Store is one account's DM senders.
type Store struct {
	DB        *store.DB
	AccountID string
	Now       func() time.Time
}

// Sender is one user who sent the account a DM.
type Sender struct {
	UserID string `json:"user_id"`
	// DMEventID is the first message of theirs tuitbot read, FirstSeenAt
	// when it read it.
	DMEventID   string `json:"dm_event_id"`
	FirstSeenAt string `json:"first_seen_at"`
}

// RecordDMSenders records users as having sent the account a DM. A user
// already recorded keeps their first row. The caller leaves out the
// account's own messages (xapi does).
func (s Store) RecordDMSenders(ctx context.Context, senders []xapi.DMSender) error {
	if len(senders) == 0 {
		return nil
	}
	at := store.FormatTime(s.now())
	for _, snd := range senders {
		if snd.UserID == "" || snd.EventID == "" {
			continue
		}
		if _, err := s.DB.ExecContext(ctx, `INSERT INTO dm_senders (account_id, user_id, dm_event_id, first_seen_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (account_id, user_id) DO NOTHING`, s.AccountID, snd.UserID, snd.EventID, at); err != nil {
			return err
		}
	}
	return nil
}

// Wrote reports whether user (an X user id) sent the account a DM that
// tuitbot read.
func (s Store) Wrote(ctx context.Context, user string) (bool, error) {
	user = strings.TrimSpace(user)
	if user == "" {
		return false, nil
	}
	var one int
	err := s.DB.QueryRowContext(ctx, `SELECT 1 FROM dm_senders WHERE account_id = ? AND user_id = ?`, s.AccountID, user).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Get returns the row of user, or false when they are not recorded.
func (s Store) Get(ctx context.Context, user string) (Sender, bool, error) {
	var out Sender
	err := s.DB.QueryRowContext(ctx, `SELECT user_id, dm_event_id, first_seen_at FROM dm_senders WHERE account_id = ? AND user_id = ?`,
		s.AccountID, user).Scan(&out.UserID, &out.DMEventID, &out.FirstSeenAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Sender{}, false, nil
	}
	return out, err == nil, err
}

func (s Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
