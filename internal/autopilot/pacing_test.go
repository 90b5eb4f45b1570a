package autopilot_test

import (
	"context"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// recordingRunner is a runner whose every wait is recorded before the env's
// clock moves through it.
func recordingRunner(t *testing.T, e *env, slept *[]time.Duration, loops ...string) *autopilot.Runner {
	t.Helper()
	r, err := e.app.Autopilot(autopilot.Options{Rand: rand.New(rand.NewPCG(1, 2)), Loops: loops,
		Sleep: func(ctx context.Context, d time.Duration) error {
			*slept = append(*slept, d)
			return e.sleep(ctx, d)
		}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPacingAppliesToWhatReachesX: the pause between two posts
// (limits.min/max_action_delay_seconds) protects X. Replies the policy only
// queues for approval go into the queue one after the other with no wait,
// while replies that reach X keep the pause between them.
func TestPacingAppliesToWhatReachesX(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			approval bool
		}{
			{"queued for approval", true},
			{"posted to X", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t, func(c *config.Config) { c.ApprovalMode = tc.approval })
				e.clock.AdvanceTo(day0.Add(9 * time.Hour))
				for _, who := range []string{"rustacean_rae", "gopher_gabe", "ai_agent_ana"} {
					e.postAs(who, "@tuitbot_demo how do you keep golang builds fast?")
				}
				start := e.clock.Now()
				var slept []time.Duration
				res := tick(t, recordingRunner(t, e, &slept, autopilot.LoopMentions))[autopilot.LoopMentions]
				if res.Error != "" {
					t.Fatalf("mentions: %+v", res)
				}
				if tc.approval {
					if res.Queued < 3 || res.Posted != 0 {
						t.Fatalf("mentions with approval: %+v, want at least 3 queued", res)
					}
					if len(slept) != 0 || !e.clock.Now().Equal(start) {
						t.Fatalf("queueing %d replies waited %v (clock moved %s): pacing applied to the queue", res.Queued, slept, e.clock.Now().Sub(start))
					}
					return
				}
				if res.Posted < 3 {
					t.Fatalf("mentions without approval: %+v, want at least 3 posted", res)
				}
				if len(slept) != res.Posted-1 {
					t.Errorf("%d waits between %d posts, want %d", len(slept), res.Posted, res.Posted-1)
				}
				for _, d := range slept {
					if d < 30*time.Second || d > 90*time.Second {
						t.Errorf("waited %s between posts, want 30s-90s", d)
					}
				}
				posts := e.ourPosts(start, e.clock.Now().Add(time.Second))
				sort.Slice(posts, func(a, b int) bool { return posts[a].CreatedAt.Before(posts[b].CreatedAt) })
				if len(posts) != res.Posted {
					t.Fatalf("%d posts on the emulator, want %d", len(posts), res.Posted)
				}
				for i := 1; i < len(posts); i++ {
					if gap := posts[i].CreatedAt.Sub(posts[i-1].CreatedAt); gap < 30*time.Second {
						t.Errorf("posts %s and %s reached X %s apart, want at least 30s", posts[i-1].ID, posts[i].ID, gap)
					}
				}
			})
		}
	})
}

// freshHome is the configuration of a home nobody configured: defaults
// only (no topics, no LLM, approval on), on the env's home and database.
func freshHome(c *config.Config) {
	home, storage := c.Home, c.Storage
	*c = config.Default()
	c.Home, c.Storage = home, storage
}

// TestSandboxDemoWorksAtAnyHour: `tick --sandbox` on a fresh home at 23:00
// UTC, outside the default active hours, drafts on the stand-in about the
// demo topics and queues a reply, a tweet and a thread for approval without
// waiting on pacing. With [sandbox] all_day = false the configured hours
// hold, as they always do for a real account.
func TestSandboxDemoWorksAtAnyHour(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			allDay bool
		}{
			{"all day", true},
			{"keeping the hours", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t, func(c *config.Config) {
					freshHome(c)
					c.Sandbox.AllDay = tc.allDay
				})
				e.clock.AdvanceTo(day0.Add(22*time.Hour + 59*time.Minute))
				for _, who := range []string{"rustacean_rae", "gopher_gabe"} {
					e.postAs(who, "@tuitbot_demo what does your approval flow look like?")
				}
				e.clock.AdvanceTo(day0.Add(23 * time.Hour))
				var slept []time.Duration
				r := recordingRunner(t, e, &slept)
				res := tick(t, r)
				st, err := r.Status(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				posting := []string{autopilot.LoopMentions, autopilot.LoopContent, autopilot.LoopThreads}
				if !tc.allDay {
					for _, n := range posting {
						if !strings.Contains(res[n].Skipped, "outside active hours") {
							t.Errorf("%s at 23:00 with the hours kept: %+v", n, res[n])
						}
					}
					if st.ActiveNow {
						t.Errorf("status says active at 23:00 with the hours kept: %s", st.ActiveHours)
					}
					return
				}
				for _, n := range posting {
					if x := res[n]; x.Skipped != "" || x.Error != "" || x.Queued == 0 {
						t.Errorf("%s at 23:00 in the sandbox: %+v, want queued items", n, x)
					}
				}
				demo := false
				for _, p := range xsim.DemoPillars() {
					demo = demo || strings.Contains(res[autopilot.LoopContent].Summary, p)
				}
				if !demo {
					t.Errorf("the content loop did not write about a demo topic: %q", res[autopilot.LoopContent].Summary)
				}
				if len(slept) != 0 {
					t.Errorf("the tick waited %v although everything only entered the queue", slept)
				}
				if !st.ActiveNow || !strings.Contains(st.ActiveHours, "sandbox") {
					t.Errorf("status: active %v, hours %q; want active, saying why", st.ActiveNow, st.ActiveHours)
				}
			})
		}
	})
}

// TestTickReportsEachLoopAsItRuns: Options.Report is given each loop's
// outcome as soon as that loop has run, before the next one starts, so a
// tick shows its progress rather than everything at the end.
func TestTickReportsEachLoopAsItRuns(t *testing.T) {
	e := newEnv(t, nil)
	e.clock.AdvanceTo(day0.Add(9 * time.Hour))
	var reported []autopilot.LoopResult
	loops := []string{autopilot.LoopHousekeeping, autopilot.LoopPublisher, autopilot.LoopContent, autopilot.LoopAnalytics}
	r, err := e.app.Autopilot(autopilot.Options{Sleep: e.sleep, Rand: rand.New(rand.NewPCG(1, 2)), Loops: loops,
		Report: func(res autopilot.LoopResult) {
			// The loops that have run so far, by their saved state.
			ran := e.count(`SELECT count(*) FROM loop_state WHERE runs > 0`)
			if ran != len(reported)+1 {
				t.Errorf("%s reported when %d loops had run, want %d", res.Loop, ran, len(reported)+1)
			}
			reported = append(reported, res)
		}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(reported) != len(loops) {
		t.Fatalf("%d reports for %d loops", len(reported), len(loops))
	}
	for i, x := range res {
		if reported[i].Loop != loops[i] || reported[i].Summary != x.Summary || reported[i].Posted != x.Posted {
			t.Errorf("report %d = %+v, want the tick's result %+v", i, reported[i], x)
		}
	}
}
