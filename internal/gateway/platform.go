package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// Platform judges a call against what X lets the account's app do at all
// (its API access level), before the policy is asked: a call X would
// refuse must not wait for a person's approval first. An error refuses
// the call (see Options.Platform).
type Platform interface {
	Check(ctx context.Context, c xrules.Call) error
}

// platformCall is what the platform rules see of a call: the typed tool
// whose effect it has, whatever tool spelled it, and the post, user and
// text it names.
func platformCall(act *Action, params json.RawMessage, equiv string) xrules.Call {
	c := xrules.Call{Effect: act.Tool}
	if act.Equivalent != nil {
		c.Effect = equiv
	}
	material := params
	if act.Intent != nil {
		if effect, m, ok := act.Intent(params); ok {
			c.Effect, material = effect, m
		} else {
			material = nil
		}
	}
	var m struct {
		Text          string   `json:"text"`
		InReplyToID   string   `json:"in_reply_to_id"`
		QuotedTweetID string   `json:"quoted_tweet_id"`
		TweetID       string   `json:"tweet_id"`
		TargetUserID  string   `json:"target_user_id"`
		ParticipantID string   `json:"participant_id"`
		Tweets        []string `json:"tweets"`
	}
	if material != nil {
		_ = json.Unmarshal(material, &m)
	}
	c.Text, c.TargetUser, c.QuoteOf, c.Thread = m.Text, m.TargetUserID, m.QuotedTweetID, m.Tweets
	if c.TargetUser == "" {
		c.TargetUser = m.ParticipantID
	}
	switch {
	case m.InReplyToID != "":
		c.TweetID = m.InReplyToID
	case m.QuotedTweetID != "":
		c.TweetID = m.QuotedTweetID
	default:
		c.TweetID = m.TweetID
	}
	if c.TweetID == "" && act.Target != nil {
		// A spelling whose intent is not readable (a body field no typed
		// tool sends) still names the post it acts on.
		c.TweetID = act.Target(params)
	}
	return c
}

// checkPlatform runs the platform rules for every call, the replay of an
// approved item included (the access level may have changed since it was
// queued). A refusal reaches neither the policy nor X: it is recorded as a
// failed audit row with its code and an action log line, and nothing is
// charged against any limit. A rule that lets only a person decide the
// call returns the decision that queues it, which the policy's own cannot
// loosen.
func (g *Gateway) checkPlatform(ctx context.Context, act *Action, c Call, params json.RawMessage, id identity, cat policy.Category, equiv string) (*policy.Decision, error) {
	if g.opts.Platform == nil {
		return nil, nil
	}
	pc := platformCall(act, params, equiv)
	pc.Caller = callerOf(c)
	if pc.Effect == "x_reply_to_tweet" && pc.TweetID != "" {
		replied, err := g.repliedTo(ctx, pc.TweetID, id, c.IdempotencyKey)
		if err != nil {
			return nil, err
		}
		pc.Replied = replied
	}
	err := g.opts.Platform.Check(ctx, pc)
	if err == nil {
		return nil, nil
	}
	if route, ok := xrules.AsToPerson(err); ok {
		if route.PersonOnly && c.approvalID != 0 && c.decidedBy == AgentReviewer {
			// An agent approved what only a person may decide (Approve
			// refuses that first, unless the item changed in between).
			return nil, agentDecided(c.approvalID, route)
		}
		return &policy.Decision{Outcome: policy.RequireApproval, RuleID: route.RuleID(), Reason: route.Reason, Source: "x_rules"}, nil
	}
	refusal := apperr.As(err)
	if !RefusedBeforeX(refusal.Code) {
		// Finding out failed (X unreachable while reading the post
		// replied to): the call is not attempted, and nothing is recorded.
		return nil, refusal
	}
	if pc.Effect == "x_follow_user" && g.opts.IntentBase != nil && refusal.Code == apperr.XFeatureUnavailable {
		// The follow's hand-off links X's follow intent, which takes
		// the handle: learnt here, before the transaction.
		pc.TargetUsername = g.usernameOf(ctx, pc.TargetUser)
	}
	corr := uuid.NewString()
	now := ts(g.opts.Now())
	summary := auditSummary(act, params)
	shown := describe.RecordedOf(c.Tool, equiv, summary)
	var approval any
	if c.approvalID != 0 {
		approval = c.approvalID
	}
	row := append([]any{corr, c.IdempotencyKey, c.Tool, equiv, id.hash, id.intent, summary, g.opts.AccountID, callerOf(c), c.Loop, approval, g.instance, now,
		targetOf(act, params)}, shownColumns(shown)...)
	decision := g.decisionRow(c, cat, equiv, policy.Decision{Outcome: policy.Deny, RuleID: "x_platform", Reason: refusal.Detail(), Source: "x_platform"})
	var handOff int64
	var existing bool
	err = g.opts.DB.Tx(ctx, func(tx *sql.Tx) error {
		g.logDecision(ctx, tx, decision)
		var err error
		// The hand-off is written first so that the audit row, written
		// with it, can say so; a call already handed off and still open
		// is a plain refusal that points at it.
		if handOff, existing, err = g.handOffRefusal(ctx, tx, corr, pc, c, refusal); err != nil {
			return err
		}
		status, msg := statusFailure, refusal.Error()
		switch {
		case handOff != 0 && !existing:
			status, msg = statusHandedOff, fmt.Sprintf("%s; handed to a person as hand-off %d", msg, handOff)
		case handOff != 0:
			msg = fmt.Sprintf("%s; already handed to a person as hand-off %d", msg, handOff)
		}
		row = append(row, status, string(refusal.Code), tweettext.TruncateBytes(msg, maxSummaryBytes), now, c.decidedBy)
		_, err = tx.ExecContext(ctx, qInsertRefused, row...)
		return err
	})
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "record the refusal: %v", err)
	}
	refusal = refusal.With("correlation_id", corr).With("policy_decision", "refused_before_x")
	if handOff != 0 {
		refusal = refusal.With("handoff_id", handOff).WithHints(apperr.Hint{Do: fmt.Sprintf(
			"a person was asked to do it on x.com (hand-off %d, on the approvals page and in notifications); get_handoff with handoff_id %d says whether they did", handOff, handOff)})
	}
	return nil, refusal
}

// RefusedBeforeX reports whether code is a platform rule's settled
// refusal: recorded, final for this call, and no fault of the caller's
// process (trying it again gets the same answer).
func RefusedBeforeX(code apperr.Code) bool {
	switch code {
	case apperr.XFeatureUnavailable, apperr.ReplyNotSummoned, apperr.ReplyAlreadySent, apperr.UserOptedOut, apperr.CrossAccountDup:
		return true
	}
	return false
}

// repliedTo reports whether the account replied to post tweetID by the
// API already (or may have: a reply still pending or of unknown outcome).
// The same call again (its intent or its key) is not another reply: the
// duplicate check answers it with the first one's outcome.
func (g *Gateway) repliedTo(ctx context.Context, tweetID string, id identity, key string) (bool, error) {
	q := qRepliedByAPI
	if g.opts.DB.Dialect == store.Postgres {
		q = qRepliedByAPIPostgres
	}
	var n bool
	if err := g.opts.DB.QueryRowContext(ctx, q, g.opts.AccountID, tweetID, id.intent, key).Scan(&n); err != nil {
		return false, apperr.Wrap(apperr.DBError, err, "read the replies sent: %v", err)
	}
	return n, nil
}

// qRepliedByAPI is qRepliedTo's audit half without the call itself; an
// approval item is no reply yet (its replay is this call).
const qRepliedByAPI = `SELECT EXISTS (SELECT 1 FROM mutation_audit INDEXED BY idx_mutation_audit_target
	WHERE account_id = ?1 AND target_tweet_id = ?2 AND tool_name IN ('x_reply_to_tweet', 'x_post')
	AND status IN ('pending','success','unknown','interrupted') AND intent_key <> ?3 AND (CAST(?4 AS TEXT) = '' OR COALESCE(idempotency_key, '') <> ?4))`

const qRepliedByAPIPostgres = `SELECT EXISTS (SELECT 1 FROM mutation_audit
	WHERE account_id = ?1 AND target_tweet_id = ?2 AND tool_name IN ('x_reply_to_tweet', 'x_post')
	AND status IN ('pending','success','unknown','interrupted') AND intent_key <> ?3 AND (CAST(?4 AS TEXT) = '' OR COALESCE(idempotency_key, '') <> ?4))`

// qInsertRefused records a call refused before X: a failed row, complete
// at once, that blocks no repeat and was charged nothing.
const qInsertRefused = `INSERT INTO mutation_audit (correlation_id, idempotency_key, tool_name, equivalent_tool, params_hash, intent_key,
	params_summary, account_id, caller, loop_name, approval_id, owner, created_at, target_tweet_id,
	action_name, description, target_kind, status, error_code, error_message, elapsed_ms, completed_at, decided_by)
	VALUES (?, NULLIF(?,''), ?, NULLIF(?,''), ?, ?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?,''), ?, ?, ?, ?, NULLIF(?,''), ?, 0, ?, NULLIF(?,''))`
