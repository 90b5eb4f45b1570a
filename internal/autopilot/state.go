package autopilot

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// Loop states as stored in loop_state.state and shown by status.
const (
	StateIdle         = "idle"          // waiting for its next run
	StateRunning      = "running"       // an iteration is in progress
	StateError        = "error"         // the last run failed; the breaker is still closed
	StatePaused       = "paused"        // the circuit breaker is open
	StateRateLimited  = "rate_limited"  // waiting for X's (or the policy's) rate-limit reset
	StateOutsideHours = "outside_hours" // waiting for the active hours
	StateStopped      = "stopped"       // X rejected the token; needs `tuitbot auth`
	StateBlocked      = "blocked"       // cannot work until configured (no LLM, no keywords)
	StateHeld         = "held"          // a person paused the loop; it waits until resumed
)

// loopState is one loop's persisted scheduling and breaker state.
type loopState struct {
	Name              string
	LastRun           time.Time
	NextRun           time.Time
	PausedUntil       time.Time
	BreakerOpenedAt   time.Time
	ConsecutiveErrors int
	Runs              int
	Errors            int
	LastError         string
	LastResult        string
	State             string
}

func parseTS(s sql.NullString) time.Time {
	if !s.Valid || s.String == "" {
		return time.Time{}
	}
	t, err := store.ParseTime(s.String)
	if err != nil {
		return time.Time{}
	}
	return t
}

func nullTS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ts(t)
}

// readState reads one loop's row; a loop that never ran has a zero state.
func readState(ctx context.Context, db *store.DB, account, name string) (*loopState, error) {
	st := &loopState{Name: name, State: StateIdle}
	var last, next, paused, opened sql.NullString
	err := db.QueryRowContext(ctx, `SELECT last_run, next_run, paused_until, breaker_opened_at, consecutive_errors, runs, errors,
		last_error, last_result, state FROM loop_state WHERE account_id = ? AND name = ?`, account, name).
		Scan(&last, &next, &paused, &opened, &st.ConsecutiveErrors, &st.Runs, &st.Errors, &st.LastError, &st.LastResult, &st.State)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read loop state %s: %v", name, err)
	}
	st.LastRun, st.NextRun, st.PausedUntil, st.BreakerOpenedAt = parseTS(last), parseTS(next), parseTS(paused), parseTS(opened)
	return st, nil
}

func (r *Runner) loadState(ctx context.Context) error {
	for _, n := range r.loops {
		st, err := readState(ctx, r.d.DB, r.d.AccountID, n)
		if err != nil {
			return err
		}
		r.state[n] = st
	}
	return nil
}

func (r *Runner) saveState(ctx context.Context, st *loopState) error {
	_, err := r.d.DB.ExecContext(ctx, `INSERT INTO loop_state (account_id, name, last_run, next_run, consecutive_errors, paused_until,
		last_error, state, last_result, runs, errors, breaker_opened_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(account_id, name) DO UPDATE SET last_run = excluded.last_run, next_run = excluded.next_run,
		consecutive_errors = excluded.consecutive_errors, paused_until = excluded.paused_until, last_error = excluded.last_error,
		state = CASE WHEN loop_state.state = 'held' THEN 'held' ELSE excluded.state END, last_result = excluded.last_result, runs = excluded.runs, errors = excluded.errors,
		breaker_opened_at = excluded.breaker_opened_at`,
		r.d.AccountID, st.Name, nullTS(st.LastRun), nullTS(st.NextRun), st.ConsecutiveErrors, nullTS(st.PausedUntil),
		st.LastError, st.State, st.LastResult, st.Runs, st.Errors, nullTS(st.BreakerOpenedAt))
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "save loop state %s: %v", st.Name, err)
	}
	return nil
}

// breakerState describes the breaker: closed, open (the loop is paused) or
// half-open (the next run is a probe that closes it on success).
func breakerState(st *loopState, threshold int, now time.Time) string {
	switch {
	case threshold <= 0 || st.ConsecutiveErrors < threshold:
		return "closed"
	case st.PausedUntil.After(now):
		return "open"
	default:
		return "half-open"
	}
}

// Hold pauses (held) or resumes a loop for a person. The hold is stored,
// so a runner in another process sees it before its next iteration of the
// loop, and an iteration already running cannot undo it when it finishes.
func (r *Runner) Hold(ctx context.Context, loop string, held bool) error {
	if _, err := ParseLoop(loop); err != nil {
		return err
	}
	st, err := readState(ctx, r.d.DB, r.d.AccountID, loop)
	if err != nil {
		return err
	}
	if held {
		st.State = StateHeld
	} else {
		if st.State != StateHeld {
			return nil
		}
		st.State = StateIdle
	}
	// The column keeps a hold against ordinary saves; resuming writes
	// the new state directly.
	if _, err := r.d.DB.ExecContext(ctx, `INSERT INTO loop_state (account_id, name, state) VALUES (?, ?, ?)
		ON CONFLICT(account_id, name) DO UPDATE SET state = excluded.state`, r.d.AccountID, loop, st.State); err != nil {
		return apperr.Wrap(apperr.DBError, err, "save loop state %s: %v", loop, err)
	}
	if mem, ok := r.state[loop]; ok {
		mem.State = st.State
	}
	return nil
}

// held reports whether a person paused the loop (read from the database:
// the hold may come from another process).
func (r *Runner) held(ctx context.Context, loop string) (bool, error) {
	st, err := readState(ctx, r.d.DB, r.d.AccountID, loop)
	if err != nil {
		return false, err
	}
	return st.State == StateHeld, nil
}
