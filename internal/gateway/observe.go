package gateway

import (
	"context"
	"database/sql"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// Decision outcomes reported to Options.OnDecision.
const (
	DecisionAllowed   = "allowed"
	DecisionRouted    = "routed"
	DecisionDenied    = "denied"
	DecisionDryRun    = "dry_run"
	DecisionDuplicate = "duplicate"
	// DecisionUnknown is an allowed call whose effect on X is unknown.
	DecisionUnknown = "unknown"
)

// decisionOf names what the gateway decided for a call that ended with
// resp and err; ok is false when the call ended before a decision (invalid
// parameters, no database, a cancelled wait).
func decisionOf(resp Response, err error) (string, bool) {
	if err == nil {
		switch resp.Kind {
		case Executed:
			if resp.Unknown {
				return DecisionUnknown, true
			}
			return DecisionAllowed, true
		case Routed:
			return DecisionRouted, true
		case DryRun:
			return DecisionDryRun, true
		case Duplicate:
			return DecisionDuplicate, true
		}
		return "", false
	}
	e := apperr.As(err)
	switch {
	case e.Extra["policy_decision"] == "denied":
		return DecisionDenied, true
	case e.Code == apperr.XOutcomeUnknown:
		return DecisionUnknown, true
	case e.Code == apperr.OutcomeUnverified:
		// An identical call's outcome is unknown: this one is blocked as
		// its repeat.
		return DecisionDuplicate, true
	case e.Extra["correlation_id"] != nil:
		// Allowed and sent; X refused it or it failed cleanly.
		return DecisionAllowed, true
	}
	return "", false
}

// observe reports a call's decision to Options.OnDecision.
func (g *Gateway) observe(resp Response, err error) {
	if g.opts.OnDecision == nil {
		return
	}
	if d, ok := decisionOf(resp, err); ok {
		g.opts.OnDecision(d)
	}
}

// PendingSummary counts the account's pending approval items and returns
// when the oldest of them was queued (zero when there is none).
func PendingSummary(ctx context.Context, db rowReader, account string, now time.Time) (int, time.Time, error) {
	var (
		n      int
		oldest sql.NullString
	)
	err := db.QueryRowContext(ctx, `SELECT count(*), min(created_at) FROM approval_queue
		WHERE account_id = ? AND status = 'pending' AND expires_at > ?`, account, ts(now)).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, apperr.Wrap(apperr.DBError, err, "count approvals: %v", err)
	}
	if !oldest.Valid || oldest.String == "" {
		return n, time.Time{}, nil
	}
	t, err := store.ParseTime(oldest.String)
	if err != nil {
		return 0, time.Time{}, apperr.Wrap(apperr.DBError, err, "approval queue time %q: %v", oldest.String, err)
	}
	return n, t, nil
}
