package autopilot_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// seedLedgers writes rows straight into the ledgers the safety checks
// combine: what was sent (workflow), what was found (discovery) and the
// autopilot's own attempts. Another account's rows must never count.
func seedLedgers(t *testing.T, e *env) {
	t.Helper()
	today, yesterday := store.FormatTime(day0), store.FormatTime(day0.Add(-time.Hour))
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO discovered_tweets (tweet_id, account_id, author_id, author_username, content, discovered_at) VALUES (?, ?, ?, ?, 'x', ?)`,
			[]any{"t1", "default", "A", "alice", today}},
		{`INSERT INTO discovered_tweets (tweet_id, account_id, author_id, author_username, content, discovered_at) VALUES (?, ?, ?, ?, 'x', ?)`,
			[]any{"t3", "default", "B", "bob", today}},
		{`INSERT INTO discovered_tweets (tweet_id, account_id, author_id, author_username, content, discovered_at) VALUES (?, ?, ?, ?, 'x', ?)`,
			[]any{"t7", "other", "A", "alice", today}},
	} {
		if _, err := e.db().Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	replies := []struct {
		acct, target, author, content string
		mention                       int
		at                            string
	}{
		// Known as A's only through discovery (sent through approval).
		{"default", "t1", "", "first reply", 0, today},
		{"default", "t2", "A", "second reply", 1, today},
		// Names the product in another case: a mention without the flag.
		{"default", "t3", "", "try TUITPILOT today", 0, today},
		{"default", "t4", "A", "yesterday's reply", 0, yesterday},
		{"other", "t7", "A", "another account's reply", 1, today},
	}
	for _, r := range replies {
		if _, err := e.db().Exec(`INSERT INTO replies_sent (account_id, target_tweet_id, reply_tweet_id, author_id, content, mentions_product, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, r.acct, r.target, "r-"+r.target, r.author, r.content, r.mention, r.at); err != nil {
			t.Fatal(err)
		}
	}
	actions := []struct {
		kind, target, author, status, tweetID, at string
		mention                                   int
	}{
		{"reply", "t2", "A", "posted", "r-t2", today, 1}, // the same reply as on record: counted once
		{"reply", "t5", "A", "failed", "", today, 0},     // never reached X
		{"reply", "t6", "A", "unknown", "", today, 0},    // may be on X
		{"tweet", "", "", "posted", "p1", today, 0},      // on record: counted once
		{"tweet", "", "", "posted", "p9", today, 0},      // posted, never recorded
		{"tweet", "", "", "unknown", "", today, 0},
		{"tweet", "", "", "posted", "p2", today, 0}, // recorded, with an older date
		{"tweet", "", "", "failed", "", today, 0},
	}
	for _, a := range actions {
		if _, err := e.db().Exec(`INSERT INTO autopilot_actions (account_id, loop_name, kind, target_tweet_id, author_id, status, tweet_id,
			mentions_product, content, created_at) VALUES ('default', 'discovery', ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.kind, a.target, a.author, a.status, a.tweetID, a.mention, "text "+a.target+a.tweetID, a.at); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct{ acct, id, kind, at string }{
		{"default", "p1", "tweet", today},
		{"default", "p2", "tweet", yesterday},
		{"default", "p3", "thread", store.FormatTime(day0.AddDate(0, 0, -3))},
		{"default", "p4", "thread", store.FormatTime(day0.AddDate(0, 0, -8))},
		{"other", "p5", "tweet", today},
	} {
		if _, err := e.db().Exec(`INSERT INTO original_tweets (account_id, tweet_id, kind, content, created_at) VALUES (?, ?, ?, 'x', ?)`,
			p.acct, p.id, p.kind, p.at); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCapsCombineTheLedgers(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		seedLedgers(t, e)
		r := e.runner(e.app)
		ctx := context.Background()
		st, err := r.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := st.Today
		// t1, t2 (sent and in the ledger), t3, t6 (unknown); not t4
		// (yesterday), t5 (failed) or t7 (another account).
		if c.Replies != 4 {
			t.Errorf("replies today = %d, want 4", c.Replies)
		}
		// t2 (flagged in both ledgers) and t3 (names the product).
		if c.ProductMentions != 2 {
			t.Errorf("product mentions = %d, want 2", c.ProductMentions)
		}
		// p1 once, p9 (posted, unrecorded) and the unknown attempt; not p2,
		// which is on record from yesterday.
		if c.Tweets != 3 {
			t.Errorf("tweets today = %d, want 3", c.Tweets)
		}
		// p3 is within the seven days, p4 is not.
		if c.ThreadsWeek != 1 {
			t.Errorf("threads this week = %d, want 1", c.ThreadsWeek)
		}
		for _, tc := range []struct {
			author string
			want   int
		}{
			{"A", 3}, // t1 (by discovery), t2, t6
			{"B", 1}, // t3 (by discovery)
			{"C", 0},
		} {
			n, err := autopilot.AuthorReplies(ctx, r, tc.author, day0)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.want {
				t.Errorf("replies to %s today = %d, want %d", tc.author, n, tc.want)
			}
		}
		for _, tc := range []struct {
			tweet string
			want  bool
		}{
			{"t1", true}, {"t4", true}, {"t6", true}, {"t5", false}, {"t7", false}, {"t8", false},
		} {
			got, err := autopilot.Handled(ctx, r, tc.tweet)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("handled(%s) = %v, want %v", tc.tweet, got, tc.want)
			}
		}
	})
}

func TestRecentTextsMergeSentAndQueued(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		ctx := context.Background()
		for i, at := range []time.Duration{1, 3, 5} {
			if _, err := e.db().Exec(`INSERT INTO replies_sent (account_id, target_tweet_id, reply_tweet_id, content, created_at) VALUES ('default', ?, ?, ?, ?)`,
				"s", "r", "sent "+string(rune('a'+i)), store.FormatTime(day0.Add(at*time.Minute))); err != nil {
				t.Fatal(err)
			}
		}
		for i, at := range []time.Duration{2, 4} {
			if _, err := e.db().Exec(`INSERT INTO autopilot_actions (account_id, loop_name, kind, status, content, created_at)
			VALUES ('default', 'discovery', 'reply', 'queued', ?, ?)`, "queued "+string(rune('a'+i)), store.FormatTime(day0.Add(at*time.Minute))); err != nil {
				t.Fatal(err)
			}
		}
		// Neither a failed attempt nor a tweet is a recent reply.
		if _, err := e.db().Exec(`INSERT INTO autopilot_actions (account_id, loop_name, kind, status, content, created_at)
		VALUES ('default', 'discovery', 'reply', 'failed', 'failed one', ?), ('default', 'content', 'tweet', 'queued', 'a tweet', ?)`,
			store.FormatTime(day0.Add(9*time.Minute)), store.FormatTime(day0.Add(9*time.Minute))); err != nil {
			t.Fatal(err)
		}
		got, err := autopilot.RecentTexts(ctx, e.runner(e.app), "reply")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"sent c", "queued b", "sent b", "queued a", "sent a"}
		if !slices.Equal(got, want) {
			t.Fatalf("recent replies = %q, want %q", got, want)
		}
		got, err = autopilot.RecentTexts(ctx, e.runner(e.app), "tweet")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{"a tweet"}) {
			t.Fatalf("recent tweets = %q, want the queued tweet", got)
		}
	})
}
