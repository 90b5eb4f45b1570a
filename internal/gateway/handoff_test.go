package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// likeAction is a registered x_like_tweet that must never run: the
// platform rules refuse it first.
func likeAction(t *testing.T) *Action {
	return &Action{Tool: "x_like_tweet", Category: policy.CatWrite,
		Execute: func(context.Context, json.RawMessage) (Result, error) {
			t.Error("the refused like reached its action")
			return Result{}, nil
		}}
}

// handOffRow reads what the tests look at of one hand-off row and its
// audit row.
func (e *env) handOffRow(id int64) (status, intent, postID, auditStatus, resolution, result string) {
	e.t.Helper()
	err := e.db.QueryRowContext(e.ctx, `SELECT h.status, h.intent_url, COALESCE(h.post_id,''), a.status, COALESCE(a.resolution,''), COALESCE(a.result_json,'')
		FROM handoffs h JOIN mutation_audit a ON a.correlation_id = h.correlation_id WHERE h.id = ?`, id).
		Scan(&status, &intent, &postID, &auditStatus, &resolution, &result)
	if err != nil {
		e.t.Fatalf("read hand-off %d: %v", id, err)
	}
	return
}

// TestRefusalBecomesHandOff: a like the platform rules refuse becomes a
// hand-off in the refusal's transaction: the audit row says handed_off,
// the error names the hand-off, whose link is X's like intent for the
// post. The same call again is refused pointing at the open hand-off,
// not handed off twice. Without an intent base (no hand-offs) the
// refusal stays a failure.
func TestRefusalBecomesHandOff(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		rules := &platformRules{}
		rules.set(apperr.New(apperr.XFeatureUnavailable, "x_like_tweet: X removed likes from pay-per-use"))
		e.opts.Platform = rules
		e.opts.IntentBase = func() string { return "http://127.0.0.1:8099" }
		g := e.open()
		g.Register(likeAction(t))

		_, err := g.Do(e.ctx, Call{Tool: "x_like_tweet", Params: map[string]any{"tweet_id": "1500"}})
		refusal := wantCode(t, err, apperr.XFeatureUnavailable)
		id, ok := refusal.Extra["handoff_id"].(int64)
		if !ok || id == 0 {
			t.Fatalf("no handoff_id in the refusal: %#v", refusal.Extra)
		}
		status, intent, _, auditStatus, _, _ := e.handOffRow(id)
		if status != HandOffOpen || auditStatus != statusHandedOff || intent != "http://127.0.0.1:8099/intent/like?tweet_id=1500" {
			t.Fatalf("hand-off %d: status %q, audit %q, link %q", id, status, auditStatus, intent)
		}

		_, err = g.Do(e.ctx, Call{Tool: "x_like_tweet", Params: map[string]any{"tweet_id": "1500"}})
		again := wantCode(t, err, apperr.XFeatureUnavailable)
		if again.Extra["handoff_id"] != id || e.countRows("handoffs") != 1 {
			t.Fatalf("repeat: handoff_id %v, %d hand-offs; want %d and 1", again.Extra["handoff_id"], e.countRows("handoffs"), id)
		}
		if st := e.statuses(); len(st) != 2 || st[1] != statusFailure {
			t.Fatalf("audit statuses %v, want [handed_off failure]", st)
		}

		rules.set(apperr.New(apperr.XFeatureUnavailable, "x_like_tweet: X removed likes from pay-per-use"))
		e.opts.IntentBase = nil
		plain := e.open()
		plain.Register(likeAction(t))
		_, err = plain.Do(e.ctx, Call{Tool: "x_like_tweet", Params: map[string]any{"tweet_id": "1501"}})
		if r := wantCode(t, err, apperr.XFeatureUnavailable); r.Extra["handoff_id"] != nil || e.countRows("handoffs") != 1 {
			t.Fatalf("without an intent base: handoff_id %v, %d hand-offs", r.Extra["handoff_id"], e.countRows("handoffs"))
		}
	})
}

// ownedReads is X as the check sees it: what the person did, and how
// often each read was made.
type ownedReads struct {
	mu                  sync.Mutex
	posts               []OwnPost
	liked, following    []string
	fail                error
	nPosts, nLiked, nFo int
}

func (o *ownedReads) OwnPosts(context.Context) ([]OwnPost, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.nPosts++
	return o.posts, o.fail
}

func (o *ownedReads) LikedPosts(context.Context) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.nLiked++
	return o.liked, o.fail
}

func (o *ownedReads) Following(context.Context) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.nFo++
	return o.following, o.fail
}

func (o *ownedReads) reads() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.nPosts + o.nLiked + o.nFo
}

// TestCheckHandOffs: the check finds a like, a reply and a follow the
// person made after the hand-off and records done_by_person with the
// post or user on the hand-off and its audit row; a reply made before
// the hand-off does not count; a failed read leaves hand-offs open; a
// periodic check leaves a hand-off checked less than five minutes ago
// alone; one nobody did becomes not_done when its window ends, and not
// a moment before.
func TestCheckHandOffs(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.opts.IntentBase = func() string { return "https://x.com" }
		e.opts.HandOffWindow = 2 * time.Hour
		g := e.open()
		start := e.clock.Now()
		mk := func(r HandOffRequest) int64 {
			t.Helper()
			h, err := g.HandOff(e.ctx, r)
			if err != nil {
				t.Fatalf("HandOff(%+v): %v", r, err)
			}
			return h.ID
		}
		like := mk(HandOffRequest{Effect: "x_like_tweet", TweetID: "100", Reason: "no likes on pay-per-use"})
		reply := mk(HandOffRequest{Effect: "x_reply_to_tweet", TweetID: "200", Text: "thanks & see you", Caller: "autopilot", Loop: "mentions"})
		follow := mk(HandOffRequest{Effect: "x_follow_user", TargetUser: "300"})
		never := mk(HandOffRequest{Effect: "x_like_tweet", TweetID: "400"})
		if again := mk(HandOffRequest{Effect: "x_like_tweet", TweetID: "100"}); again != like {
			t.Fatalf("the same open hand-off asked again got id %d, want %d", again, like)
		}
		if _, err := g.HandOff(e.ctx, HandOffRequest{Effect: "x_unlike_tweet", TweetID: "1"}); apperr.CodeOf(err) != apperr.InvalidInput {
			t.Fatalf("an unlike hand-off: %v, want invalid_input", err)
		}

		x := &ownedReads{fail: errors.New("X unreachable")}
		if _, err := g.CheckHandOffs(e.ctx, x, true); err == nil {
			t.Fatal("a failed read returned no error")
		}
		if st, _, _, _, _, _ := e.handOffRow(like); st != HandOffOpen {
			t.Fatalf("after a failed read the like is %q", st)
		}

		// The person likes 100, follows 300 and replies to 200 (an older
		// reply to 200 is no answer to this hand-off).
		x = &ownedReads{liked: []string{"9", "100"}, following: []string{"300"}, posts: []OwnPost{
			{ID: "501", RepliesTo: "200", CreatedAt: start.Add(-time.Hour)},
			{ID: "502", RepliesTo: "200", CreatedAt: start.Add(time.Minute)},
		}}
		e.clock.Advance(time.Minute)
		if got, err := g.CheckHandOffs(e.ctx, x, false); err != nil || len(got) != 0 || x.reads() != 0 {
			t.Fatalf("a periodic check a minute after the last: %d resolved, %d reads, %v", len(got), x.reads(), err)
		}
		e.clock.Advance(5 * time.Minute)
		got, err := g.CheckHandOffs(e.ctx, x, false)
		if err != nil || len(got) != 3 {
			t.Fatalf("check: %d resolved, %v; want 3", len(got), err)
		}
		if x.nPosts != 1 || x.nLiked != 1 || x.nFo != 1 {
			t.Fatalf("reads: %d posts, %d likes, %d follows; want one each", x.nPosts, x.nLiked, x.nFo)
		}
		for _, c := range []struct {
			id     int64
			postID string
			key    string
		}{{like, "100", "post_id"}, {reply, "502", "post_id"}, {follow, "300", "user_id"}} {
			st, _, postID, audit, res, result := e.handOffRow(c.id)
			var m map[string]string
			_ = json.Unmarshal([]byte(result), &m)
			if st != HandOffDone || postID != c.postID || audit != statusHandedOff || res != HandOffDone || m[c.key] != c.postID {
				t.Fatalf("hand-off %d: %q %q, audit %q %q %s; want done_by_person with %s", c.id, st, postID, audit, res, result, c.postID)
			}
		}
		h, err := g.GetHandOff(e.ctx, follow)
		if err != nil || h.UserID != "300" || h.Status != HandOffDone {
			t.Fatalf("GetHandOff: %+v %v", h, err)
		}

		e.clock.Set(start.Add(2*time.Hour - time.Second))
		if got, err := g.CheckHandOffs(e.ctx, x, true); err != nil || len(got) != 0 {
			t.Fatalf("a second before the window ends: %d resolved, %v", len(got), err)
		}
		e.clock.Set(start.Add(2 * time.Hour))
		got, err = g.CheckHandOffs(e.ctx, x, true)
		if err != nil || len(got) != 1 || got[0].ID != never || got[0].Status != HandOffNotDone {
			t.Fatalf("when the window ends: %+v %v; want %d not_done", got, err, never)
		}
		if st, _, _, _, res, _ := e.handOffRow(never); st != HandOffNotDone || res != HandOffNotDone {
			t.Fatalf("hand-off %d: %q, audit resolution %q", never, st, res)
		}
	})
}

// TestFollowHandOffNamesTheHandle: X's follow intent takes the account's
// handle (intent/follow?screen_name=NAME), not its id. A refused follow
// and a follow handed off directly resolve the handle through the
// gateway's Username lookup; when that lookup fails, the link is the
// account's profile (intent/user?user_id=), which has the Follow button,
// never a follow intent X would not fill in.
func TestFollowHandOffNamesTheHandle(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		rules := &platformRules{}
		rules.set(apperr.New(apperr.XFeatureUnavailable, "x_follow_user: X removed follows from pay-per-use"))
		e.opts.Platform = rules
		e.opts.IntentBase = func() string { return "https://x.com" }
		asked := map[string]int{}
		e.opts.Username = func(_ context.Context, id string) (string, error) {
			asked[id]++
			if id == "404" {
				return "", apperr.New(apperr.XNotFound, "user %s not found", id)
			}
			return "user_" + id, nil
		}
		g := e.open()
		g.Register(&Action{Tool: "x_follow_user", Category: policy.CatWrite,
			Execute: func(context.Context, json.RawMessage) (Result, error) {
				t.Error("the refused follow reached its action")
				return Result{}, nil
			}})
		for _, tc := range []struct {
			name, user, want string
			direct           bool
		}{
			{"refused follow", "77", "https://x.com/intent/follow?screen_name=user_77", false},
			{"direct hand-off", "78", "https://x.com/intent/follow?screen_name=user_78", true},
			{"unknown handle", "404", "https://x.com/intent/user?user_id=404", false},
		} {
			var id int64
			if tc.direct {
				h, err := g.HandOff(e.ctx, HandOffRequest{Effect: "x_follow_user", TargetUser: tc.user, Reason: "a person follows"})
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				id = h.ID
			} else {
				_, err := g.Do(e.ctx, Call{Tool: "x_follow_user", Params: map[string]any{"target_user_id": tc.user}})
				var ok bool
				if id, ok = wantCode(t, err, apperr.XFeatureUnavailable).Extra["handoff_id"].(int64); !ok {
					t.Fatalf("%s: no hand-off", tc.name)
				}
			}
			if _, intent, _, _, _, _ := e.handOffRow(id); intent != tc.want {
				t.Errorf("%s: link %q, want %q", tc.name, intent, tc.want)
			}
			if asked[tc.user] != 1 {
				t.Errorf("%s: the handle was looked up %d times, want 1", tc.name, asked[tc.user])
			}
		}
		if _, err := g.HandOff(e.ctx, HandOffRequest{Effect: "x_follow_user", TargetUser: "79", TargetUsername: "not a handle!"}); apperr.CodeOf(err) != apperr.InvalidInput {
			t.Fatalf("a bad handle: %v, want invalid_input", err)
		}
	})
}
