package toolstest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

type badCase struct {
	tool    string
	args    map[string]any
	code    apperr.Code
	mention string // the field the message must name
}

func bad(tool string, args map[string]any, mention string) badCase {
	return badCase{tool, args, apperr.InvalidInput, mention}
}

// TestWorkflowBadInput: every workflow tool rejects missing required
// fields, out-of-range numbers, unknown enum values, bad RFC 3339 times and
// unknown ids with a code and a message naming the field, and nothing
// reaches X or the queue.
func TestWorkflowBadInput(t *testing.T) {
	e := newEnv(t, envOptions{llm: true})
	var c workflow.ComposeResult
	e.call("compose_tweet", map[string]any{"tweets": []string{"first", "second"}}).ok(t, &c)
	before := e.sideEffects()
	llmCalls := e.LLM.Calls()
	long := strings.Repeat("x", 300)
	cases := []badCase{
		// Discovery and scoring.
		bad("find_reply_opportunities", map[string]any{"min_score": -1}, "min_score"),
		bad("find_reply_opportunities", map[string]any{"min_score": 100.5}, "min_score"),
		bad("find_reply_opportunities", map[string]any{"limit": 101}, "limit"),
		bad("find_reply_opportunities", map[string]any{"limit": -3}, "limit"),
		bad("find_reply_opportunities", map[string]any{"limit": "ten"}, "limit"),
		bad("find_reply_opportunities", map[string]any{"since_id": "yesterday"}, "since_id"),
		bad("find_reply_opportunities", map[string]any{"query": "   "}, "query"),
		bad("find_reply_opportunities", map[string]any{"query": strings.Repeat("golang ", 80)}, "query"),
		bad("find_reply_opportunities", map[string]any{"max": 3}, "max"),
		bad("get_discovery_feed", map[string]any{"min_score": 101}, "min_score"),
		bad("get_discovery_feed", map[string]any{"limit": 1000}, "limit"),
		bad("list_unreplied_tweets", map[string]any{"threshold": -0.5}, "threshold"),
		bad("list_unreplied_tweets", map[string]any{"limit": 501}, "limit"),
		bad("score_tweet", map[string]any{"text": "golang", "author_username": "a", "author_followers": 1, "likes": 1, "retweets": 1, "replies": 1}, "created_at"),
		bad("score_tweet", map[string]any{"text": "golang", "author_username": "a", "author_followers": 1, "likes": 1, "retweets": 1, "replies": 1, "created_at": "yesterday"}, "created_at"),
		bad("score_tweet", map[string]any{"text": "golang", "author_username": "a", "author_followers": 1, "likes": -1, "retweets": 1, "replies": 1, "created_at": "2026-01-01T00:00:00Z"}, "likes"),
		bad("score_tweet", map[string]any{"text": "golang", "author_username": "a", "author_followers": -10, "likes": 1, "retweets": 1, "replies": 1, "created_at": "2026-01-01T00:00:00Z"}, "author_followers"),
		bad("draft_replies_for_candidates", map[string]any{"candidate_ids": []string{}}, "candidate_ids"),
		bad("draft_replies_for_candidates", map[string]any{"candidate_ids": ids(21)}, "candidate_ids"),
		bad("draft_replies_for_candidates", map[string]any{"candidate_ids": []string{"12", "x"}}, "candidate_ids[1]"),
		bad("draft_replies_for_candidates", map[string]any{"candidate_ids": []string{"12"}, "archetype": "snarky"}, "archetype"),
		bad("propose_and_queue_replies", map[string]any{"items": []any{}}, "items"),
		bad("propose_and_queue_replies", map[string]any{}, "items"),
		bad("propose_and_queue_replies", map[string]any{"items": items(51)}, "items"),
		bad("propose_and_queue_replies", map[string]any{"items": []any{map[string]any{"candidate_id": "1x"}}}, "items[0].candidate_id"),
		bad("propose_and_queue_replies", map[string]any{"items": []any{map[string]any{"pre_drafted_text": "hi"}}}, "candidate_id"),
		// Content and drafts.
		bad("compose_tweet", map[string]any{}, "topic"),
		bad("compose_tweet", map[string]any{"topic": "x", "format": "haiku"}, "format"),
		bad("compose_tweet", map[string]any{"content": "hi", "scheduled_for": "tomorrow"}, "scheduled_for"),
		bad("compose_tweet", map[string]any{"content": "hi", "scheduled_for": "2001-01-01T00:00:00Z"}, "scheduled_for"),
		bad("compose_tweet", map[string]any{"content": "hi", "tweets": []string{"a"}}, "tweets"),
		{"compose_tweet", map[string]any{"content": long}, apperr.TweetTooLong, "300"},
		{"compose_tweet", map[string]any{"tweets": []string{"ok", long}}, apperr.TweetTooLong, "tweets[1]"},
		bad("list_drafts", map[string]any{"status": "archived"}, "status"),
		{"update_draft", map[string]any{"draft_id": 9999, "content": "x"}, apperr.NotFound, "draft_id"},
		bad("update_draft", map[string]any{"draft_id": c.ID, "scheduled_for": "soon"}, "scheduled_for"),
		bad("update_draft", map[string]any{"draft_id": c.ID, "scheduled_for": "2001-01-01T00:00:00Z"}, "scheduled_for"),
		bad("update_draft", map[string]any{"draft_id": c.ID, "content": "single"}, "content"),
		{"update_draft", map[string]any{"draft_id": c.ID, "tweets": []string{long}}, apperr.TweetTooLong, "tweets[0]"},
		bad("update_draft", map[string]any{"draft_id": "one"}, "draft_id"),
		{"delete_draft", map[string]any{"draft_id": 9999}, apperr.NotFound, "draft_id"},
		bad("generate_tweet", map[string]any{"format": "haiku"}, "format"),
		bad("generate_tweet", map[string]any{"topic": strings.Repeat("t", 5000)}, "topic"),
		bad("generate_reply", map[string]any{"tweet_text": "  ", "tweet_author": "a"}, "tweet_text"),
		bad("generate_thread", map[string]any{"structure": "listicle"}, "structure"),
		bad("generate_thread_plan", map[string]any{"topic": ""}, "topic"),
		bad("generate_thread_plan", map[string]any{"topic": "x", "structure": "listicle"}, "structure"),
		bad("suggest_topics", map[string]any{"count": 21}, "count"),
		bad("suggest_topics", map[string]any{"count": -1}, "count"),
		// Analytics, action log, rate limits, targets, mode.
		bad("get_stats", map[string]any{"days": 366}, "days"),
		bad("get_stats", map[string]any{"days": -1}, "days"),
		bad("get_x_usage", map[string]any{"days": 400}, "days"),
		bad("get_llm_usage", map[string]any{"days": -2}, "days"),
		bad("get_recent_replies", map[string]any{"since_hours": -1}, "since_hours"),
		bad("get_recent_replies", map[string]any{"since_hours": 100000}, "since_hours"),
		bad("get_reply_count_today", map[string]any{"day": "today"}, "day"),
		bad("get_action_log", map[string]any{"since_hours": 100000}, "since_hours"),
		bad("get_action_log", map[string]any{"action_type": 3}, "action_type"),
		bad("get_action_counts", map[string]any{"since_hours": -5}, "since_hours"),
		bad("get_follower_trend", map[string]any{"limit": -1}, "limit"),
		bad("get_follower_trend", map[string]any{"limit": 1001}, "limit"),
		bad("get_rate_limits", map[string]any{"endpoint": "x"}, "endpoint"),
		bad("list_target_accounts", map[string]any{"all": true}, "all"),
		bad("add_target_account", map[string]any{"username": "not a handle!"}, "username"),
		bad("add_target_account", map[string]any{"username": ""}, "username"),
		bad("add_target_account", map[string]any{"username": "sixteen_chars_xx"}, "username"),
		bad("remove_target_account", map[string]any{"username": "bad-name"}, "username"),
		bad("get_author_context", map[string]any{"identifier": ""}, "identifier"),
		bad("get_author_context", map[string]any{"identifier": "no spaces please"}, "identifier"),
		{"get_author_context", map[string]any{"identifier": "nobody_zz_404"}, apperr.XNotFound, ""},
		bad("get_mode", map[string]any{"verbose": true}, "verbose"),
		// The audit and approval tools the workflow relies on.
		bad("get_recent_mutations", map[string]any{"since": "last week"}, "since"),
		bad("get_recent_mutations", map[string]any{"limit": 101}, "limit"),
		// An unknown filter value is an error, not an empty list.
		bad("get_recent_mutations", map[string]any{"status": "bogus"}, "status"),
		bad("get_recent_mutations", map[string]any{"tool": "x_no_such_tool"}, "tool"),
		bad("get_mutation_detail", map[string]any{"correlation_id": ""}, "correlation_id"),
		{"get_mutation_detail", map[string]any{"correlation_id": "00000000-0000-4000-8000-000000000000"}, apperr.NotFound, "correlation_id"},
		{"get_approval_item", map[string]any{"id": 9999}, apperr.NotFound, ""},
	}
	for _, bc := range cases {
		t.Run(fmt.Sprintf("%s/%s", bc.tool, bc.mention), func(t *testing.T) {
			r := e.call(bc.tool, bc.args).fails(t, bc.code)
			if bc.mention != "" {
				r.mentions(t, bc.mention)
			}
		})
	}

	// Unknown ids of the right shape are reported per item, not guessed.
	t.Run("unknown candidates", func(t *testing.T) {
		var d struct {
			Drafts []workflow.DraftOutcome `json:"drafts"`
		}
		e.call("draft_replies_for_candidates", map[string]any{"candidate_ids": []string{"123456"}}).ok(t, &d)
		if len(d.Drafts) != 1 || d.Drafts[0].Status != "error" || d.Drafts[0].ErrorCode != string(apperr.NotFound) {
			t.Fatalf("draft for an unknown candidate: %+v", d.Drafts)
		}
		var p struct {
			Results []workflow.ProposeOutcome `json:"results"`
		}
		e.call("propose_and_queue_replies", map[string]any{"items": []any{map[string]any{"candidate_id": "123456", "pre_drafted_text": "hello"}}}).ok(t, &p)
		if len(p.Results) != 1 || p.Results[0].Status != "blocked" || p.Results[0].ErrorCode != string(apperr.NotFound) {
			t.Fatalf("proposal for an unknown candidate: %+v", p.Results)
		}
	})

	// Text the agent supplies obeys the same rules as generated text.
	t.Run("supplied reply text", func(t *testing.T) {
		var res struct {
			Candidates []struct {
				TweetID string `json:"tweet_id"`
			} `json:"candidates"`
		}
		e.call("find_reply_opportunities", map[string]any{"min_score": 0, "limit": 1}).ok(t, &res)
		if len(res.Candidates) != 1 {
			t.Fatal("no candidate")
		}
		id := res.Candidates[0].TweetID
		before := e.sideEffects()
		for text, code := range map[string]apperr.Code{
			long: apperr.TweetTooLong,
			"You should check out our product, it is great.": apperr.ValidationError,
		} {
			var p struct {
				Results []workflow.ProposeOutcome `json:"results"`
			}
			e.call("propose_and_queue_replies", map[string]any{"items": []any{map[string]any{"candidate_id": id, "pre_drafted_text": text}}}).ok(t, &p)
			if p.Results[0].Status != "blocked" || p.Results[0].ErrorCode != string(code) {
				t.Fatalf("proposal %q: %+v, want blocked with %s", text, p.Results[0], code)
			}
		}
		after := e.sideEffects()
		if after.pending != before.pending {
			t.Fatal("a blocked proposal was queued")
		}
	})

	t.Cleanup(func() {
		// Invalid input never reaches X, the queue or the LLM.
		e.requireDelta(before.counters, nil)
		if got := e.LLM.Calls() - llmCalls; got != 0 {
			t.Errorf("%d LLM calls for invalid input", got)
		}
	})
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(1000 + i)
	}
	return out
}

func items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"candidate_id": fmt.Sprint(1000 + i)}
	}
	return out
}
