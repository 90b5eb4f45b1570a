package postmetrics_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/postmetrics"
	"github.com/tuitbot/tuitbot/internal/store"
)

// BenchmarkBestTimes measures get_best_posting_times' work over 100,000
// captured rows (33,334 original posts at three checkpoints, spread over
// a year) against its floor: one indexed query over the same table that
// reads the rows the ranking reads, each post's latest checkpoint (their
// count and summed likes), and one that reads all 100,000.
func BenchmarkBestTimes(b *testing.B) {
	ctx := context.Background()
	clk := clock.NewFake(t0)
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), store.Options{Now: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	const rows = 100_000
	since := t0.AddDate(-1, 0, 0)
	step := t0.Sub(since) / (rows / 3)
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO post_metrics (account_id, tweet_id, kind, posted_unix, checkpoint_hours, captured_at,
			impressions, likes, reposts, replies, quotes, bookmarks, source, latest) VALUES ('default', ?, 'original', ?, ?, '', ?, ?, ?, ?, 0, 0, 'public', ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i := range rows {
			post := i / 3
			at := since.Add(time.Duration(post) * step)
			if _, err := stmt.ExecContext(ctx, post, at.Unix(), []int{1, 24, 168}[i%3], 800+post%400, 10+post%17, post%5, post%3, i%3/2); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	s := &postmetrics.Store{DB: db, Account: "default", Now: clk.Now}
	q := postmetrics.Query{Top: 5, Active: postmetrics.Hours{Start: 8, End: 22, Days: [7]bool{true, true, true, true, true, true, true}}}
	b.Run("one_indexed_query_latest_rows", func(b *testing.B) {
		for b.Loop() {
			var n, likes int64
			if err := db.QueryRowContext(ctx, `SELECT count(*), sum(likes) FROM post_metrics WHERE account_id = ? AND kind = ? AND latest = 1 AND posted_unix >= ?`,
				"default", postmetrics.KindOriginal, since.Unix()).Scan(&n, &likes); err != nil || n < rows/3 {
				b.Fatalf("%d rows, %v", n, err)
			}
		}
	})
	b.Run("one_indexed_query_all_rows", func(b *testing.B) {
		for b.Loop() {
			var n, likes int64
			if err := db.QueryRowContext(ctx, `SELECT count(*), sum(likes) FROM post_metrics WHERE account_id = ? AND kind = ? AND posted_unix >= ?`,
				"default", postmetrics.KindOriginal, since.Unix()).Scan(&n, &likes); err != nil || n != rows {
				b.Fatalf("%d rows, %v", n, err)
			}
		}
	})
	b.Run("get_best_posting_times", func(b *testing.B) {
		for b.Loop() {
			a, err := s.BestTimes(ctx, postmetrics.BestTimesRequest{Query: q, LookbackDays: 366}, postmetrics.Refresh{})
			if err != nil || a.Posts != rows/3 {
				b.Fatalf("%+v, %v", a, err)
			}
		}
	})
}
