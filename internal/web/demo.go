package web

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// DemoCaller is the caller (and reviewer) recorded on the demo world's
// mutations, so nobody mistakes them for an agent's work.
const DemoCaller = "demo"

// demoPosts are the demo world's posts. The first ones are approved (by
// DemoCaller) so the audit trail has executed mutations with rollback
// guidance; the last stays pending beside a reply to the first.
var demoPosts = []string{
	"Demo data: we shipped the review page today. Approve, edit or reject what your agents queue, from the browser. #buildinpublic",
	"Demo data: a policy gateway means every mutation is audited and can be rolled back. https://example.com/tuitbot",
	"Demo data: this post waits for your approval. Try Edit to see the weighted count update, then Approve or Reject. @tuitbot",
}

// SeedDemo gives a fresh sandbox account a small demo world: pending
// approval items, executed mutations in the audit trail (with their
// rollback guidance), a follower snapshot and a scheduled draft. It goes
// through the gateway and the workflow services like any caller, labelled
// DemoCaller, and does nothing when the account already has gateway
// history (an audit row or a queue item), so it never mixes demo data into
// real work. It reports whether it seeded.
func SeedDemo(ctx context.Context, a Account) (bool, error) {
	g := a.Gateway
	if g == nil {
		return false, fmt.Errorf("demo world: account %q has no gateway", a.Name)
	}
	rows, err := g.Recent(ctx, gateway.AuditFilter{Limit: 1})
	if err != nil {
		return false, fmt.Errorf("demo world: read the audit trail: %w", err)
	}
	items, _, err := g.PendingFiltered(ctx, gateway.PendingFilter{Limit: 1})
	if err != nil {
		return false, fmt.Errorf("demo world: read the queue: %w", err)
	}
	if len(rows) > 0 || len(items) > 0 {
		return false, nil
	}
	post := func(tool string, p actions.PostParams) (gateway.Response, error) {
		resp, err := g.Do(ctx, gateway.Call{Tool: tool, Params: p, Caller: DemoCaller})
		if err != nil {
			return resp, fmt.Errorf("demo world: %s: %w", tool, err)
		}
		return resp, nil
	}
	// executed runs a post: approved by DemoCaller when the policy queues
	// it (the sandbox ships in approval mode), at once otherwise.
	executed := func(text string) (string, error) {
		resp, err := post("x_post_tweet", actions.PostParams{Text: text})
		if err != nil {
			return "", err
		}
		if id := resp.ApprovalID; resp.Kind == gateway.Routed && id != 0 {
			if _, resp, err = g.Approve(ctx, id, DemoCaller, "demo data"); err != nil {
				return "", fmt.Errorf("demo world: approve #%d: %w", id, err)
			}
		}
		return postedID(resp.Result), nil
	}
	first, err := executed(demoPosts[0])
	if err != nil {
		return false, err
	}
	if _, err := executed(demoPosts[1]); err != nil {
		return false, err
	}
	if _, err := post("x_post_tweet", actions.PostParams{Text: demoPosts[2]}); err != nil {
		return false, err
	}
	if first != "" {
		reply := actions.PostParams{Text: "Demo data: a reply waiting for review, shown under the post it answers.", InReplyToID: first}
		if _, err := post("x_reply_to_tweet", reply); err != nil {
			return false, err
		}
	}
	if a.Workflow != nil {
		// One follower snapshot starts the trend; the posts above are the
		// X spend.
		if _, err := a.Workflow.TakeSnapshot(ctx); err != nil {
			return false, fmt.Errorf("demo world: follower snapshot: %w", err)
		}
	}
	if a.Composer != nil {
		// Tomorrow: the calendar opens on the 7 days from today.
		at := a.Composer.Now().Add(26 * time.Hour).Truncate(time.Hour)
		if _, err := a.Composer.Compose(ctx, workflow.ComposeRequest{Content: "Demo data: a scheduled post on the calendar. Reschedule it, edit it or send it to approval.", ScheduledFor: &at}); err != nil {
			return false, fmt.Errorf("demo world: scheduled draft: %w", err)
		}
	}
	return true, nil
}

// postedID is the id of the post an executed x_post_tweet created ("" when
// the result does not say).
func postedID(result any) string {
	b, err := json.Marshal(result)
	if err != nil {
		return ""
	}
	var p actions.PostedTweet
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.ID
}
