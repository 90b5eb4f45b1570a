package toolstest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestAuditRowsUseSeedNames: get_recent_mutations rows carry the seed's
// result_summary (a string) and error_message (null without an error), and
// get_mutation_detail carries rollback_action.
func TestAuditRowsUseSeedNames(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	ok := e.call("x_post_tweet", map[string]any{"text": "Audit rows speak the seed's names."}).ok(t, nil)
	e.Sim.SetFault("POST /2/tweets", xsim.Fault{ClientNotEnrolled: true})
	failed := e.call("x_post_tweet", map[string]any{"text": "This one X refuses."}).fails(t, apperr.XForbidden)
	e.Sim.ClearFaults()

	var list struct {
		Mutations []map[string]any `json:"mutations"`
	}
	e.call("get_recent_mutations", map[string]any{}).ok(t, &list)
	rows := map[string]map[string]any{}
	for _, m := range list.Mutations {
		rows[m["correlation_id"].(string)] = m
	}
	for _, tc := range []struct {
		name, corr string
		wantError  bool
	}{
		{"success", ok.Meta.CorrelationID, false},
		{"failure", failed.Meta.CorrelationID, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row, found := rows[tc.corr]
			if !found {
				t.Fatalf("row %s not listed in %v", tc.corr, list.Mutations)
			}
			for _, k := range []string{"correlation_id", "tool_name", "status", "params_summary", "result_summary", "error_message", "elapsed_ms", "created_at", "completed_at"} {
				if _, has := row[k]; !has {
					t.Fatalf("row has no %q: %v", k, row)
				}
			}
			if _, isString := row["result_summary"].(string); !isString {
				t.Fatalf("result_summary is %T, want a string: %v", row["result_summary"], row)
			}
			msg, isString := row["error_message"].(string)
			switch {
			case tc.wantError && (!isString || msg == ""):
				t.Fatalf("error_message %v, want the failure's message", row["error_message"])
			case !tc.wantError && row["error_message"] != nil:
				t.Fatalf("error_message %v, want null", row["error_message"])
			}
		})
	}

	var detail map[string]json.RawMessage
	e.call("get_mutation_detail", map[string]any{"correlation_id": ok.Meta.CorrelationID}).ok(t, &detail)
	var rb struct {
		Reversible bool   `json:"reversible"`
		UndoTool   string `json:"undo_tool"`
	}
	if err := json.Unmarshal(detail["rollback_action"], &rb); err != nil || !rb.Reversible || rb.UndoTool != "x_delete_tweet" {
		t.Fatalf("rollback_action %s, want reversible via x_delete_tweet", detail["rollback_action"])
	}
	for _, k := range []string{"params_hash", "account_id"} {
		if _, has := detail[k]; !has {
			t.Fatalf("detail has no %q", k)
		}
	}
}

// TestPolicyNamesWrapperTools: compose_tweet and propose_and_queue_replies
// are mutation tools the policy can name: blocked, they refuse before
// anything is stored or queued; a rule requiring approval for them
// routes the posts they make to the queue even when the typed tool runs
// directly.
func TestPolicyNamesWrapperTools(t *testing.T) {
	candidate := func(e *env) string {
		t.Helper()
		var res struct {
			Candidates []struct {
				TweetID string `json:"tweet_id"`
			} `json:"candidates"`
		}
		e.call("find_reply_opportunities", map[string]any{"min_score": 0, "limit": 1}).ok(t, &res)
		if len(res.Candidates) != 1 {
			t.Fatal("no candidate")
		}
		return res.Candidates[0].TweetID
	}
	propose := func(id string) map[string]any {
		return map[string]any{"items": []any{map[string]any{"candidate_id": id, "pre_drafted_text": "A thoughtful reply about Go tooling."}}}
	}

	t.Run("blocked", func(t *testing.T) {
		e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
			c.MCPPolicy.BlockedTools = []string{"compose_tweet", "propose_and_queue_replies"}
		}})
		id := candidate(e)
		before := e.counters()
		e.call("compose_tweet", map[string]any{"content": "Blocked drafts are never stored."}).fails(t, apperr.PolicyBlocked).mentions(t, "compose_tweet")
		e.call("propose_and_queue_replies", propose(id)).fails(t, apperr.PolicyBlocked).mentions(t, "propose_and_queue_replies")
		var drafts struct {
			Count int `json:"count"`
		}
		e.call("list_drafts", map[string]any{}).ok(t, &drafts)
		var n struct {
			Pending int `json:"pending"`
		}
		e.call("get_pending_count", map[string]any{}).ok(t, &n)
		if drafts.Count != 0 || n.Pending != 0 {
			t.Fatalf("a blocked call stored %d drafts and queued %d items", drafts.Count, n.Pending)
		}
		e.requireDelta(before, nil)
	})

	t.Run("require approval", func(t *testing.T) {
		rule := func(tool string) config.PolicyRule {
			return config.PolicyRule{ID: "review_" + tool, Priority: 500, Conditions: config.PolicyConditions{Tools: []string{tool}},
				Action: config.PolicyAction{Type: "require_approval", Reason: "a human reviews " + tool}}
		}
		e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
			c.MCPPolicy.Rules = append(c.MCPPolicy.Rules, rule("compose_tweet"), rule("propose_and_queue_replies"))
		}})
		id := candidate(e)
		before := e.counters()
		var c struct {
			Routed     bool  `json:"routed_to_approval"`
			ApprovalID int64 `json:"approval_queue_id"`
		}
		e.call("compose_tweet", map[string]any{"content": "Reviewed before it posts."}).ok(t, &c)
		if !c.Routed || c.ApprovalID == 0 {
			t.Fatalf("compose_tweet under a require_approval rule: %+v", c)
		}
		var p struct {
			Results []workflow.ProposeOutcome `json:"results"`
		}
		e.call("propose_and_queue_replies", propose(id)).ok(t, &p)
		if len(p.Results) != 1 || p.Results[0].Status != "queued" {
			t.Fatalf("propose_and_queue_replies under a require_approval rule: %+v", p.Results)
		}
		e.requireDelta(before, nil)
	})
}

// TestUnknownOutcomeUntilResolved: a post whose outcome is unknown blocks
// identical repeats until it is resolved. tuitbot resolves it itself only
// by finding the exact text in the account's own timeline; otherwise a
// human (here an agent allowed to approve) says what X shows.
func TestUnknownOutcomeUntilResolved(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, agentApproval: true})
	type dup struct {
		Duplicate bool           `json:"duplicate"`
		Original  string         `json:"original_correlation_id"`
		Cached    map[string]any `json:"cached_result"`
	}
	onX := func(text string) []xsim.Tweet {
		var out []xsim.Tweet
		for _, tw := range e.Sim.World().Tweets {
			if tw.Text == text {
				out = append(out, tw)
			}
		}
		return out
	}

	t.Run("reached X: found in the timeline and resolved by tuitbot", func(t *testing.T) {
		text := "Did this reach X? The timeline knows."
		e.Sim.SetFault("POST /2/tweets", xsim.Fault{ApplyThenFailNext: 1, ErrorStatus: 503})
		first := e.call("x_post_tweet", map[string]any{"text": text}).fails(t, apperr.XOutcomeUnknown)
		e.Sim.ClearFaults()
		var d dup
		e.call("x_post_tweet", map[string]any{"text": text}).ok(t, &d)
		posted := onX(text)
		if len(posted) != 1 {
			t.Fatalf("%d posts with the text on X, want exactly 1", len(posted))
		}
		if !d.Duplicate || d.Original != first.Meta.CorrelationID || d.Cached["id"] != posted[0].ID {
			t.Fatalf("repeat answered %+v, want a duplicate of %s with post %s", d, first.Meta.CorrelationID, posted[0].ID)
		}
		if a := e.audit(first.Meta.CorrelationID); a.Resolution != "happened" || a.ResolvedBy != "auto" || a.ResolvedAt == "" {
			t.Fatalf("audit row %+v, want resolved happened by auto", a)
		}
	})

	t.Run("did not reach X: blocked until a human resolves it", func(t *testing.T) {
		text := "This one never reached X."
		e.Sim.SetFault("POST /2/tweets", xsim.Fault{ErrorNext: 1, ErrorStatus: 503})
		first := e.call("x_post_tweet", map[string]any{"text": text}).fails(t, apperr.XOutcomeUnknown)
		e.Sim.ClearFaults()
		e.call("x_post_tweet", map[string]any{"text": text}).fails(t, apperr.OutcomeUnverified).mentions(t, "tuitbot audit resolve "+first.Meta.CorrelationID)
		e.call("resolve_mutation", map[string]any{"correlation_id": first.Meta.CorrelationID, "outcome": "maybe"}).fails(t, apperr.InvalidInput).mentions(t, "outcome")
		var resolved struct {
			Resolution string `json:"resolution"`
			ResolvedBy string `json:"resolved_by"`
		}
		e.call("resolve_mutation", map[string]any{"correlation_id": first.Meta.CorrelationID, "outcome": "did_not_happen"}).ok(t, &resolved)
		if resolved.Resolution != "did_not_happen" || resolved.ResolvedBy != "mcp" {
			t.Fatalf("resolved %+v", resolved)
		}
		executed(t, e.call("x_post_tweet", map[string]any{"text": text}), nil)
		if n := len(onX(text)); n != 1 {
			t.Fatalf("%d posts with the text on X, want 1", n)
		}
	})

	t.Run("x_post keeps the canonical request for a human to verify", func(t *testing.T) {
		body := `{"text":"A raw post whose answer was lost."}`
		e.Sim.SetFault("POST /2/tweets", xsim.Fault{ApplyThenFailNext: 1, ErrorStatus: 503})
		first := e.call("x_post", map[string]any{"path": "/2/tweets", "body": body, "headers": []map[string]any{{"key": "Content-Type", "value": "application/json"}}})
		e.Sim.ClearFaults()
		a := e.audit(first.Meta.CorrelationID)
		if a.Status != "unknown" {
			t.Fatalf("x_post with a 5xx answer: audit status %q, want unknown", a.Status)
		}
		var req struct {
			Method, Path string
			Body         json.RawMessage
		}
		if err := json.Unmarshal(a.Request, &req); err != nil || req.Method != "POST" || req.Path != "/2/tweets" || !strings.Contains(string(req.Body), "A raw post whose answer was lost.") {
			t.Fatalf("audit request %s, want the canonical request with its body", a.Request)
		}
		if strings.Contains(string(a.Request), "application/json") {
			t.Fatalf("audit request %s keeps a header value", a.Request)
		}
		var d dup
		e.call("x_post", map[string]any{"path": "/2/tweets", "body": body, "headers": []map[string]any{{"key": "Content-Type", "value": "application/json"}}}).ok(t, &d)
		if !d.Duplicate || d.Original != first.Meta.CorrelationID {
			t.Fatalf("repeat of the raw post answered %+v", d)
		}
	})
}

// TestCapabilitiesListDirectTools: get_capabilities has direct_tools, each
// typed X tool with whether it can be used now and why not.
func TestCapabilitiesListDirectTools(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
		c.MCPPolicy.BlockedTools = []string{"x_like_tweet"}
		c.MCPPolicy.RequireApprovalFor = []string{"x_follow_user"}
	}})
	type direct struct {
		Tool      string `json:"tool"`
		Available bool   `json:"available"`
		Reason    string `json:"reason"`
		Policy    string `json:"policy"`
	}
	caps := func() map[string]direct {
		var c struct {
			DirectTools []direct `json:"direct_tools"`
		}
		e.call("get_capabilities", map[string]any{}).ok(t, &c)
		out := map[string]direct{}
		for _, d := range c.DirectTools {
			out[d.Tool] = d
		}
		return out
	}
	got := caps()
	for _, name := range []string{"get_tweet_by_id", "x_get_user_by_username", "x_search_tweets", "x_post_tweet", "x_reply_to_tweet", "x_like_tweet", "x_follow_user", "x_unfollow_user"} {
		if _, ok := got[name]; !ok {
			t.Fatalf("direct_tools has no %s: %v", name, got)
		}
	}
	for name, want := range map[string]struct {
		available bool
		mention   string
	}{
		"get_tweet_by_id": {true, ""},
		"x_post_tweet":    {true, ""},
		"x_like_tweet":    {false, "blocked"},
		"x_follow_user":   {true, "approval"},
	} {
		d := got[name]
		if d.Available != want.available || !strings.Contains(d.Reason, want.mention) {
			t.Errorf("%s: %+v, want available=%v with a reason mentioning %q", name, d, want.available, want.mention)
		}
	}
	if _, listed := got["find_reply_opportunities"]; listed {
		t.Error("a workflow tool is listed as a direct X tool")
	}

	// Without a token nothing direct can be used, and each says why.
	e = newEnv(t, envOptions{permissive: true})
	if err := os.Remove(e.Cfg.TokenFile()); err != nil {
		t.Fatal(err)
	}
	for name, d := range caps() {
		if d.Available || !strings.Contains(d.Reason, "X is not available") {
			t.Errorf("without a token %s is %+v", name, d)
		}
	}
}
