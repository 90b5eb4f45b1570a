package toolstest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// postTrap arms an emulator fault just before the nth POST /2/tweets that
// reaches X, so exactly that request fails.
type postTrap struct {
	sim atomic.Pointer[xsim.Server]

	mu    sync.Mutex
	seen  int
	at    int
	fault xsim.Fault
}

func (p *postTrap) hook(r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/2/tweets" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen++
	if p.at > 0 && p.seen == p.at {
		p.sim.Load().SetFault("POST /2/tweets", p.fault)
	}
}

// arm makes the nth POST from now fail with f.
func (p *postTrap) arm(n int, f xsim.Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at, p.fault = p.seen+n, f
}

func TestPostThread(t *testing.T) {
	trap := &postTrap{}
	e := newEnv(t, envOptions{permissive: true, onX: trap.hook})
	trap.sim.Store(e.Sim)

	t.Run("each tweet replies to the one before", func(t *testing.T) {
		media := uploadPNG(t, e, "thread.png", 51)
		tweets := []string{
			"Thread: how we let agents post without losing sleep.",
			"One gateway: every write passes policy, dedup and audit before X sees it.",
			"A human approves anything risky, and approval replays exactly what was queued.",
		}
		before := e.counters()
		var th actions.PostedThread
		r := executed(t, e.call("x_post_thread", map[string]any{"tweets": tweets, "media_ids": [][]string{{}, {media}}}), &th)
		e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 3})
		if th.TweetCount != 3 || len(th.ThreadTweetIDs) != 3 || th.RootTweetID != th.ThreadTweetIDs[0] {
			t.Fatalf("thread data %+v", th)
		}
		for i, id := range th.ThreadTweetIDs {
			tw, ok := e.tweetByID(id)
			if !ok || tw.Text != tweets[i] {
				t.Fatalf("tweet %d (%s): %+v", i, id, tw)
			}
			want := ""
			if i > 0 {
				want = th.ThreadTweetIDs[i-1]
			}
			if tw.InReplyToTweetID != want {
				t.Fatalf("tweet %d replies to %q, want %q", i, tw.InReplyToTweetID, want)
			}
			if (len(tw.MediaKeys) == 1) != (i == 1) {
				t.Fatalf("tweet %d has media %v; only tweet 1 should", i, tw.MediaKeys)
			}
		}
		requireThreadRollback(t, r.Meta.Rollback.UndoParams, th.ThreadTweetIDs)
		if a := e.audit(r.Meta.CorrelationID); a.Status != "success" || a.Tool != "x_post_thread" {
			t.Fatalf("audit %+v", a)
		}
	})

	for _, c := range []struct {
		name      string
		failAt    int // 1-based POST that fails
		fault     xsim.Fault
		causeCode apperr.Code
	}{
		{"rate limited at the third post", 3, xsim.Fault{RateLimitNext: 1}, apperr.XRateLimited},
		{"server error at the second post", 2, xsim.Fault{ErrorNext: 1, ErrorStatus: 503}, apperr.XOutcomeUnknown},
	} {
		t.Run("partial failure: "+c.name, func(t *testing.T) {
			t.Cleanup(e.Sim.ClearFaults)
			tweets := make([]string, 4)
			for i := range tweets {
				tweets[i] = fmt.Sprintf("%s, part %d of 4: what breaks when an agent retries blindly.", c.name, i+1)
			}
			before := e.counters()
			trap.arm(c.failAt, c.fault)
			r := e.call("x_post_thread", map[string]any{"tweets": tweets}).fails(t, apperr.ThreadPartial)
			posted := c.failAt - 1
			e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: int64(posted)})
			var fail actions.ThreadFailure
			if err := decodeInto(r.Data, &fail); err != nil {
				t.Fatalf("failure data: %v: %s", err, r.Data)
			}
			if len(fail.PostedTweetIDs) != posted || fail.FailedAtIndex != posted || !strings.HasPrefix(fail.Cause, string(c.causeCode)) {
				t.Fatalf("failure data %+v, want %d posted ids, failed index %d, cause %s", fail, posted, posted, c.causeCode)
			}
			for i, id := range fail.PostedTweetIDs {
				tw, ok := e.tweetByID(id)
				if !ok || tw.Text != tweets[i] || (i > 0 && tw.InReplyToTweetID != fail.PostedTweetIDs[i-1]) {
					t.Fatalf("posted tweet %d (%s): %+v", i, id, tw)
				}
			}
			for _, tw := range e.Sim.World().Tweets {
				if tw.Text == tweets[posted] {
					t.Fatalf("the failed tweet %d is on X", posted)
				}
			}
			if !strings.Contains(r.Error.Message, fmt.Sprint(posted)) {
				t.Fatalf("message %q does not name the failed index", r.Error.Message)
			}
			requireV4(t, r.Meta.CorrelationID)
			a := e.audit(r.Meta.CorrelationID)
			if a.Status != "failure" || a.ErrorCode != string(apperr.ThreadPartial) {
				t.Fatalf("audit row %+v, want failure with %s", a, apperr.ThreadPartial)
			}
			var stored actions.ThreadFailure
			if err := decodeInto(a.Result, &stored); err != nil || !slices.Equal(stored.PostedTweetIDs, fail.PostedTweetIDs) {
				t.Fatalf("audit result %s, want posted ids %v", a.Result, fail.PostedTweetIDs)
			}
			if a.Rollback == nil {
				t.Fatal("audit row has no rollback for the posted tweets")
			}
			requireThreadRollback(t, a.Rollback.UndoParams, fail.PostedTweetIDs)
			// The agent must get the same guidance without a second call.
			if r.Meta.Rollback == nil {
				t.Fatal("the thread_partial_failure envelope has no meta.rollback; the agent needs the undo guidance without a second call")
			}
			requireThreadRollback(t, r.Meta.Rollback.UndoParams, fail.PostedTweetIDs)
		})
	}

	t.Run("tweet_too_long names the weighted length and the index", func(t *testing.T) {
		before := e.counters()
		// 141 CJK characters weigh 282.
		long := strings.Repeat("界", 141)
		r := e.call("x_post_thread", map[string]any{"tweets": []string{"fine", "also fine", long}}).fails(t, apperr.TweetTooLong).mentions(t, "tweets[2]", "282")
		if fmt.Sprint(r.extra("tweet_index")) != "2" || fmt.Sprint(r.extra("weighted_length")) != "282" {
			t.Fatalf("error fields %v, want tweet_index 2 and weighted_length 282", r.Error.Extra)
		}
		// 140 of them fit exactly.
		executed(t, e.call("x_post_thread", map[string]any{"tweets": []string{"fits", strings.Repeat("界", 140)}}), nil)
		e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 2})
		e.call("x_post_thread", map[string]any{"tweets": []string{}}).fails(t, apperr.InvalidInput).mentions(t, "tweets")
		e.call("x_post_thread", map[string]any{"tweets": []string{"a", " "}}).fails(t, apperr.InvalidInput).mentions(t, "tweets")
		e.call("x_post_thread", map[string]any{"tweets": make([]string, 26)}).fails(t, apperr.InvalidInput).mentions(t, "tweets")
		e.call("x_post_thread", map[string]any{"tweets": []string{"a"}, "media_ids": [][]string{{"1"}, {"2"}}}).fails(t, apperr.InvalidInput).mentions(t, "media_ids")
		e.call("x_post_thread", map[string]any{"tweets": []string{"a", "b"}, "media_ids": [][]string{{}, {"x"}}}).fails(t, apperr.InvalidInput).mentions(t, "media_ids[1][0]")
		e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 2})
	})
}

// requireThreadRollback checks rollback guidance that deletes ids, last
// first.
func requireThreadRollback(t *testing.T, params map[string]any, ids []string) {
	t.Helper()
	got, _ := params["tweet_ids"].([]any)
	want := slices.Clone(ids)
	slices.Reverse(want)
	if len(got) != len(want) {
		t.Fatalf("rollback tweet_ids %v, want %v", params["tweet_ids"], want)
	}
	for i := range want {
		if fmt.Sprint(got[i]) != want[i] {
			t.Fatalf("rollback tweet_ids %v, want %v (last first)", got, want)
		}
	}
}

func TestTweetText(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	target := e.demoTweet(nil)
	before := e.counters()
	cases := []struct {
		name   string
		text   string
		weight int
	}{
		{"ascii", strings.Repeat("a", 281), 281},
		{"cjk", strings.Repeat("語", 141), 282},
		// Each URL counts 23 whatever its length: 12 URLs and 11 spaces
		// are 287.
		{"urls", strings.TrimSpace(strings.Repeat("https://example.com/a/very/long/path/indeed ", 12)), 287},
		// An emoji with a skin tone modifier is one sequence of weight 2.
		{"emoji", strings.Repeat("👍🏽", 141), 282},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, call := range []struct {
				tool string
				args map[string]any
			}{
				{"x_post_tweet", map[string]any{"text": c.text}},
				{"x_reply_to_tweet", map[string]any{"text": c.text, "in_reply_to_id": target.ID}},
				{"x_quote_tweet", map[string]any{"text": c.text, "quoted_tweet_id": target.ID}},
			} {
				r := e.call(call.tool, call.args).fails(t, apperr.TweetTooLong).mentions(t, fmt.Sprint(c.weight))
				if fmt.Sprint(r.extra("weighted_length")) != fmt.Sprint(c.weight) {
					t.Fatalf("%s: weighted_length %v, want %d", call.tool, r.extra("weighted_length"), c.weight)
				}
			}
			var rep dryRunReport
			e.call("x_post_tweet_dry_run", map[string]any{"text": c.text}).ok(t, &rep)
			if rep.Valid || len(rep.Tweets) != 1 || rep.Tweets[0].WeightedLength != c.weight || rep.Tweets[0].Valid {
				t.Fatalf("dry run %+v, want invalid with weighted length %d", rep, c.weight)
			}
		})
	}
	// One less of each fits.
	fit := []string{strings.Repeat("a", 280), strings.Repeat("語", 140), strings.TrimSpace(strings.Repeat("https://example.com/a/very/long/path/indeed ", 11)) + " " + strings.Repeat("z", 14)}
	for _, text := range fit {
		executed(t, e.call("x_post_tweet", map[string]any{"text": text}), nil)
	}
	e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: int64(len(fit))})

	t.Run("emoji sequences weigh 2 at X too", func(t *testing.T) {
		text := strings.Repeat("👍🏽", 140)
		var rep dryRunReport
		e.call("x_post_tweet_dry_run", map[string]any{"text": text}).ok(t, &rep)
		if !rep.Valid || rep.Tweets[0].WeightedLength != 280 {
			t.Fatalf("dry run %+v, want valid at weighted length 280", rep)
		}
		executed(t, e.call("x_post_tweet", map[string]any{"text": text}), nil)
	})
}
