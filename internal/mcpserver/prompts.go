package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt is one workflow the server teaches agents: which tools to call in
// which order, and how to treat what the gateway answers.
type Prompt struct {
	Name, Title, Description string
	Arguments                []*mcp.PromptArgument
	// Tools are the tools the workflow calls; the prompt is offered only
	// when every one of them is on the server's surface.
	Tools []string
	// Render writes the instructions from the arguments.
	Render func(args map[string]string) (string, error)
}

// outcomeRules is how every workflow treats the gateway's answers; it is
// the part an agent most often gets wrong, so each prompt repeats it.
const outcomeRules = `How to read every mutation's result (a JSON envelope {success, data, error, meta}):
- data.routed_to_approval = true: the call is queued for a human (data.approval_queue_id). It has NOT happened. Do not retry it and do not work around it; tell the user it waits for approval.
- data.duplicate = true: an identical call already ran; its original result is in data. Do not send it again.
- data.dry_run = true: dry-run mode is on; nothing was sent. Report what would have run.
- error.code x_outcome_unknown or previous_outcome_unknown: X may or may not have applied the call. Never retry it. Read X to find out (for a post, x_get_user_tweets on your own id), tell the user what you saw, and leave the resolution to them (` + "`tuitbot audit resolve <correlation_id> --happened|--did-not-happen`" + `).
- error.code starting with policy_denied: the policy refused it. Stop that action and report error.message; do not rephrase the call to slip past the rule.
- Every mutation takes an idempotency_key; derive it from what the call is about (for example reply-<tweet id>) so a retry after a lost answer cannot post twice.`

// Prompts lists the workflow prompts.
func Prompts() []*Prompt {
	return []*Prompt{
		{
			Name:        "reply_to_mentions_safely",
			Title:       "Reply to mentions safely",
			Description: "Answer recent mentions within the daily reply cap, one idempotent reply per mention, respecting approval routing and unknown outcomes.",
			Arguments: []*mcp.PromptArgument{
				{Name: "max_replies", Description: "reply to at most this many mentions (default 5)"},
				{Name: "tone", Description: "how the replies should sound (default: the configured brand voice)"},
			},
			Tools: []string{"get_mode", "x_get_me", "x_get_user_mentions", "get_reply_count_today", "get_recent_replies", "x_reply_to_tweet"},
			Render: func(args map[string]string) (string, error) {
				n := 5
				if s := strings.TrimSpace(args["max_replies"]); s != "" {
					v, err := strconv.Atoi(s)
					if err != nil || v < 1 || v > 50 {
						return "", fmt.Errorf("max_replies: %q is not a number from 1 to 50", s)
					}
					n = v
				}
				tone := "the account's configured brand voice"
				if s := strings.TrimSpace(args["tone"]); s != "" {
					tone = s
				}
				return fmt.Sprintf(`Reply to the account's recent mentions on X, safely. Reply to at most %d mentions, in %s.

1. Call get_mode to learn the operating mode and whether approval mode is on; tell the user if replies will wait for approval.
2. Call get_reply_count_today. If replies_today has reached max_replies_per_day, stop and say so.
3. Call x_get_me for the account's id, then x_get_user_mentions (max_results 20).
4. Call get_recent_replies and skip every mention already answered. Also skip mentions that are spam, hostile, or need a human (complaints, legal, personal data).
5. For each remaining mention, newest first, write a short, specific reply (at most 280 characters, no hashtags, no links unless asked) and call x_reply_to_tweet with text, in_reply_to_id = the mention's id and idempotency_key = "reply-<mention id>". One call per mention; never loop on a failure.
6. Finish with a table: mention id, author, what you did (sent, queued for approval with its id, duplicate, skipped and why, unknown outcome).

%s`, n, tone, outcomeRules), nil
			},
		},
		{
			Name:        "plan_a_thread",
			Title:       "Plan a thread",
			Description: "Plan a thread on a topic, check every post with the dry run, and post it only after the user confirms, idempotently.",
			Arguments: []*mcp.PromptArgument{
				{Name: "topic", Description: "what the thread is about", Required: true},
				{Name: "posts", Description: "how many posts (default 5, at most 25)"},
			},
			Tools: []string{"get_mode", "x_post_thread_dry_run", "x_post_thread"},
			Render: func(args map[string]string) (string, error) {
				topic := strings.TrimSpace(args["topic"])
				if topic == "" {
					return "", fmt.Errorf("topic: required")
				}
				n := 5
				if s := strings.TrimSpace(args["posts"]); s != "" {
					v, err := strconv.Atoi(s)
					if err != nil || v < 2 || v > 25 {
						return "", fmt.Errorf("posts: %q is not a number from 2 to 25", s)
					}
					n = v
				}
				return fmt.Sprintf(`Plan and post an X thread of %d posts about: %s

1. Call get_mode to learn whether approval mode or dry-run mode is on.
2. Draft the thread: a first post that stands alone, then one idea per post, at most 280 weighted characters each. (If generate_thread_plan is available you may use it for an outline.)
3. Call x_post_thread_dry_run with the posts. Fix every post it reports as too long or invalid and run it again until it passes. Nothing is posted by the dry run.
4. Show the user the final posts and ask for confirmation. Do not post without an explicit yes.
5. After the yes, call x_post_thread once with the posts and idempotency_key = "thread-" followed by a short slug of the topic. If the answer is lost, call it again with the same key: the gateway returns the first result instead of posting twice.
6. If error.code is thread_partial_failure, some posts went out: report which (the error lists them) and do not repost the thread.

%s`, n, topic, outcomeRules), nil
			},
		},
		{
			Name:        "review_my_pending_approvals",
			Title:       "Review my pending approvals",
			Description: "Summarise the approval queue for a human, with the risk of each item and the exact command to approve or reject it.",
			Tools:       []string{"list_pending_approvals", "get_approval_item"},
			Render: func(map[string]string) (string, error) {
				return `Help me review the calls waiting in tuitbot's approval queue.

1. Call list_pending_approvals. If the queue is empty, say so and stop.
2. For each item, oldest first, show: id, tool, the exact parameters it would run (text of posts and replies in full), who asked for it (caller, loop), when it expires, and the policy reason it was queued.
3. Point out risks: text that could embarrass the account, replies to hostile or unknown accounts, duplicates of something already posted, deletions, follows or unfollows in bulk. Use get_approval_item if you need an item's details.
4. Recommend approve, edit or reject for each, with one line of reasoning.
5. Do not approve or reject anything yourself unless the user tells you to for that item. The human decides with ` + "`tuitbot approve approve <id>`, `tuitbot approve reject <id>`" + ` (or, if the server offers approve_item and reject_item, by asking you explicitly).
6. After an approval runs, read its result: an unknown outcome (x_outcome_unknown) must not be approved or retried again; the human verifies on X and runs ` + "`tuitbot audit resolve`" + `.

` + outcomeRules, nil
			},
		},
	}
}

// addPrompts registers the prompts whose tools are all on the surface.
func addPrompts(srv *mcp.Server, tools []*Tool) []string {
	have := map[string]bool{}
	for _, t := range tools {
		have[t.Name] = true
	}
	var added []string
next:
	for _, p := range Prompts() {
		for _, n := range p.Tools {
			if !have[n] {
				continue next
			}
		}
		srv.AddPrompt(&mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: p.Arguments}, promptHandler(p))
		added = append(added, p.Name)
	}
	return added
}

func promptHandler(p *Prompt) mcp.PromptHandler {
	return func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		var args map[string]string
		if req.Params != nil {
			args = req.Params.Arguments
		}
		text, err := p.Render(args)
		if err != nil {
			return nil, fmt.Errorf("prompt %s: %w", p.Name, err)
		}
		return &mcp.GetPromptResult{
			Description: p.Description,
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
		}, nil
	}
}
