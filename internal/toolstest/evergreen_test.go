package toolstest

import (
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestEvergreenOverMCP: mark_evergreen reads the post's engagement from X
// and posts nothing; list_evergreen orders by engagement and shows the
// settings; unmark_evergreen forgets it; bad input names the field.
func TestEvergreenOverMCP(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
		c.Evergreen = config.Evergreen{Enabled: true, FillEmptySlots: true, MinIntervalDays: 10, MaxRecycles: 4, Mode: "variant"}
	}})
	id, err := e.Sim.PostAs(e.Sim.DemoUserID(), "A post worth recycling.", "")
	if err != nil {
		t.Fatal(err)
	}
	before := e.counters()
	type marked struct {
		Evergreen workflow.EvergreenPost `json:"evergreen"`
		Settings  map[string]any         `json:"settings"`
	}
	var m marked
	e.call("mark_evergreen", map[string]any{"tweet_id": id, "variants": []string{"Still worth reading.", "Worth a second look."}}).ok(t, &m)
	if m.Evergreen.TweetID != id || m.Evergreen.Text != "A post worth recycling." || len(m.Evergreen.Variants) != 2 || m.Evergreen.Status != "active" || m.Settings["mode"] != "variant" {
		t.Fatalf("mark_evergreen = %+v", m)
	}
	if d := e.counters(); d[xsim.CountTweetsCreated] != before[xsim.CountTweetsCreated] {
		t.Fatalf("mark_evergreen posted")
	}
	var l struct {
		Evergreen []workflow.EvergreenPost `json:"evergreen"`
		Count     int                      `json:"count"`
	}
	e.call("list_evergreen", map[string]any{}).ok(t, &l)
	if l.Count != 1 || l.Evergreen[0].TweetID != id {
		t.Fatalf("list_evergreen = %+v", l)
	}
	e.call("unmark_evergreen", map[string]any{"tweet_id": id}).ok(t, nil)
	e.call("unmark_evergreen", map[string]any{"tweet_id": id}).fails(t, apperr.NotFound).mentions(t, "tweet_id")

	e.call("mark_evergreen", map[string]any{"tweet_id": "123"}).fails(t, apperr.XNotFound).mentions(t, "tweet_id")
	e.call("mark_evergreen", map[string]any{"tweet_id": "abc"}).fails(t, apperr.InvalidInput).mentions(t, "tweet_id")
	e.call("mark_evergreen", map[string]any{"tweet_id": id, "variants": []string{"A post worth recycling."}}).fails(t, apperr.InvalidInput).mentions(t, "variants[0]")
	e.call("mark_evergreen", map[string]any{"tweet_id": id, "variants": []string{"One.", "one. "}}).fails(t, apperr.InvalidInput).mentions(t, "variants[1]")
}
