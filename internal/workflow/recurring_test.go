package workflow

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

func service(db *store.DB, clk *clock.Fake) *Service {
	return &Service{DB: db, AccountID: "default", Now: clk.Now}
}

// occurrences lists the drafts rule id made, as (scheduled_for, text).
func occurrences(t *testing.T, db *store.DB, id int64) [][2]string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT scheduled_for, content FROM drafts WHERE recurring_id = ? ORDER BY scheduled_for`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var at, text string
		if err := rows.Scan(&at, &text); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{at, text})
	}
	return out
}

func weekly(text string) RecurringRequest {
	return RecurringRequest{Content: text, Every: Every{N: 1, Unit: "week"}, Time: "09:00"}
}

// seven texts, so a daily rule repeats a text only once a week.
func sevenVariants() *Vary {
	return &Vary{Variants: []string{"Tip 2: run go vet.", "Tip 3: read the race report.", "Tip 4: keep packages small.",
		"Tip 5: wrap errors with %w.", "Tip 6: pass a context.", "Tip 7: table-driven tests."}}
}

func TestRecurringOccurrencesAreMadeOnceByRacingProcesses(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		db := storetest.Open(t, store.Options{Now: clk.Now})
		s := service(db, clk)
		p, err := s.CreateRecurring(ctx, time.UTC, RecurringRequest{Content: "Tip 1: run gofmt.", Every: Every{N: 1, Unit: "day"}, Time: "09:00", Vary: sevenVariants()})
		if err != nil {
			t.Fatal(err)
		}
		// Two processes (two services on one database) make the same
		// occurrences at the same moments for three days.
		for day := range 3 {
			clk.AdvanceTo(t0.AddDate(0, 0, day))
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, 2)
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = service(db, clk).MakeOccurrences(ctx, time.UTC)
				}()
			}
			close(start)
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		got := occurrences(t, db, p.ID)
		want := [][2]string{
			{"2026-03-03T09:00:00.000Z", "Tip 1: run gofmt."},
			{"2026-03-04T09:00:00.000Z", "Tip 2: run go vet."},
			{"2026-03-05T09:00:00.000Z", "Tip 3: read the race report."},
		}
		if len(got) != len(want) {
			t.Fatalf("occurrences: %v, want %v", got, want)
		}
		for i := range want {
			if got[i][0][:16] != want[i][0][:16] || got[i][1] != want[i][1] {
				t.Errorf("occurrence %d: %v, want %v", i, got[i], want[i])
			}
		}
		// A process whose view of the rule is stale (its cursor lost)
		// cannot make an occurrence again: the unique index refuses it.
		if _, err := db.ExecContext(ctx, `UPDATE recurring_posts SET last_at = NULL WHERE id = ?`, p.ID); err != nil {
			t.Fatal(err)
		}
		clk.AdvanceTo(t0.AddDate(0, 0, 2))
		if _, err := s.MakeOccurrences(ctx, time.UTC); err != nil {
			t.Fatal(err)
		}
		if n := len(occurrences(t, db, p.ID)); n != 3 {
			t.Errorf("after a stale cursor %d occurrences, want 3", n)
		}
		ps, err := s.RecurringPosts(ctx, time.UTC)
		if err != nil || len(ps) != 1 || ps[0].Created != 3 {
			t.Fatalf("list: %+v, %v; want one rule with 3 occurrences made", ps, err)
		}
	})
}

func TestPausedRecurringPostMakesNone(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		db := storetest.Open(t, store.Options{Now: clk.Now})
		s := service(db, clk)
		p, err := s.CreateRecurring(ctx, time.UTC, weekly("Weekly notes are out."))
		if err != nil {
			t.Fatal(err)
		}
		clk.AdvanceTo(t0.AddDate(0, 0, 6)) // Sunday noon: Monday 09:00 is within a day
		if _, err := s.MakeOccurrences(ctx, time.UTC); err != nil {
			t.Fatal(err)
		}
		if n := len(occurrences(t, db, p.ID)); n != 1 {
			t.Fatalf("%d occurrences before the pause, want 1", n)
		}
		if _, err := s.UpdateRecurring(ctx, time.UTC, p.ID, RecurringUpdate{Action: RecurringPause}); err != nil {
			t.Fatal(err)
		}
		if n := len(occurrences(t, db, p.ID)); n != 0 {
			t.Errorf("pausing left %d unpublished occurrences, want them withdrawn", n)
		}
		for day := 6; day < 30; day++ {
			clk.AdvanceTo(t0.AddDate(0, 0, day))
			if _, err := s.MakeOccurrences(ctx, time.UTC); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(occurrences(t, db, p.ID)); n != 0 {
			t.Fatalf("a paused rule made %d occurrences", n)
		}
		r, err := s.UpdateRecurring(ctx, time.UTC, p.ID, RecurringUpdate{Action: RecurringResume})
		if err != nil {
			t.Fatal(err)
		}
		// Resumed on Tuesday 2026-03-31 12:00: the next is Monday 6 April.
		if r.Status != RecurringActive || r.NextAt != "2026-04-06T09:00:00Z" {
			t.Errorf("resumed: status %s next %s, want active and 2026-04-06T09:00:00Z", r.Status, r.NextAt)
		}
	})
}

func TestRecurringPostEnds(t *testing.T) {
	cases := []struct {
		name string
		req  RecurringRequest
		want []string
	}{
		{"ends_after", RecurringRequest{Content: "Office hours today at 15:00.", Every: Every{N: 1, Unit: "week"}, Weekdays: []string{"tue"}, Time: "10:00", EndsAfter: 2},
			[]string{"2026-03-03T10:00", "2026-03-10T10:00"}},
		{"ends_on", RecurringRequest{Content: "Office hours today at 15:00.", Every: Every{N: 2, Unit: "week"}, Weekdays: []string{"wed"}, Time: "10:00", EndsOn: "2026-03-20"},
			[]string{"2026-03-04T10:00", "2026-03-18T10:00"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storetest.ForEachBackend(t, func(t *testing.T) {
				ctx := context.Background()
				clk := clock.NewFake(t0)
				db := storetest.Open(t, store.Options{Now: clk.Now})
				s := service(db, clk)
				p, err := s.CreateRecurring(ctx, time.UTC, tc.req)
				if err != nil {
					t.Fatal(err)
				}
				for h := 0; h < 60*24; h += 6 {
					clk.AdvanceTo(t0.Add(time.Duration(h) * time.Hour))
					if _, err := s.MakeOccurrences(ctx, time.UTC); err != nil {
						t.Fatal(err)
					}
				}
				var got []string
				for _, o := range occurrences(t, db, p.ID) {
					got = append(got, o[0][:16])
				}
				if strings.Join(got, " ") != strings.Join(tc.want, " ") {
					t.Errorf("occurrences %v, want %v", got, tc.want)
				}
				ps, err := s.RecurringPosts(ctx, time.UTC)
				if err != nil {
					t.Fatal(err)
				}
				if ps[0].Status != RecurringEnded || ps[0].NextAt != "" {
					t.Errorf("status %s next %q, want ended with none next", ps[0].Status, ps[0].NextAt)
				}
			})
		})
	}
}

func TestRecurringRefusalsNameTheirField(t *testing.T) {
	long := strings.Repeat("x", 281)
	cases := []struct {
		name  string
		req   RecurringRequest
		code  apperr.Code
		field string
	}{
		{"daily identical text", RecurringRequest{Content: "Same every day.", Every: Every{N: 1, Unit: "day"}, Time: "09:00"}, apperr.DuplicateRisk, "vary:"},
		{"twice a week identical text", RecurringRequest{Content: "Same twice a week.", Every: Every{N: 1, Unit: "week"}, Weekdays: []string{"mon", "thu"}, Time: "09:00"}, apperr.DuplicateRisk, "vary:"},
		{"too few variants", RecurringRequest{Content: "Tip 1.", Every: Every{N: 1, Unit: "day"}, Time: "09:00", Vary: &Vary{Variants: []string{"Tip 2."}}}, apperr.DuplicateRisk, "vary.variants:"},
		{"empty vary", RecurringRequest{Content: "Tip 1.", Every: Every{N: 1, Unit: "day"}, Time: "09:00", Vary: &Vary{}}, apperr.InvalidInput, "vary.variants:"},
		{"repeated variant", RecurringRequest{Content: "Tip 1.", Every: Every{N: 1, Unit: "week"}, Time: "09:00", Vary: &Vary{Variants: []string{"Tip 2.", "tip  1."}}}, apperr.InvalidInput, "vary.variants[1]:"},
		{"long variant", RecurringRequest{Content: "Tip 1.", Every: Every{N: 1, Unit: "week"}, Time: "09:00", Vary: &Vary{Variants: []string{long}}}, apperr.TweetTooLong, "vary.variants[0]:"},
		{"empty variant", RecurringRequest{Content: "Tip 1.", Every: Every{N: 1, Unit: "week"}, Time: "09:00", Vary: &Vary{Variants: []string{" "}}}, apperr.InvalidInput, "vary.variants[0]:"},
		{"no text", RecurringRequest{Every: Every{N: 1, Unit: "week"}, Time: "09:00"}, apperr.InvalidInput, "draft_id:"},
		{"both texts", RecurringRequest{DraftID: 1, Content: "x", Every: Every{N: 1, Unit: "week"}, Time: "09:00"}, apperr.InvalidInput, "draft_id, content:"},
		{"long content", RecurringRequest{Content: long, Every: Every{N: 1, Unit: "week"}, Time: "09:00"}, apperr.TweetTooLong, "content:"},
		{"unit", RecurringRequest{Content: "x", Every: Every{N: 1, Unit: "month"}, Time: "09:00"}, apperr.InvalidInput, "every.unit:"},
		{"no unit", RecurringRequest{Content: "x", Every: Every{N: 1}, Time: "09:00"}, apperr.InvalidInput, "every.unit:"},
		{"n", RecurringRequest{Content: "x", Every: Every{N: 0, Unit: "week"}, Time: "09:00"}, apperr.InvalidInput, "every.n:"},
		{"n weeks", RecurringRequest{Content: "x", Every: Every{N: 53, Unit: "week"}, Time: "09:00"}, apperr.InvalidInput, "every.n:"},
		{"time", RecurringRequest{Content: "x", Every: Every{N: 1, Unit: "week"}, Time: "25:00"}, apperr.InvalidInput, "time:"},
		{"no time", RecurringRequest{Content: "x", Every: Every{N: 1, Unit: "week"}}, apperr.InvalidInput, "time:"},
		{"weekday", RecurringRequest{Content: "x", Every: Every{N: 1, Unit: "week"}, Weekdays: []string{"mon", "funday"}, Time: "09:00"}, apperr.InvalidInput, "weekdays[1]:"},
		{"ends_after", RecurringRequest{Content: "x", Every: Every{N: 1, Unit: "week"}, Time: "09:00", EndsAfter: -1}, apperr.InvalidInput, "ends_after:"},
		{"ends_on format", RecurringRequest{Content: "x", Every: Every{N: 1, Unit: "week"}, Time: "09:00", EndsOn: "March"}, apperr.InvalidInput, "ends_on:"},
		{"ends_on past", RecurringRequest{Content: "x", Every: Every{N: 1, Unit: "week"}, Time: "09:00", EndsOn: "2026-03-01"}, apperr.InvalidInput, "ends_on:"},
		{"ends_on before the first", RecurringRequest{Content: "x", Every: Every{N: 1, Unit: "week"}, Weekdays: []string{"fri"}, Time: "09:00", EndsOn: "2026-03-04"}, apperr.ValidationError, "ends_on:"},
		{"draft missing", RecurringRequest{DraftID: 999, Every: Every{N: 1, Unit: "week"}, Time: "09:00"}, apperr.NotFound, ""},
	}
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		db := storetest.Open(t, store.Options{Now: clk.Now})
		s := service(db, clk)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.CreateRecurring(ctx, time.UTC, tc.req)
				e := apperr.As(err)
				if e == nil || e.Code != tc.code || !strings.HasPrefix(e.Message, tc.field) {
					t.Fatalf("got %v, want %s naming %q", err, tc.code, tc.field)
				}
				if tc.code == apperr.DuplicateRisk && len(e.Hints) == 0 {
					t.Errorf("duplicate_content_risk carries no hint")
				}
			})
		}
		accepted := []RecurringRequest{
			{Content: "Tip 1: run gofmt.", Every: Every{N: 1, Unit: "day"}, Time: "09:00", Vary: sevenVariants()},
			{Content: "Weekly notes.", Every: Every{N: 1, Unit: "week"}, Time: "09:00"},
			{Content: "Only twice.", Every: Every{N: 1, Unit: "day"}, Time: "09:00", EndsAfter: 1},
			{Content: "Tip 1.", Every: Every{N: 1, Unit: "week"}, Weekdays: []string{"mon", "thu"}, Time: "09:00", Vary: &Vary{Variants: []string{"Tip 2."}}},
		}
		for i, r := range accepted {
			if _, err := s.CreateRecurring(ctx, time.UTC, r); err != nil {
				t.Errorf("accepted case %d refused: %v", i, err)
			}
		}
	})
}

func TestRecurringUpdateChecksTheNewRule(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		db := storetest.Open(t, store.Options{Now: clk.Now})
		s := service(db, clk)
		p, err := s.CreateRecurring(ctx, time.UTC, weekly("Weekly notes."))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.UpdateRecurring(ctx, time.UTC, p.ID, RecurringUpdate{Every: &Every{N: 1, Unit: "day"}})
		if e := apperr.As(err); e == nil || e.Code != apperr.DuplicateRisk {
			t.Fatalf("a daily change without variants: %v, want duplicate_content_risk", err)
		}
		_, err = s.UpdateRecurring(ctx, time.UTC, p.ID, RecurringUpdate{Action: "stop"})
		if e := apperr.As(err); e == nil || !strings.HasPrefix(e.Message, "action:") {
			t.Fatalf("bad action: %v, want one naming action", err)
		}
		if _, err := s.UpdateRecurring(ctx, time.UTC, 999, RecurringUpdate{Action: RecurringPause}); apperr.CodeOf(err) != apperr.NotFound {
			t.Fatalf("unknown id: %v, want not_found", err)
		}
		r, err := s.UpdateRecurring(ctx, time.UTC, p.ID, RecurringUpdate{Every: &Every{N: 1, Unit: "day"}, Vary: sevenVariants()})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Texts) != 7 || r.NextAt != "2026-03-03T09:00:00Z" {
			t.Errorf("updated: %d texts, next %s; want 7 and 2026-03-03T09:00:00Z", len(r.Texts), r.NextAt)
		}
		if _, err := s.DeleteRecurring(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteRecurring(ctx, p.ID); apperr.CodeOf(err) != apperr.NotFound {
			t.Fatalf("second delete: %v, want not_found", err)
		}
	})
}
