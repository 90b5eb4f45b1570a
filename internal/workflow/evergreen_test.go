package workflow

import (
	"context"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"

	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestRecycledItemKeepsItsToolOnTheWayToApproval: an item that recycles an
// evergreen post, sent to approval by hand, queues the repost or quote it
// stands for, never its stored text as a new post.
func TestRecycledItemKeepsItsToolOnTheWayToApproval(t *testing.T) {
	cases := []struct{ contentType, tool, params string }{
		{ContentRepost, "x_retweet", `{"tweet_id":"1234"}`},
		{ContentQuote, "x_quote_tweet", `{"quoted_tweet_id":"1234","text":"Still true."}`},
	}
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		db := storetest.Open(t, store.Options{Now: clk.Now})
		c := composer(t, db, "default", clk, allowAll{})
		actions.Register(c.Gateway, actions.Deps{DB: db, AccountID: "default", Now: clk.Now})
		for _, tc := range cases {
			var id int64
			err := db.QueryRowContext(ctx, `INSERT INTO drafts (account_id, content_type, content, source, status, evergreen_tweet_id, created_at, updated_at)
				VALUES ('default', ?, 'Still true.', 'evergreen', 'draft', '1234', ?, ?) RETURNING id`, tc.contentType, c.ts(t0), c.ts(t0)).Scan(&id)
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.SendToApproval(ctx, id, "test")
			if err != nil {
				t.Fatal(err)
			}
			var tool, params string
			if err := db.QueryRowContext(ctx, `SELECT tool_name, params_json FROM approval_queue WHERE id = ?`, r.ApprovalID).Scan(&tool, &params); err != nil {
				t.Fatal(err)
			}
			if tool != tc.tool || params != tc.params {
				t.Errorf("%s item queued %s %s, want %s %s", tc.contentType, tool, params, tc.tool, tc.params)
			}
		}
	})
}
