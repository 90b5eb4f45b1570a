package discovery

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/store"
)

// services opens one database with a service for the default account and
// one for another account.
func services(t *testing.T) (mine, other *Service, clk *clock.Fake) {
	t.Helper()
	clk = clock.NewFake(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "tuitbot.db"), store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &Service{DB: db, AccountID: "default", Now: clk.Now}, &Service{DB: db, AccountID: "other", Now: clk.Now}, clk
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func found(t *testing.T, s *Service, tweetID, authorID, username string) {
	t.Helper()
	if _, err := s.persist(context.Background(), Candidate{TweetID: tweetID, AuthorID: authorID, AuthorUsername: username, Text: "x"}, "q"); err != nil {
		t.Fatal(err)
	}
}

func TestAuthorsOfDiscoveredTweets(t *testing.T) {
	ctx := context.Background()
	s, other, _ := services(t)
	found(t, s, "1", "A", "alice")
	found(t, s, "2", "B", "bob")
	found(t, s, "3", "A", "alice")
	found(t, other, "4", "A", "alice")

	got, err := s.Authors(ctx, []string{"1", "2", "4", "9"})
	must(t, err)
	want := map[string]Author{"1": {"A", "alice"}, "2": {"B", "bob"}}
	if len(got) != len(want) || got["1"] != want["1"] || got["2"] != want["2"] {
		t.Errorf("Authors = %v, want %v", got, want)
	}
	if got, err := s.Authors(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("Authors(none) = %v, %v", got, err)
	}
	// More ids than one statement takes at a time.
	var many []string
	for i := range 1200 {
		many = append(many, strconv.Itoa(i+100))
	}
	got, err = s.Authors(ctx, append(many, "3"))
	must(t, err)
	if len(got) != 1 || got["3"] != (Author{"A", "alice"}) {
		t.Errorf("Authors over many ids = %v, want 3 by alice", got)
	}

	ids, err := s.AuthorTweetIDs(ctx, "A")
	must(t, err)
	if !slices.Equal(ids, []string{"1", "3"}) {
		t.Errorf("AuthorTweetIDs(A) = %q, want 1 3", ids)
	}
	ids, err = s.AuthorTweetIDs(ctx, "C")
	must(t, err)
	if len(ids) != 0 {
		t.Errorf("AuthorTweetIDs(C) = %q, want none", ids)
	}
}

func TestMarkRepliedLeavesTheFeed(t *testing.T) {
	ctx := context.Background()
	s, other, _ := services(t)
	found(t, s, "1", "A", "alice")
	found(t, other, "1", "A", "alice")
	must(t, s.MarkReplied(ctx, "1", "11"))
	must(t, s.MarkReplied(ctx, "never-found", "12"))
	c, err := s.Get(ctx, "1")
	must(t, err)
	if !c.AlreadyReplied {
		t.Error("a replied tweet is not marked replied")
	}
	feed, err := s.Feed(ctx, 0, 10)
	must(t, err)
	if len(feed) != 0 {
		t.Errorf("feed after the reply = %+v, want empty", feed)
	}
	var reply string
	must(t, s.DB.QueryRow(`SELECT reply_tweet_id FROM discovered_tweets WHERE account_id = 'default' AND tweet_id = '1'`).Scan(&reply))
	if reply != "11" {
		t.Errorf("reply_tweet_id = %q, want 11", reply)
	}
	if c, _ := other.Get(ctx, "1"); c == nil || c.AlreadyReplied {
		t.Error("another account's copy of the tweet was marked replied")
	}
}

func TestNamedCursors(t *testing.T) {
	ctx := context.Background()
	s, other, clk := services(t)
	v, err := s.NamedCursor(ctx, "autopilot:mentions_since")
	must(t, err)
	if v != "" {
		t.Fatalf("unset cursor = %q, want empty", v)
	}
	must(t, s.SetNamedCursor(ctx, "autopilot:mentions_since", "100"))
	clk.Advance(time.Minute)
	must(t, s.SetNamedCursor(ctx, "autopilot:mentions_since", "200"))
	must(t, other.SetNamedCursor(ctx, "autopilot:mentions_since", "999"))
	for _, tc := range []struct {
		s    *Service
		want string
	}{{s, "200"}, {other, "999"}} {
		v, err := tc.s.NamedCursor(ctx, "autopilot:mentions_since")
		must(t, err)
		if v != tc.want {
			t.Errorf("%s cursor = %q, want %q", tc.s.AccountID, v, tc.want)
		}
	}
	var updated string
	must(t, s.DB.QueryRow(`SELECT updated_at FROM cursors WHERE account_id = 'default' AND key = 'autopilot:mentions_since'`).Scan(&updated))
	if updated != store.FormatTime(clk.Now()) {
		t.Errorf("updated_at = %q, want the last write's time %q", updated, store.FormatTime(clk.Now()))
	}
}
