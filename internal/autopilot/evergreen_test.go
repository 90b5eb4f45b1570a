package autopilot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// as sends one request to the emulator as username and returns the status.
func (e *env) as(username, method, path string, body any) int {
	e.t.Helper()
	uid := e.sim.UserIDByUsername(username)
	if uid == "" {
		e.t.Fatalf("no user %s in the emulator", username)
	}
	tok, _, _ := e.sim.IssueToken(uid, e.sim.AllScopes())
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, e.app.Sim.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s as %s: %v", method, path, username, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// likedPost posts text as the demo account and has likes other users like it.
func (e *env) likedPost(text string, likes int) string {
	e.t.Helper()
	id := e.postAs(xsim.DemoUsername, text)
	for _, u := range []string{"kube_kai", "oss_olivia", "sqlite_sid"}[:likes] {
		if st := e.as(u, http.MethodPost, "/2/users/"+e.sim.UserIDByUsername(u)+"/likes", map[string]string{"tweet_id": id}); st != http.StatusOK {
			e.t.Fatalf("like as %s: status %d", u, st)
		}
	}
	return id
}

func (e *env) deleteOnX(id string) {
	e.t.Helper()
	if st := e.as(xsim.DemoUsername, http.MethodDelete, "/2/tweets/"+id, nil); st != http.StatusOK {
		e.t.Fatalf("delete %s: status %d", id, st)
	}
}

// evergreenDrafts maps each slot an evergreen draft holds to its post.
func (e *env) evergreenDrafts() map[string]string {
	e.t.Helper()
	rows, err := e.db().Query(`SELECT queue_slot, evergreen_tweet_id FROM drafts WHERE source = 'evergreen' AND status NOT IN ('deleted')`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var slot, id string
		if err := rows.Scan(&slot, &id); err != nil {
			e.t.Fatal(err)
		}
		out[slot[:16]] = id
	}
	return out
}

func evergreenEnv(t *testing.T, mode string, configure func(*config.Config)) *env {
	return newEnv(t, func(c *config.Config) {
		c.Queue.Slots = []string{"daily 12:00", "daily 18:00"}
		c.Evergreen = config.Evergreen{Enabled: true, FillEmptySlots: true, MinIntervalDays: 2, MaxRecycles: 2, Mode: mode}
		if configure != nil {
			configure(c)
		}
	})
}

// TestEvergreenFillsEmptySlots: a queue slot still empty 2 h before its time
// gets the eligible evergreen post with the most engagement, a taken slot
// gets none, min_interval_days and max_recycles hold, and a post deleted
// on X is marked gone (found when picked, or when its repost is refused)
// and never picked again.
func TestEvergreenFillsEmptySlots(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := evergreenEnv(t, workflow.EvergreenRepost, nil)
		ctx := context.Background()
		e.clock.AdvanceTo(day0.Add(8 * time.Hour))
		a, b, c := e.likedPost("Evergreen A: how we test against an emulator.", 3), e.likedPost("Evergreen B: why one gateway.", 2), e.likedPost("Evergreen C: small packages.", 1)
		s, err := e.app.Workflow()
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{a, b, c} {
			if _, err := s.MarkEvergreen(ctx, id, nil); err != nil {
				t.Fatal(err)
			}
		}
		cp, err := e.app.Composer()
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.app.Cfg.QueuePolicy()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cp.ScheduleInQueue(ctx, p, workflow.QueueRequest{Content: "Our own post for noon.", Position: workflow.PositionNext}); err != nil {
			t.Fatal(err)
		}
		at := func(d int, h, m int) time.Time {
			return day0.AddDate(0, 0, d).Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
		}
		step := func(when time.Time) {
			t.Helper()
			e.clock.AdvanceTo(when)
			tick(t, e.runner(e.app, autopilot.LoopPublisher))
		}
		slot := func(d, h int) string { return at(d, h, 0).UTC().Format("2006-01-02T15:04") }

		step(at(0, 10, 30)) // noon is taken, 18:00 is too far
		if got := e.evergreenDrafts(); len(got) != 0 {
			t.Fatalf("filled %v; noon is taken and 18:00 is more than 2 h away", got)
		}
		step(at(0, 12, 1))  // our own post goes out at its slot; were it missed, it would move to 18:00
		step(at(0, 15, 59)) // 2 h 1 min before 18:00: not yet
		if got := e.evergreenDrafts(); len(got) != 0 {
			t.Fatalf("filled %v more than 2 h before the slot", got)
		}
		step(at(0, 16, 0))
		if got := e.evergreenDrafts(); got[slot(0, 18)] != a || len(got) != 1 {
			t.Fatalf("at 16:00 filled %v, want 18:00 given A (most engagement)", got)
		}
		step(at(0, 18, 1))
		if n := e.count(`SELECT COUNT(*) FROM mutation_audit WHERE tool_name = 'x_retweet' AND status = 'success'`); n != 1 {
			t.Fatalf("%d reposts, want A reposted at its slot through the gateway", n)
		}
		// Day 1: A was recycled within min_interval_days; B is next.
		step(at(1, 10, 30))
		if got := e.evergreenDrafts(); got[slot(1, 12)] != b {
			t.Fatalf("day 1 noon: %v, want B", got)
		}
		step(at(1, 12, 1))
		// C is deleted on X: picking it finds it gone, and nothing else is
		// eligible for 18:00 (A and B were recycled within 2 days).
		e.deleteOnX(c)
		step(at(1, 16, 30))
		if got := e.evergreenDrafts(); got[slot(1, 18)] != "" {
			t.Fatalf("day 1 18:00 given %s; A and B are within min_interval_days and C is deleted", got[slot(1, 18)])
		}
		status := func(id string) string {
			t.Helper()
			ps, err := s.EvergreenPosts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				if p.TweetID == id {
					return p.Status + "/" + strconv.Itoa(p.Recycles)
				}
			}
			return "unmarked"
		}
		if st := status(c); st != "gone/0" {
			t.Fatalf("C is %s, want gone", st)
		}
		// Day 2: A is eligible again at 18:00 (48 h after its last slot),
		// and that is its second and last recycle.
		step(at(2, 10, 30))
		if got := e.evergreenDrafts(); got[slot(2, 12)] != "" {
			t.Fatalf("day 2 noon given %s; nothing is eligible yet", got[slot(2, 12)])
		}
		step(at(2, 16, 30))
		if got := e.evergreenDrafts(); got[slot(2, 18)] != a {
			t.Fatalf("day 2 18:00: %v, want A again", got)
		}
		step(at(2, 18, 1))
		if st := status(a); st != "active/2" {
			t.Fatalf("A is %s, want active/2", st)
		}
		// Day 4: A reached max_recycles; B is picked, then deleted on X
		// before its slot: the repost is refused and B is marked gone.
		step(at(4, 16, 30))
		if got := e.evergreenDrafts(); got[slot(4, 18)] != b {
			t.Fatalf("day 4 18:00: %v, want B (A reached max_recycles)", got)
		}
		e.deleteOnX(b)
		step(at(4, 18, 1))
		if st := status(b); st != "gone/2" {
			t.Fatalf("B is %s after its repost was refused, want gone/2", st)
		}
		step(at(5, 10, 30))
		step(at(5, 16, 30))
		if got := e.evergreenDrafts(); got[slot(5, 12)] != "" || got[slot(5, 18)] != "" {
			t.Fatalf("day 5 filled %v; A is spent and B, C are gone", got)
		}
	})
}

// TestEvergreenModes: each mode recycles through its own tool, and in
// composer mode the recycled item goes to approval.
func TestEvergreenModes(t *testing.T) {
	cases := []struct {
		mode, composer string
		tool           string
		// payPerUse runs the account on pay_per_use, which posts no
		// quotes: requote posts the variant as a new post instead.
		payPerUse bool
	}{
		{workflow.EvergreenRepost, "", "x_retweet", false},
		{workflow.EvergreenRequote, "", "x_quote_tweet", false},
		{workflow.EvergreenRequote, "", "x_post_tweet", true},
		{workflow.EvergreenVariant, "", "x_post_tweet", false},
		{workflow.EvergreenVariant, "composer", "", false},
	}
	for _, tc := range cases {
		name := tc.mode + tc.composer
		if tc.payPerUse {
			name += "_pay_per_use"
		}
		t.Run(name, func(t *testing.T) {
			e := evergreenEnv(t, tc.mode, func(c *config.Config) {
				if tc.composer != "" {
					c.Mode = tc.composer
				}
				if tc.payPerUse {
					c.XAPI.Access = config.AccessPayPerUse
				}
			})
			ctx := context.Background()
			e.clock.AdvanceTo(day0.Add(9 * time.Hour))
			id := e.likedPost("Evergreen: the one gateway every post passes.", 1)
			plain := e.likedPost("Evergreen without variants.", 3)
			s, err := e.app.Workflow()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.MarkEvergreen(ctx, id, []string{"Still true: one gateway for every post.", "Every post passes one gateway."}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.MarkEvergreen(ctx, plain, nil); err != nil {
				t.Fatal(err)
			}
			e.clock.AdvanceTo(day0.Add(10 * time.Hour))
			tick(t, e.runner(e.app, autopilot.LoopPublisher))
			want := id
			if tc.mode == workflow.EvergreenRepost {
				want = plain // the most engagement; repost needs no variants
			}
			if got := e.evergreenDrafts(); got[day0.Add(12*time.Hour).Format("2006-01-02T15:04")] != want {
				t.Fatalf("noon given %v, want %s", got, want)
			}
			e.clock.AdvanceTo(day0.Add(12*time.Hour + time.Minute))
			if res := tick(t, e.runner(e.app, autopilot.LoopPublisher))[autopilot.LoopPublisher]; res.Error != "" {
				t.Fatalf("publisher error %s: %s", res.ErrorCode, res.Error)
			}
			if tc.composer != "" {
				if n := e.count(`SELECT COUNT(*) FROM drafts WHERE source = 'evergreen' AND status = 'queued' AND approval_id IS NOT NULL`); n != 1 {
					t.Fatalf("%d evergreen items queued for approval, want 1", n)
				}
				return
			}
			if n := e.count(`SELECT COUNT(*) FROM mutation_audit WHERE tool_name = ? AND status = 'success'`, tc.tool); n != 1 {
				t.Fatalf("%d successful %s calls, want 1", n, tc.tool)
			}
			posts := e.ourPosts(day0.Add(12*time.Hour), day0.Add(13*time.Hour))
			switch tc.mode {
			case workflow.EvergreenRequote:
				if tc.payPerUse {
					if len(posts) != 1 || posts[0].Text != "Still true: one gateway for every post." || posts[0].QuoteOf != "" {
						t.Fatalf("requote on pay_per_use posted %+v, want the variant as a new post", posts)
					}
					break
				}
				if len(posts) != 1 || posts[0].Text != "Still true: one gateway for every post." || posts[0].QuoteOf != id {
					t.Fatalf("requote posted %+v", posts)
				}
			case workflow.EvergreenVariant:
				if len(posts) != 1 || posts[0].Text != "Still true: one gateway for every post." {
					t.Fatalf("variant posted %+v", posts)
				}
			}
		})
	}
}

// TestEvergreenFillRaceTakesTheSlotOnce: two processes filling the same
// empty slot at the same moment give it one post, recycled once.
func TestEvergreenFillRaceTakesTheSlotOnce(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := evergreenEnv(t, workflow.EvergreenRepost, nil)
		ctx := context.Background()
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		id := e.likedPost("Evergreen: one slot, one post.", 1)
		s1, err := e.app.Workflow()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s1.MarkEvergreen(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
		s2, err := e.openApp().Workflow()
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.app.Cfg.QueuePolicy()
		if err != nil {
			t.Fatal(err)
		}
		e.clock.AdvanceTo(day0.Add(10*time.Hour + 30*time.Minute))
		rules := workflow.EvergreenRules{MinInterval: 48 * time.Hour, MaxRecycles: 2, Mode: workflow.EvergreenRepost}
		start := make(chan struct{})
		var wg sync.WaitGroup
		filled := make([]int, 2)
		errs := make([]error, 2)
		for i, s := range []*workflow.Service{s1, s2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				f, err := s.FillEmptySlots(ctx, p, rules)
				filled[i], errs[i] = len(f), err
			}()
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if filled[0]+filled[1] != 1 || len(e.evergreenDrafts()) != 1 {
			t.Fatalf("the processes filled %v (drafts %v), want the slot once", filled, e.evergreenDrafts())
		}
		if n := e.count(`SELECT recycles FROM evergreen_posts WHERE tweet_id = ?`, id); n != 1 {
			t.Fatalf("recycled %d times, want 1", n)
		}
	})
}
