package toolstest

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// editEnv is an environment on a fake clock (the App's and the emulator's)
// that counts the POST /2/tweets requests reaching the emulator.
func editEnv(t *testing.T, o envOptions) (*env, *clock.Fake, *atomic.Int64) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	o.now = clk.Now
	e := newEnv(t, o)
	var writes atomic.Int64
	e.Sim.SetFault("POST /2/tweets", xsim.Fault{OnArrive: func(context.Context) { writes.Add(1) }})
	return e, clk, &writes
}

// refusedWithoutWrite requires edit_window_closed naming the field that
// decided, with no request to write reaching the emulator.
func refusedWithoutWrite(t *testing.T, e *env, writes *atomic.Int64, args map[string]any, mentions ...string) {
	t.Helper()
	before, edited := writes.Load(), e.counters()[xsim.CountTweetsEdited]
	e.call("x_edit_tweet", args).fails(t, apperr.EditWindowClosed).mentions(t, mentions...)
	if writes.Load() != before || e.counters()[xsim.CountTweetsEdited] != edited {
		t.Fatalf("a refused edit reached the emulator (%d writes, %d edits before; %d, %d after)",
			before, edited, writes.Load(), e.counters()[xsim.CountTweetsEdited])
	}
}

// TestEditTweet: x_edit_tweet inside the window makes a new version whose
// history holds both, with an edit back as its undo; an earlier version,
// someone else's post, a post with a poll, a sixth edit and a window about
// to close are refused before any write; a retried edit with the same
// idempotency key edits once.
func TestEditTweet(t *testing.T) {
	e, clk, writes := editEnv(t, envOptions{permissive: true})
	const first = "Shipping the edit tool on Tuesday."
	var orig actions.PostedTweet
	executed(t, e.call("x_post_tweet", map[string]any{"text": first}), &orig)

	clk.Advance(2 * time.Minute)
	var v2 actions.EditedTweet
	r := executed(t, e.call("x_edit_tweet", map[string]any{"tweet_id": orig.ID, "text": "Shipping the edit tool on Wednesday."}), &v2)
	if v2.ID == orig.ID || v2.PreviousID != orig.ID || !slices.Equal(v2.EditHistoryTweetIDs, []string{orig.ID, v2.ID}) {
		t.Fatalf("edit data %+v", v2)
	}
	if tw, ok := e.tweetByID(v2.ID); !ok || tw.Text != "Shipping the edit tool on Wednesday." || !slices.Equal(tw.EditHistory, []string{orig.ID, v2.ID}) {
		t.Fatalf("the emulator holds %+v (found %v)", tw, ok)
	}
	requireUndo(t, r.Meta.Rollback, "x_edit_tweet", map[string]any{"tweet_id": v2.ID, "text": first})

	// A retry with the same key, after the in-memory window, edits once.
	args := map[string]any{"tweet_id": v2.ID, "text": "Shipping the edit tool on Thursday.", "idempotency_key": "edit-thursday"}
	var v3 actions.EditedTweet
	executed(t, e.call("x_edit_tweet", args), &v3)
	clk.Advance(time.Minute)
	edits := e.counters()[xsim.CountTweetsEdited]
	again := e.call("x_edit_tweet", args).ok(t, nil)
	if e.counters()[xsim.CountTweetsEdited] != edits {
		t.Fatalf("the retried edit edited again: %s", again.Data)
	}
	if tw, _ := e.tweetByID(v3.ID); len(tw.EditHistory) != 3 {
		t.Fatalf("after the retry the chain is %v, want 3 versions", tw.EditHistory)
	}

	refusedWithoutWrite(t, e, writes, map[string]any{"tweet_id": orig.ID, "text": "Editing an old version."}, orig.ID, "edit_history_tweet_ids", v3.ID)
	other := e.demoTweet(nil)
	refusedWithoutWrite(t, e, writes, map[string]any{"tweet_id": other.ID, "text": "Not mine to edit."}, "author_id")

	var poll actions.PostedTweet
	executed(t, e.call("x_post_tweet", map[string]any{"text": "Which day suits you?",
		"options": map[string]any{"poll": map[string]any{"options": []string{"Tuesday", "Wednesday"}, "duration_minutes": 60}}}), &poll)
	refusedWithoutWrite(t, e, writes, map[string]any{"tweet_id": poll.ID, "text": "Which day suits you best?"}, "attachments.poll_ids")

	// Edits 3 to 5 are taken; a sixth is refused.
	cur := v3.ID
	for i, day := range []string{"Friday", "Saturday", "Sunday"} {
		var v actions.EditedTweet
		r := executed(t, e.call("x_edit_tweet", map[string]any{"tweet_id": cur, "text": "Shipping the edit tool on " + day + "."}), &v)
		cur = v.ID
		if i == 2 && r.Meta.Rollback.Reversible {
			t.Fatalf("the fifth edit offers an undo X would refuse: %+v", r.Meta.Rollback)
		}
	}
	refusedWithoutWrite(t, e, writes, map[string]any{"tweet_id": cur, "text": "Shipping it on Monday."}, "edit_controls.edits_remaining")

	// Outside the window: less than a minute left, then none.
	var late actions.PostedTweet
	executed(t, e.call("x_post_tweet", map[string]any{"text": "A post edited too late."}), &late)
	clk.Advance(xsim.EditWindow - 30*time.Second)
	refusedWithoutWrite(t, e, writes, map[string]any{"tweet_id": late.ID, "text": "A post edited just too late."}, "edit_controls.editable_until")
	clk.Advance(time.Minute)
	refusedWithoutWrite(t, e, writes, map[string]any{"tweet_id": late.ID, "text": "A post edited far too late."}, "edit_controls.editable_until")

	requireRejectsIDs(t, e, "x_edit_tweet", "tweet_id", func(id string) map[string]any { return map[string]any{"tweet_id": id, "text": "t"} })
	e.call("x_edit_tweet", map[string]any{"tweet_id": late.ID, "text": "t", "options": map[string]any{"poll": map[string]any{"options": []string{"a", "b"}, "duration_minutes": 5}}}).
		fails(t, apperr.InvalidInput).mentions(t, "options.poll")
	e.call("x_edit_tweet", map[string]any{"tweet_id": late.ID, "text": ""}).fails(t, apperr.InvalidInput).mentions(t, "text")
}

// TestEditNeedsApprovalAndExpiresWithItsWindow: under the default policy
// an edit waits for approval, and its item expires when the post's edit
// window closes rather than a day later; approving it then edits nothing.
func TestEditNeedsApprovalAndExpiresWithItsWindow(t *testing.T) {
	e, clk, writes := editEnv(t, envOptions{})
	id, err := e.Sim.PostAs(e.Sim.DemoUserID(), "A post waiting for its edit.", "")
	if err != nil {
		t.Fatal(err)
	}
	posted := clk.Now()
	clk.Advance(10 * time.Minute)
	var q routed
	e.call("x_edit_tweet", map[string]any{"tweet_id": id, "text": "A post that got its edit."}).ok(t, &q)
	if !q.Routed || q.ApprovalID == 0 || q.MatchedRuleID != "compat:approval:x_edit_tweet" {
		t.Fatalf("with the default policy x_edit_tweet answered %+v, want it routed to approval by its rule", q)
	}
	it, err := e.App.Gateway.Item(e.ctx, q.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if want := posted.Add(xsim.EditWindow).UTC().Format("2006-01-02T15:04:05.000Z"); it.ExpiresAt != want {
		t.Fatalf("the item expires at %s, want the end of the edit window %s", it.ExpiresAt, want)
	}
	clk.Advance(20*time.Minute + time.Second)
	if _, _, err := e.App.Gateway.Approve(e.ctx, q.ApprovalID, "test", ""); apperr.CodeOf(err) != apperr.ApprovalNotPending {
		t.Fatalf("approving after the window: %v", err)
	}
	if writes.Load() != 0 || e.counters()[xsim.CountTweetsEdited] != 0 {
		t.Fatal("an expired edit reached the emulator")
	}
}

// TestUniversalEditHasTheEditsPolicyAndIntent: x_post with edit_options
// gets x_edit_tweet's policy (here: approval while posts go straight
// out) and its intent (the typed call is the same waiting item).
func TestUniversalEditHasTheEditsPolicyAndIntent(t *testing.T) {
	e, _, _ := editEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
		c.MCPPolicy.RequireApprovalFor = []string{"x_edit_tweet"}
	}})
	id, err := e.Sim.PostAs(e.Sim.DemoUserID(), "A post edited through the raw endpoint.", "")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"text":"A post edited through the raw endpoint, twice.","edit_options":{"previous_post_id":"` + id + `"}}`
	var q routed
	e.call("x_post", map[string]any{"path": "/2/tweets", "body": body}).ok(t, &q)
	if !q.Routed || q.MatchedRuleID != "compat:approval:x_edit_tweet" {
		t.Fatalf("x_post with edit_options answered %+v, want x_edit_tweet's approval", q)
	}
	var same routed
	e.call("x_edit_tweet", map[string]any{"tweet_id": id, "text": "A post edited through the raw endpoint, twice."}).ok(t, &same)
	if same.ApprovalID != q.ApprovalID {
		t.Fatalf("the typed edit made item %d, want the raw edit's item %d", same.ApprovalID, q.ApprovalID)
	}
	var posted struct {
		Status int `json:"status"`
	}
	executed(t, e.call("x_post", map[string]any{"path": "/2/tweets", "body": `{"text":"A plain post through the raw endpoint."}`}), &posted)
	if posted.Status != 201 {
		t.Fatalf("a plain raw post answered %d", posted.Status)
	}
}

// TestEditOfUnknownOutcomeIsFoundOnX: an edit X applied but whose answer
// was lost is found on X (a newer version with the new text) when it is
// asked again, and is not sent a second time.
func TestEditOfUnknownOutcomeIsFoundOnX(t *testing.T) {
	e, clk, _ := editEnv(t, envOptions{permissive: true})
	var orig actions.PostedTweet
	executed(t, e.call("x_post_tweet", map[string]any{"text": "A post whose edit answer is lost."}), &orig)
	e.Sim.SetFault("POST /2/tweets", xsim.Fault{ApplyThenFailNext: 1})
	args := map[string]any{"tweet_id": orig.ID, "text": "A post whose edit answer was lost."}
	e.call("x_edit_tweet", args).fails(t, apperr.XOutcomeUnknown)
	if n := e.counters()[xsim.CountTweetsEdited]; n != 1 {
		t.Fatalf("tweets_edited = %d after the lost answer, want 1", n)
	}
	clk.Advance(time.Minute)
	r := e.call("x_edit_tweet", args).ok(t, nil)
	if n := e.counters()[xsim.CountTweetsEdited]; n != 1 {
		t.Fatalf("asking again edited again (%d edits): %s", n, r.Data)
	}
}
