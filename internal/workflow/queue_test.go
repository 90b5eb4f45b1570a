package workflow

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// allowAll is a policy that allows every call (or answers outcome).
type allowAll struct{ outcome policy.Outcome }

func (a allowAll) Reserve(context.Context, *sql.Tx, policy.Request) (policy.Decision, policy.Reservation, error) {
	o := a.outcome
	if o == "" {
		o = policy.Allow
	}
	return policy.Decision{Outcome: o, RuleID: "test"}, policy.Reservation{}, nil
}
func (allowAll) Release(context.Context, policy.Reservation) error { return nil }

// composer returns a composer for account on db, with a fake clock at t0
// (a Monday, 12:00 UTC).
func composer(t *testing.T, db *store.DB, account string, clk *clock.Fake, pol allowAll) *Composer {
	t.Helper()
	g, err := gateway.New(context.Background(), gateway.Options{DB: db, Policy: pol, AccountID: account, Now: clk.Now,
		Mode: func() (string, bool) { return "autopilot", false }, LockDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return &Composer{Service: &Service{DB: db, AccountID: account, Now: clk.Now}, Gateway: g, ComposerMode: func() bool { return false }}
}

func policyOf(t testing.TB, gap time.Duration, maxPerDay int, slots ...string) queue.Policy {
	t.Helper()
	r, err := queue.ParseSlots(slots)
	if err != nil {
		t.Fatal(err)
	}
	return queue.Policy{Rules: r, Loc: time.UTC, MinGap: gap, MaxPerDay: maxPerDay}
}

func day(d, h int) time.Time {
	return t0.Truncate(24*time.Hour).AddDate(0, 0, d).Add(time.Duration(h) * time.Hour)
}

func TestScheduleInQueueConcurrentCallersTakeDistinctSlots(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		db := storetest.Open(t, store.Options{Now: clk.Now})
		c := composer(t, db, "default", clk, allowAll{})
		p := policyOf(t, 0, 0, "daily 09:00", "daily 13:00", "daily 18:00")
		const callers = 20
		var wg sync.WaitGroup
		start := make(chan struct{})
		got := make([]string, callers)
		errs := make([]error, callers)
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r, err := c.ScheduleInQueue(ctx, p, QueueRequest{Content: "queued post " + string(rune('a'+i)), Position: PositionNext})
				if err == nil {
					got[i] = r.ScheduledFor
				}
				errs[i] = err
			}()
		}
		close(start)
		wg.Wait()
		seen := map[string]int{}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("caller %d: %v", i, err)
			}
			seen[got[i]]++
		}
		if len(seen) != callers {
			t.Fatalf("20 callers took %d distinct slots: %v", len(seen), seen)
		}
		// The 20 slots are the first 20 of the queue: today's 13:00 and
		// 18:00 (it is 12:00), then three a day.
		want := queue.Policy{Rules: p.Rules, Loc: time.UTC}.FreeSlots(t0.Add(time.Nanosecond), t0.AddDate(0, 0, 10), nil, callers)
		for _, w := range want {
			if seen[store.FormatTime(w)] != 1 {
				t.Errorf("slot %s not taken exactly once (%d)", w.Format(time.RFC3339), seen[store.FormatTime(w)])
			}
		}
	})
}

func TestQueueSlotUniqueIndex(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		db := storetest.Open(t, store.Options{Now: clk.Now})
		ins := func(account, status string) error {
			_, err := db.ExecContext(ctx, `INSERT INTO drafts (account_id, content, status, scheduled_for, queue_slot, created_at, updated_at) VALUES (?, 'x', ?, ?, ?, ?, ?)`,
				account, status, "2026-03-03T09:00:00.000Z", "2026-03-03T09:00:00.000Z", "2026-03-02T12:00:00.000Z", "2026-03-02T12:00:00.000Z")
			return err
		}
		must(t, ins("default", "scheduled"))
		if err := ins("default", "scheduled"); err == nil {
			t.Fatal("a second scheduled item took the same slot of the same account")
		}
		must(t, ins("other", "scheduled"))
		// A slot whose item went back to being a draft is free again.
		must(t, ins("third", "deleted"))
		must(t, ins("third", "scheduled"))
	})
}

func TestQueueBehaviour(t *testing.T) {
	ctx := context.Background()
	mine, other, clk := services(t)
	c := composer(t, mine.DB, "default", clk, allowAll{})
	oc := composer(t, other.DB, "other", clk, allowAll{})
	p := policyOf(t, 2*time.Hour, 2, "daily 09:00", "daily 10:00", "daily 15:00", "daily 20:00")

	// Today (Monday, 12:00) 15:00 and 20:00 are free.
	next, err := c.NextFreeSlots(ctx, p, time.Time{}, 3)
	must(t, err)
	if s := fmtTimes(next); s != fmtTimes([]time.Time{day(0, 15), day(0, 20), day(1, 9)}) {
		t.Fatalf("NextFreeSlots = %s", s)
	}

	// A post scheduled by hand at 16:00 keeps 15:00 away (gap) and, with
	// the 20:00 queue item, fills the day (max 2).
	at := day(0, 16)
	_, err = c.Compose(ctx, ComposeRequest{Content: "by hand", ScheduledFor: &at})
	must(t, err)
	r, err := c.ScheduleInQueue(ctx, p, QueueRequest{Content: "first", Position: PositionNext})
	must(t, err)
	if r.ScheduledFor != store.FormatTime(day(0, 20)) || r.Status != DraftScheduled {
		t.Fatalf("next took %s (%s), want today's 20:00", r.ScheduledFor, r.Status)
	}
	slots, err := c.QueueSlots(ctx, p, t0, 2)
	must(t, err)
	var states []string
	for _, s := range slots {
		states = append(states, s.At[11:16]+"="+s.Status)
	}
	if got, want := strings.Join(states, " "), "15:00=min_gap 20:00=taken 09:00=free 10:00=free 15:00=free 20:00=free 09:00=free 10:00=free"; got != want {
		t.Errorf("QueueSlots = %s, want %s", got, want)
	}
	if slots[1].DraftID != r.ID {
		t.Errorf("20:00 slot's draft = %d, want %d", slots[1].DraftID, r.ID)
	}

	// last goes after the latest queue item; first_after after the time.
	d, err := c.Compose(ctx, ComposeRequest{Content: "a draft"})
	must(t, err)
	after := day(3, 0)
	fa, err := c.ScheduleInQueue(ctx, p, QueueRequest{DraftID: d.ID, Position: PositionFirstAfter, After: &after})
	must(t, err)
	if fa.ScheduledFor != store.FormatTime(day(3, 9)) || fa.ID != d.ID {
		t.Errorf("first_after took %s for draft %d, want Thursday 09:00 for draft %d", fa.ScheduledFor, fa.ID, d.ID)
	}
	last, err := c.ScheduleInQueue(ctx, p, QueueRequest{Content: "last one", Position: PositionLast})
	must(t, err)
	if last.ScheduledFor != store.FormatTime(day(3, 15)) {
		t.Errorf("last took %s, want Thursday 15:00 (after the queue's end, 09:00, and the 2 h gap past 10:00)", last.ScheduledFor)
	}
	// Another account's queue is its own.
	o, err := oc.ScheduleInQueue(ctx, p, QueueRequest{Content: "theirs", Position: PositionNext})
	must(t, err)
	if o.ScheduledFor != store.FormatTime(day(0, 15)) {
		t.Errorf("other account took %s, want its own 15:00", o.ScheduledFor)
	}
	// Unscheduling frees the slot.
	_, err = c.UpdateDraft(ctx, r.ID, DraftUpdate{Unschedule: true})
	must(t, err)
	n, err := c.NextFreeSlots(ctx, p, time.Time{}, 1)
	must(t, err)
	// 20:00 is 4 h from the 16:00 post, and the day holds one post again.
	if !n[0].Equal(day(0, 20)) {
		t.Errorf("after unscheduling, next free = %s, want today's 20:00", n[0])
	}
}

func TestQueueErrors(t *testing.T) {
	ctx := context.Background()
	mine, _, clk := services(t)
	c := composer(t, mine.DB, "default", clk, allowAll{})
	none := queue.Policy{Loc: time.UTC}
	if _, err := c.NextFreeSlots(ctx, none, time.Time{}, 1); apperr.CodeOf(err) != apperr.QueueNotConfigured {
		t.Errorf("no slots: error %v, want queue_not_configured", err)
	}
	if _, err := c.QueueSlots(ctx, none, t0, 7); apperr.CodeOf(err) != apperr.QueueNotConfigured {
		t.Errorf("no slots: QueueSlots error %v, want queue_not_configured", err)
	}
	// One slot a week, one post a day: full once every Monday for a year
	// is booked.
	p := policyOf(t, 0, 1, "mon 09:00")
	for i := 1; i <= 53; i++ {
		at := day(7*i, 8)
		_, err := c.Compose(ctx, ComposeRequest{Content: "weekly " + string(rune('a'+i%26)) + string(rune('a'+i/26)), ScheduledFor: &at})
		must(t, err)
	}
	if _, err := c.NextFreeSlots(ctx, p, time.Time{}, 1); apperr.CodeOf(err) != apperr.QueueFull {
		t.Errorf("a year of full Mondays: error %v, want queue_full", err)
	}
	if _, err := c.ScheduleInQueue(ctx, p, QueueRequest{Content: "x", Position: PositionNext}); apperr.CodeOf(err) != apperr.QueueFull {
		t.Errorf("schedule_in_queue on a full queue: error %v, want queue_full", err)
	}
	p = policyOf(t, 0, 0, "daily 09:00")
	after := day(1, 0)
	for _, tc := range []struct {
		name string
		r    QueueRequest
		want string
	}{
		{"nothing", QueueRequest{Position: PositionNext}, "draft_id: required"},
		{"both", QueueRequest{DraftID: 1, Content: "x"}, "not both"},
		{"bad position", QueueRequest{Content: "x", Position: "soon"}, "position:"},
		{"first_after without after", QueueRequest{Content: "x", Position: PositionFirstAfter}, "after: required"},
		{"after without first_after", QueueRequest{Content: "x", Position: PositionNext, After: &after}, "after: only"},
		{"unknown draft", QueueRequest{DraftID: 999}, "draft_id: no draft 999"},
		{"too long", QueueRequest{Content: strings.Repeat("x", 300)}, "content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ScheduleInQueue(ctx, p, tc.r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestScheduleInQueueDryRunStoresNothing(t *testing.T) {
	ctx := context.Background()
	mine, _, clk := services(t)
	c := composer(t, mine.DB, "default", clk, allowAll{outcome: policy.DryRun})
	r, err := c.ScheduleInQueue(ctx, policyOf(t, 0, 0, "daily 18:00"), QueueRequest{Content: "x", Position: PositionNext})
	must(t, err)
	if !r.DryRun || r.ID != 0 || r.ScheduledFor != store.FormatTime(day(0, 18)) {
		t.Errorf("dry run = %+v; want the slot shown and nothing stored", r)
	}
	ds, err := c.Drafts(ctx, "")
	must(t, err)
	if len(ds) != 0 {
		t.Errorf("dry run stored %d drafts", len(ds))
	}
}

func fmtTimes(ts []time.Time) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.UTC().Format(time.RFC3339))
	}
	return strings.Join(s, " ")
}

// TestFrontierNeverHidesAFreedSlot: once a full queue's frontier is
// recorded, every way a booked item stops holding its slot (unscheduled,
// moved, deleted, failed, a changed queue) makes the next search see the
// slot again, on both backends.
func TestFrontierNeverHidesAFreedSlot(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		clk := clock.NewFake(t0)
		db := storetest.Open(t, store.Options{Now: clk.Now})
		c := composer(t, db, "default", clk, allowAll{})
		p := policyOf(t, 0, 0, "daily 09:00", "daily 13:00", "daily 18:00")
		var ids []int64
		for i := range 21 {
			r, err := c.ScheduleInQueue(ctx, p, QueueRequest{Content: fmt.Sprintf("queued post %d", i)})
			must(t, err)
			ids = append(ids, r.ID)
		}
		next := func() time.Time {
			t.Helper()
			got, err := c.NextFreeSlots(ctx, p, time.Time{}, 1)
			must(t, err)
			return got[0]
		}
		full := next()
		if full.Before(day(7, 0)) {
			t.Fatalf("the first free slot of a full week is %s", full)
		}
		if again := next(); !again.Equal(full) {
			t.Fatalf("the second search found %s, the first %s", again, full)
		}
		slotOf := func(id int64) time.Time {
			d, err := c.Draft(ctx, id)
			must(t, err)
			at, err := store.ParseTime(d.ScheduledFor)
			must(t, err)
			return at
		}
		for _, fr := range []struct {
			name string
			id   int64
			free func(id int64) error
		}{
			{"unscheduled", ids[10], func(id int64) error {
				_, err := c.UpdateDraft(ctx, id, DraftUpdate{Unschedule: true})
				return err
			}},
			{"moved", ids[4], func(id int64) error {
				later := day(30, 7)
				_, err := c.UpdateDraft(ctx, id, DraftUpdate{ScheduledFor: &later})
				return err
			}},
			{"deleted", ids[7], func(id int64) error { return c.DeleteDraft(ctx, id) }},
			{"failed", ids[2], func(id int64) error { return c.SetDraftStatus(ctx, id, DraftFailed, "", 0) }},
		} {
			at := slotOf(fr.id)
			must(t, fr.free(fr.id))
			if got := next(); !got.Equal(at) {
				t.Errorf("%s: the next free slot is %s, want the freed %s", fr.name, got, at)
			}
			// Take it again, so the next case starts from a full week.
			r, err := c.ScheduleInQueue(ctx, p, QueueRequest{Content: "refill " + fr.name})
			must(t, err)
			if r.ScheduledFor != store.FormatTime(at) {
				t.Fatalf("%s: the refill took %s, want %s", fr.name, r.ScheduledFor, store.FormatTime(at))
			}
		}
		// Another queue: the frontier found for the first says nothing.
		wider := policyOf(t, 0, 0, "daily 09:00", "daily 11:00", "daily 13:00", "daily 18:00")
		got, err := c.NextFreeSlots(ctx, wider, time.Time{}, 1)
		must(t, err)
		if want := day(1, 11); !got[0].Equal(want) {
			t.Errorf("with an 11:00 slot added the next free slot is %s, want %s", got[0], want)
		}
	})
}
