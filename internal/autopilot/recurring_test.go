package autopilot_test

import (
	"context"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// TestRecurringPostIsPublishedOncePerOccurrence: a daily rule with texts in
// rotation posts one text a day on the emulator, through the gateway, even
// with two processes running the publisher at the same moments; in composer
// mode each occurrence goes to approval instead.
func TestRecurringPostIsPublishedOncePerOccurrence(t *testing.T) {
	texts := []string{"Go tip 1: gofmt on save.", "Go tip 2: go vet in CI.", "Go tip 3: -race in tests.", "Go tip 4: small packages.",
		"Go tip 5: wrap errors with %w.", "Go tip 6: pass a context.", "Go tip 7: table-driven tests."}
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, composer := range []bool{false, true} {
			name := "autopilot"
			if composer {
				name = "composer"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, func(c *config.Config) {
					if composer {
						c.Mode = "composer"
					}
				})
				ctx := context.Background()
				s, err := e.app.Workflow()
				if err != nil {
					t.Fatal(err)
				}
				e.clock.AdvanceTo(day0.Add(9 * time.Hour))
				p, err := s.CreateRecurring(ctx, time.UTC, workflow.RecurringRequest{Content: texts[0], Every: workflow.Every{N: 1, Unit: "day"},
					Time: "10:00", Vary: &workflow.Vary{Variants: texts[1:]}, EndsAfter: 3})
				if err != nil {
					t.Fatal(err)
				}
				second := e.openApp()
				for d := range 4 {
					for _, h := range []time.Duration{9 * time.Hour, 10*time.Hour + time.Minute} {
						e.clock.AdvanceTo(day0.AddDate(0, 0, d).Add(h))
						tick(t, e.runner(e.app, autopilot.LoopPublisher))
						tick(t, e.runner(second, autopilot.LoopPublisher))
					}
				}
				posts := e.ourPosts(day0, day0.AddDate(0, 0, 5))
				queued := e.count(`SELECT COUNT(*) FROM drafts WHERE recurring_id = ? AND status = 'queued' AND approval_id IS NOT NULL`, p.ID)
				if composer {
					if len(posts) != 0 || queued != 3 {
						t.Fatalf("composer mode: %d posts and %d occurrences queued for approval, want 0 and 3", len(posts), queued)
					}
					return
				}
				if len(posts) != 3 {
					t.Fatalf("%d posts, want one per occurrence (3)", len(posts))
				}
				for i, post := range posts {
					if post.Text != texts[i] {
						t.Errorf("post %d: %q, want %q", i, post.Text, texts[i])
					}
					if want := day0.AddDate(0, 0, i).Add(10*time.Hour + time.Minute); !post.CreatedAt.Equal(want) {
						t.Errorf("post %d at %s, want %s", i, post.CreatedAt, want)
					}
				}
				if n := e.count(`SELECT COUNT(*) FROM mutation_audit WHERE tool_name = 'x_post_tweet' AND status = 'success'`); n != 3 {
					t.Errorf("%d audited posts, want 3", n)
				}
			})
		}
	})
}
