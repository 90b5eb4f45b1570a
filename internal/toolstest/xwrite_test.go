package toolstest

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xrules"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// executed requires that a mutation ran (not routed, not deduplicated) and
// carries a v4 correlation id and rollback guidance.
func executed(t *testing.T, r result, v any) result {
	t.Helper()
	r.ok(t, v)
	var kind struct {
		Routed    bool `json:"routed_to_approval"`
		Duplicate bool `json:"duplicate"`
		DryRun    bool `json:"dry_run"`
	}
	_ = decodeInto(r.Data, &kind)
	if kind.Routed || kind.Duplicate || kind.DryRun {
		t.Fatalf("%s did not execute: %s", r.tool, r.Data)
	}
	requireV4(t, r.Meta.CorrelationID)
	if r.Meta.Rollback == nil {
		t.Fatalf("%s: no rollback guidance in meta", r.tool)
	}
	return r
}

// requireUndo checks reversible rollback guidance.
func requireUndo(t *testing.T, rb *envelope.Rollback, tool string, params map[string]any) {
	t.Helper()
	if rb == nil || !rb.Reversible || rb.UndoTool != tool {
		t.Fatalf("rollback %+v, want reversible via %s", rb, tool)
	}
	for k, v := range params {
		if fmt.Sprint(rb.UndoParams[k]) != fmt.Sprint(v) {
			t.Fatalf("rollback undo_params[%s] = %v, want %v", k, rb.UndoParams[k], v)
		}
	}
}

// approvedByPerson requires that r (an agent's like or follow) was queued
// for a person by X's automation rules, approves it as a person, requires
// that it ran, decodes its result into v and returns its rollback
// guidance as the audit row records it.
func (e *env) approvedByPerson(t *testing.T, r result, v any) *envelope.Rollback {
	t.Helper()
	var q routed
	r.ok(t, &q)
	if !q.Routed || q.MatchedRuleID != xrules.RouteRulePrefix+xrules.RuleLikesFollows {
		t.Fatalf("%s: %s, want it queued for a person by %s", r.tool, r.Data, xrules.RuleLikesFollows)
	}
	it, resp, err := e.App.Gateway.Approve(e.ctx, q.ApprovalID, "alice", "")
	if err != nil || it.Status != gateway.ApprovalExecuted || resp.Kind != gateway.Executed {
		t.Fatalf("%s approved by a person: %+v %+v %v", r.tool, it, resp, err)
	}
	requireV4(t, resp.CorrelationID)
	b, err := json.Marshal(resp.Result)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s result %s: %v", r.tool, b, err)
	}
	return e.audit(resp.CorrelationID).Rollback
}

// audit reads one audit row through get_mutation_detail.
func (e *env) audit(corr string) gateway.AuditEntry {
	e.t.Helper()
	var a gateway.AuditEntry
	e.call("get_mutation_detail", map[string]any{"correlation_id": corr}).ok(e.t, &a)
	return a
}

type routed struct {
	Routed        bool   `json:"routed_to_approval"`
	ApprovalID    int64  `json:"approval_queue_id"`
	MatchedRuleID string `json:"matched_rule_id"`
	Reason        string `json:"reason"`
}

func TestMutationTools(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, agentApproval: true})
	demo := e.Sim.DemoUserID()

	t.Run("x_post_tweet", func(t *testing.T) {
		before := e.counters()
		text := "Shipping a dry-run mode today: see what an agent would do before it does it."
		var p actions.PostedTweet
		r := executed(t, e.call("x_post_tweet", map[string]any{"text": text}), &p)
		e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 1})
		tw, ok := e.tweetByID(p.ID)
		if !ok || tw.Text != text || tw.AuthorID != demo {
			t.Fatalf("post %s in the emulator: %+v (found %t)", p.ID, tw, ok)
		}
		requireUndo(t, r.Meta.Rollback, "x_delete_tweet", map[string]any{"tweet_id": p.ID})
		a := e.audit(r.Meta.CorrelationID)
		if a.Status != "success" || a.Tool != "x_post_tweet" || a.Caller != "mcp" || a.Rollback == nil || a.Rollback.UndoTool != "x_delete_tweet" {
			t.Fatalf("audit row %+v", a)
		}

		// The same call again is answered from the first result.
		before = e.counters()
		var dup struct {
			Duplicate bool                `json:"duplicate"`
			Original  string              `json:"original_correlation_id"`
			Cached    actions.PostedTweet `json:"cached_result"`
		}
		e.call("x_post_tweet", map[string]any{"text": text}).ok(t, &dup)
		e.requireDelta(before, nil)
		if !dup.Duplicate || dup.Original != r.Meta.CorrelationID || dup.Cached.ID != p.ID {
			t.Fatalf("repeat answered %+v, want a duplicate of %s", dup, r.Meta.CorrelationID)
		}

		e.call("x_post_tweet", map[string]any{"text": "  "}).fails(t, apperr.InvalidInput).mentions(t, "text")
		e.call("x_post_tweet", map[string]any{"text": "hi", "media_ids": []string{"12x"}}).fails(t, apperr.InvalidInput).mentions(t, "media_ids[0]")
		e.call("x_post_tweet", map[string]any{"text": "hi", "media_ids": []string{"1", "2", "3", "4", "5"}}).fails(t, apperr.InvalidInput).mentions(t, "media_ids")
		e.call("x_post_tweet", map[string]any{"text": "hi", "in_reply_to_id": "1"}).fails(t, apperr.InvalidInput).mentions(t, "in_reply_to_id")
		e.requireDelta(before, nil)
	})

	t.Run("x_reply_to_tweet", func(t *testing.T) {
		target := e.demoTweet(nil)
		before := e.counters()
		text := "We hit the same thing; moving retries behind one gateway fixed the double posts."
		var p actions.PostedTweet
		r := executed(t, e.call("x_reply_to_tweet", map[string]any{"text": text, "in_reply_to_id": target.ID}), &p)
		e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 1})
		tw, ok := e.tweetByID(p.ID)
		if !ok || tw.InReplyToTweetID != target.ID || tw.Text != text {
			t.Fatalf("reply %s: %+v, want a reply to %s", p.ID, tw, target.ID)
		}
		requireUndo(t, r.Meta.Rollback, "x_delete_tweet", map[string]any{"tweet_id": p.ID})
		// Replies to posts discovery never saw are recorded all the same.
		var rr struct {
			Replies []workflow.Reply `json:"replies"`
		}
		e.call("get_recent_replies", map[string]any{}).ok(t, &rr)
		if !slices.ContainsFunc(rr.Replies, func(x workflow.Reply) bool {
			return x.ReplyTweetID == p.ID && x.TargetTweetID == target.ID && x.Content == text
		}) {
			t.Fatalf("recent replies %+v lack %s", rr.Replies, p.ID)
		}
		requireRejectsIDs(t, e, "x_reply_to_tweet", "in_reply_to_id", func(id string) map[string]any {
			return map[string]any{"text": "a reply", "in_reply_to_id": id}
		})
		e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 1})
	})

	t.Run("x_quote_tweet", func(t *testing.T) {
		target := e.demoTweet(func(tw xsim.Tweet) bool { return tw.QuoteOf == "" })
		media := uploadPNG(t, e, "quote.png", 7)
		before := e.counters()
		text := "The part about audit trails is the one most teams skip."
		var p actions.PostedTweet
		r := executed(t, e.call("x_quote_tweet", map[string]any{"text": text, "quoted_tweet_id": target.ID, "media_ids": []string{media}}), &p)
		e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 1})
		tw, ok := e.tweetByID(p.ID)
		if !ok || tw.QuoteOf != target.ID || len(tw.MediaKeys) != 1 {
			t.Fatalf("quote %s: %+v, want a quote of %s with the media attached", p.ID, tw, target.ID)
		}
		requireUndo(t, r.Meta.Rollback, "x_delete_tweet", map[string]any{"tweet_id": p.ID})
		requireRejectsIDs(t, e, "x_quote_tweet", "quoted_tweet_id", func(id string) map[string]any {
			return map[string]any{"text": "a quote", "quoted_tweet_id": id}
		})
	})

	t.Run("x_delete_tweet", func(t *testing.T) {
		var p actions.PostedTweet
		executed(t, e.call("x_post_tweet", map[string]any{"text": "This one is going away shortly, sorry."}), &p)
		before := e.counters()
		var q routed
		r := e.call("x_delete_tweet", map[string]any{"tweet_id": p.ID}).ok(t, &q)
		// The policy here lets everything else run directly; deletes still
		// go to a human.
		if !q.Routed || q.ApprovalID == 0 || !strings.HasPrefix(q.MatchedRuleID, "hard:") || r.Meta.CorrelationID != "" {
			t.Fatalf("delete answered %s, want routed to approval by a hard rule", r.Data)
		}
		e.requireDelta(before, nil)
		if _, ok := e.tweetByID(p.ID); !ok {
			t.Fatal("the post was deleted before approval")
		}
		var it gateway.ApprovalItem
		ar := e.call("approve_item", map[string]any{"id": q.ApprovalID}).ok(t, &it)
		if it.Status != gateway.ApprovalExecuted || it.Tool != "x_delete_tweet" {
			t.Fatalf("approved item %+v", it)
		}
		requireV4(t, ar.Meta.CorrelationID)
		if rb := ar.Meta.Rollback; rb == nil || rb.Reversible {
			t.Fatalf("delete rollback %+v, want irreversible guidance", rb)
		}
		e.requireDelta(before, map[string]int64{xsim.CountTweetsDeleted: 1})
		if _, ok := e.tweetByID(p.ID); ok {
			t.Fatal("the post still exists after the approved delete")
		}
		e.call("approve_item", map[string]any{"id": q.ApprovalID}).fails(t, apperr.ApprovalNotPending)
		e.requireDelta(before, map[string]int64{xsim.CountTweetsDeleted: 1})
		requireRejectsIDs(t, e, "x_delete_tweet", "tweet_id", func(id string) map[string]any { return map[string]any{"tweet_id": id} })
	})

	// Engagement pairs: do, repeat (X-idempotent: no second side effect at
	// X, the gateway answers duplicate), undo.
	pairs := []struct {
		do, undo         string
		field            string // the seed's state field in the result
		doCount, unCount string
		state            func(w *xsim.World, tweet string) bool
	}{
		{"x_like_tweet", "x_unlike_tweet", "liked", xsim.CountLikes, xsim.CountUnlikes, func(w *xsim.World, id string) bool { return hasEdge(w.Likes, demo, id) }},
		{"x_retweet", "x_unretweet", "retweeted", xsim.CountRetweets, xsim.CountUnretweets, func(w *xsim.World, id string) bool {
			return slices.ContainsFunc(w.Tweets, func(t xsim.Tweet) bool { return t.RetweetOf == id && t.AuthorID == demo })
		}},
		{"x_bookmark_tweet", "x_unbookmark_tweet", "bookmarked", xsim.CountBookmarks, xsim.CountUnbookmarks, func(w *xsim.World, id string) bool { return hasEdge(w.Bookmarks, demo, id) }},
	}
	used := map[string]bool{}
	for _, pc := range pairs {
		t.Run(pc.do+"+"+pc.undo, func(t *testing.T) {
			w := e.Sim.World()
			target := e.demoTweet(func(tw xsim.Tweet) bool { return !used[tw.ID] && !pc.state(w, tw.ID) })
			used[target.ID] = true
			before := e.counters()
			// Exactly the seed's shape: the state field and the tweet id.
			want := map[string]any{pc.field: true, "tweet_id": target.ID}
			var en map[string]any
			var rb *envelope.Rollback
			if pc.do == "x_like_tweet" {
				// X's automation rules: an agent's like waits for a person,
				// whose approval runs it.
				rb = e.approvedByPerson(t, e.call(pc.do, map[string]any{"tweet_id": target.ID}), &en)
			} else {
				rb = executed(t, e.call(pc.do, map[string]any{"tweet_id": target.ID}), &en).Meta.Rollback
			}
			if !maps.Equal(en, want) {
				t.Fatalf("%s data %v, want %v", pc.do, en, want)
			}
			requireUndo(t, rb, pc.undo, map[string]any{"tweet_id": target.ID})
			e.requireDelta(before, map[string]int64{pc.doCount: 1})
			if !pc.state(e.Sim.World(), target.ID) {
				t.Fatalf("%s: the emulator does not show the new state", pc.do)
			}
			// A retry of the same call is a duplicate: no second call to X.
			var dup struct {
				Duplicate bool           `json:"duplicate"`
				Cached    map[string]any `json:"cached_result"`
			}
			e.call(pc.do, map[string]any{"tweet_id": target.ID}).ok(t, &dup)
			if !dup.Duplicate || !maps.Equal(dup.Cached, want) {
				t.Fatalf("%s repeated: duplicate %v, cached_result %v, want %v", pc.do, dup.Duplicate, dup.Cached, want)
			}
			e.requireDelta(before, map[string]int64{pc.doCount: 1})

			en = nil
			ru := executed(t, e.call(pc.undo, map[string]any{"tweet_id": target.ID}), &en)
			if wantUndo := map[string]any{pc.field: false, "tweet_id": target.ID}; !maps.Equal(en, wantUndo) {
				t.Fatalf("%s data %v, want %v", pc.undo, en, wantUndo)
			}
			requireUndo(t, ru.Meta.Rollback, pc.do, map[string]any{"tweet_id": target.ID})
			e.requireDelta(before, map[string]int64{pc.doCount: 1, pc.unCount: 1})
			if pc.state(e.Sim.World(), target.ID) {
				t.Fatalf("%s: the emulator still shows the state", pc.undo)
			}
			if a := e.audit(ru.Meta.CorrelationID); a.Status != "success" || a.Tool != pc.undo {
				t.Fatalf("audit of %s: %+v", pc.undo, a)
			}
			for _, tool := range []string{pc.do, pc.undo} {
				requireRejectsIDs(t, e, tool, "tweet_id", func(id string) map[string]any { return map[string]any{"tweet_id": id} })
			}
			e.requireDelta(before, map[string]int64{pc.doCount: 1, pc.unCount: 1})
		})
	}

	t.Run("x_follow_user+x_unfollow_user", func(t *testing.T) {
		u := e.otherUser()
		before := e.counters()
		var fs actions.FollowState
		// An agent's follow waits for a person, whose approval runs it.
		rb := e.approvedByPerson(t, e.call("x_follow_user", map[string]any{"target_user_id": u.ID}), &fs)
		if !fs.Following || fs.TargetUserID != u.ID {
			t.Fatalf("follow data %+v", fs)
		}
		requireUndo(t, rb, "x_unfollow_user", map[string]any{"target_user_id": u.ID})
		e.requireDelta(before, map[string]int64{xsim.CountFollows: 1})
		if !hasEdge(e.Sim.World().Follows, demo, u.ID) {
			t.Fatal("the emulator does not show the follow")
		}
		ru := executed(t, e.call("x_unfollow_user", map[string]any{"target_user_id": u.ID}), &fs)
		if fs.Following {
			t.Fatalf("unfollow data %+v", fs)
		}
		requireUndo(t, ru.Meta.Rollback, "x_follow_user", map[string]any{"target_user_id": u.ID})
		e.requireDelta(before, map[string]int64{xsim.CountFollows: 1, xsim.CountUnfollows: 1})
		if hasEdge(e.Sim.World().Follows, demo, u.ID) {
			t.Fatal("the emulator still shows the follow")
		}
		for _, tool := range []string{"x_follow_user", "x_unfollow_user"} {
			requireRejectsIDs(t, e, tool, "target_user_id", func(id string) map[string]any { return map[string]any{"target_user_id": id} })
		}
		e.requireDelta(before, map[string]int64{xsim.CountFollows: 1, xsim.CountUnfollows: 1})
	})
}

func hasEdge(es []xsim.Edge, from, to string) bool {
	return slices.ContainsFunc(es, func(e xsim.Edge) bool { return e.From == from && e.To == to })
}

// TestGatedByDefault: with the default policy (approval mode on) every
// mutation tool, media upload included, is queued for a human and nothing
// reaches X; a caller's idempotency key is honoured.
func TestGatedByDefault(t *testing.T) {
	e := newEnv(t, envOptions{agentApproval: true})
	path := writeFile(t, e.Media+"/gated.png", pngBytes(t, 61))
	target := e.demoTweet(nil)
	before := e.counters()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"x_post_tweet", map[string]any{"text": "Queued, not posted."}},
		{"x_reply_to_tweet", map[string]any{"text": "Queued reply.", "in_reply_to_id": target.ID}},
		{"x_quote_tweet", map[string]any{"text": "Queued quote.", "quoted_tweet_id": target.ID}},
		{"x_post_thread", map[string]any{"tweets": []string{"a queued", "thread"}}},
		{"x_like_tweet", map[string]any{"tweet_id": target.ID}},
		{"x_unlike_tweet", map[string]any{"tweet_id": target.ID}},
		{"x_retweet", map[string]any{"tweet_id": target.ID}},
		{"x_unretweet", map[string]any{"tweet_id": target.ID}},
		{"x_bookmark_tweet", map[string]any{"tweet_id": target.ID}},
		{"x_unbookmark_tweet", map[string]any{"tweet_id": target.ID}},
		{"x_follow_user", map[string]any{"target_user_id": target.AuthorID}},
		{"x_unfollow_user", map[string]any{"target_user_id": target.AuthorID}},
		{"x_delete_tweet", map[string]any{"tweet_id": target.ID}},
		{"x_upload_media", map[string]any{"file_path": path, "alt_text": "gated"}},
	} {
		var q routed
		r := e.call(c.tool, c.args).ok(t, &q)
		if !q.Routed || q.ApprovalID == 0 || r.Meta.ApprovalMode == nil || !*r.Meta.ApprovalMode {
			t.Fatalf("%s: %s, want routed to approval", c.tool, r.Data)
		}
		var it gateway.ApprovalItem
		e.call("get_approval_item", map[string]any{"id": q.ApprovalID}).ok(t, &it)
		if it.Tool != c.tool || it.Status != gateway.ApprovalPending {
			t.Fatalf("%s: queued item %+v", c.tool, it)
		}
	}
	e.requireDelta(before, nil)

	// Approving the upload runs it: the media id comes back on the item.
	var pending struct {
		Items []gateway.ApprovalItem `json:"items"`
	}
	e.call("list_pending_approvals", map[string]any{}).ok(t, &pending)
	i := slices.IndexFunc(pending.Items, func(it gateway.ApprovalItem) bool { return it.Tool == "x_upload_media" })
	var it gateway.ApprovalItem
	e.call("approve_item", map[string]any{"id": pending.Items[i].ID}).ok(t, &it)
	var m actions.MediaResult
	if err := decodeInto(it.Result, &m); err != nil || m.MediaID == "" || it.Status != gateway.ApprovalExecuted {
		t.Fatalf("approved upload %+v", it)
	}
	e.requireDelta(before, map[string]int64{xsim.CountMediaUploaded: 1, xsim.CountMediaMetadata: 1})

	t.Run("idempotency_key", func(t *testing.T) {
		var a, b routed
		e.call("x_post_tweet", map[string]any{"text": "Keyed post.", "idempotency_key": "k-1"}).ok(t, &a)
		e.call("x_post_tweet", map[string]any{"text": "Keyed post.", "idempotency_key": "k-1"}).ok(t, &b)
		if a.ApprovalID == 0 || b.ApprovalID != a.ApprovalID {
			t.Fatalf("the same key and parameters queued %d and %d", a.ApprovalID, b.ApprovalID)
		}
		e.call("x_post_tweet", map[string]any{"text": "x", "idempotency_key": strings.Repeat("k", 201)}).fails(t, apperr.InvalidInput).mentions(t, "idempotency_key")
		// The key is remembered although its first call only reached the
		// queue: other parameters under it are a conflict, not a second item.
		e.call("x_post_tweet", map[string]any{"text": "Other text, same key.", "idempotency_key": "k-1"}).fails(t, apperr.IdempotencyConflict)
	})
}

// TestXNotConfigured: without a token file every X tool says how to sign
// in, and a gated call that cannot be attempted leaves no audit row (it is
// answered before the pending row is written).
func TestXNotConfigured(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	if err := os.Remove(e.Cfg.TokenFile()); err != nil {
		t.Fatal(err)
	}
	before := e.counters()
	e.call("x_get_me", map[string]any{}).fails(t, apperr.XNotConfigured).mentions(t, "tuitbot auth")
	e.call("find_reply_opportunities", map[string]any{}).fails(t, apperr.XNotConfigured)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"x_post_tweet", map[string]any{"text": "No token, no post."}},
		{"x_bookmark_tweet", map[string]any{"tweet_id": e.demoTweet(nil).ID}},
		{"x_post", map[string]any{"path": "/2/tweets", "body": `{"text":"No token, no raw post."}`}},
	} {
		r := e.call(c.tool, c.args).fails(t, apperr.XNotConfigured)
		if r.Meta.CorrelationID != "" {
			t.Fatalf("%s: a call that was never attempted got correlation id %s", c.tool, r.Meta.CorrelationID)
		}
	}
	var list struct {
		Count int `json:"count"`
	}
	e.call("get_recent_mutations", map[string]any{}).ok(t, &list)
	if list.Count != 0 {
		t.Fatalf("%d audit rows for calls that could not be attempted", list.Count)
	}
	e.requireDelta(before, nil)
}
