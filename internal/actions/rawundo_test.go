package actions

import (
	"net/http"
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
