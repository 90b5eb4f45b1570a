package toolstest

import (
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// llmCalls are the tool calls that need the LLM, with valid arguments.
func llmCalls(candidate string) []struct {
	tool string
	args map[string]any
} {
	return []struct {
		tool string
		args map[string]any
	}{
		{"generate_tweet", map[string]any{"topic": "agent safety"}},
		{"generate_reply", map[string]any{"tweet_text": "Agents keep double posting, help", "tweet_author": "someone"}},
		{"generate_thread", map[string]any{"topic": "guardrails"}},
		{"generate_thread_plan", map[string]any{"topic": "guardrails"}},
		{"suggest_topics", map[string]any{"count": 2}},
		{"compose_tweet", map[string]any{"topic": "approval queues"}},
		{"draft_replies_for_candidates", map[string]any{"candidate_ids": []string{candidate}}},
		{"propose_and_queue_replies", map[string]any{"items": []any{map[string]any{"candidate_id": candidate}}}},
	}
}

// firstCandidate stores discovery candidates and returns one.
func firstCandidate(t *testing.T, e *env) string {
	t.Helper()
	var res struct {
		Candidates []struct {
			TweetID string `json:"tweet_id"`
		} `json:"candidates"`
	}
	e.call("find_reply_opportunities", map[string]any{"min_score": 0, "limit": 1}).ok(t, &res)
	if len(res.Candidates) == 0 {
		t.Fatal("no candidate")
	}
	return res.Candidates[0].TweetID
}

// llmOutcome is the error code a tool reported, at the top level or, for
// the per-item tools, on the item.
func llmOutcome(t *testing.T, r result) (apperr.Code, string) {
	t.Helper()
	switch r.tool {
	case "draft_replies_for_candidates":
		var d struct {
			Drafts []workflow.DraftOutcome `json:"drafts"`
		}
		if r.Success {
			r.ok(t, &d)
			return apperr.Code(d.Drafts[0].ErrorCode), d.Drafts[0].ErrorMessage
		}
	case "propose_and_queue_replies":
		var p struct {
			Results []workflow.ProposeOutcome `json:"results"`
		}
		r.ok(t, &p)
		if p.Results[0].Status != "blocked" {
			t.Fatalf("proposal %+v, want blocked", p.Results[0])
		}
		return apperr.Code(p.Results[0].ErrorCode), p.Results[0].Reason
	}
	if r.Success {
		t.Fatalf("%s succeeded: %.300s", r.tool, r.Data)
	}
	return r.Error.Code, r.Error.Message
}

// TestLLMProviderFailure: a provider 500 is llm_error (retryable), and no
// message carries the API key, even though the provider echoed it.
func TestLLMProviderFailure(t *testing.T) {
	e := newEnv(t, envOptions{llm: true})
	cand := firstCandidate(t, e)
	before := e.sideEffects()
	for _, c := range llmCalls(cand) {
		t.Run(c.tool, func(t *testing.T) {
			e.LLM.FailNext(1000)
			defer e.LLM.FailNext(0)
			calls := e.LLM.Calls()
			r := e.call(c.tool, c.args)
			code, msg := llmOutcome(t, r)
			if code != apperr.LLMError {
				t.Fatalf("%s: %s (%s), want llm_error", c.tool, code, msg)
			}
			if !r.Success && !r.Error.Retryable {
				t.Fatal("llm_error is not retryable")
			}
			if e.LLM.Calls() == calls {
				t.Fatal("the provider was never asked")
			}
			raw := string(r.Data) + msg
			if r.Error != nil {
				raw += r.Error.Message
			}
			for _, secret := range []string{fakeAPIKey, "toolstest-0123456789", "Bearer sk-"} {
				if strings.Contains(raw, secret) {
					t.Fatalf("%s: the result leaks %q: %s", c.tool, secret, raw)
				}
			}
			if !strings.Contains(msg, "500") && !strings.Contains(strings.ToLower(msg), "upstream exploded") {
				t.Fatalf("%s: message %q says nothing about the provider's failure", c.tool, msg)
			}
		})
	}
	// Nothing was stored, queued or posted on the way.
	e.requireNoSideEffects(before)
	var ds struct {
		Count int `json:"count"`
	}
	e.call("list_drafts", map[string]any{}).ok(t, &ds)
	if ds.Count != 0 {
		t.Fatalf("%d drafts stored from failed generations", ds.Count)
	}
}

// TestLLMNotConfigured: with no provider (and the sandbox's stand-in
// switched off, which is what any home outside the sandbox gets) every
// generating tool says so, and the tools that accept the agent's own text
// still work.
func TestLLMNotConfigured(t *testing.T) {
	e := newEnv(t, envOptions{configure: func(c *config.Config) { c.Sandbox.LLMStandIn = false }})
	cand := firstCandidate(t, e)
	for _, c := range llmCalls(cand) {
		t.Run(c.tool, func(t *testing.T) {
			code, msg := llmOutcome(t, e.call(c.tool, c.args))
			if code != apperr.LLMNotConfigured || !strings.Contains(msg, "llm") {
				t.Fatalf("%s: %s (%s), want llm_not_configured naming the llm settings", c.tool, code, msg)
			}
		})
	}
	t.Run("own text needs no LLM", func(t *testing.T) {
		var cr workflow.ComposeResult
		e.call("compose_tweet", map[string]any{"content": "Written by a person."}).ok(t, &cr)
		if cr.Generated || cr.Text != "Written by a person." {
			t.Fatalf("compose with content %+v", cr)
		}
		var p struct {
			Results []workflow.ProposeOutcome `json:"results"`
		}
		e.call("propose_and_queue_replies", map[string]any{"items": []any{map[string]any{"candidate_id": cand, "pre_drafted_text": "A reply a person wrote."}}}).ok(t, &p)
		if p.Results[0].Status != "queued" {
			t.Fatalf("proposal with supplied text %+v", p.Results[0])
		}
		var caps struct {
			Guidance []string `json:"guidance"`
		}
		e.call("get_capabilities", map[string]any{}).ok(t, &caps)
		if !strings.Contains(strings.Join(caps.Guidance, " "), "llm_not_configured") {
			t.Fatalf("capabilities guidance %q does not warn about the missing LLM", caps.Guidance)
		}
	})
}
