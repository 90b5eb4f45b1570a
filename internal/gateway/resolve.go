package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// An unknown or interrupted attempt may or may not have reached X. Until
// someone resolves it, identical repeats are refused, however much time
// passes: a window that lifted the block would let a repeat post a second
// copy. A resolution says which it was; happened then counts as a success
// for duplicate checks and did_not_happen releases the block.

// Resolutions.
const (
	ResolvedHappened     = "happened"
	ResolvedDidNotHappen = "did_not_happen"
)

// Who resolved an outcome.
const (
	ResolvedByCLI  = "cli"
	ResolvedByMCP  = "mcp"
	ResolvedByWeb  = "web"  // the local review page (tuitbot web)
	ResolvedByAuto = "auto" // tuitbot read X and found the effect
)

// Resolve records how an unknown or interrupted attempt ended. by names
// who decided (cli, mcp or web; auto is reserved for what tuitbot verified
// on X itself).
func (g *Gateway) Resolve(ctx context.Context, corr, resolution, by string) (*AuditEntry, error) {
	switch by {
	case ResolvedByCLI, ResolvedByMCP, ResolvedByWeb:
	default:
		return nil, apperr.New(apperr.InvalidInput, "resolved_by: %q is not allowed; allowed values: cli, mcp, web", by)
	}
	return g.resolve(ctx, corr, resolution, by, nil)
}

func (g *Gateway) resolve(ctx context.Context, corr, resolution, by string, data any) (*AuditEntry, error) {
	if corr == "" {
		return nil, apperr.New(apperr.InvalidInput, "correlation_id: required")
	}
	if resolution != ResolvedHappened && resolution != ResolvedDidNotHappen {
		return nil, apperr.New(apperr.InvalidInput, "resolution: %q is not allowed; allowed values: happened, did_not_happen", resolution)
	}
	var result, summary sql.NullString
	if data != nil {
		if b, err := json.Marshal(data); err == nil {
			result = sql.NullString{String: tweettext.TruncateBytes(string(b), maxResultBytes), Valid: true}
			summary = sql.NullString{String: tweettext.TruncateBytes(string(b), maxSummaryBytes), Valid: true}
		}
	}
	// What tuitbot found on X replaces the uncertain answer as the result a
	// duplicate returns; a human's word leaves the stored result alone.
	res, err := g.opts.DB.ExecContext(ctx, `UPDATE mutation_audit SET resolution = ?, resolved_by = ?, resolved_at = ?,
		result_json = COALESCE(?, result_json), result_summary = COALESCE(?, result_summary)
		WHERE correlation_id = ? AND account_id = ? AND status IN ('unknown', 'interrupted') AND resolution IS NULL`,
		resolution, by, ts(g.opts.Now()), result, summary, corr, g.opts.AccountID)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "resolve mutation: %v", err)
	}
	e, err := g.Detail(ctx, corr)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		if e.Resolution != "" {
			return nil, apperr.New(apperr.ValidationError, "mutation %s was already resolved as %s by %s at %s", corr, e.Resolution, e.ResolvedBy, e.ResolvedAt)
		}
		return nil, apperr.New(apperr.ValidationError, "mutation %s is %s: only an unknown or interrupted outcome is resolved", corr, e.Status)
	}
	// This process may still remember the unknown answer for identical
	// calls; the resolution decides from now on.
	g.memo.forget(e.IntentKey)
	return e, nil
}

// runVerified runs the call and, when an earlier identical attempt with an
// unknown outcome blocks it, lets the action look on X: found there, the
// attempt is resolved as happened (by auto) and the call answers as a
// duplicate of it. Not found is no proof of anything, so the block stays.
func (g *Gateway) runVerified(ctx context.Context, act *Action, c Call, params json.RawMessage, id identity) (Response, error) {
	resp, err := g.run(ctx, act, c, params, id)
	var ae *apperr.Error
	if err == nil || act.Verify == nil || !errors.As(err, &ae) || ae.Code != apperr.OutcomeUnverified {
		return resp, err
	}
	corr, _ := ae.Extra["original_correlation_id"].(string)
	if _, blocked := ae.Extra["original_status"]; !blocked || corr == "" {
		return resp, err
	}
	data, found, verr := act.Verify(ctx, params)
	if verr != nil {
		g.opts.Logger.Warn("could not verify an unknown outcome on X", "correlation_id", corr, "error", verr)
		return resp, err
	}
	if !found {
		return resp, err
	}
	if _, rerr := g.resolve(ctx, corr, ResolvedHappened, ResolvedByAuto, data); rerr != nil {
		// Another caller may have resolved it a moment ago; the next run
		// reads whatever stands now.
		g.opts.Logger.Info("unknown outcome not resolved automatically", "correlation_id", corr, "error", rerr)
	}
	return g.run(ctx, act, c, params, id)
}

// forget drops what this process remembers about an identical call.
func (m *memo) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.slots[key]; ok && !s.expires.IsZero() {
		delete(m.slots, key)
	}
}
