package autopilot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestQueuedItemInComposerModeGoesToApprovalAtItsSlot: an item placed in
// the queue waits for its slot, and in composer mode the publisher then
// queues it for approval instead of posting it, as compose_tweet does with
// a scheduled item, with the post options it was queued with.
func TestQueuedItemInComposerModeGoesToApprovalAtItsSlot(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		c.Mode = "composer"
		c.Queue.Slots = []string{"daily 10:00"}
	})
	e.clock.AdvanceTo(day0.Add(9 * time.Hour))
	ctx := context.Background()
	cp, err := e.app.Composer()
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.app.Cfg.QueuePolicy()
	if err != nil {
		t.Fatal(err)
	}
	r, err := cp.ScheduleInQueue(ctx, p, workflow.QueueRequest{Content: "A queued tip about Go tooling.", Position: workflow.PositionNext,
		Options: &actions.PostOptions{ReplySettings: "following"}})
	if err != nil {
		t.Fatal(err)
	}
	before := e.sim.Counters()[xsim.CountTweetsCreated]
	tick(t, e.runner(e.app, autopilot.LoopPublisher))
	d, err := cp.Draft(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != workflow.DraftScheduled {
		t.Fatalf("before its slot the item is %s, want scheduled", d.Status)
	}
	e.clock.AdvanceTo(day0.Add(10*time.Hour + time.Minute))
	tick(t, e.runner(e.app, autopilot.LoopPublisher))
	d, err = cp.Draft(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != workflow.DraftQueued || d.ApprovalID == 0 {
		t.Errorf("at its slot the item is %s (approval %d), want queued for approval", d.Status, d.ApprovalID)
	}
	g, err := e.app.RequireGateway()
	if err != nil {
		t.Fatal(err)
	}
	item, err := g.Item(ctx, d.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if item.Tool != "x_post_tweet" || !strings.Contains(string(item.Params), `"reply_settings":"following"`) {
		t.Errorf("approval item %s %s; want x_post_tweet with the queued options", item.Tool, item.Params)
	}
	if n := e.sim.Counters()[xsim.CountTweetsCreated] - before; n != 0 {
		t.Errorf("%d tweets were created; composer mode must not post", n)
	}
}
