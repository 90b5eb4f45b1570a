package autopilot

import (
	"encoding/json"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// Action kinds and statuses in autopilot_actions.
const (
	kindReply  = "reply"
	kindTweet  = "tweet"
	kindThread = "thread"
	// kindRetweet is a recycled evergreen post, reposted.
	kindRetweet = "retweet"

	statusPosted    = "posted"    // X took it
	statusQueued    = "queued"    // waiting in the approval queue
	statusBlocked   = "blocked"   // a safety check refused the text; never retried
	statusDuplicate = "duplicate" // the gateway had already done it
	statusDryRun    = "dry_run"
	statusUnknown   = "unknown" // the outcome on X is uncertain; never retried
	statusFailed    = "failed"  // nothing happened; may be retried
	statusDenied    = "denied"  // the policy refused it; may be retried
	// statusSuggested is a reply handed to a person (a hand-off): the API
	// may not send it. Never suggested again; not a reply of the account's.
	statusSuggested = "suggested"
)

// action is one row of the autopilot's ledger.
type action struct {
	Loop, Kind               string
	TargetTweetID            string
	AuthorID, AuthorUsername string
	Content, Topic           string
	MentionsProduct          bool
	Status                   string
	ApprovalID               int64
	CorrelationID, TweetID   string
	ErrorCode, Reason        string
}

// statusOfErr maps a gateway error to a ledger status.
func statusOfErr(err error) string {
	switch c := apperr.CodeOf(err); {
	case c == apperr.XOutcomeUnknown, c == apperr.OutcomeUnverified, c == apperr.MutationInFlight,
		c == apperr.ThreadPartial, c == apperr.IdempotencyConflict:
		return statusUnknown
	case isPolicyDenial(c):
		return statusDenied
	}
	return statusFailed
}

// applyResponse fills a's outcome from the gateway's answer.
func applyResponse(a *action, resp gateway.Response, err error) {
	a.CorrelationID = resp.CorrelationID
	if err != nil {
		e := apperr.As(err)
		a.Status, a.ErrorCode, a.Reason = statusOfErr(err), string(e.Code), e.Message
		return
	}
	switch resp.Kind {
	case gateway.Executed:
		a.Status = statusPosted
		if resp.Unknown {
			a.Status = statusUnknown
		}
		switch d := resp.Result.(type) {
		case actions.PostedTweet:
			a.TweetID = d.ID
		case actions.PostedThread:
			a.TweetID = d.RootTweetID
		}
	case gateway.Routed:
		a.Status, a.ApprovalID = statusQueued, resp.ApprovalID
	case gateway.Duplicate:
		a.Status = statusDuplicate
	case gateway.DryRun:
		a.Status = statusDryRun
	}
}

// record writes the ledger row and an action_log line, and counts the
// outcome in the iteration's result.
func (it *iter) record(a action) error {
	r := it.r
	now := r.now()
	mention := 0
	if a.MentionsProduct {
		mention = 1
	}
	var approval any
	if a.ApprovalID != 0 {
		approval = a.ApprovalID
	}
	ctx := it.work
	_, err := r.d.DB.ExecContext(ctx, `INSERT INTO autopilot_actions (account_id, loop_name, kind, target_tweet_id, author_id,
		author_username, content, topic, mentions_product, status, approval_id, correlation_id, tweet_id, error_code, reason, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.d.AccountID, a.Loop, a.Kind, a.TargetTweetID, a.AuthorID, a.AuthorUsername, a.Content, a.Topic, mention, a.Status,
		approval, a.CorrelationID, a.TweetID, a.ErrorCode, tweettext.TruncateRunes(a.Reason, 500), ts(now))
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "record autopilot action: %v", err)
	}
	meta, _ := json.Marshal(map[string]any{
		"loop": a.Loop, "target_tweet_id": a.TargetTweetID, "tweet_id": a.TweetID, "approval_queue_id": a.ApprovalID,
		"correlation_id": a.CorrelationID, "error_code": a.ErrorCode,
	})
	msg := a.Reason
	if msg == "" {
		msg = a.Kind + " " + a.Status
	}
	_ = gateway.LogAction(ctx, r.d.DB, r.d.AccountID, a.Loop+"_"+a.Kind, a.Status, tweettext.TruncateRunes(msg, 500), string(meta), now)
	switch a.Status {
	case statusPosted:
		it.res.Posted++
	case statusQueued:
		it.res.Queued++
	case statusBlocked:
		it.res.Blocked++
	}
	r.log.Info("autopilot action", "loop", a.Loop, "kind", a.Kind, "status", a.Status, "target", a.TargetTweetID,
		"tweet_id", a.TweetID, "approval_id", a.ApprovalID, "reason", a.Reason)
	return nil
}

// blockedAction records a text a safety check refused.
func (it *iter) blockedAction(a action, reason string) error {
	a.Status, a.Reason = statusBlocked, reason
	return it.record(a)
}

// reachedX reports whether a post went to X, or may have: what the pause
// between posts is kept for.
func reachedX(a action) bool {
	switch a.Status {
	case statusPosted, statusUnknown:
		return true
	case statusFailed:
		// Sent, and X refused it or failed.
		return a.CorrelationID != ""
	}
	return false
}

// sendPost runs a tweet or thread through the gateway, paced, and records
// it. ok is false when the runner stopped before it was sent: nothing was
// recorded.
func (it *iter) sendPost(call gateway.Call, a action) (action, bool, error) {
	call.Caller, call.Loop = Caller, it.loop
	base := a
	ok, err := it.paced(func(notBefore time.Time) (bool, error) {
		call.NotBefore = notBefore
		resp, err := it.r.d.Gateway.Do(it.work, call)
		a = base
		applyResponse(&a, resp, err)
		return reachedX(a), err
	})
	if !ok {
		return base, false, nil
	}
	if rerr := it.record(a); rerr != nil && err == nil {
		err = rerr
	}
	return a, true, err
}
