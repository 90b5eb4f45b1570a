package autopilot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// dayTraffic schedules a day of other accounts posting about the keywords,
// mentioning the account, one author posting three times, and the target
// accounts posting.
func dayTraffic(e *env) {
	people := []string{"rustacean_rae", "devtools_dana", "cli_carla", "perf_pete", "sqlite_sid", "infra_ivan", "wasm_will", "indie_ian"}
	for h := 7; h < 23; h++ {
		p := people[h%len(people)]
		at := day0.Add(time.Duration(h)*time.Hour + 20*time.Minute)
		e.inject(at, p, fmt.Sprintf("Our golang service %d retries badly under load; what do you use?", h))
		if h%2 == 0 {
			e.inject(at.Add(10*time.Minute), people[(h+3)%len(people)], fmt.Sprintf("@tuitbot_demo how do you pace posts at hour %d?", h))
		}
	}
	// One author, three chances: the per-author limit allows one reply.
	for _, h := range []int{8, 10, 13} {
		e.inject(day0.Add(time.Duration(h)*time.Hour+5*time.Minute), "gopher_gabe", fmt.Sprintf("golang question number %d: how do you test retries?", h))
	}
	// Target accounts.
	e.inject(day0.Add(9*time.Hour+15*time.Minute), "kube_kai", "Platform teams should own the paved road, not every service.")
	e.inject(day0.Add(9*time.Hour+20*time.Minute), "kube_kai", "Second thought on paved roads: measure adoption, not mandates.")
	e.inject(day0.Add(14*time.Hour+15*time.Minute), "oss_olivia", "Maintainers need weekends too. Set expectations in the README.")
}

type ourDay struct {
	replies, tweets, threadParts []xsim.Tweet
}

// classify splits the account's posts of the day into replies to others,
// standalone tweets and thread posts.
func (e *env) classify(from, to time.Time, exclude map[string]bool) ourDay {
	var d ourDay
	me := e.sim.DemoUserID()
	for _, t := range e.ourPosts(from, to) {
		switch {
		case exclude[t.ID]:
		case strings.Contains(t.Text, "of thread"):
			d.threadParts = append(d.threadParts, t)
		case t.InReplyToTweetID != "" && t.InReplyToUserID != me:
			d.replies = append(d.replies, t)
		case t.InReplyToTweetID == "":
			d.tweets = append(d.tweets, t)
		default:
			e.t.Errorf("post %s replies to the account itself: %q", t.ID, t.Text)
		}
	}
	return d
}

func TestSimulatedDayHoldsCapsAndSurvivesRestart(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) {
			c.Limits.MaxRepliesPerDay = 8
			c.Targets.Accounts = []string{"kube_kai", "oss_olivia"}
			c.Targets.MaxTargetRepliesPerDay = 2
		})
		before := e.sim.Counters()[xsim.CountTweetsCreated]
		dayTraffic(e)
		// The account's own post about a keyword: discovery finds it and must
		// not answer it.
		self := ""
		e.clock.AdvanceTo(day0.Add(7*time.Hour + 50*time.Minute))
		self = e.postAs(xsim.DemoUsername, "golang retries: our own post that discovery will find")
		e.clock.AdvanceTo(day0)

		r1 := e.runner(e.app)
		e.runUntil(r1, day0.Add(13*time.Hour))
		mid := e.classify(day0, day0.Add(13*time.Hour), map[string]bool{self: true})
		if len(mid.replies) == 0 || len(mid.tweets) == 0 {
			t.Fatalf("nothing happened before the restart: %d replies, %d tweets", len(mid.replies), len(mid.tweets))
		}

		// Restart: a new App on the same home, database and emulator, and a new
		// runner with nothing in memory.
		a2 := e.openApp()
		if a2.Sim.Server != nil {
			t.Fatal("the second App started its own emulator instead of attaching to the running one")
		}
		r2 := e.runner(a2)
		end := day0.Add(23*time.Hour + 59*time.Minute)
		e.runUntil(r2, end)

		day := e.classify(day0, end, map[string]bool{self: true})
		cfg := e.cfg
		if got, want := len(day.replies), cfg.Limits.MaxRepliesPerDay; got != want {
			t.Errorf("replies = %d, want the cap %d", got, want)
		}
		if got, want := len(day.tweets), cfg.Limits.MaxTweetsPerDay; got != want {
			t.Errorf("tweets = %d, want the cap %d", got, want)
		}
		if got := len(day.threadParts); got != 5 {
			t.Errorf("thread posts = %d, want one thread of 5", got)
		}

		// Active hours.
		for _, p := range append(append(append([]xsim.Tweet{}, day.replies...), day.tweets...), day.threadParts...) {
			if h := p.CreatedAt.UTC().Hour(); h < 8 || h >= 22 {
				t.Errorf("post %s at %s is outside the active hours", p.ID, p.CreatedAt.Format(time.RFC3339))
			}
		}
		// Per author, no self replies, no duplicates, product-mention ratio.
		perAuthor := map[string]int{}
		targets := map[string]bool{}
		mentions := 0
		for _, p := range day.replies {
			perAuthor[p.InReplyToUserID]++
			if targets[p.InReplyToTweetID] {
				t.Errorf("tweet %s answered twice", p.InReplyToTweetID)
			}
			targets[p.InReplyToTweetID] = true
			if p.InReplyToTweetID == self {
				t.Errorf("the account answered its own post")
			}
			if strings.Contains(p.Text, product) {
				mentions++
			}
		}
		for author, n := range perAuthor {
			if n > cfg.Limits.MaxRepliesPerAuthorPerDay {
				t.Errorf("%d replies to author %s, limit %d", n, author, cfg.Limits.MaxRepliesPerAuthorPerDay)
			}
		}
		if ratio := float64(mentions) / float64(len(day.replies)); ratio > cfg.Limits.ProductMentionRatio {
			t.Errorf("product mentioned in %d of %d replies (%.2f > %.2f)", mentions, len(day.replies), ratio, cfg.Limits.ProductMentionRatio)
		}
		if mentions == 0 {
			t.Error("the ratio allows product mentions but none was made")
		}
		texts := map[string]bool{}
		for _, p := range append(append([]xsim.Tweet{}, day.replies...), day.tweets...) {
			if texts[p.Text] {
				t.Errorf("text posted twice: %q", p.Text)
			}
			texts[p.Text] = true
		}

		// Emulator counters: everything created is either injected or ours.
		created := e.sim.Counters()[xsim.CountTweetsCreated] - before
		ours := int64(len(day.replies) + len(day.tweets) + len(day.threadParts))
		if created != int64(e.injected)+ours {
			t.Errorf("tweets_created = %d, want %d injected + %d ours", created, e.injected, ours)
		}
		// The audit agrees, with caller and loop recorded.
		for _, c := range []struct {
			tool  string
			loops string
			want  int
		}{
			{"x_reply_to_tweet", "'discovery','mentions','targets'", len(day.replies)},
			{"x_post_tweet", "'content'", len(day.tweets)},
			{"x_post_thread", "'threads'", 1},
		} {
			n := e.count(`SELECT count(*) FROM mutation_audit WHERE tool_name = ? AND status = 'success' AND caller = 'autopilot' AND loop_name IN (`+c.loops+`)`, c.tool)
			if n != c.want {
				t.Errorf("audit: %d successful %s by the autopilot, want %d", n, c.tool, c.want)
			}
		}
		if n := e.count(`SELECT count(*) FROM mutation_audit WHERE status != 'success'`); n != 0 {
			t.Errorf("%d audit rows did not succeed on a fault-free day", n)
		}
		if n := e.count(`SELECT count(*) FROM autopilot_actions WHERE loop_name = 'targets' AND status = 'posted'`); n < 1 || n > cfg.Targets.MaxTargetRepliesPerDay {
			t.Errorf("target replies = %d, want 1..%d", n, cfg.Targets.MaxTargetRepliesPerDay)
		}

		// Status reports the same numbers.
		st, err := r2.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Today.Replies != len(day.replies) || st.Today.Tweets != len(day.tweets) || st.Today.ThreadsWeek != 1 ||
			st.Today.ProductMentions != mentions {
			t.Errorf("status today = %+v, want %d replies (%d mentions), %d tweets, 1 thread", st.Today, len(day.replies), mentions, len(day.tweets))
		}
		for _, l := range st.Loops {
			if l.Errors != 0 || l.Breaker != "closed" {
				t.Errorf("loop %s: %d errors, breaker %s (%s)", l.Name, l.Errors, l.Breaker, l.LastError)
			}
			if l.Runs == 0 {
				t.Errorf("loop %s never ran", l.Name)
			}
		}
		if st.XCallsToday == 0 || st.XSpendTodayUSD <= 0 {
			t.Errorf("status reports no X spend: %d calls, $%f", st.XCallsToday, st.XSpendTodayUSD)
		}
	})
}

func TestComposerDayPostsNothingAndQueuesDrafts(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) { c.Mode = "composer" })
		before := e.sim.Counters()
		dayTraffic(e)
		r := e.runner(e.app)
		end := day0.Add(23*time.Hour + 59*time.Minute)
		e.runUntil(r, end)

		after := e.sim.Counters()
		if got := after[xsim.CountTweetsCreated] - before[xsim.CountTweetsCreated]; got != int64(e.injected) {
			t.Errorf("tweets_created moved by %d, want only the %d injected", got, e.injected)
		}
		for k, v := range after {
			if k != xsim.CountTweetsCreated && v != before[k] {
				t.Errorf("counter %s moved from %d to %d", k, before[k], v)
			}
		}
		if posts := e.ourPosts(day0, end); len(posts) != 0 {
			t.Errorf("composer mode posted %d times", len(posts))
		}
		if n := e.count(`SELECT count(*) FROM mutation_audit WHERE status = 'success'`); n != 0 {
			t.Errorf("%d mutations executed in composer mode", n)
		}
		cfg := e.cfg
		for _, c := range []struct {
			tool string
			want int
		}{
			{"x_reply_to_tweet", cfg.Limits.MaxRepliesPerDay},
			{"x_post_tweet", cfg.Limits.MaxTweetsPerDay},
			{"x_post_thread", 1},
		} {
			n := e.count(`SELECT count(*) FROM approval_queue WHERE tool_name = ? AND status = 'pending' AND caller = 'autopilot' AND loop_name != ''`, c.tool)
			if n != c.want {
				t.Errorf("%d %s items queued, want %d (the caps count queued items)", n, c.tool, c.want)
			}
		}
		st, err := r.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := cfg.Limits.MaxRepliesPerDay + cfg.Limits.MaxTweetsPerDay + 1
		if st.PendingApprovals != want || st.Mode != "composer" || !st.ApprovalMode {
			t.Errorf("status: %d pending in mode %s (approval %t), want %d in composer", st.PendingApprovals, st.Mode, st.ApprovalMode, want)
		}
	})
}

func TestFaultDayReportsBreakerAndCounts(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		dayTraffic(e)
		// Mentions always fail; search is rate limited for its first calls;
		// the first post X receives answers 503, so its outcome is unknown.
		e.sim.SetFault("GET /2/users/:id/mentions", xsim.Fault{ErrorProbability: 1, ErrorStatus: 503})
		e.sim.SetFault("GET /2/tweets/search/recent", xsim.Fault{RateLimitNext: 4})
		// Armed just before the first autopilot post, after the traffic of 07:xx.
		e.at(day0.Add(7*time.Hour+59*time.Minute), func() { e.sim.SetFault("POST /2/tweets", xsim.Fault{ErrorNext: 1}) })
		r := e.runner(e.app)
		end := day0.Add(21*time.Hour + 45*time.Minute)
		e.runUntil(r, end)

		st, err := r.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		loops := map[string]autopilot.LoopStatus{}
		for _, l := range st.Loops {
			loops[l.Name] = l
		}
		m := loops[autopilot.LoopMentions]
		// 08:00, 08:30, 09:00 fail and open the breaker for an hour; every
		// hourly probe from 10:00 to 21:00 fails and reopens it.
		if m.Runs != 15 || m.Errors != 15 || m.ConsecutiveErrors != 15 {
			t.Errorf("mentions: %d runs, %d errors, %d in a row; want 15 each", m.Runs, m.Errors, m.ConsecutiveErrors)
		}
		if m.Breaker != "open" || m.State != autopilot.StatePaused || m.BreakerOpenedAt != "2026-03-02T09:00:00.000Z" ||
			m.PausedUntil != "2026-03-02T22:00:00.000Z" || m.LastError == "" {
			t.Errorf("mentions breaker: %+v", m)
		}
		d := loops[autopilot.LoopDiscovery]
		// Four 429s: three open the breaker, the probe's 429 reopens it, then
		// search works and closes it.
		if d.Errors != 4 || d.ConsecutiveErrors != 0 || d.Breaker != "closed" || d.LastError != "" {
			t.Errorf("discovery after the 429 storm: %+v", d)
		}
		c := loops[autopilot.LoopContent]
		if c.Errors != 1 || c.ConsecutiveErrors != 0 {
			t.Errorf("content after one unknown outcome: %+v", c)
		}
		// Counts: the unknown post counts against the cap (it may exist), so
		// three tweets were posted and status says four.
		day := e.classify(day0, end, nil)
		if len(day.tweets) != e.cfg.Limits.MaxTweetsPerDay-1 || st.Today.Tweets != e.cfg.Limits.MaxTweetsPerDay {
			t.Errorf("tweets: %d posted, status %d; want %d and %d", len(day.tweets), st.Today.Tweets, e.cfg.Limits.MaxTweetsPerDay-1, e.cfg.Limits.MaxTweetsPerDay)
		}
		if n := e.count(`SELECT count(*) FROM mutation_audit WHERE tool_name = 'x_post_tweet' AND status = 'unknown' AND loop_name = 'content'`); n != 1 {
			t.Errorf("%d unknown x_post_tweet audit rows, want 1", n)
		}
		if n := e.count(`SELECT count(*) FROM autopilot_actions WHERE status = 'unknown'`); n != 1 {
			t.Errorf("%d unknown ledger rows, want 1", n)
		}
		if st.Today.Replies != len(day.replies) || len(day.replies) != e.cfg.Limits.MaxRepliesPerDay {
			t.Errorf("replies: %d on X, status %d, cap %d", len(day.replies), st.Today.Replies, e.cfg.Limits.MaxRepliesPerDay)
		}
	})
}
