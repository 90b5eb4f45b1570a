// Package workflow holds the agent workflow operations behind the MCP
// workflow tools: analytics over the local ledgers, target accounts, author
// context, drafts and composing, and the reply pipeline. Every side effect
// on X goes through the gateway.
package workflow

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Service runs the workflow operations for one account.
type Service struct {
	DB        *store.DB
	X         func() (*xapi.Client, error)
	AccountID string
	Now       func() time.Time
	// Discovery is what the searches found: the reply pipeline picks
	// candidates there, and author context counts an author's posts.
	Discovery *discovery.Service
	// PostLimit tells how long the account's posts may be; nil allows
	// ordinary posts only.
	PostLimit actions.PostLimiter
	// Moves hears of queued items moved off a missed slot (nil: no one).
	Moves MoveNotifier
}

func (s *Service) account() string {
	if s.AccountID == "" {
		return "default"
	}
	return s.AccountID
}

func (s *Service) ts(t time.Time) string { return store.FormatTime(t) }

func dbErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae
	}
	return apperr.Wrap(apperr.DBError, err, "%s: %v", what, err)
}

func (s *Service) count(ctx context.Context, q string, args ...any) (int, error) {
	var n int
	err := s.DB.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}

func (s *Service) float(ctx context.Context, q string, args ...any) (float64, error) {
	var f sql.NullFloat64
	err := s.DB.QueryRowContext(ctx, q, args...).Scan(&f)
	return f.Float64, err
}

// dayStart is the start of the UTC day of t.
func dayStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}
