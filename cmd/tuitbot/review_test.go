package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestReviewShowsWhatIsDecided: approve show names the post a delete
// would remove and shows an x_post body readably, a rejection's note stays
// on the item, and audit recent prints each mutation's rollback guidance
// and refuses filter values it cannot honour.
func TestReviewShowsWhatIsDecided(t *testing.T) {
	// A like and a follow are queued below, which X allows only an
	// enterprise app.
	h := newHome(t).with("TUITBOT_X_API__ACCESS=enterprise")
	const text = "A post a reviewer will later be asked to delete."
	p := startStdio(t, h, "--sandbox")
	p.initialize(t)
	if env := p.post(t, 2, text); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_post_tweet was not routed to approval: %+v %s", env.Error, env.Data)
	}
	p.stop(t)
	h.ok(t, "approve", "approve", "1", "--sandbox")

	audit := h.ok(t, "audit", "recent", "--sandbox")
	undo := regexp.MustCompile(`rollback: x_delete_tweet tweet_id="(\d+)"`).FindStringSubmatch(audit.stdout)
	if undo == nil {
		t.Fatalf("audit recent shows no rollback guidance for the post:\n%s", audit.stdout)
	}
	tweetID := undo[1]

	p = startStdio(t, h, "--sandbox")
	p.initialize(t)
	if env := p.callTool(t, 2, "x_delete_tweet", map[string]any{"tweet_id": tweetID}); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_delete_tweet was not routed to approval: %+v %s", env.Error, env.Data)
	}
	body := `{"text":"Posted through the raw endpoint.","reply_settings":"following"}`
	if env := p.callTool(t, 3, "x_post", map[string]any{"path": "/2/tweets", "body": body}); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_post was not routed to approval: %+v %s", env.Error, env.Data)
	}
	// A like and a follow name the post and the account they touch.
	if env := p.callTool(t, 4, "x_like_tweet", map[string]any{"tweet_id": tweetID}); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_like_tweet was not routed to approval: %+v %s", env.Error, env.Data)
	}
	var gabe struct {
		ID string `json:"id"`
	}
	if env := p.callTool(t, 5, "x_get_user_by_username", map[string]any{"username": "gopher_gabe"}); json.Unmarshal(env.Data, &gabe) != nil || gabe.ID == "" {
		t.Fatalf("x_get_user_by_username: %+v %s", env.Error, env.Data)
	}
	if env := p.callTool(t, 6, "x_follow_user", map[string]any{"target_user_id": gabe.ID}); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_follow_user was not routed to approval: %+v %s", env.Error, env.Data)
	}
	// An edit shows the text it replaces and the new one.
	const edited = "A post a reviewer will later be asked to edit."
	if env := p.callTool(t, 7, "x_edit_tweet", map[string]any{"tweet_id": tweetID, "text": edited}); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_edit_tweet was not routed to approval: %+v %s", env.Error, env.Data)
	}
	p.stop(t)
	edit := h.ok(t, "approve", "show", "6", "--sandbox")
	mustContain(t, "approve show of an edit", edit.stdout, "edits: post "+tweetID+" by @tuitbot_demo",
		fmt.Sprintf("Edits post %s: %q -> %q", tweetID, text, edited))

	del := h.ok(t, "approve", "show", "2", "--sandbox")
	mustContain(t, "approve show of a delete", del.stdout, "deletes: post "+tweetID+" by @tuitbot_demo", text, "posted ")
	like := h.ok(t, "approve", "show", "4", "--sandbox")
	mustContain(t, "approve show of a like", like.stdout, "likes: post "+tweetID+" by @tuitbot_demo", text)
	follow := h.ok(t, "approve", "show", "5", "--sandbox")
	mustContain(t, "approve show of a follow", follow.stdout, "follows: @gopher_gabe (Gabe Lindqvist)", "followers, user "+gabe.ID)
	raw := h.ok(t, "approve", "show", "3", "--sandbox")
	mustContain(t, "approve show of x_post", raw.stdout, "POST /2/tweets", "body:\n", `"reply_settings": "following"`)

	rej := h.ok(t, "approve", "reject", "3", "--notes", "not on a Friday", "--sandbox")
	mustContain(t, "reject", rej.stdout, "#3 rejected", "notes: not on a Friday")
	shown := h.ok(t, "approve", "show", "3", "--sandbox")
	mustContain(t, "approve show after the rejection", shown.stdout, "reviewed: rejected by cli", "notes: not on a Friday")
	if j := h.ok(t, "approve", "show", "3", "--json", "--sandbox"); !strings.Contains(j.stdout, `"review_notes": "not on a Friday"`) {
		t.Errorf("approve show --json lost the note:\n%s", j.stdout)
	}

	for _, args := range [][]string{
		{"audit", "recent", "--status", "succeeded"},
		{"audit", "recent", "--limit", "0"},
		{"audit", "recent", "--limit", "101"},
		{"audit", "recent", "--tool", "x_get_me"},
	} {
		r := h.run(t, append(args, "--sandbox")...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r)
		}
	}
	r := h.run(t, "audit", "recent", "--status", "succeeded", "--sandbox")
	mustContain(t, "bad --status", r.stderr, "allowed values", "success")
	var list struct {
		Mutations []struct {
			Tool     string `json:"tool_name"`
			Rollback *struct {
				UndoTool string `json:"undo_tool"`
			} `json:"rollback_action"`
		} `json:"mutations"`
		Count int `json:"count"`
	}
	if err := json.Unmarshal([]byte(h.ok(t, "audit", "recent", "--json", "--sandbox").stdout), &list); err != nil || list.Count == 0 {
		t.Fatalf("audit recent --json: %+v %v", list, err)
	}
	if m := list.Mutations[len(list.Mutations)-1]; m.Tool != "x_post_tweet" || m.Rollback == nil || m.Rollback.UndoTool != "x_delete_tweet" {
		t.Errorf("audit recent --json oldest row = %+v, want x_post_tweet with undo x_delete_tweet", m)
	}
}

// TestReviewShowsListChanges: a queued List membership change names the
// account it adds, and a List delete waits for a human like every delete.
func TestReviewShowsListChanges(t *testing.T) {
	h := newHome(t)
	p := startStdio(t, h, "--sandbox")
	p.initialize(t)
	var gabe struct {
		ID string `json:"id"`
	}
	if env := p.callTool(t, 2, "x_get_user_by_username", map[string]any{"username": "gopher_gabe"}); json.Unmarshal(env.Data, &gabe) != nil || gabe.ID == "" {
		t.Fatalf("x_get_user_by_username: %+v %s", env.Error, env.Data)
	}
	if env := p.callTool(t, 3, "x_list_add_member", map[string]any{"list_id": "5", "user_id": gabe.ID}); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
		t.Fatalf("x_list_add_member was not routed to approval: %+v %s", env.Error, env.Data)
	}
	if env := p.callTool(t, 4, "x_list_delete", map[string]any{"list_id": "5"}); !strings.Contains(string(env.Data), `"matched_rule_id":"hard:delete_approval"`) {
		t.Fatalf("x_list_delete was not held by the delete rule: %+v %s", env.Error, env.Data)
	}
	p.stop(t)
	add := h.ok(t, "approve", "show", "1", "--sandbox")
	mustContain(t, "approve show of a list addition", add.stdout, "adds to a list: @gopher_gabe (Gabe Lindqvist)", `"list_id":"5"`)
}
