package app

import (
	"context"
	"errors"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// postLedger records what the gateway's actions posted in the ledgers
// workflow and discovery own; the actions cannot reach those packages
// themselves (workflow builds on actions).
type postLedger struct {
	wf   *workflow.Service
	disc *discovery.Service
}

var _ actions.Recorder = postLedger{}

// ReplySent keeps the reply with its target's author as discovery knows
// it, so replies that ran through approval (which knows only the call)
// still count toward per-author limits and author context, and takes the
// target out of the discovery feed. Each step is tried even when another
// fails: a reply on record matters for the caps whatever else went wrong.
func (l postLedger) ReplySent(ctx context.Context, targetTweetID, replyTweetID, text string) error {
	authors, lookupErr := l.disc.Authors(ctx, []string{targetTweetID})
	a := authors[targetTweetID]
	recordErr := l.wf.RecordReply(ctx, workflow.SentReply{TargetTweetID: targetTweetID, ReplyTweetID: replyTweetID, Content: text,
		AuthorID: a.ID, AuthorUsername: a.Username})
	return errors.Join(lookupErr, recordErr, l.disc.MarkReplied(ctx, targetTweetID, replyTweetID))
}

// Posted keeps a tweet or thread.
func (l postLedger) Posted(ctx context.Context, kind, tweetID, text string) error {
	return l.wf.RecordPost(ctx, kind, tweetID, text)
}
