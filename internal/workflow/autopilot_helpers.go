package workflow

import (
	"context"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// ReplyTarget is a post the autopilot answers. Unlike Propose's candidates
// it need not be in the discovery feed: mentions and target accounts' posts
// never are.
type ReplyTarget struct {
	TweetID        string
	AuthorID       string
	AuthorUsername string
}

// SendReply sends text, already drafted by the caller (so the caller could
// decide on it first), as a reply to t through the gateway with the
// Replier's caller and loop. The text must pass CheckReply against recent
// (length, banned phrases, similarity) or nothing is sent and the outcome is
// blocked. When X took the reply, its replies_sent row learns the author, the
// caller and whether it mentions the product, which the per-author limit and
// the product-mention ratio read.
//
// notBefore is the earliest the reply may reach X (gateway.Call.NotBefore):
// sooner, nothing is sent or recorded and the error is a
// *gateway.PacedError, while a reply the policy queues for approval is
// queued at once.
//
// The error is the gateway's, returned beside the outcome so the caller can
// read its code and extras (retry_after_ms) for retry and circuit-breaker
// decisions; it is nil for blocked outcomes.
func (r *Replier) SendReply(ctx context.Context, t ReplyTarget, text string, mentionsProduct bool, recent []string, notBefore time.Time) (ProposeOutcome, error) {
	if err := actions.CheckID("tweet_id", t.TweetID); err != nil {
		return blocked(t.TweetID, err), nil
	}
	if err := CheckReply(text, r.BannedPhrases, recent); err != nil {
		o := blocked(t.TweetID, err)
		o.Text = text
		return o, nil
	}
	resp, err := r.Gateway.Do(ctx, gateway.Call{Tool: "x_reply_to_tweet", Caller: r.callerOr(), Loop: r.Loop,
		Params: actions.PostParams{Text: text, InReplyToID: t.TweetID}, NotBefore: notBefore})
	o := ProposeOutcome{CandidateID: t.TweetID, Text: text, CorrelationID: resp.CorrelationID}
	if err != nil {
		e := apperr.As(err)
		o.Status, o.ErrorCode, o.Reason = "error", string(e.Code), e.Message
		return o, err
	}
	switch resp.Kind {
	case gateway.Routed:
		o.Status, o.ApprovalQueueID = "queued", resp.ApprovalID
	case gateway.Executed:
		o.Status = "executed"
		if p, ok := resp.Result.(actions.PostedTweet); ok {
			o.ReplyTweetID = p.ID
		}
		if o.ReplyTweetID != "" {
			mention := 0
			if mentionsProduct {
				mention = 1
			}
			// Best effort like recordAuthor: the reply is already on X and in
			// the audit; this only enriches the local row.
			_, _ = r.DB.ExecContext(ctx, `UPDATE replies_sent SET author_id = ?, author_username = ?, caller = ?, mentions_product = ?
				WHERE account_id = ? AND reply_tweet_id = ?`, t.AuthorID, t.AuthorUsername, r.callerOr(), mention, r.account(), o.ReplyTweetID)
		}
	case gateway.Duplicate:
		o.Status = "duplicate"
	case gateway.DryRun:
		o.Status = "dry_run"
	}
	return o, nil
}
