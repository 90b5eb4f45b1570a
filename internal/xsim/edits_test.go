package xsim

import (
	"slices"
	"testing"
	"time"
)

func (e *env) edit(prev, text string) resp {
	e.t.Helper()
	return e.do("POST", "/2/tweets", map[string]any{"text": text, "edit_options": map[string]any{"previous_post_id": prev}})
}

func editControlsOf(t *testing.T, e *env, id string) (history []string, controls map[string]any) {
	t.Helper()
	r := e.get("/2/tweets/" + id + "?tweet.fields=edit_controls,edit_history_tweet_ids")
	wantStatus(t, r, 200)
	for _, v := range r.data()["edit_history_tweet_ids"].([]any) {
		history = append(history, v.(string))
	}
	return history, r.data()["edit_controls"].(map[string]any)
}

// TestEditChain: each edit is a new id; every version lists the whole
// chain, oldest first, and the chain's controls; timelines show only the
// latest version; deleting one version deletes them all.
func TestEditChain(t *testing.T) {
	e := newEnv(t)
	first := e.post("first draft of the edit chain")
	e.clock.Advance(time.Minute)
	r := e.edit(first, "second draft of the edit chain")
	wantStatus(t, r, 201)
	second := r.data()["id"].(string)
	if second == first || r.data()["text"] != "second draft of the edit chain" {
		t.Fatalf("edit answered %v", r.data())
	}
	if got := r.data()["edit_history_tweet_ids"].([]any); len(got) != 2 || got[0] != first || got[1] != second {
		t.Fatalf("edit_history_tweet_ids = %v", got)
	}
	for _, id := range []string{first, second} {
		hist, ec := editControlsOf(t, e, id)
		if !slices.Equal(hist, []string{first, second}) {
			t.Errorf("version %s: history %v", id, hist)
		}
		if ec["edits_remaining"] != float64(4) || ec["is_edit_eligible"] != true || ec["editable_until"] != "2026-03-10T12:30:00.000Z" {
			t.Errorf("version %s: edit_controls %v", id, ec)
		}
	}
	if n := e.counter(CountTweetsEdited); n != 1 {
		t.Fatalf("tweets_edited = %d", n)
	}
	tl := e.get("/2/users/" + e.me + "/tweets?max_results=100")
	for _, item := range tl.list() {
		if item.(map[string]any)["id"] == first {
			t.Fatal("the timeline shows the superseded version")
		}
	}
	// Editing back to the first text is no duplicate.
	wantStatus(t, e.edit(second, "first draft of the edit chain"), 201)

	wantStatus(t, e.do("DELETE", "/2/tweets/"+second, nil), 200)
	for _, id := range []string{first, second} {
		if r := e.get("/2/tweets/" + id); r.body["data"] != nil {
			t.Errorf("version %s survives the delete of another version", id)
		}
	}
}

// TestEditRefusals: X's 403 for every edit it refuses, and no version is
// made.
func TestEditRefusals(t *testing.T) {
	e := newEnv(t)
	other := e.someTweet()
	mine := e.post("a post to edit five times")
	cur := mine
	for i := range MaxEdits {
		r := e.edit(cur, "edit number "+string(rune('1'+i)))
		wantStatus(t, r, 201)
		cur = r.data()["id"].(string)
	}
	_, ec := editControlsOf(t, e, cur)
	if ec["edits_remaining"] != float64(0) {
		t.Fatalf("after 5 edits: %v", ec)
	}
	fresh := e.post("a post edited too late")
	polled := e.do("POST", "/2/tweets", map[string]any{"text": "a poll", "poll": map[string]any{"options": []string{"a", "b"}, "duration_minutes": 60}})
	wantStatus(t, polled, 201)
	poll := polled.data()["id"].(string)
	if _, ec := editControlsOf(t, e, poll); ec["is_edit_eligible"] != false {
		t.Fatalf("poll post edit_controls %v", ec)
	}

	tests := []struct {
		name, prev, detail string
		advance            time.Duration
	}{
		{"sixth edit", cur, DetailEditsExhausted, 0},
		{"not the latest version", mine, DetailEditNotLatest, 0},
		{"someone else's post", other, DetailEditNotAuthor, 0},
		{"a post with a poll", poll, DetailEditNotEligible, 0},
		{"a missing post", "1", DetailEditNotVisible, 0},
		{"after the window", fresh, DetailEditWindowClosed, EditWindow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.clock.Advance(tc.advance)
			before := e.counter(CountTweetsEdited)
			r := e.edit(tc.prev, "an edit X refuses")
			wantStatus(t, r, 403)
			if r.body["detail"] != tc.detail {
				t.Errorf("detail %v, want %q", r.body["detail"], tc.detail)
			}
			if e.counter(CountTweetsEdited) != before {
				t.Error("a refused edit made a version")
			}
		})
	}
	r := e.do("POST", "/2/tweets", map[string]any{"text": "x", "quote_tweet_id": other, "edit_options": map[string]any{"previous_post_id": fresh}})
	wantStatus(t, r, 400)
}
