package workflow

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/store"
)

// BenchmarkNextFreeSlot measures get_next_free_slot's work over a year of
// scheduled items (three queue slots a day, every one taken) against the
// floor it is compared with: one indexed query for the next scheduled
// item. "full_year" is the worst case, the first free slot a year out;
// "room_tomorrow" has the same year booked but one slot free tomorrow.
// After the first search both read the account's frontier and the few
// bookings around it, not the year.
func BenchmarkNextFreeSlot(b *testing.B) {
	ctx := context.Background()
	clk := clock.NewFake(t0)
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), store.Options{Now: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s := &Service{DB: db, AccountID: "default", Now: clk.Now}
	p := policyOf(b, time.Hour, 3, "daily 09:00", "daily 13:00", "daily 18:00")
	slots := p.FreeSlots(t0, t0.AddDate(1, 0, 0), nil, 3*366)
	ts := store.FormatTime(t0)
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		for _, at := range slots {
			v := store.FormatTime(at)
			if _, err := tx.ExecContext(ctx, `INSERT INTO drafts (account_id, content, status, scheduled_for, queue_slot, created_at, updated_at)
				VALUES ('default', 'x', 'scheduled', ?, ?, ?, ?)`, v, v, ts, ts); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d items scheduled from %s to %s", len(slots), slots[0].Format(time.DateOnly), slots[len(slots)-1].Format(time.DateOnly))

	b.Run("one_indexed_query", func(b *testing.B) {
		for b.Loop() {
			var at string
			if err := db.QueryRowContext(ctx, `SELECT scheduled_for FROM drafts WHERE account_id = ? AND scheduled_for >= ? AND `+bookedWhere+`
				ORDER BY scheduled_for LIMIT 1`, "default", ts).Scan(&at); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("full_year", func(b *testing.B) {
		for b.Loop() {
			got, err := s.NextFreeSlots(ctx, p, time.Time{}, 1)
			if err != nil || !got[0].After(t0.AddDate(1, 0, 0)) {
				b.Fatalf("next free = %v, %v; want one a year out", got, err)
			}
		}
	})
	// The two alternated in one loop, so that a neighbour's load on a
	// shared machine weighs on both alike: the ratio is the figure.
	b.Run("full_year_ratio", func(b *testing.B) {
		var query, next time.Duration
		for b.Loop() {
			t0 := time.Now()
			var at string
			if err := db.QueryRowContext(ctx, `SELECT scheduled_for FROM drafts WHERE account_id = ? AND scheduled_for >= ? AND `+bookedWhere+`
				ORDER BY scheduled_for LIMIT 1`, "default", ts).Scan(&at); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := s.NextFreeSlots(ctx, p, time.Time{}, 1); err != nil {
				b.Fatal(err)
			}
			query, next = query+t1.Sub(t0), next+time.Since(t1)
		}
		b.ReportMetric(float64(next)/float64(query), "x_one_query")
	})
	tomorrow := store.FormatTime(day(1, 13))
	if _, err := db.ExecContext(ctx, `UPDATE drafts SET status = 'deleted' WHERE scheduled_for = ?`, tomorrow); err != nil {
		b.Fatal(err)
	}
	b.Run("room_tomorrow", func(b *testing.B) {
		for b.Loop() {
			got, err := s.NextFreeSlots(ctx, p, time.Time{}, 1)
			if err != nil || store.FormatTime(got[0]) != tomorrow {
				b.Fatalf("next free = %v, %v; want tomorrow 13:00", got, err)
			}
		}
	})
}
