// Package optouts keeps the account's suppression list: the users who told
// the account to stop (X's developer guidelines: "If a user says 'stop,'
// stop"). Whoever reads what users write to the account records opt-outs
// here; the automation rules ask it before any automated reply, @mention
// or DM; only a person clears a row.
package optouts

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// OptOut is one suppressed user.
type OptOut struct {
	UserID   string `json:"user_id"`
	Username string `json:"username,omitempty"`
	// Phrase is the opt-out phrase found, SourceID the mention or DM it
	// was found in and Text what that message said.
	Phrase    string `json:"phrase"`
	SourceID  string `json:"source_id,omitempty"`
	Text      string `json:"text,omitempty"`
	CreatedAt string `json:"created_at"`
}

// Store is one account's suppression list.
type Store struct {
	DB        *store.DB
	AccountID string
	Now       func() time.Time
	// Phrases are x_api.opt_out_phrases; empty means
	// xrules.DefaultOptOutPhrases.
	Phrases []string
}

// Message is what a user wrote to the account: a mention, a reply or a DM.
type Message struct {
	ID, AuthorID, AuthorUsername, Text string
}

// Record puts the author of m on the suppression list when m says an
// opt-out phrase, and reports whether it did. A user already on the list
// keeps their first row. The account's own messages are never recorded.
func (s Store) Record(ctx context.Context, m Message) (bool, error) {
	if m.AuthorID == "" {
		return false, nil
	}
	phrase, ok := xrules.SaysOptOut(m.Text, s.Phrases)
	if !ok {
		return false, nil
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO opt_outs (account_id, user_id, username, phrase, source_id, text, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, user_id) DO NOTHING`,
		s.AccountID, m.AuthorID, strings.ToLower(strings.TrimPrefix(m.AuthorUsername, "@")), phrase, m.ID, m.Text, store.FormatTime(s.now()))
	if err != nil {
		return false, err
	}
	return true, nil
}

func (s Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// OptedOut reports whether user, an X user id or a username (with or
// without its @, any case), is on the suppression list.
func (s Store) OptedOut(ctx context.Context, user string) (bool, error) {
	user = strings.TrimPrefix(strings.TrimSpace(user), "@")
	if user == "" {
		return false, nil
	}
	var one int
	err := s.DB.QueryRowContext(ctx, `SELECT 1 FROM opt_outs WHERE account_id = ? AND (user_id = ? OR username = ?)`,
		s.AccountID, user, strings.ToLower(user)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// List returns the suppression list, oldest first.
func (s Store) List(ctx context.Context) ([]OptOut, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT user_id, username, phrase, source_id, text, created_at FROM opt_outs
		WHERE account_id = ? ORDER BY created_at, user_id`, s.AccountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []OptOut{}
	for rows.Next() {
		var o OptOut
		if err := rows.Scan(&o.UserID, &o.Username, &o.Phrase, &o.SourceID, &o.Text, &o.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// Clear takes user (an id or a username) off the suppression list and
// reports whether it was on it.
func (s Store) Clear(ctx context.Context, user string) (bool, error) {
	user = strings.TrimPrefix(strings.TrimSpace(user), "@")
	if user == "" {
		return false, nil
	}
	res, err := s.DB.ExecContext(ctx, `DELETE FROM opt_outs WHERE account_id = ? AND (user_id = ? OR username = ?)`,
		s.AccountID, user, strings.ToLower(user))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
