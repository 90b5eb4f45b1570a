package autopilot_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/notify"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestMissedQueueSlots: a queued item whose slot passed while no
// publisher ran posts late within late_grace_minutes, once; past the
// grace it moves to the next free slot (past a taken one) and
// publish.rescheduled is recorded once although two publishers found it.
func TestMissedQueueSlots(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) {
			c.Queue.Slots = []string{"daily 10:00", "daily 14:00", "daily 18:00"}
			c.Queue.LateGraceMinutes = 15
			c.Notify.Channels = []config.NotifyChannel{{Name: "phone", Type: config.ChannelNtfy, Server: "http://127.0.0.1:9", Topic: "tuitbot"}}
		})
		ctx := context.Background()
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		cp, err := e.app.Composer()
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.app.Cfg.QueuePolicy()
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, text := range []string{"Queued tip one about Go tooling.", "Queued tip two about shipping CLIs.", "Queued tip three about safe automation."} {
			r, err := cp.ScheduleInQueue(ctx, p, workflow.QueueRequest{Content: text, Position: workflow.PositionNext,
				Options: &actions.PostOptions{ReplySettings: "following"}})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
		created := func() int64 { return e.sim.Counters()[xsim.CountTweetsCreated] }
		before := created()

		// Ten minutes late, within the 15-minute grace: it posts now, once,
		// with the options it was queued with.
		e.clock.AdvanceTo(day0.Add(10*time.Hour + 10*time.Minute))
		tick(t, e.runner(e.app, autopilot.LoopPublisher))
		tick(t, e.runner(e.app, autopilot.LoopPublisher))
		if n := created() - before; n != 1 {
			t.Fatalf("%d posts within the grace, want 1", n)
		}
		d, err := cp.Draft(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != workflow.DraftPosted {
			t.Fatalf("the late item is %s, want posted", d.Status)
		}
		if tw := e.ourPosts(day0, day0.AddDate(0, 0, 1)); len(tw) != 1 || tw[0].ReplySettings != "following" {
			t.Errorf("posted %+v; want one post with reply_settings following", tw)
		}

		// 40 minutes past 14:00, beyond the grace, with two publishers (two
		// processes) at once: the item moves past the taken 18:00 slot to the
		// next day's 10:00, nothing is posted, one event is recorded.
		e.clock.AdvanceTo(day0.Add(14*time.Hour + 40*time.Minute))
		a2 := e.openApp()
		runners := []*autopilot.Runner{e.runner(e.app, autopilot.LoopPublisher), e.runner(a2, autopilot.LoopPublisher)}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, r := range runners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, err := r.Tick(ctx); err != nil {
					t.Errorf("Tick: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if n := created() - before; n != 1 {
			t.Fatalf("%d posts after the missed slot, want still 1", n)
		}
		d, err = cp.Draft(ctx, ids[1])
		if err != nil {
			t.Fatal(err)
		}
		if want := store.FormatTime(day0.Add(34 * time.Hour)); d.Status != workflow.DraftScheduled || d.ScheduledFor != want {
			t.Errorf("the missed item is %s at %s; want scheduled at %s (18:00 is taken)", d.Status, d.ScheduledFor, want)
		}
		if c, _ := cp.Draft(ctx, ids[2]); c.ScheduledFor != store.FormatTime(day0.Add(18*time.Hour)) {
			t.Errorf("the 18:00 item moved to %s", c.ScheduledFor)
		}
		rows, err := e.app.Outbox().List(ctx, notify.Filter{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range rows {
			if r.Event == notify.EventRescheduled {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d publish.rescheduled rows, want 1", n)
		}

		// At its new slot it posts.
		e.clock.AdvanceTo(day0.Add(18*time.Hour + time.Minute))
		tick(t, e.runner(e.app, autopilot.LoopPublisher))
		e.clock.AdvanceTo(day0.Add(34*time.Hour + time.Minute))
		tick(t, e.runner(e.app, autopilot.LoopPublisher))
		if n := created() - before; n != 3 {
			t.Errorf("%d posts once every slot came, want 3", n)
		}
	})
}
