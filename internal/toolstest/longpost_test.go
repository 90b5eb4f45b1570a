package toolstest

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// longText is a post of 1,000 weighted characters.
var longText = strings.Repeat("Long posts let an account say more. ", 27) + strings.Repeat("x", 28)

type limitReport struct {
	Valid  bool   `json:"valid"`
	Max    int    `json:"max_weighted_length"`
	Reason string `json:"limit_reason"`
	Tweets []struct {
		WeightedLength int  `json:"weighted_length"`
		Valid          bool `json:"valid"`
	} `json:"tweets"`
}

// TestLongPostsFromAPremiumAccount: the sandbox's Premium brand posts
// 1,000 characters, and reading the post back gives its whole text with
// X's shortened text beside it; the dry run says which limit applies and
// why.
func TestLongPostsFromAPremiumAccount(t *testing.T) {
	if n := len([]rune(longText)); n != 1000 {
		t.Fatalf("long text has %d characters", n)
	}
	e := newEnv(t, envOptions{permissive: true})
	var rep limitReport
	e.call("x_post_tweet_dry_run", map[string]any{"text": longText, "account": "brand_b"}).ok(t, &rep)
	if !rep.Valid || rep.Max != 25000 || !strings.HasPrefix(rep.Reason, "25000: account is Premium (checked ") || rep.Tweets[0].WeightedLength != 1000 {
		t.Fatalf("dry run %+v, want valid under 25000 because the account is Premium", rep)
	}
	before := e.counters()
	var p actions.PostedTweet
	executed(t, e.call("x_post_tweet", map[string]any{"text": longText, "account": "brand_b"}), &p)
	e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 1})

	var tw xapi.Tweet
	e.call("get_tweet_by_id", map[string]any{"tweet_id": p.ID, "account": "brand_b"}).ok(t, &tw)
	if tw.Text != longText {
		t.Fatalf("read back %d characters, want the whole 1000: %.80q", len([]rune(tw.Text)), tw.Text)
	}
	if !strings.HasSuffix(tw.TruncatedText, "…") || !strings.HasPrefix(longText, strings.TrimSuffix(tw.TruncatedText, "…")) || len([]rune(tw.TruncatedText)) > 280 {
		t.Fatalf("truncated_text %q, want X's shortened start of the post", tw.TruncatedText)
	}
	var found struct {
		Tweets []xapi.Tweet `json:"tweets"`
	}
	e.call("x_search_tweets", map[string]any{"query": "\"Long posts let an account say more\"", "account": "brand_b"}).ok(t, &found)
	if len(found.Tweets) == 0 || found.Tweets[0].Text != longText || found.Tweets[0].TruncatedText == "" {
		t.Fatalf("search found %d posts: %+v; want the whole text", len(found.Tweets), found.Tweets)
	}
	// A short post reads as it is, with nothing beside it.
	executed(t, e.call("x_post_tweet", map[string]any{"text": "A short one from a Premium account.", "account": "brand_b"}), &p)
	e.call("get_tweet_by_id", map[string]any{"tweet_id": p.ID, "account": "brand_b"}).ok(t, &tw)
	if tw.Text != "A short one from a Premium account." || tw.TruncatedText != "" {
		t.Fatalf("short post read back as %+v", tw)
	}
}

// TestLongPostsRefusedForAPlainAccount: an account without a subscription
// gets tweet_too_long naming its limit and the thread way out, before any
// request reaches X; so does a Premium account whose setting says 280.
func TestLongPostsRefusedForAPlainAccount(t *testing.T) {
	var requests atomic.Int64
	e := newEnv(t, envOptions{permissive: true, onX: func(*http.Request) { requests.Add(1) }})
	var rep limitReport
	e.call("x_post_tweet_dry_run", map[string]any{"text": longText}).ok(t, &rep)
	if rep.Valid || rep.Max != 280 || !strings.HasPrefix(rep.Reason, "280: account is None") || rep.Tweets[0].Valid {
		t.Fatalf("dry run %+v, want invalid under 280 because the account has no subscription", rep)
	}
	for _, call := range []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"x_post_tweet", map[string]any{"text": longText}, "text"},
		{"x_post_thread", map[string]any{"tweets": []string{"Short opener.", longText}}, "tweets[1]"},
		{"compose_tweet", map[string]any{"content": longText}, "content"},
	} {
		before, sim := requests.Load(), e.counters()
		r := e.call(call.tool, call.args).fails(t, apperr.TweetTooLong).mentions(t, call.field, "1000", "exceeds 280", "account is None", "x_post_thread")
		if got := r.extra("limit_reason"); got == nil || !strings.HasPrefix(got.(string), "280: account is None") {
			t.Errorf("%s: limit_reason %v", call.tool, got)
		}
		if n := requests.Load() - before; n != 0 {
			t.Errorf("%s: %d requests reached X; the cached subscription should have refused it first", call.tool, n)
		}
		e.requireDelta(sim, map[string]int64{})
	}

	t.Run("x_api.max_post_length = 280 on a Premium account", func(t *testing.T) {
		s := newEnv(t, envOptions{permissive: true, configure: func(c *config.Config) {
			c.Accounts = map[string]map[string]any{"brand_b": {"x_api": map[string]any{"max_post_length": 280}}}
		}})
		var rep limitReport
		s.call("x_post_tweet_dry_run", map[string]any{"text": longText, "account": "brand_b"}).ok(t, &rep)
		if rep.Valid || rep.Max != 280 || rep.Reason != "280: x_api.max_post_length" {
			t.Fatalf("dry run %+v, want 280 because of the setting", rep)
		}
		before := s.counters()
		s.call("x_post_tweet", map[string]any{"text": longText, "account": "brand_b"}).fails(t, apperr.TweetTooLong).mentions(t, "x_api.max_post_length")
		s.requireDelta(before, map[string]int64{})
	})
}

// TestPostLimitRefreshedDaily: what X said of the account's subscription
// is trusted for a day on the App's clock, then asked again: a lapsed
// Premium plan stops long posts the next day, before X refuses them.
func TestPostLimitRefreshedDaily(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	e := newEnv(t, envOptions{permissive: true, now: clk.Now})
	premium := e.Sim.DemoAccounts()["brand_b"]
	dry := func() limitReport {
		t.Helper()
		var rep limitReport
		e.call("x_post_tweet_dry_run", map[string]any{"text": longText, "account": "brand_b"}).ok(t, &rep)
		return rep
	}
	if rep := dry(); rep.Max != 25000 || rep.Reason != "25000: account is Premium (checked 2026-11-26)" {
		t.Fatalf("first dry run %+v", rep)
	}
	e.Sim.SetSubscription(premium, "None")
	clk.Advance(23 * time.Hour)
	if rep := dry(); rep.Max != 25000 || rep.Reason != "25000: account is Premium (checked 2026-11-26)" {
		t.Fatalf("within the day %+v, want the answer kept", rep)
	}
	clk.Advance(time.Hour)
	if rep := dry(); rep.Max != 280 || rep.Reason != "280: account is None, without an X subscription (checked 2026-11-27)" {
		t.Fatalf("a day later %+v, want X asked again", rep)
	}
	before := e.counters()
	e.call("x_post_tweet", map[string]any{"text": longText, "account": "brand_b"}).fails(t, apperr.TweetTooLong).mentions(t, "checked 2026-11-27")
	e.requireDelta(before, map[string]int64{})
}
