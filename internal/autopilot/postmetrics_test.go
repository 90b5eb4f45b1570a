package autopilot_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/postmetrics"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestAnalyticsLoopCapturesPostMetricsAtEachCheckpointOnce: against the
// emulator, on a fake clock, the analytics loop measures the account's
// own post at 1 h, 24 h and 7 days, exactly once each across repeated
// runs, from post analytics; once X answers the analytics read with 403,
// a further post is measured by its public metrics and its row says so.
func TestAnalyticsLoopCapturesPostMetricsAtEachCheckpointOnce(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		ctx := context.Background()
		var analytics atomic.Int64
		e.sim.SetFault("GET /2/tweets/analytics", xsim.Fault{OnArrive: func(context.Context) { analytics.Add(1) }})
		wf, err := e.app.Workflow()
		if err != nil {
			t.Fatal(err)
		}
		pm := &postmetrics.Store{DB: wf.DB, Account: wf.AccountID, Now: e.clock.Now}
		post := func(text string) string {
			id, err := e.sim.PostAs(e.sim.DemoUserID(), text, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := wf.RecordPost(ctx, workflow.KindTweet, id, text); err != nil {
				t.Fatal(err)
			}
			return id
		}
		checkpoints := func(id string) (string, []postmetrics.Row) {
			rows, err := pm.Rows(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var hs []int
			for _, r := range rows {
				hs = append(hs, int(r.Checkpoint/time.Hour))
			}
			return fmt.Sprint(hs), rows
		}
		start := e.clock.Now()
		id := post("How we measure a post at an hour, a day and a week.")
		for _, st := range []struct {
			at        time.Duration
			want      string
			analytics int64 // analytics reads so far
		}{
			{40 * time.Minute, "[]", 0},
			{time.Hour + time.Minute, "[1]", 1},
			{2 * time.Hour, "[1]", 1},
			{24*time.Hour + time.Minute, "[1 24]", 2},
			{5 * 24 * time.Hour, "[1 24]", 2},
			{7*24*time.Hour + time.Minute, "[1 24 168]", 3},
			{7*24*time.Hour + 3*time.Hour, "[1 24 168]", 3},
		} {
			e.clock.AdvanceTo(start.Add(st.at))
			for range 2 {
				tick(t, e.runner(e.app, autopilot.LoopAnalytics))
			}
			got, rows := checkpoints(id)
			if got != st.want || analytics.Load() != st.analytics {
				t.Fatalf("at +%s: checkpoints %s after %d analytics reads; want %s after %d", st.at, got, analytics.Load(), st.want, st.analytics)
			}
			for _, r := range rows {
				if r.Source != postmetrics.SourceAnalytics || r.Kind != postmetrics.KindOriginal || r.Impressions < 0 {
					t.Fatalf("row %+v; want an original post measured by analytics, impressions known", r)
				}
			}
		}

		// The tier loses analytics: 403, and the row says public.
		e.sim.SetFault("GET /2/tweets/analytics", xsim.Fault{ClientNotEnrolled: true})
		other := post("A post measured after analytics went away.")
		e.clock.Advance(time.Hour + time.Minute)
		tick(t, e.runner(e.app, autopilot.LoopAnalytics))
		got, rows := checkpoints(other)
		if got != "[1]" || rows[0].Source != postmetrics.SourcePublic {
			t.Fatalf("after a 403 the post has checkpoints %s, rows %+v; want one public row", got, rows)
		}
	})
}
