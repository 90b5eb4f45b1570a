package autopilot_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/content"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

func tick(t *testing.T, r *autopilot.Runner) map[string]autopilot.LoopResult {
	t.Helper()
	res, err := r.Tick(context.Background())
	if err != nil {
		t.Fatalf("Tick: %v", err)
	}
	out := map[string]autopilot.LoopResult{}
	for _, x := range res {
		out[x.Loop] = x
	}
	return out
}

func wantCode(t *testing.T, err error, code apperr.Code, contains ...string) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != code {
		t.Fatalf("error = %v, want %s", err, code)
	}
	for _, s := range contains {
		if !strings.Contains(ae.Message, s) {
			t.Errorf("message %q does not mention %q", ae.Message, s)
		}
	}
}

func TestLoopNamesAreValidated(t *testing.T) {
	if n, err := autopilot.ParseLoop(" Discovery "); err != nil || n != autopilot.LoopDiscovery {
		t.Errorf("ParseLoop(Discovery) = %q, %v", n, err)
	}
	_, err := autopilot.ParseLoop("bogus")
	wantCode(t, err, apperr.InvalidInput, "loop:", `"bogus"`, strings.Join(autopilot.LoopNames(), ", "))

	e := newEnv(t, func(c *config.Config) { c.Intervals.EnabledLoops = []string{"discovery", "analytics"} })
	_, err = e.app.Autopilot(autopilot.Options{Loops: []string{"bogus"}})
	wantCode(t, err, apperr.InvalidInput, "bogus", "discovery, ")
	_, err = e.app.Autopilot(autopilot.Options{Loops: []string{"content"}})
	wantCode(t, err, apperr.InvalidInput, "content", "intervals.enabled_loops")
	r, err := e.app.Autopilot(autopilot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Loops(), ","); got != "discovery,analytics" {
		t.Errorf("loops = %s, want only the enabled ones", got)
	}

	e.app.Cfg.Intervals.EnabledLoops = []string{"discovery", "teleport"}
	_, err = e.app.Autopilot(autopilot.Options{})
	wantCode(t, err, apperr.ConfigError, "intervals.enabled_loops", "teleport")
	e.app.Cfg.Intervals.EnabledLoops = []string{"discovery"}
	e.app.Cfg.Intervals.PublisherSeconds = 0
	_, err = e.app.Autopilot(autopilot.Options{})
	wantCode(t, err, apperr.ConfigError, "intervals.publisher_seconds")
}

// TestRunLockAllowsOneInstance: the run lock belongs to the database, not
// the home: a second home using the same SQLite file is refused while the
// first holds the account, and the refusal names the holder's process,
// host and home.
func TestRunLockAllowsOneInstance(t *testing.T) {
	db := filepath.Join(t.TempDir(), "shared.db")
	homeA, homeB := t.TempDir(), t.TempDir()
	l1, err := autopilot.AcquireAccountRunLock(db, homeA, "default")
	if err != nil {
		t.Fatal(err)
	}
	_, err = autopilot.AcquireAccountRunLock(db, homeB, "default")
	var le *autopilot.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second home's lock on the same database: %v, want LockedError", err)
	}
	host, _ := os.Hostname()
	path := db + "." + autopilot.RunLockName
	if le.Path != path || le.PID != os.Getpid() || le.Host != host || le.Home != homeA {
		t.Errorf("LockedError = %+v, want path %s, pid %d, host %s, home %s", le, path, os.Getpid(), host, homeA)
	}
	for _, s := range []string{path, "process " + strconv.Itoa(os.Getpid()), "host " + host, "home " + homeA, "already running", "account default"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q does not name %q", err, s)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, mode %v", err, st.Mode())
	}
	// Another database is another lock, whatever the home.
	other, err := autopilot.AcquireAccountRunLock(filepath.Join(t.TempDir(), "other.db"), homeA, "default")
	if err != nil {
		t.Fatalf("the same home's lock on another database: %v", err)
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	// A link to the database is the same database.
	link := filepath.Join(t.TempDir(), "link.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	if _, err := autopilot.AcquireAccountRunLock(link, homeB, "default"); !errors.As(err, &le) || le.Path != path {
		t.Errorf("lock through a link to the database: %v, want LockedError on %s", err, path)
	}
	if err := l1.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := autopilot.AcquireAccountRunLock(db, homeB, "default")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if err := l2.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestTickOutsideActiveHoursSkipsPostingLoops(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(3 * time.Hour))
		res := tick(t, e.runner(e.app))
		for _, n := range []string{autopilot.LoopDiscovery, autopilot.LoopMentions, autopilot.LoopContent, autopilot.LoopThreads,
			autopilot.LoopTargets, autopilot.LoopPublisher} {
			if !strings.Contains(res[n].Skipped, "outside active hours") || !strings.Contains(res[n].Skipped, "2026-03-02T08:00:00") {
				t.Errorf("%s at 03:00: %+v", n, res[n])
			}
		}
		for _, n := range []string{autopilot.LoopAnalytics, autopilot.LoopHousekeeping} {
			if res[n].Skipped != "" || res[n].Error != "" {
				t.Errorf("%s must run outside active hours: %+v", n, res[n])
			}
		}
		if n := e.count(`SELECT count(*) FROM follower_snapshots`); n != 1 {
			t.Errorf("%d follower snapshots, want 1", n)
		}
		if n := e.count(`SELECT count(*) FROM mutation_audit`); n != 0 {
			t.Errorf("%d mutations outside active hours", n)
		}
	})
}

func TestExpiredTokenStopsXLoopsWithNextStep(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		bad := &xauth.Token{AccessToken: "revoked-access", RefreshToken: "revoked-refresh", TokenType: "bearer",
			ExpiresAt: e.clock.Now().Add(time.Hour), Scopes: e.sim.AllScopes()}
		if err := xauth.SaveToken(context.Background(), e.app.Cfg.TokenFile(), bad); err != nil {
			t.Fatal(err)
		}
		r := e.runner(e.app)
		res := tick(t, r)
		if res[autopilot.LoopHousekeeping].Error != "" || res[autopilot.LoopHousekeeping].Skipped != "" {
			t.Errorf("housekeeping needs no X: %+v", res[autopilot.LoopHousekeeping])
		}
		// Loops run in order: those before the first X call work, the first
		// one to meet the refused token fails, every later X loop is stopped.
		failedAt := -1
		for i, n := range r.Loops() {
			x := res[n]
			switch {
			case x.ErrorCode == string(apperr.XAuthExpired):
				if failedAt >= 0 {
					t.Errorf("%s called X again after the token was refused", n)
				}
				failedAt = i
			case failedAt < 0:
				if x.Error != "" || x.Skipped != "" {
					t.Errorf("%s before any X failure: %+v", n, x)
				}
			case !strings.Contains(x.Skipped, "run `tuitbot auth`"):
				t.Errorf("%s after the token was refused: %+v", n, x)
			}
		}
		if failedAt < 0 {
			t.Fatal("no loop reported x_auth_expired")
		}
		stopped := map[string]bool{}
		for _, n := range r.Loops()[failedAt:] {
			stopped[n] = true
		}
		st, err := r.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range st.Loops {
			if !stopped[l.Name] {
				continue
			}
			if l.State != autopilot.StateStopped || !strings.Contains(l.LastError, "tuitbot auth") {
				t.Errorf("status of %s: state %s, error %q", l.Name, l.State, l.LastError)
			}
		}

		// Run gives up when no enabled loop can work without X.
		e.app.Cfg.Intervals.EnabledLoops = []string{"mentions", "analytics"}
		r2 := e.runner(e.app)
		err = r2.Run(context.Background())
		wantCode(t, err, apperr.XAuthExpired, "tuitbot auth", "no loop is left")
	})
}

func TestBreakerPauseIsRespectedByTick(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		e.sim.SetFault("GET /2/users/:id/mentions", xsim.Fault{ErrorProbability: 1, ErrorStatus: 503})
		for i := 1; i <= 3; i++ {
			res := tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
			if res.Error == "" {
				t.Fatalf("tick %d: mentions did not fail: %+v", i, res)
			}
			e.clock.AdvanceTo(e.clock.Now().Add(time.Minute))
		}
		res := tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		if !strings.Contains(res.Skipped, "circuit breaker open after 3 consecutive errors") {
			t.Errorf("tick with the breaker open: %+v", res)
		}
		// After the cooldown the next tick is a probe; X works again, so the
		// breaker closes.
		e.sim.ClearFaults()
		e.clock.AdvanceTo(e.clock.Now().Add(time.Duration(e.cfg.Breaker.CooldownSeconds) * time.Second))
		res = tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		if res.Skipped != "" || res.Error != "" {
			t.Errorf("probe: %+v", res)
		}
		st, _ := e.runner(e.app).Status(context.Background())
		for _, l := range st.Loops {
			if l.Name == autopilot.LoopMentions && (l.Breaker != "closed" || l.ConsecutiveErrors != 0 || l.Errors != 3) {
				t.Errorf("after the probe: %+v", l)
			}
		}
	})
}

func TestRateLimitWaitsForXReset(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		e.sim.SetFault("GET /2/users/:id/mentions", xsim.Fault{RateLimitNext: 1})
		res := tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		if res.ErrorCode != string(apperr.XRateLimited) {
			t.Fatalf("mentions: %+v", res)
		}
		st, _ := e.runner(e.app).Status(context.Background())
		var m autopilot.LoopStatus
		for _, l := range st.Loops {
			if l.Name == autopilot.LoopMentions {
				m = l
			}
		}
		until, err := store.ParseTime(m.PausedUntil)
		if m.State != autopilot.StateRateLimited || err != nil || !until.After(e.clock.Now()) || until.After(e.clock.Now().Add(15*time.Minute)) {
			t.Fatalf("after a 429: %+v", m)
		}
		if m.Breaker != "closed" {
			t.Errorf("one 429 opened the breaker: %+v", m)
		}
		res = tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		if !strings.Contains(res.Skipped, "rate-limit reset") {
			t.Errorf("tick before the reset: %+v", res)
		}
		e.clock.AdvanceTo(until)
		res = tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		if res.Skipped != "" || res.Error != "" {
			t.Errorf("tick after the reset: %+v", res)
		}
	})
}

func TestPublisherPostsDueDrafts(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, mode := range []string{"autopilot", "composer"} {
			t.Run(mode, func(t *testing.T) {
				e := newEnv(t, func(c *config.Config) { c.Mode = mode })
				e.clock.AdvanceTo(day0.Add(9 * time.Hour))
				now := e.clock.Now()
				insert := func(kind, body, status string, at time.Time) int64 {
					var id int64
					err := e.db().QueryRow(`INSERT INTO drafts (content_type, content, topic, source, status, scheduled_for, created_at, updated_at)
					VALUES (?, ?, 'Go tooling', 'mcp', ?, ?, ?, ?) RETURNING id`, kind, body, status, store.FormatTime(at), store.FormatTime(now), store.FormatTime(now)).Scan(&id)
					if err != nil {
						t.Fatal(err)
					}
					return id
				}
				due := insert("tweet", "A scheduled tip about Go tooling.", "scheduled", now.Add(-time.Minute))
				thread := insert("thread", `["First of a scheduled thread.","Second of a scheduled thread."]`, "scheduled", now.Add(-time.Second))
				later := insert("tweet", "Not yet.", "scheduled", now.Add(time.Hour))
				before := e.sim.Counters()[xsim.CountTweetsCreated]
				res := tick(t, e.runner(e.app, autopilot.LoopPublisher))[autopilot.LoopPublisher]
				if res.Error != "" {
					t.Fatalf("publisher: %+v", res)
				}
				status := func(id int64) (string, string, int64) {
					var s, tw string
					var ap int64
					if err := e.db().QueryRow(`SELECT status, COALESCE(posted_tweet_id,''), COALESCE(approval_id,0) FROM drafts WHERE id = ?`, id).Scan(&s, &tw, &ap); err != nil {
						t.Fatal(err)
					}
					return s, tw, ap
				}
				created := e.sim.Counters()[xsim.CountTweetsCreated] - before
				for _, id := range []int64{due, thread} {
					s, tw, ap := status(id)
					switch mode {
					case "autopilot":
						if s != "posted" || tw == "" {
							t.Errorf("draft %d: %s %q, want posted with the tweet id", id, s, tw)
						}
					case "composer":
						if s != "queued" || ap == 0 {
							t.Errorf("draft %d: %s approval %d, want queued", id, s, ap)
						}
					}
				}
				if s, _, _ := status(later); s != "scheduled" {
					t.Errorf("future draft is %s", s)
				}
				want := int64(3)
				if mode == "composer" {
					want = 0
				}
				if created != want {
					t.Errorf("%d posts created, want %d", created, want)
				}
				if n := e.count(`SELECT count(*) FROM mutation_audit WHERE loop_name = 'publisher' AND caller = 'autopilot' AND idempotency_key LIKE 'scheduled-draft-%'`); mode == "autopilot" && n != 2 {
					t.Errorf("%d publisher audit rows, want 2", n)
				}
			})
		}
	})
}

// TestScheduledDraftPostsWithItsOptions: a scheduled draft's stored post
// options (a poll, who may reply) reach X when the publisher posts it, for
// a single post and a thread's first post.
func TestScheduledDraftPostsWithItsOptions(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		now := e.clock.Now()
		at := store.FormatTime(now.Add(-time.Minute))
		opts := `{"reply_settings":"following","poll":{"options":["Go","Rust"],"duration_minutes":60}}`
		for _, d := range []struct{ kind, body string }{
			{"tweet", "A scheduled poll about Go tooling."},
			{"thread", `["A scheduled thread with a poll.","Its second post."]`},
		} {
			if _, err := e.db().Exec(`INSERT INTO drafts (content_type, content, options, status, scheduled_for, created_at, updated_at)
			VALUES (?, ?, ?, 'scheduled', ?, ?, ?)`, d.kind, d.body, opts, at, at, at); err != nil {
				t.Fatal(err)
			}
		}
		if res := tick(t, e.runner(e.app, autopilot.LoopPublisher))[autopilot.LoopPublisher]; res.Error != "" {
			t.Fatalf("publisher: %+v", res)
		}
		found := 0
		for _, tw := range e.sim.World().Tweets {
			switch tw.Text {
			case "A scheduled poll about Go tooling.", "A scheduled thread with a poll.":
				found++
				if tw.Poll == nil || len(tw.Poll.Options) != 2 || tw.ReplySettings != "following" {
					t.Errorf("%q posted with poll %+v, reply settings %q; want the draft's options", tw.Text, tw.Poll, tw.ReplySettings)
				}
			case "Its second post.":
				if tw.Poll != nil {
					t.Errorf("the thread's second post has a poll")
				}
			}
		}
		if found != 2 {
			t.Fatalf("%d of 2 drafts posted", found)
		}
	})
}

func TestPublisherNeverRepostsAfterACrash(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		now := store.FormatTime(e.clock.Now())
		var id int64
		err := e.db().QueryRow(`INSERT INTO drafts (content_type, content, status, scheduled_for, created_at, updated_at)
		VALUES ('tweet', 'Was being posted when the process died.', 'publishing', ?, ?, ?) RETURNING id`, now, now, now).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		before := e.sim.Counters()[xsim.CountTweetsCreated]
		tick(t, e.runner(e.app, autopilot.LoopPublisher))
		var s string
		if err := e.db().QueryRow(`SELECT status FROM drafts WHERE id = ?`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s != "failed" {
			t.Errorf("interrupted draft is %s, want failed (verify on X)", s)
		}
		if got := e.sim.Counters()[xsim.CountTweetsCreated] - before; got != 0 {
			t.Errorf("%d posts created for an interrupted draft", got)
		}
	})
}

func TestAnalyticsMeasuresPostsADayOld(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		res := tick(t, e.runner(e.app, autopilot.LoopContent))[autopilot.LoopContent]
		if res.Posted != 1 {
			t.Fatalf("content: %+v", res)
		}
		var topic string
		if err := e.db().QueryRow(`SELECT topic FROM original_tweets WHERE caller = 'autopilot'`).Scan(&topic); err != nil || topic == "" {
			t.Fatalf("the posted tweet has no topic: %q %v", topic, err)
		}
		tick(t, e.runner(e.app, autopilot.LoopAnalytics))
		if n := e.count(`SELECT count(*) FROM tweet_performance`); n != 0 {
			t.Errorf("a post of the same hour was measured (%d rows)", n)
		}
		e.clock.AdvanceTo(day0.Add(34 * time.Hour))
		res = tick(t, e.runner(e.app, autopilot.LoopAnalytics))[autopilot.LoopAnalytics]
		if res.Error != "" || !strings.Contains(res.Summary, "1 post measured") {
			t.Fatalf("analytics a day later: %+v", res)
		}
		wf, err := e.app.Workflow()
		if err != nil {
			t.Fatal(err)
		}
		measured, err := wf.MeasuredTopics(context.Background())
		if err != nil || len(measured) != 1 || measured[0].Topic != topic {
			t.Errorf("measured topics = %+v, %v; want %q", measured, err, topic)
		}
		if n := e.count(`SELECT count(*) FROM follower_snapshots`); n != 2 {
			t.Errorf("%d snapshots, want 2", n)
		}
		tick(t, e.runner(e.app, autopilot.LoopAnalytics))
		if n := e.count(`SELECT count(*) FROM tweet_performance`); n != 1 {
			t.Errorf("a post was measured twice (%d rows)", n)
		}
	})
}

func TestTargetsAnswerOneNewPostPerAccountPerRun(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) {
			c.Targets.Accounts = []string{"@kube_kai", "oss_olivia"}
			c.Limits.MaxRepliesPerAuthorPerDay = 5
			c.Targets.MaxTargetRepliesPerDay = 2
		})
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		var kai []string
		for i := range 3 {
			e.clock.AdvanceTo(e.clock.Now().Add(time.Minute))
			kai = append(kai, e.postAs("kube_kai", "Paved roads, take "+strconv.Itoa(i)+": adoption beats mandates."))
		}
		res := tick(t, e.runner(e.app, autopilot.LoopTargets))[autopilot.LoopTargets]
		if res.Error != "" {
			t.Fatalf("targets: %+v", res)
		}
		replied := map[string]int{}
		for _, p := range e.ourPosts(day0, e.clock.Now().Add(time.Hour)) {
			replied[p.InReplyToTweetID]++
		}
		if replied[kai[2]] != 1 || replied[kai[0]]+replied[kai[1]] != 0 {
			t.Errorf("replies %v: want exactly one, to the newest post %s", replied, kai[2])
		}
		if n := e.count(`SELECT count(*) FROM target_accounts WHERE user_id != ''`); n != 2 {
			t.Errorf("%d resolved target accounts, want 2", n)
		}
		// The cursor moved past the other two: the next run has nothing new.
		e.clock.AdvanceTo(e.clock.Now().Add(time.Hour))
		res = tick(t, e.runner(e.app, autopilot.LoopTargets))[autopilot.LoopTargets]
		if res.Posted != 0 {
			t.Errorf("second run answered old posts: %+v", res)
		}
		// The daily target cap holds across accounts and runs.
		for i := range 3 {
			e.clock.AdvanceTo(e.clock.Now().Add(time.Hour))
			e.postAs("kube_kai", "More on paved roads, part "+strconv.Itoa(i)+".")
			e.postAs("oss_olivia", "Maintainer life, part "+strconv.Itoa(i)+".")
			tick(t, e.runner(e.app, autopilot.LoopTargets))
		}
		if n := e.count(`SELECT count(*) FROM autopilot_actions WHERE loop_name = 'targets' AND status = 'posted'`); n != 2 {
			t.Errorf("%d target replies, want the cap of 2", n)
		}
		if n := e.count(`SELECT count(*) FROM autopilot_actions WHERE loop_name = 'targets' AND mentions_product = 1`); n != 0 {
			t.Errorf("target replies mentioned the product %d times", n)
		}
	})
}

func TestRogueProductMentionsAreBlocked(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) { c.Limits.ProductMentionRatio = 0 })
		e.llm.set(func(f *fakeLLM) { f.rogueEvery = 1 })
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		e.postAs("rustacean_rae", "@tuitbot_demo what do you think of golang retries?")
		res := tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		if res.Posted != 0 || res.Blocked == 0 {
			t.Fatalf("mentions with a rogue LLM: %+v", res)
		}
		var reason string
		_ = e.db().QueryRow(`SELECT reason FROM autopilot_actions WHERE status = 'blocked' LIMIT 1`).Scan(&reason)
		if !strings.Contains(reason, "product_mention_ratio") {
			t.Errorf("blocked reason %q", reason)
		}
		if n := e.count(`SELECT count(*) FROM mutation_audit`); n != 0 {
			t.Errorf("%d gateway calls for blocked drafts", n)
		}
		// Blocked posts are not drafted again.
		calls := e.llm.count("reply")
		e.clock.AdvanceTo(e.clock.Now().Add(time.Hour))
		tick(t, e.runner(e.app, autopilot.LoopMentions))
		if got := e.llm.count("reply"); got != calls {
			t.Errorf("blocked posts were drafted again (%d more LLM calls)", got-calls)
		}
	})
}

func TestBannedPhrasesNeverReachTheGateway(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.llm.set(func(f *fakeLLM) { f.banned = "check out" })
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		e.postAs("rustacean_rae", "@tuitbot_demo any golang tips?")
		res := tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		if res.Posted != 0 || res.Blocked == 0 || res.Error != "" {
			t.Fatalf("mentions with banned phrases: %+v", res)
		}
		if n := e.count(`SELECT count(*) FROM mutation_audit`); n != 0 {
			t.Errorf("%d gateway calls with a banned phrase", n)
		}
	})
}

func TestStopLetsTheInFlightPostComplete(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		// The post is held on X until the stop signal has been given, so the
		// stop arrives while it is on the wire.
		arrived, hold := make(chan struct{}, 1), make(chan struct{})
		release := sync.OnceFunc(func() { close(hold) })
		defer release()
		e.sim.SetFault("POST /2/tweets", xsim.Fault{OnArrive: func(ctx context.Context) {
			select {
			case arrived <- struct{}{}:
			default:
			}
			select {
			case <-hold:
			case <-ctx.Done():
			}
		}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r, err := e.app.Autopilot(autopilot.Options{Loops: []string{autopilot.LoopContent}, Rand: rand.New(rand.NewPCG(1, 2)),
			Sleep: func(ctx context.Context, d time.Duration) error {
				e.clock.AdvanceTo(e.clock.Now().Add(d))
				return ctx.Err()
			}})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		select {
		case <-arrived:
		case err := <-done:
			t.Fatalf("Run ended before posting: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("the post never reached X")
		}
		cancel()
		release()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not stop")
		}
		var status string
		if err := e.db().QueryRow(`SELECT status FROM mutation_audit WHERE tool_name = 'x_post_tweet'`).Scan(&status); err != nil || status != "success" {
			t.Errorf("the in-flight post ended %q (%v), want success", status, err)
		}
		if got := len(e.ourPosts(day0, day0.Add(48*time.Hour))); got != 1 {
			t.Errorf("%d posts on X, want the one in flight", got)
		}
		if n := e.count(`SELECT count(*) FROM loop_state WHERE state = 'running'`); n != 0 {
			t.Errorf("a loop is left in state running after the stop")
		}
	})
}

func TestPanickingLoopIsOnlyThatLoopsFailure(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		db, _ := e.app.RequireDB()
		wf, _ := e.app.Workflow()
		disc, _ := e.app.Discovery()
		r, err := autopilot.New(autopilot.Deps{
			Cfg: e.app.Cfg, DB: db, Gateway: e.app.Gateway, Workflow: wf, Discovery: disc,
			Replier:   func(loop string) (*workflow.Replier, error) { return e.app.Replier(autopilot.Caller, loop) },
			Generator: func() (*content.Generator, error) { panic("generator exploded") },
			X:         e.app.XClient, Now: e.clock.Now,
		}, autopilot.Options{Loops: []string{autopilot.LoopContent, autopilot.LoopAnalytics}, Sleep: e.sleep})
		if err != nil {
			t.Fatal(err)
		}
		res := tick(t, r)
		if c := res[autopilot.LoopContent]; c.ErrorCode != string(apperr.InternalError) || !strings.Contains(c.Error, "generator exploded") {
			t.Errorf("content: %+v", c)
		}
		if a := res[autopilot.LoopAnalytics]; a.Error != "" || a.Skipped != "" {
			t.Errorf("analytics after the panic: %+v", a)
		}
		if _, err := autopilot.New(autopilot.Deps{Cfg: e.app.Cfg}, autopilot.Options{}); err == nil {
			t.Error("New accepted missing dependencies")
		}
	})
}

func TestContentPostsOncePerPreferredSlot(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) { c.Schedule.PreferredTimes = []string{"09:15", "12:30"} })
		post := func(h, m int) autopilot.LoopResult {
			t.Helper()
			e.clock.AdvanceTo(day0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute))
			return tick(t, e.runner(e.app, autopilot.LoopContent))[autopilot.LoopContent]
		}
		if r := post(9, 0); r.Posted != 0 || !strings.Contains(r.Summary, "next slot 2026-03-02T09:15") {
			t.Errorf("09:00, before the first slot (yesterday's last slot is long gone): %+v", r)
		}
		if r := post(9, 20); r.Posted != 1 {
			t.Errorf("09:20: %+v", r)
		}
		if r := post(9, 50); r.Posted != 0 || !strings.Contains(r.Summary, "next slot 2026-03-02T12:30") {
			t.Errorf("09:50, slot already served: %+v", r)
		}
		if r := post(12, 31); r.Posted != 1 {
			t.Errorf("12:31: %+v", r)
		}
		if r := post(14, 0); r.Posted != 0 {
			t.Errorf("14:00: %+v", r)
		}
		if r := post(12+24, 40); r.Posted != 1 || r.NextRun.IsZero() {
			t.Errorf("next day 12:40 (within the grace of the 12:30 slot): %+v", r)
		}
		// In the daemon the next run is the next slot.
		if r := post(12+24, 50); !r.NextRun.Equal(day0.Add(48*time.Hour + 9*time.Hour + 15*time.Minute)) {
			t.Errorf("next run after the last slot = %s, want tomorrow 09:15", r.NextRun)
		}
	})
}

func TestPublisherFailureModes(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		now := store.FormatTime(e.clock.Now())
		add := func(text string) int64 {
			var id int64
			err := e.db().QueryRow(`INSERT INTO drafts (content_type, content, status, scheduled_for, created_at, updated_at)
			VALUES ('tweet', ?, 'scheduled', ?, ?, ?) RETURNING id`, text, now, now, now).Scan(&id)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		status := func(id int64) string {
			var s string
			if err := e.db().QueryRow(`SELECT status FROM drafts WHERE id = ?`, id).Scan(&s); err != nil {
				t.Fatalf("draft %d: %v", id, err)
			}
			return s
		}
		// A 429: nothing reached X, so the draft stays scheduled for later.
		id := add("Rate limited first, posted later.")
		e.sim.SetFault("POST /2/tweets", xsim.Fault{RateLimitNext: 1})
		res := tick(t, e.runner(e.app, autopilot.LoopPublisher))[autopilot.LoopPublisher]
		if res.ErrorCode != string(apperr.XRateLimited) || status(id) != "scheduled" {
			t.Errorf("after a 429: %+v, draft %s", res, status(id))
		}
		e.sim.ClearFaults()
		e.clock.AdvanceTo(e.clock.Now().Add(16 * time.Minute))
		tick(t, e.runner(e.app, autopilot.LoopPublisher))
		if status(id) != "posted" {
			t.Errorf("after the reset the draft is %s, want posted", status(id))
		}
		// A 5xx on the post: X may have taken it, so the draft fails for a
		// human to verify and is never posted again.
		id2 := add("Outcome unknown.")
		e.sim.SetFault("POST /2/tweets", xsim.Fault{ErrorNext: 1})
		res = tick(t, e.runner(e.app, autopilot.LoopPublisher))[autopilot.LoopPublisher]
		if res.ErrorCode != string(apperr.XOutcomeUnknown) || status(id2) != "failed" {
			t.Errorf("after a 5xx: %+v, draft %s", res, status(id2))
		}
	})
}

func TestHousekeepingExpiresStaleApprovals(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, func(c *config.Config) { c.Mode = "composer" })
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		res := tick(t, e.runner(e.app, autopilot.LoopContent))[autopilot.LoopContent]
		if res.Queued != 1 {
			t.Fatalf("content in composer mode: %+v", res)
		}
		e.clock.AdvanceTo(e.clock.Now().Add(time.Duration(e.cfg.Gateway.ApprovalExpiryHours)*time.Hour + time.Minute))
		res = tick(t, e.runner(e.app, autopilot.LoopHousekeeping))[autopilot.LoopHousekeeping]
		if !strings.Contains(res.Summary, "1 approval item expired") {
			t.Errorf("housekeeping: %+v", res)
		}
		if n := e.count(`SELECT count(*) FROM approval_queue WHERE status = 'expired'`); n != 1 {
			t.Errorf("%d expired items, want 1", n)
		}
	})
}

func TestRepeatedRepliesAreBlockedBySimilarity(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.llm.set(func(f *fakeLLM) {
			f.fixed = "Retries need jitter and a budget, or they turn an outage into a stampede."
		})
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		e.postAs("rustacean_rae", "@tuitbot_demo how do you do retries in golang?")
		e.clock.AdvanceTo(e.clock.Now().Add(time.Minute))
		e.postAs("cli_carla", "@tuitbot_demo retries in golang: what is your approach?")
		res := tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		// The first fresh mention gets the reply; every later one would repeat it.
		if res.Posted != 1 || res.Blocked < 1 {
			t.Fatalf("mentions with a repetitive LLM: %+v", res)
		}
		rows, err := e.db().Query(`SELECT reason FROM autopilot_actions WHERE status = 'blocked'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var reason string
			_ = rows.Scan(&reason)
			if !strings.Contains(reason, "repeat") && !strings.Contains(reason, "similar") {
				t.Errorf("blocked for %q, want the similarity rule", reason)
			}
		}
		if got := len(e.ourPosts(day0, e.clock.Now().Add(time.Hour))); got != 1 {
			t.Errorf("%d replies on X, want 1", got)
		}
	})
}

func TestWithoutAnLLMTheDraftingLoopsSayWhy(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		// The sandbox's stand-in is switched off, as with the real X.
		e := newEnv(t, func(c *config.Config) {
			c.LLM = config.LLM{TimeoutSeconds: 10, MaxTokens: 100}
			c.Sandbox.LLMStandIn = false
		})
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		e.postAs("rustacean_rae", "@tuitbot_demo golang retries?")
		r := e.runner(e.app, autopilot.LoopMentions, autopilot.LoopContent, autopilot.LoopThreads)
		res := tick(t, r)
		for _, n := range r.Loops() {
			if x := res[n]; x.Error != "" || !strings.Contains(x.Summary, "need an LLM") {
				t.Errorf("%s without an LLM: %+v", n, x)
			}
		}
		st, _ := r.Status(context.Background())
		for _, l := range st.Loops {
			if slices.Contains(r.Loops(), l.Name) && (l.State != autopilot.StateBlocked || !strings.Contains(l.LastError, "llm.provider") || l.Errors != 0) {
				t.Errorf("status of %s: %+v", l.Name, l)
			}
		}
		if n := e.count(`SELECT count(*) FROM mutation_audit`); n != 0 {
			t.Errorf("%d gateway calls without an LLM", n)
		}
		if n := e.count(`SELECT count(*) FROM x_api_usage WHERE endpoint LIKE '%mentions%'`); n != 0 {
			t.Errorf("mentions were bought (%d calls) although no reply could be drafted", n)
		}
	})
}

// TestHeldLoopWaitsUntilResumed: a loop a person paused is skipped by
// every runner (the hold is stored) and runs again once resumed.
func TestHeldLoopWaitsUntilResumed(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.clock.AdvanceTo(day0.Add(9 * time.Hour))
		if err := e.runner(e.app).Hold(context.Background(), "bogus", true); err == nil {
			t.Fatal("holding an unknown loop succeeded")
		}
		if err := e.runner(e.app).Hold(context.Background(), autopilot.LoopMentions, true); err != nil {
			t.Fatalf("Hold: %v", err)
		}
		// A runner built before or after the hold skips the loop.
		res := tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		if !strings.Contains(res.Skipped, "paused by a person") {
			t.Fatalf("held loop ran: %+v", res)
		}
		stateOf := func() string {
			st, err := e.runner(e.app).Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range st.Loops {
				if l.Name == autopilot.LoopMentions {
					return l.State
				}
			}
			return ""
		}
		if s := stateOf(); s != autopilot.StateHeld {
			t.Fatalf("state after the skipped tick: %q", s)
		}
		if err := e.runner(e.app).Hold(context.Background(), autopilot.LoopMentions, false); err != nil {
			t.Fatalf("resume: %v", err)
		}
		e.clock.AdvanceTo(e.clock.Now().Add(time.Hour))
		res = tick(t, e.runner(e.app, autopilot.LoopMentions))[autopilot.LoopMentions]
		if res.Skipped != "" || res.Error != "" {
			t.Fatalf("resumed loop: %+v", res)
		}
		if s := stateOf(); s == autopilot.StateHeld {
			t.Fatalf("state after resuming: %q", s)
		}
	})
}
