package actions

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

func wantUndo(t *testing.T, tool string, got *envelope.Rollback, undo string, params map[string]any) {
	t.Helper()
	if got == nil || !got.Reversible || got.UndoTool != undo || !reflect.DeepEqual(got.UndoParams, params) || got.Note == "" {
		t.Fatalf("%s rollback = %+v, want reversible %s %v", tool, got, undo, params)
	}
}

func wantIrreversible(t *testing.T, tool string, got *envelope.Rollback) {
	t.Helper()
	if got == nil || got.Reversible || got.UndoTool != "" || got.Note == "" {
		t.Fatalf("%s rollback = %+v, want irreversible with a note", tool, got)
	}
}

func TestRollbackGuidancePerTool(t *testing.T) {
	e := newXEnv(t)
	foreign := e.otherTweets(4)
	user := e.otherUser()

	t.Run("post, reply and quote undo with x_delete_tweet of the new id", func(t *testing.T) {
		for _, tc := range []struct {
			tool   string
			params PostParams
		}{
			{"x_post_tweet", PostParams{Text: "rollback post"}},
			{"x_reply_to_tweet", PostParams{Text: "rollback reply", InReplyToID: foreign[0]}},
			{"x_quote_tweet", PostParams{Text: "rollback quote", QuotedTweetID: foreign[1]}},
		} {
			r := e.do(tc.tool, tc.params)
			posted, ok := r.Result.(PostedTweet)
			if !ok || posted.ID == "" || posted.Text != tc.params.Text || !e.tweetExists(posted.ID) {
				t.Fatalf("%s data %#v", tc.tool, r.Result)
			}
			wantUndo(t, tc.tool, r.Rollback, "x_delete_tweet", map[string]any{"tweet_id": posted.ID})
		}
	})

	t.Run("thread undoes with per-id deletes, last first", func(t *testing.T) {
		r := e.do("x_post_thread", ThreadParams{Tweets: []string{"thread one", "thread two", "thread three"}})
		th := r.Result.(PostedThread)
		if len(th.ThreadTweetIDs) != 3 || th.RootTweetID != th.ThreadTweetIDs[0] {
			t.Fatalf("thread data %#v", th)
		}
		ids := th.ThreadTweetIDs
		wantUndo(t, "x_post_thread", r.Rollback, "x_delete_tweet",
			map[string]any{"tweet_ids": []string{ids[2], ids[1], ids[0]}})
	})

	t.Run("engagement pairs undo each other", func(t *testing.T) {
		tw := foreign[2]
		for _, tc := range []struct{ tool, undo string }{
			{"x_like_tweet", "x_unlike_tweet"}, {"x_unlike_tweet", "x_like_tweet"},
			{"x_retweet", "x_unretweet"}, {"x_unretweet", "x_retweet"},
			{"x_bookmark_tweet", "x_unbookmark_tweet"}, {"x_unbookmark_tweet", "x_bookmark_tweet"},
		} {
			r := e.do(tc.tool, TweetIDParams{TweetID: tw})
			if want := EngagementData(tc.tool, !strings.Contains(tc.tool, "_un"), tw); r.Result != want {
				t.Fatalf("%s data %#v, want %#v", tc.tool, r.Result, want)
			}
			wantUndo(t, tc.tool, r.Rollback, tc.undo, map[string]any{"tweet_id": tw})
		}
		for _, tc := range []struct{ tool, undo string }{
			{"x_follow_user", "x_unfollow_user"}, {"x_unfollow_user", "x_follow_user"},
		} {
			r := e.do(tc.tool, UserIDParams{TargetUserID: user})
			wantUndo(t, tc.tool, r.Rollback, tc.undo, map[string]any{"target_user_id": user})
		}
		c := e.sim.Counters()
		for _, k := range []string{"likes", "unlikes", "retweets", "unretweets", "bookmarks", "unbookmarks", "follows", "unfollows"} {
			if c[k] != 1 {
				t.Fatalf("emulator counter %s = %d, want 1 (%v)", k, c[k], c)
			}
		}
	})

	t.Run("an edit undoes by editing back, typed or raw", func(t *testing.T) {
		posted := e.do("x_post_tweet", PostParams{Text: "rollback before the edit"}).Result.(PostedTweet)
		r := e.do("x_edit_tweet", EditParams{TweetID: posted.ID, Text: "rollback after the edit"})
		ed := r.Result.(EditedTweet)
		wantUndo(t, "x_edit_tweet", r.Rollback, "x_edit_tweet", map[string]any{"tweet_id": ed.ID, "text": "rollback before the edit"})
		if !strings.Contains(r.Rollback.Note, "does not bring the earlier text back") {
			t.Fatalf("the edit's undo note does not say a delete is no undo: %q", r.Rollback.Note)
		}
		raw := RawParams{Method: "POST", Host: "api.x.com", Path: "/2/tweets",
			Body: `{"text":"rollback after the raw edit","edit_options":{"previous_post_id":"` + ed.ID + `"}}`}
		r = e.do("x_post", raw)
		var body struct {
			Data struct{ ID string } `json:"data"`
		}
		if err := json.Unmarshal(r.Result.(RawData).JSON, &body); err != nil || body.Data.ID == "" {
			t.Fatalf("raw edit answered %+v (%v)", r.Result, err)
		}
		wantUndo(t, "x_post edit", r.Rollback, "x_edit_tweet", map[string]any{"tweet_id": body.Data.ID})
	})

	t.Run("delete is irreversible", func(t *testing.T) {
		posted := e.do("x_post_tweet", PostParams{Text: "to be deleted"}).Result.(PostedTweet)
		r := e.do("x_delete_tweet", TweetIDParams{TweetID: posted.ID})
		if d := r.Result.(DeletedTweet); !d.Deleted || d.TweetID != posted.ID || e.tweetExists(posted.ID) {
			t.Fatalf("delete data %#v", d)
		}
		wantIrreversible(t, "x_delete_tweet", r.Rollback)
	})

	t.Run("universal requests infer the inverse", func(t *testing.T) {
		raw := func(method, path, body string) RawParams {
			return RawParams{Method: method, Host: "api.x.com", Path: path, Body: body}
		}
		// The raw follow below has the intent of the typed follow above:
		// past the duplicate window, it runs again.
		e.clock.Advance(10 * time.Minute)
		before := e.sim.Counters()["tweets_created"]
		r := e.do("x_post", raw("POST", "/2/tweets", `{"text":"raw post rollback"}`))
		data := r.Result.(RawData)
		var body struct {
			Data struct{ ID string } `json:"data"`
		}
		if err := json.Unmarshal(data.JSON, &body); err != nil || body.Data.ID == "" || data.Status != 201 {
			t.Fatalf("x_post data %+v (%v)", data, err)
		}
		if got := e.sim.Counters()["tweets_created"]; got != before+1 {
			t.Fatalf("tweets_created %d, want %d", got, before+1)
		}
		wantUndo(t, "x_post /2/tweets", r.Rollback, "x_delete_tweet", map[string]any{"tweet_id": body.Data.ID})

		likes := fmt.Sprintf("/2/users/%s/likes", e.me)
		r = e.do("x_post", raw("POST", likes, `{"tweet_id":"`+foreign[3]+`"}`))
		wantUndo(t, "x_post likes", r.Rollback, "x_unlike_tweet", map[string]any{"tweet_id": foreign[3]})
		r = e.do("x_delete", raw("DELETE", likes+"/"+foreign[3], ""))
		wantUndo(t, "x_delete likes", r.Rollback, "x_like_tweet", map[string]any{"tweet_id": foreign[3]})

		follows := fmt.Sprintf("/2/users/%s/following", e.me)
		r = e.do("x_post", raw("POST", follows, `{"target_user_id":"`+user+`"}`))
		wantUndo(t, "x_post follow", r.Rollback, "x_unfollow_user", map[string]any{"target_user_id": user})

		r = e.do("x_delete", raw("DELETE", "/2/tweets/"+body.Data.ID, ""))
		wantIrreversible(t, "x_delete tweet", r.Rollback)
		if e.tweetExists(body.Data.ID) {
			t.Fatal("x_delete did not delete the tweet")
		}

		// X refused the request: nothing to undo.
		r = e.do("x_post", raw("POST", "/2/tweets", `{"text":""}`))
		if r.Result.(RawData).Status < 400 {
			t.Fatalf("empty post answered %d", r.Result.(RawData).Status)
		}
		wantIrreversible(t, "x_post refused", r.Rollback)
	})
}

func TestThreadPartialFailureRollsBackPostedTweets(t *testing.T) {
	e := newXEnv(t)
	// The third tweet repeats the first: X refuses it as duplicate content.
	_, err := e.g.Do(e.ctx, gatewayCall("x_post_thread", ThreadParams{Tweets: []string{"partial a", "partial b", "partial a"}}))
	if err == nil {
		t.Fatal("the broken thread reported success")
	}
	ae := asAppErr(t, err)
	if ae.Code != "thread_partial_failure" {
		t.Fatalf("code %s: %v", ae.Code, err)
	}
	fail, ok := ae.Data.(ThreadFailure)
	if !ok || len(fail.PostedTweetIDs) != 2 || fail.FailedAtIndex != 2 || !strings.HasPrefix(fail.Cause, "x_duplicate_content") {
		t.Fatalf("failure data %#v", ae.Data)
	}
	var status, rollback string
	if err := e.db.QueryRowContext(e.ctx, `SELECT status, rollback_action FROM mutation_audit WHERE tool_name = 'x_post_thread'`).Scan(&status, &rollback); err != nil {
		t.Fatal(err)
	}
	want := mustJSON(t, threadRollback(fail.PostedTweetIDs))
	if status != "failure" || rollback != want || !strings.Contains(rollback, fmt.Sprintf(`["%s","%s"]`, fail.PostedTweetIDs[1], fail.PostedTweetIDs[0])) {
		t.Fatalf("audit status %q rollback %s", status, rollback)
	}
}

func TestRawRollbackForUnknownEndpointIsIrreversible(t *testing.T) {
	c, err := RawParams{Method: "POST", Host: "api.x.com", Path: "/2/users/1/pinned_lists", Body: `{"list_id":"5"}`}.Check()
	if err != nil {
		t.Fatal(err)
	}
	rb := rawRollback(c, &xapi.RawResponse{Status: 200, Body: []byte(`{"data":{"pinned":true}}`)})
	wantIrreversible(t, "x_post /2/users/1/pinned_lists", rb)
	if !strings.Contains(rb.Note, "/pinned_lists") {
		t.Fatalf("note %q does not name the request", rb.Note)
	}
}

// TestRawListRollbacks: a universal List write is undone as its typed tool
// is, on the List it named: a created List by deleting it, a membership by
// its opposite; a deleted List cannot be brought back.
func TestRawListRollbacks(t *testing.T) {
	for _, tt := range []struct {
		method, path, body, answer string
		undo                       string
		params                     map[string]any
	}{
		{"POST", "/2/lists", `{"name":"x"}`, `{"data":{"id":"123","name":"x"}}`, "x_list_delete", map[string]any{"list_id": "123"}},
		{"POST", "/2/lists/5/members", `{"user_id":"77"}`, `{"data":{"is_member":true}}`, "x_list_remove_member", map[string]any{"list_id": "5", "user_id": "77"}},
		{"DELETE", "/2/lists/5/members/77", "", `{"data":{"is_member":false}}`, "x_list_add_member", map[string]any{"list_id": "5", "user_id": "77"}},
		{"DELETE", "/2/lists/5", "", `{"data":{"deleted":true}}`, "", nil},
	} {
		c, err := RawParams{Method: tt.method, Host: "api.x.com", Path: tt.path, Body: tt.body}.Check()
		if err != nil {
			t.Fatal(err)
		}
		rb := rawRollback(c, &xapi.RawResponse{Status: 200, Body: []byte(tt.answer)})
		if tt.undo == "" {
			wantIrreversible(t, tt.method+" "+tt.path, rb)
			continue
		}
		if !rb.Reversible || rb.UndoTool != tt.undo || !reflect.DeepEqual(rb.UndoParams, tt.params) {
			t.Errorf("%s %s: rollback %+v, want %s %v", tt.method, tt.path, rb, tt.undo, tt.params)
		}
	}
}

func gatewayCall(tool string, params any) gateway.Call {
	return gateway.Call{Tool: tool, Params: params}
}

func asAppErr(t *testing.T, err error) *apperr.Error {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("%T is not an *apperr.Error: %v", err, err)
	}
	return ae
}
