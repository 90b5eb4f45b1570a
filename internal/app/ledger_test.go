package app

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/discovery"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// The actions' recorder writes the reply with the target's author as
// discovery knows it (none for a target it never found), takes the target
// out of the feed, and keeps posts by kind.
func TestPostLedgerRecordsThroughTheOwners(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "tuitbot.db"), store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	disc := &discovery.Service{DB: db, AccountID: "acct", Now: clk.Now}
	wf := &workflow.Service{DB: db, AccountID: "acct", Now: clk.Now, Discovery: disc}
	if _, err := db.Exec(`INSERT INTO discovered_tweets (tweet_id, account_id, author_id, author_username, content, discovered_at)
		VALUES ('100', 'acct', 'A', 'alice', 'x', ?), ('200', 'elsewhere', 'B', 'bob', 'x', ?)`,
		store.FormatTime(clk.Now()), store.FormatTime(clk.Now())); err != nil {
		t.Fatal(err)
	}
	l := postLedger{wf: wf, disc: disc}
	if err := l.ReplySent(ctx, "100", "101", "found reply"); err != nil {
		t.Fatal(err)
	}
	// Discovered only by another account: no author for this one.
	if err := l.ReplySent(ctx, "200", "201", "unfound reply"); err != nil {
		t.Fatal(err)
	}
	if err := l.Posted(ctx, workflow.KindThread, "300", "root"); err != nil {
		t.Fatal(err)
	}
	replies, err := wf.RepliesSince(ctx, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(replies) != 2 {
		t.Fatalf("replies = %+v, want 2", replies)
	}
	if r := replies[0]; r.TargetTweetID != "100" || r.ReplyTweetID != "101" || r.AuthorID != "A" || r.AuthorUsername != "alice" || r.Content != "found reply" {
		t.Errorf("discovered target's reply = %+v", r)
	}
	if r := replies[1]; r.TargetTweetID != "200" || r.AuthorID != "" || r.AuthorUsername != "" {
		t.Errorf("undiscovered target's reply = %+v, want no author", r)
	}
	c, err := disc.Get(ctx, "100")
	if err != nil {
		t.Fatal(err)
	}
	if !c.AlreadyReplied {
		t.Error("the answered tweet is still in the discovery feed")
	}
	var replied int
	if err := db.QueryRow(`SELECT replied_to FROM discovered_tweets WHERE account_id = 'elsewhere' AND tweet_id = '200'`).Scan(&replied); err != nil {
		t.Fatal(err)
	}
	if replied != 0 {
		t.Error("another account's discovered tweet was marked replied")
	}
	ids, err := wf.PostIDsSince(ctx, workflow.KindThread, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != "300" {
		t.Errorf("threads = %q, want 300", ids)
	}
}
