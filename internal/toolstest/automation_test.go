package toolstest

import (
	"fmt"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xrules"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestXAutomationRules is the rule table of X's automation rules (its
// developer guidelines), which hold on every access level. Each spelling
// (typed, universal, drafted) is either refused before X or queued for a
// person whatever the policy says (the env's policy allows everything):
// no write reaches the emulator and nothing is billed for it.
func TestXAutomationRules(t *testing.T) {
	raw := func(path, body string) map[string]any {
		return map[string]any{"path": path, "body": body,
			"headers": []map[string]any{{"key": "Content-Type", "value": "application/json"}}}
	}
	type fixture struct {
		me, user, stranger, mention string // mention: a post of user's that @mentions the account
	}
	cases := []struct {
		name   string
		access config.Access
		// aiOK is x_api.ai_replies_approved.
		aiOK bool
		// first runs before the call, and must succeed.
		first func(f fixture) (string, map[string]any)
		call  func(f fixture) (string, map[string]any)
		// rule is the x_rule the call is queued by, or code its refusal.
		rule string
		code apperr.Code
	}{
		{name: "typed AI reply without X's approval", access: config.AccessPayPerUse,
			call: func(f fixture) (string, map[string]any) {
				return "x_reply_to_tweet", map[string]any{"text": "Glad you asked", "in_reply_to_id": f.mention}
			}, rule: xrules.RuleAIReplies},
		{name: "universal AI reply without X's approval", access: config.AccessPayPerUse,
			call: func(f fixture) (string, map[string]any) {
				return "x_post", raw("/2/tweets", fmt.Sprintf(`{"text":"Glad you asked","reply":{"in_reply_to_tweet_id":%q}}`, f.mention))
			}, rule: xrules.RuleAIReplies},
		{name: "typed second reply to one post", access: config.AccessPayPerUse, aiOK: true,
			first: func(f fixture) (string, map[string]any) {
				return "x_reply_to_tweet", map[string]any{"text": "First answer", "in_reply_to_id": f.mention}
			},
			call: func(f fixture) (string, map[string]any) {
				return "x_reply_to_tweet", map[string]any{"text": "Second answer", "in_reply_to_id": f.mention}
			}, code: apperr.ReplyAlreadySent},
		{name: "universal second reply to one post", access: config.AccessEnterprise, aiOK: true,
			first: func(f fixture) (string, map[string]any) {
				return "x_reply_to_tweet", map[string]any{"text": "First answer", "in_reply_to_id": f.mention}
			},
			call: func(f fixture) (string, map[string]any) {
				return "x_post", raw("/2/tweets", fmt.Sprintf(`{"text":"Another answer","reply":{"in_reply_to_tweet_id":%q}}`, f.mention))
			}, code: apperr.ReplyAlreadySent},
		{name: "typed post mentioning a stranger", access: config.AccessPayPerUse,
			call: func(f fixture) (string, map[string]any) {
				return "x_post_tweet", map[string]any{"text": "Hello @" + f.stranger + ", have a look"}
			}, rule: xrules.RuleUnsolicitedMention},
		{name: "universal post mentioning a stranger", access: config.AccessPayPerUse,
			call: func(f fixture) (string, map[string]any) {
				return "x_post", raw("/2/tweets", fmt.Sprintf(`{"text":"Hey @%s, thoughts?"}`, f.stranger))
			}, rule: xrules.RuleUnsolicitedMention},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var x xTraffic
			e := newEnv(t, envOptions{permissive: true, access: tc.access, onX: x.hook, aiRepliesUnapproved: !tc.aiOK})
			f := fixture{me: e.Sim.DemoUserID(), user: strangerOf(t, e.Sim, i), stranger: usernameOf(t, e.Sim, strangerOf(t, e.Sim, i+1))}
			post, err := e.Sim.PostAs(f.user, fmt.Sprintf("@%s what do you make of this, take %d?", xsim.DemoUsername, i), "")
			if err != nil {
				t.Fatal(err)
			}
			f.mention = post
			if tc.first != nil {
				tool, args := tc.first(f)
				e.call(tool, args).ok(t, nil)
			}
			writes, _ := x.snapshot()
			counters, billed := e.Sim.Counters(), e.Sim.Billing()
			tool, args := tc.call(f)
			r := e.call(tool, args)
			if tc.code != "" {
				r.fails(t, tc.code).mentions(t, "nothing was sent to X")
			} else {
				var q struct {
					Routed bool   `json:"routed_to_approval"`
					Rule   string `json:"matched_rule_id"`
				}
				r.ok(t, &q)
				if !q.Routed || q.Rule != xrules.RouteRulePrefix+tc.rule {
					t.Fatalf("%s: %s, want it queued by %s", tool, r.Data, tc.rule)
				}
			}
			if w, _ := x.snapshot(); w != writes {
				t.Errorf("%d writes reached X, want none", w-writes)
			}
			after := e.Sim.Billing()
			for ep, n := range after.Requests {
				if ep[:4] != "GET " && n != billed.Requests[ep] {
					t.Errorf("%s billed %d more times", ep, n-billed.Requests[ep])
				}
			}
			for k, v := range e.Sim.Counters() {
				if v != counters[k] {
					t.Errorf("emulator counter %s went from %d to %d", k, counters[k], v)
				}
			}
		})
	}
}

// TestXAutomationRulesOnDrafts: a drafted reply to a post that summoned
// the account goes to a person when X has not approved the app's AI
// replies, and a second drafted reply to a post already answered is
// refused; neither reaches X.
func TestXAutomationRulesOnDrafts(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{permissive: true, access: config.AccessEnterprise, onX: x.hook, aiRepliesUnapproved: true})
	cands := discover(t, e)
	before, _ := x.snapshot()
	var out struct {
		Results []workflow.ProposeOutcome `json:"results"`
	}
	e.call("propose_and_queue_replies", map[string]any{"items": []map[string]any{
		{"candidate_id": cands[0].TweetID, "pre_drafted_text": "Interesting take on this."}}}).ok(t, &out)
	if got := out.Results[0]; got.Status != "queued" {
		t.Fatalf("drafted AI reply: %+v, want queued for a person", got)
	}
	if after, _ := x.snapshot(); after != before {
		t.Fatalf("%d writes reached X", after-before)
	}

	e.Cfg.XAPI.AIRepliesApproved = true
	e.call("x_reply_to_tweet", map[string]any{"text": "Answered by hand-picked words", "in_reply_to_id": cands[1].TweetID}).ok(t, nil)
	before, _ = x.snapshot()
	e.call("propose_and_queue_replies", map[string]any{"items": []map[string]any{
		{"candidate_id": cands[1].TweetID, "pre_drafted_text": "And one more thing."}}}).ok(t, &out)
	if got := out.Results[0]; got.ErrorCode != string(apperr.ReplyAlreadySent) {
		t.Fatalf("second drafted reply: %+v, want %s", got, apperr.ReplyAlreadySent)
	}
	if after, _ := x.snapshot(); after != before {
		t.Fatalf("%d writes reached X", after-before)
	}
}

// usernameOf is user id's username in the emulator's world.
func usernameOf(t *testing.T, sim *xsim.Server, id string) string {
	t.Helper()
	for _, u := range sim.World().Users {
		if u.ID == id {
			return u.Username
		}
	}
	t.Fatalf("no user %s", id)
	return ""
}
