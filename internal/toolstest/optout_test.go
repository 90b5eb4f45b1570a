package toolstest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestOptOutRefusesEverySpelling: a mention saying "stop", read with
// x_get_user_mentions, puts its author on the suppression list; then a
// typed reply to them, a universal reply (x_post), a DM to them and a post
// @mentioning them are refused with user_opted_out before X: no write
// reaches the emulator and nothing is billed. Clearing lifts it.
func TestOptOutRefusesEverySpelling(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{permissive: true, access: config.AccessEnterprise, onX: x.hook})
	user := strangerOf(t, e.Sim, 0)
	name := usernameOf(t, e.Sim, user)
	if _, err := e.Sim.PostAs(user, "@"+xsim.DemoUsername+" Unsubscribe! Leave me alone.", ""); err != nil {
		t.Fatal(err)
	}
	e.call("x_get_user_mentions", map[string]any{}).ok(t, nil)
	mention, err := e.Sim.PostAs(user, "@"+xsim.DemoUsername+" one more question about retries?", "")
	if err != nil {
		t.Fatal(err)
	}
	raw := func(body string) map[string]any {
		return map[string]any{"path": "/2/tweets", "body": body,
			"headers": []map[string]any{{"key": "Content-Type", "value": "application/json"}}}
	}
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"typed reply", "x_reply_to_tweet", map[string]any{"text": "Happy to help", "in_reply_to_id": mention}},
		{"universal reply", "x_post", raw(fmt.Sprintf(`{"text":"Happy to help","reply":{"in_reply_to_tweet_id":%q}}`, mention))},
		{"DM", "x_send_dm", map[string]any{"participant_id": user, "text": "Hi there"}},
		{"post mentioning them", "x_post_tweet", map[string]any{"text": "Thanks @" + name + " for the idea"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writes, _ := x.snapshot()
			billed := e.Sim.Billing()
			e.call(tc.tool, tc.args).fails(t, apperr.UserOptedOut).mentions(t, "nothing was sent to X")
			if w, _ := x.snapshot(); w != writes {
				t.Errorf("%d writes reached X, want none", w-writes)
			}
			for ep, n := range e.Sim.Billing().Requests {
				if ep[:4] != "GET " && n != billed.Requests[ep] {
					t.Errorf("%s billed %d more times", ep, n-billed.Requests[ep])
				}
			}
		})
	}
	if ok, err := clearOptOut(t, e, name); err != nil || !ok {
		t.Fatalf("Clear(%s) = %v, %v", name, ok, err)
	}
	e.call("x_reply_to_tweet", map[string]any{"text": "Happy to help", "in_reply_to_id": mention}).ok(t, nil)
}

// TestOptOutByMentionReadWithXGet: a mention saying "stop" read with the
// universal x_get of the account's mentions puts its author on the
// suppression list as the typed read does; the same read of another
// user's mentions does not.
func TestOptOutByMentionReadWithXGet(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{permissive: true, access: config.AccessEnterprise, onX: x.hook})
	user := strangerOf(t, e.Sim, 0)
	mention, err := e.Sim.PostAs(user, "@"+xsim.DemoUsername+" please stop.", "")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Status int `json:"status"`
	}
	fields := []map[string]any{{"key": "tweet.fields", "value": "author_id"}}
	e.call("x_get", map[string]any{"path": "/2/users/" + strangerOf(t, e.Sim, 1) + "/mentions", "query": fields}).ok(t, &got)
	if s, err := e.App.OptOuts(); err != nil {
		t.Fatal(err)
	} else if out, err := s.OptedOut(e.ctx, user); err != nil || out {
		t.Fatalf("another user's mentions put %s on the list (%t, %v)", user, out, err)
	}
	e.call("x_get", map[string]any{"path": "/2/users/" + e.Sim.DemoUserID() + "/mentions", "query": fields}).ok(t, &got)
	if got.Status != 200 {
		t.Fatalf("x_get of the mentions answered %d", got.Status)
	}
	writes, _ := x.snapshot()
	e.call("x_reply_to_tweet", map[string]any{"text": "Happy to help", "in_reply_to_id": mention}).fails(t, apperr.UserOptedOut)
	if w, _ := x.snapshot(); w != writes {
		t.Errorf("%d writes reached X, want none", w-writes)
	}
}

func clearOptOut(t *testing.T, e *env, user string) (bool, error) {
	t.Helper()
	s, err := e.App.OptOuts()
	if err != nil {
		return false, err
	}
	return s.Clear(e.ctx, user)
}

// TestOptOutByDM: a DM saying "opt out", read with x_get_dm_events or with
// the universal x_get, puts its sender on the suppression list, and a DM
// to them is refused with user_opted_out before X.
func TestOptOutByDM(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"typed read", "x_get_dm_events", map[string]any{}},
		{"universal read", "x_get", map[string]any{"path": "/2/dm_events",
			"query": []map[string]any{{"key": "expansions", "value": "sender_id"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var x xTraffic
			e := newEnv(t, envOptions{permissive: true, access: config.AccessEnterprise, onX: x.hook})
			to := dmRecipient(t, e)
			if _, err := e.Sim.DMAs(to.ID, "Please opt me out. OPT OUT."); err != nil {
				t.Fatal(err)
			}
			e.call(tc.tool, tc.args).ok(t, nil)
			writes, _ := x.snapshot()
			e.call("x_send_dm", map[string]any{"participant_id": to.ID, "text": "Hi again"}).fails(t, apperr.UserOptedOut)
			if w, _ := x.snapshot(); w != writes {
				t.Errorf("%d writes reached X, want none", w-writes)
			}
		})
	}
}

// TestOptOutSkipsProposals: a reply to a user on the suppression list is
// never drafted or proposed: draft_replies_for_candidates skips the
// candidate and propose_and_queue_replies blocks it, with or without a
// text of its own, each with user_opted_out and a reason naming the list.
// No LLM call, no approval item, no audit row; another user's candidate
// is drafted and queued as before.
func TestOptOutSkipsProposals(t *testing.T) {
	e := newEnv(t, envOptions{llm: true})
	var found struct {
		Candidates []struct {
			TweetID  string `json:"tweet_id"`
			AuthorID string `json:"author_id"`
		} `json:"candidates"`
	}
	e.call("find_reply_opportunities", map[string]any{"min_score": 0, "limit": 20}).ok(t, &found)
	var stopped, other string
	var stopper string
	for _, c := range found.Candidates {
		switch {
		case stopped == "":
			stopped, stopper = c.TweetID, c.AuthorID
		case c.AuthorID != stopper && other == "":
			other = c.TweetID
		}
	}
	if stopped == "" || other == "" || stopper == "" {
		t.Fatalf("want candidates of two authors: %+v", found.Candidates)
	}
	s, err := e.App.OptOuts()
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Record(e.ctx, optouts.Message{ID: "1", AuthorID: stopper, Text: "stop"}); err != nil || !ok {
		t.Fatalf("Record: %v %v", ok, err)
	}
	rows := func() int {
		t.Helper()
		var n int
		if err := e.App.DB.QueryRowContext(e.ctx, `SELECT (SELECT count(*) FROM mutation_audit) + (SELECT count(*) FROM approval_queue)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before, calls := rows(), e.LLM.Calls()

	var d struct {
		Drafts []workflow.DraftOutcome `json:"drafts"`
	}
	e.call("draft_replies_for_candidates", map[string]any{"candidate_ids": []string{stopped}}).ok(t, &d)
	if len(d.Drafts) != 1 || d.Drafts[0].Status != "skipped" || d.Drafts[0].ErrorCode != string(apperr.UserOptedOut) ||
		d.Drafts[0].DraftText != "" || !strings.Contains(d.Drafts[0].ErrorMessage, "opt-out") {
		t.Fatalf("draft for a user who said stop: %+v", d.Drafts)
	}
	for _, item := range []map[string]any{{"candidate_id": stopped}, {"candidate_id": stopped, "pre_drafted_text": "Happy to help with retries"}} {
		var p struct {
			Results []workflow.ProposeOutcome `json:"results"`
		}
		e.call("propose_and_queue_replies", map[string]any{"items": []any{item}}).ok(t, &p)
		if len(p.Results) != 1 || p.Results[0].Status != "blocked" || p.Results[0].ErrorCode != string(apperr.UserOptedOut) ||
			!strings.Contains(p.Results[0].Reason, "opt-out") {
			t.Fatalf("proposal %v for a user who said stop: %+v", item, p.Results)
		}
	}
	if n := e.LLM.Calls() - calls; n != 0 {
		t.Errorf("%d LLM calls drafted replies to a user who said stop", n)
	}
	if n := rows() - before; n != 0 {
		t.Errorf("%d audit rows or approval items for a user who said stop, want none", n)
	}

	var p struct {
		Results []workflow.ProposeOutcome `json:"results"`
	}
	e.call("propose_and_queue_replies", map[string]any{"items": []any{map[string]any{"candidate_id": other}}}).ok(t, &p)
	if len(p.Results) != 1 || p.Results[0].Status != "queued" {
		t.Fatalf("another user's proposal: %+v", p.Results)
	}
}
