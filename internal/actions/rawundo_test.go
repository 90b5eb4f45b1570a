package actions

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xrequest"
)

// TestRawUndoComesFromTheEndpointTable: a universal request is undone with
// exactly the undo the endpoint table gives its typed twin, whatever form
// (v2 or v1.1) it was sent in.
func TestRawUndoComesFromTheEndpointTable(t *testing.T) {
	eps := xapi.NewEndpoints()
	tests := []struct {
		name         string
		req          xrequest.Request
		typed, param string
		id           string
	}{
		{"v2 like", xrequest.Request{Method: "POST", Path: "/2/users/1/likes", Body: `{"tweet_id":"7"}`}, "x_like_tweet", "tweet_id", "7"},
		{"v1.1 like", xrequest.Request{Method: "POST", Path: "/1.1/favorites/create.json", Query: []xrequest.KV{{Key: "id", Value: "7"}}}, "x_like_tweet", "tweet_id", "7"},
		{"v2 unfollow", xrequest.Request{Method: "DELETE", Path: "/2/users/1/following/9"}, "x_unfollow_user", "target_user_id", "9"},
		{"v1.1 follow", xrequest.Request{Method: "POST", Path: "/1.1/friendships/create.json", Query: []xrequest.KV{{Key: "user_id", Value: "9"}}}, "x_follow_user", "target_user_id", "9"},
		{"v2 unbookmark", xrequest.Request{Method: "DELETE", Path: "/2/users/1/bookmarks/7"}, "x_unbookmark_tweet", "tweet_id", "7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := xrequest.Check(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			rows := eps.ByTool(tt.typed)
			if len(rows) != 1 || rows[0].Undo == nil {
				t.Fatalf("endpoint table rows for %s: %+v", tt.typed, rows)
			}
			want := rows[0].Undo
			got := rawRollback(c, &xapi.RawResponse{Status: http.StatusOK, Header: http.Header{}})
			if !got.Reversible || got.UndoTool != want.Tool || got.Note != want.Note || got.UndoParams[tt.param] != tt.id {
				t.Fatalf("rollback %+v, want %s{%s: %s} (%s)", got, want.Tool, tt.param, tt.id, want.Note)
			}
		})
	}
}

// TestRawRollbackSaysWhatTheAuditSays: the guidance of a raw write follows
// its outcome. An answer that leaves the outcome unknown (a POST answered
// with a 5xx or a redirect) says it is unknown, how to check and how to
// record the answer; only a refusal says that X did not apply the request.
func TestRawRollbackSaysWhatTheAuditSays(t *testing.T) {
	tests := []struct {
		name       string
		req        xrequest.Request
		status     int
		unknown    bool
		want, deny []string
	}{
		{"post 503", xrequest.Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"t"}`}, 503, true,
			[]string{"outcome is unknown", "503", "x_get_user_tweets", "tuitbot audit resolve", "--happened", "--did-not-happen", "x_delete_tweet"},
			[]string{"did not apply", "nothing to undo"}},
		{"post redirect", xrequest.Request{Method: "POST", Path: "/2/tweets", Body: `{"text":"t"}`}, 302, true,
			[]string{"outcome is unknown", "302"}, []string{"did not apply"}},
		{"like 502", xrequest.Request{Method: "POST", Path: "/2/users/1/likes", Body: `{"tweet_id":"7"}`}, 502, true,
			[]string{"outcome is unknown", "x_get_liked_tweets", "x_unlike_tweet"}, []string{"did not apply"}},
		{"unknown write 503", xrequest.Request{Method: "POST", Path: "/2/some/new/thing", Body: `{}`}, 503, true,
			[]string{"outcome is unknown", "x_get", "No known inverse"}, []string{"did not apply"}},
		{"delete 503", xrequest.Request{Method: "DELETE", Path: "/2/tweets/7"}, 503, false,
			[]string{"may or may not have applied", "x_get"}, []string{"did not apply"}},
		{"post 400", xrequest.Request{Method: "POST", Path: "/2/tweets", Body: `{"text":""}`}, 400, false,
			[]string{"did not apply", "400"}, []string{"unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := xrequest.Check(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			got := rawRollback(c, &xapi.RawResponse{Status: tt.status, Header: http.Header{}, OutcomeUnknown: tt.unknown})
			if got.Reversible {
				t.Errorf("rollback %+v is reversible: no id is known to undo", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Note, w) {
					t.Errorf("note %q does not mention %q", got.Note, w)
				}
			}
			for _, d := range tt.deny {
				if strings.Contains(got.Note, d) {
					t.Errorf("note %q says %q", got.Note, d)
				}
			}
		})
	}
}
