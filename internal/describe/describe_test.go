package describe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/xapi"
)

func TestOf(t *testing.T) {
	raw := func(method, path string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"method": method, "host": "api.x.com", "path": path})
		return b
	}
	tests := []struct {
		name, tool, equiv string
		params            json.RawMessage
		wantName, who     string
		wantTitle         string
		want              Target
	}{
		{"a delete names its post", "x_delete_tweet", "", json.RawMessage(`{"tweet_id":"123"}`), "Delete post", "@gabe", "Delete post", Target{KindPost, "123"}},
		{"a like names its post", "x_like_tweet", "", json.RawMessage(`{"tweet_id":"9"}`), "Like", "@gabe", "Like @gabe's post", Target{KindPost, "9"}},
		{"a follow names its account", "x_follow_user", "", json.RawMessage(`{"target_user_id":"77"}`), "Follow", "@gabe", "Follow @gabe", Target{KindUser, "77"}},
		{"an unknown account keeps the name", "x_mute_user", "", json.RawMessage(`{"target_user_id":"77"}`), "Mute", "", "Mute", Target{KindUser, "77"}},
		{"a reply names the post it answers", "x_reply_to_tweet", "", json.RawMessage(`{"text":"hi","in_reply_to_id":"5"}`), "Reply", "@ann", "Reply to @ann", Target{KindPost, "5"}},
		{"an edit names the post it edits", "x_edit_tweet", "", json.RawMessage(`{"tweet_id":"44","text":"new"}`), "Edit post", "@me", "Edit @me's post", Target{KindPost, "44"}},
		{"a raw edit names the post it edits", "x_post", "x_edit_tweet",
			json.RawMessage(`{"method":"POST","host":"api.x.com","path":"/2/tweets","body":"{\"text\":\"new\",\"edit_options\":{\"previous_post_id\":\"45\"}}"}`),
			"Edit post", "", "Edit post", Target{KindPost, "45"}},
		{"a post has no target", "x_post_tweet", "", json.RawMessage(`{"text":"hi"}`), "Post", "@x", "Post", Target{}},
		{"a raw delete of a post reads as a delete", "x_delete", "x_delete_tweet", raw("DELETE", "/2/tweets/321"), "Delete post", "", "Delete post", Target{KindPost, "321"}},
		{"a raw unfollow names the account", "x_delete", "x_unfollow_user", raw("DELETE", "/2/users/1/following/88"), "Unfollow", "@bo", "Unfollow @bo", Target{KindUser, "88"}},
		{"a raw write of no typed tool stays raw", "x_post", "", raw("POST", "/2/users/1/pinned_lists"), "API request (POST)", "", "API request (POST)", Target{}},
		{"a list addition names the member", "x_list_add_member", "", json.RawMessage(`{"list_id":"5","user_id":"77"}`), "Add to list", "@bo", "Add @bo to a list", Target{KindUser, "77"}},
		{"a raw list removal names the member", "x_delete", "x_list_remove_member", raw("DELETE", "/2/lists/5/members/77"), "Remove from list", "@bo", "Remove @bo from a list", Target{KindUser, "77"}},
		{"a list delete has no account", "x_list_delete", "", json.RawMessage(`{"list_id":"5"}`), "Delete list", "", "Delete list", Target{}},
		{"a direct message names its recipient", "x_send_dm", "", json.RawMessage(`{"participant_id":"77","text":"hi"}`), "Direct message", "@gabe", "Message @gabe", Target{KindUser, "77"}},
		{"a raw direct message names its recipient", "x_post", "x_send_dm", raw("POST", "/2/dm_conversations/with/78/messages"), "Direct message", "@bo", "Message @bo", Target{KindUser, "78"}},
		{"a missing id is no target", "x_like_tweet", "", json.RawMessage(`{}`), "Like", "", "Like", Target{}},
		{"an unknown tool is named as is", "x_new_thing", "", json.RawMessage(`{}`), "x_new_thing", "", "x_new_thing", Target{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := Of(tc.tool, tc.equiv, tc.params)
			if a.Name != tc.wantName || a.Target != tc.want || a.Tool != tc.tool {
				t.Fatalf("Of(%s) = name %q target %+v tool %q; want %q %+v %q", tc.tool, a.Name, a.Target, a.Tool, tc.wantName, tc.want, tc.tool)
			}
			if got := a.Title(tc.who); got != tc.wantTitle {
				t.Fatalf("Title(%q) = %q, want %q", tc.who, got, tc.wantTitle)
			}
			if a.Effect == "" || a.Plural == "" || a.Verb == "" {
				t.Fatalf("Of(%s) leaves the effect, plural or verb empty: %+v", tc.tool, a)
			}
		})
	}
	if e := Of("x_delete_tweet", "", json.RawMessage(`{"tweet_id":"1"}`)).Effect; !strings.Contains(e, "Removes this post") {
		t.Errorf("a delete's effect does not say it removes the post: %q", e)
	}
}

// fakeX answers lookups from maps and records each request's ids.
type fakeX struct {
	posts map[string]xapi.Tweet
	users map[string]xapi.User
	asked [][]string
	err   error
}

func (f *fakeX) GetTweets(_ context.Context, ids []string) (*xapi.Page[xapi.Tweet], error) {
	f.asked = append(f.asked, ids)
	if f.err != nil {
		return nil, f.err
	}
	p := &xapi.Page[xapi.Tweet]{}
	for _, id := range ids {
		if tw, ok := f.posts[id]; ok {
			p.Data = append(p.Data, tw)
		}
	}
	return p, nil
}

func (f *fakeX) GetUsers(_ context.Context, ids []string) (*xapi.Page[xapi.User], error) {
	f.asked = append(f.asked, ids)
	if f.err != nil {
		return nil, f.err
	}
	p := &xapi.Page[xapi.User]{}
	for _, id := range ids {
		if u, ok := f.users[id]; ok {
			p.Data = append(p.Data, u)
		}
	}
	return p, nil
}

func TestPostsAndUsers(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	x := &fakeX{posts: map[string]xapi.Tweet{}, users: map[string]xapi.User{
		"7": {ID: "7", Username: "gabe", Name: "Gabe", PublicMetrics: xapi.UserMetrics{FollowersCount: 1218}},
	}}
	var ids []string
	for i := range 150 {
		id := fmt.Sprint(1000 + i)
		ids = append(ids, id)
		if i != 3 {
			author := &xapi.User{ID: "7", Username: "gabe", Name: "Gabe", PublicMetrics: xapi.UserMetrics{FollowersCount: 1218}}
			x.posts[id] = xapi.Tweet{ID: id, Text: "post " + id, AuthorID: "7", CreatedAt: at, Author: author}
		}
	}
	posts, err := Posts(t.Context(), x, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.asked) != 2 || len(x.asked[0]) != 100 || len(x.asked[1]) != 50 {
		t.Fatalf("asked X in batches of %v, want 100 then 50", lens(x.asked))
	}
	if len(posts) != 149 {
		t.Fatalf("%d posts, want the 149 X returned", len(posts))
	}
	if _, ok := posts["1003"]; ok {
		t.Fatal("a post X did not return is in the map")
	}
	p := posts["1000"]
	want := Post{ID: "1000", Text: "post 1000", AuthorID: "7", AuthorUsername: "gabe", AuthorName: "Gabe", AuthorFollowers: 1218, CreatedAt: at}
	if p != want {
		t.Fatalf("post = %+v, want %+v", p, want)
	}
	if line := p.Line(at.Add(3 * time.Hour)); line != `post 1000 by @gabe (Gabe), posted 3 h ago (2026-03-01T12:00:00Z): "post 1000"` {
		t.Fatalf("Line = %s", line)
	}
	users, err := Users(t.Context(), x, []string{"7", "8"})
	if err != nil || len(users) != 1 {
		t.Fatalf("Users = %v, %v; want the one X has", users, err)
	}
	if line := users["7"].Line(); line != "@gabe (Gabe), 1,218 followers, user 7" {
		t.Fatalf("Line = %s", line)
	}
	x.err = errors.New("boom")
	if _, err := Posts(t.Context(), x, []string{"1"}); err == nil || !strings.Contains(err.Error(), "read posts from X: boom") {
		t.Fatalf("a failed lookup answers %v", err)
	}
	if _, err := Users(t.Context(), x, []string{"1"}); err == nil || !strings.Contains(err.Error(), "read accounts from X: boom") {
		t.Fatalf("a failed lookup answers %v", err)
	}
}

func lens(v [][]string) []int {
	var out []int
	for _, s := range v {
		out = append(out, len(s))
	}
	return out
}

func TestAgoAndCount(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "just now"},
		{5 * time.Minute, "5 min ago"},
		{3 * time.Hour, "3 h ago"},
		{72 * time.Hour, "3 days ago"},
		{90 * 24 * time.Hour, "3 months ago"},
		{-2 * time.Hour, "in 2 h"},
	} {
		if got := Ago(now, now.Add(-tc.d)); got != tc.want {
			t.Errorf("Ago(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
	if got := In(now, now.Add(90*time.Minute)); got != "in 1 h" {
		t.Errorf("In = %q", got)
	}
	for d, want := range map[time.Duration]string{40 * time.Second: "40 s", 4*time.Minute + 59*time.Second: "4 min", 47 * time.Hour: "47 h",
		48 * time.Hour: "2 days", 59 * 24 * time.Hour: "59 days", 61 * 24 * time.Hour: "2 months", 400 * 24 * time.Hour: "13 months"} {
		if got := Span(d); got != want {
			t.Errorf("Span(%s) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1218: "1,218", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestEditLine: an edit, typed or universal, reads as the post it edits
// with its old and new text.
func TestEditLine(t *testing.T) {
	for _, tc := range []struct {
		tool, equiv string
		params      string
	}{
		{"x_edit_tweet", "", `{"tweet_id":"44","text":"new words"}`},
		{"x_post", "x_edit_tweet", `{"method":"POST","path":"/2/tweets","body":"{\"text\":\"new words\",\"edit_options\":{\"previous_post_id\":\"44\"}}"}`},
	} {
		id, text, ok := EditOf(tc.tool, tc.equiv, json.RawMessage(tc.params))
		if !ok || id != "44" || text != "new words" {
			t.Fatalf("EditOf(%s) = %q %q %v", tc.tool, id, text, ok)
		}
		if got, want := EditLine(id, "old words", text), `Edits post 44: "old words" -> "new words"`; got != want {
			t.Fatalf("EditLine = %q, want %q", got, want)
		}
	}
	if _, _, ok := EditOf("x_post_tweet", "", json.RawMessage(`{"text":"t"}`)); ok {
		t.Fatal("a post reads as an edit")
	}
}

// The target's label is the same words on the review page and in a
// notification.
func TestTargetLabel(t *testing.T) {
	tests := []struct {
		tool, params, want string
	}{
		{"x_reply_to_tweet", `{"text":"hi","in_reply_to_id":"5"}`, "The post this answers"},
		{"x_quote_tweet", `{"text":"hi","quoted_tweet_id":"5"}`, "The post this quotes"},
		{"x_delete_tweet", `{"tweet_id":"5"}`, "The post this deletes"},
		{"x_edit_tweet", `{"tweet_id":"5","text":"new"}`, "The post as it stands, which this edits"},
		{"x_like_tweet", `{"tweet_id":"5"}`, "The post this likes"},
		{"x_follow_user", `{"target_user_id":"7"}`, "The account this follows"},
		{"x_list_add_member", `{"list_id":"1","user_id":"7"}`, "The account this adds to a list"},
		{"x_post_tweet", `{"text":"hi"}`, ""},
		{"x_like_tweet", `{}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			if got := Of(tc.tool, "", json.RawMessage(tc.params)).TargetLabel(); got != tc.want {
				t.Fatalf("TargetLabel() = %q, want %q", got, tc.want)
			}
		})
	}
}
