package toolstest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xrules"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// xTraffic counts the requests that reach the emulator, by method.
type xTraffic struct {
	mu     sync.Mutex
	writes int
	reads  []string
}

func (x *xTraffic) hook(r *http.Request) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r.Method == http.MethodGet {
		x.reads = append(x.reads, r.URL.Path)
		return
	}
	x.writes++
}

func (x *xTraffic) snapshot() (writes int, reads []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.writes, append([]string(nil), x.reads...)
}

// strangerOf returns the n-th user of the emulator's world other than the
// demo account (n modulo their number).
func strangerOf(t *testing.T, sim *xsim.Server, n int) string {
	t.Helper()
	var others []string
	for _, u := range sim.World().Users {
		if u.ID != sim.DemoUserID() {
			others = append(others, u.ID)
		}
	}
	if len(others) == 0 {
		t.Fatal("the emulator's world has no other user")
	}
	return others[n%len(others)]
}

// TestXPlatformRules is the rule table of X's 2026 self-serve
// restrictions. On pay_per_use, each spelling of a like, follow, quote
// post (and the undo of a like or follow) and of a reply to a post that did
// not summon the account is refused before X: no write reaches the
// emulator, nothing is billed for it, and the audit row carries the code;
// the error links to x.com where a person can do it by hand, and what a
// Web Intent makes is handed to a person (audit status handed_off). A reply's
// summons is found with one read of the post replied to. On enterprise
// every one of them runs, but for an agent's like or follow, which X's
// automation rules leave to a person: it is queued, and X sees nothing.
func TestXPlatformRules(t *testing.T) {
	type spelling struct {
		name, tool string
		args       func(me, post, user string) map[string]any
		code       apperr.Code
		hint       func(post, user string) string
	}
	raw := func(path string, body string) map[string]any {
		m := map[string]any{"path": path}
		if body != "" {
			m["body"] = body
			m["headers"] = []map[string]any{{"key": "Content-Type", "value": "application/json"}}
		}
		return m
	}
	likeHint := func(post, _ string) string { return "https://x.com/intent/like?tweet_id=" + post }
	// The refusal's hint knows the id only: the profile, whose Follow
	// button X fills in (the hand-off's own link names the handle).
	followHint := func(_, user string) string { return "https://x.com/intent/user?user_id=" + user }
	replyHint := func(post, _ string) string { return "https://x.com/intent/tweet?in_reply_to=" + post }
	quoteHint := func(post, _ string) string { return "https://x.com/intent/tweet?" }
	unlikeHint := func(post, _ string) string { return "https://x.com/i/web/status/" + post }
	unfollowHint := func(_, user string) string { return "https://x.com/intent/user?user_id=" + user }
	cases := []spelling{
		{"typed like", "x_like_tweet", func(_, p, _ string) map[string]any { return map[string]any{"tweet_id": p} }, apperr.XFeatureUnavailable, likeHint},
		{"universal like", "x_post", func(me, p, _ string) map[string]any {
			return raw("/2/users/"+me+"/likes", fmt.Sprintf(`{"tweet_id":%q}`, p))
		}, apperr.XFeatureUnavailable, likeHint},
		{"typed unlike", "x_unlike_tweet", func(_, p, _ string) map[string]any { return map[string]any{"tweet_id": p} }, apperr.XFeatureUnavailable, unlikeHint},
		{"universal unlike", "x_delete", func(me, p, _ string) map[string]any { return raw("/2/users/"+me+"/likes/"+p, "") }, apperr.XFeatureUnavailable, unlikeHint},
		{"typed follow", "x_follow_user", func(_, _, u string) map[string]any { return map[string]any{"target_user_id": u} }, apperr.XFeatureUnavailable, followHint},
		{"universal follow", "x_post", func(me, _, u string) map[string]any {
			return raw("/2/users/"+me+"/following", fmt.Sprintf(`{"target_user_id":%q}`, u))
		}, apperr.XFeatureUnavailable, followHint},
		{"typed unfollow", "x_unfollow_user", func(_, _, u string) map[string]any { return map[string]any{"target_user_id": u} }, apperr.XFeatureUnavailable, unfollowHint},
		{"universal unfollow", "x_delete", func(me, _, u string) map[string]any { return raw("/2/users/"+me+"/following/"+u, "") }, apperr.XFeatureUnavailable, unfollowHint},
		{"typed quote", "x_quote_tweet", func(_, p, _ string) map[string]any {
			return map[string]any{"text": "Worth reading " + p, "quoted_tweet_id": p}
		}, apperr.XFeatureUnavailable, quoteHint},
		{"universal quote", "x_post", func(_, p, _ string) map[string]any {
			return raw("/2/tweets", fmt.Sprintf(`{"text":"Worth a look %s","quote_tweet_id":%q}`, p, p))
		}, apperr.XFeatureUnavailable, quoteHint},
		{"typed reply to a stranger", "x_reply_to_tweet", func(_, p, _ string) map[string]any {
			return map[string]any{"text": "Nice point " + p, "in_reply_to_id": p}
		}, apperr.ReplyNotSummoned, replyHint},
		{"universal reply to a stranger", "x_post", func(_, p, _ string) map[string]any {
			return raw("/2/tweets", fmt.Sprintf(`{"text":"Good one %s","reply":{"in_reply_to_tweet_id":%q}}`, p, p))
		}, apperr.ReplyNotSummoned, replyHint},
		{"typed reply to a mention", "x_reply_to_tweet", func(_, p, _ string) map[string]any {
			return map[string]any{"text": "Thanks for asking " + p, "in_reply_to_id": p}
		}, "", nil},
		{"universal reply to a mention", "x_post", func(_, p, _ string) map[string]any {
			return raw("/2/tweets", fmt.Sprintf(`{"text":"Happy to help %s","reply":{"in_reply_to_tweet_id":%q}}`, p, p))
		}, "", nil},
		{"universal reply to a mention that quotes it", "x_post", func(_, p, _ string) map[string]any {
			return raw("/2/tweets", fmt.Sprintf(`{"text":"Quoting you back %s","reply":{"in_reply_to_tweet_id":%q},"quote_tweet_id":%q}`, p, p, p))
		}, apperr.XFeatureUnavailable, quoteHint},
		{"typed repost", "x_retweet", func(_, p, _ string) map[string]any { return map[string]any{"tweet_id": p} }, "", nil},
	}
	for _, access := range []config.Access{config.AccessPayPerUse, config.AccessEnterprise} {
		t.Run(string(access), func(t *testing.T) {
			var x xTraffic
			e := newEnv(t, envOptions{permissive: true, access: access, onX: x.hook})
			me := e.Sim.DemoUserID()
			for i, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					// A user and a post of its own for each case, so that no
					// case repeats another's effect.
					user := strangerOf(t, e.Sim, i)
					text := fmt.Sprintf("Plain thoughts on golang tooling, number %d", i)
					if strings.Contains(tc.name, "mention") {
						text = fmt.Sprintf("@%s what do you make of this, take %d?", xsim.DemoUsername, i)
					}
					post, err := e.Sim.PostAs(user, text, "")
					if err != nil {
						t.Fatal(err)
					}
					writes, reads := x.snapshot()
					counters, billed := e.Sim.Counters(), e.Sim.Billing()
					r := e.call(tc.tool, tc.args(me, post, user))
					if access == config.AccessEnterprise && (strings.HasSuffix(tc.name, " like") || strings.HasSuffix(tc.name, " follow")) {
						// X's API takes it, its automation rules leave it to a
						// person (TestLikesAndFollowsGoToAPerson).
						var q routed
						r.ok(t, &q)
						if !q.Routed || q.MatchedRuleID != xrules.RouteRulePrefix+xrules.RuleLikesFollows {
							t.Fatalf("%s: %s, want it queued for a person", tc.tool, r.Data)
						}
						if w, _ := x.snapshot(); w != writes {
							t.Fatalf("%s: %d writes reached X before a person decided", tc.tool, w-writes)
						}
						return
					}
					if access == config.AccessEnterprise || tc.code == "" {
						r.ok(t, nil)
						if w, _ := x.snapshot(); w == writes {
							t.Fatalf("%s: allowed, but no write reached X", tc.tool)
						}
						return
					}
					r.fails(t, tc.code).mentions(t, tc.hint(post, user), "nothing was sent to X")
					w, rs := x.snapshot()
					if w != writes {
						t.Errorf("%d writes reached X, want none", w-writes)
					}
					newReads := rs[len(reads):]
					switch tc.code {
					case apperr.XFeatureUnavailable:
						if len(newReads) != 0 {
							t.Errorf("reads before the refusal: %v, want none", newReads)
						}
						if after := e.Sim.Billing(); after.Micros != billed.Micros {
							t.Errorf("billed %d micro-dollars, want 0", after.Micros-billed.Micros)
						}
					case apperr.ReplyNotSummoned:
						// The post replied to, read once (and the account itself,
						// the first time).
						var posts int
						for _, p := range newReads {
							if p == "/2/tweets/"+post {
								posts++
							} else if p != "/2/users/me" {
								t.Errorf("unexpected read %s", p)
							}
						}
						if posts != 1 {
							t.Errorf("the post replied to was read %d times, want once: %v", posts, newReads)
						}
						after := e.Sim.Billing()
						for ep, n := range after.Requests {
							if !strings.HasPrefix(ep, "GET ") && n != billed.Requests[ep] {
								t.Errorf("%s billed %d more times", ep, n-billed.Requests[ep])
							}
						}
					}
					for k, v := range e.Sim.Counters() {
						if v != counters[k] {
							t.Errorf("emulator counter %s went from %d to %d", k, counters[k], v)
						}
					}
					// What a Web Intent makes is handed to a person; an
					// unlike or unfollow, which has none, stays a failure.
					status := "handed_off"
					if strings.Contains(tc.name, "unlike") || strings.Contains(tc.name, "unfollow") {
						status = "failure"
					}
					if _, handed := r.extra("handoff_id").(float64); handed != (status == "handed_off") {
						t.Errorf("handoff_id %v in the refusal, want one: %t", r.extra("handoff_id"), status == "handed_off")
					}
					corr, _ := r.extra("correlation_id").(string)
					a := e.audit(corr)
					if a.Status != status || a.ErrorCode != string(tc.code) || a.ErrorMessage == nil || !strings.Contains(*a.ErrorMessage, "x.com") {
						t.Errorf("audit row %+v, want %s with %s and the by-hand link", a, status, tc.code)
					}
				})
			}
		})
	}
}

// TestXPlatformRulesOnDrafts: a reply proposed from the discovery feed
// (a drafted reply to a stranger found by keyword search) is refused with
// reply_not_summoned on pay_per_use without reaching X, and posted on
// enterprise.
func TestXPlatformRulesOnDrafts(t *testing.T) {
	for _, access := range []config.Access{config.AccessPayPerUse, config.AccessEnterprise} {
		t.Run(string(access), func(t *testing.T) {
			var x xTraffic
			e := newEnv(t, envOptions{permissive: true, access: access, onX: x.hook})
			cands := discover(t, e)
			before, _ := x.snapshot()
			var out struct {
				Results []workflow.ProposeOutcome `json:"results"`
			}
			e.call("propose_and_queue_replies", map[string]any{"items": []map[string]any{
				{"candidate_id": cands[0].TweetID, "pre_drafted_text": "Interesting take on this."}}}).ok(t, &out)
			got := out.Results[0]
			after, _ := x.snapshot()
			if access == config.AccessEnterprise {
				if got.Status != "executed" || after == before {
					t.Fatalf("enterprise: %+v after %d writes", got, after-before)
				}
				return
			}
			if got.ErrorCode != string(apperr.ReplyNotSummoned) || after != before {
				t.Fatalf("pay_per_use: %+v after %d writes, want reply_not_summoned and none", got, after-before)
			}
		})
	}
}

// TestXPlatformRulesBeforeApproval: with the default policy (likes need
// approval), a like on pay_per_use is refused at once and no person is
// asked; a like queued on enterprise is checked again when it is approved
// after the account moved to pay_per_use, and refused then, X untouched.
func TestXPlatformRulesBeforeApproval(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{access: config.AccessPayPerUse, onX: x.hook})
	user := strangerOf(t, e.Sim, 0)
	post, err := e.Sim.PostAs(user, "A post nobody asked us about", "")
	if err != nil {
		t.Fatal(err)
	}
	e.call("x_like_tweet", map[string]any{"tweet_id": post}).fails(t, apperr.XFeatureUnavailable)
	if n, err := e.App.Gateway.PendingCount(e.ctx); err != nil || n != 0 {
		t.Fatalf("%d items wait for a person (%v), want none", n, err)
	}

	e.Cfg.XAPI.Access = config.AccessEnterprise
	var q struct {
		Routed bool  `json:"routed_to_approval"`
		ID     int64 `json:"approval_queue_id"`
	}
	e.call("x_like_tweet", map[string]any{"tweet_id": post}).ok(t, &q)
	if !q.Routed || q.ID == 0 {
		t.Fatalf("enterprise like not queued: %+v", q)
	}
	e.Cfg.XAPI.Access = config.AccessPayPerUse
	writes, _ := x.snapshot()
	_, _, err = e.App.Gateway.Approve(e.ctx, q.ID, "alice", "")
	if apperr.CodeOf(err) != apperr.XFeatureUnavailable {
		t.Fatalf("approving after the change: %v, want x_feature_unavailable", err)
	}
	if w, _ := x.snapshot(); w != writes || e.Sim.Counters()[xsim.CountLikes] != 0 {
		t.Fatalf("%d writes reached X, %d likes", w-writes, e.Sim.Counters()[xsim.CountLikes])
	}
	it, err := e.App.Gateway.Item(e.ctx, q.ID)
	if err != nil || it.Status != "failed" || it.ErrorCode != string(apperr.XFeatureUnavailable) {
		t.Fatalf("item after the refused approval: %+v %v", it, err)
	}
}

// TestXPlatformRulesInDryRun: a dry run reports the refusal instead of a
// preview of a call X would refuse.
func TestXPlatformRulesInDryRun(t *testing.T) {
	for _, access := range []config.Access{config.AccessPayPerUse, config.AccessEnterprise} {
		t.Run(string(access), func(t *testing.T) {
			e := newEnv(t, envOptions{access: access, configure: func(c *config.Config) { c.MCPPolicy.DryRunMutations = true }})
			post, err := e.Sim.PostAs(strangerOf(t, e.Sim, 0), "Dry thoughts", "")
			if err != nil {
				t.Fatal(err)
			}
			r := e.call("x_follow_user", map[string]any{"target_user_id": strangerOf(t, e.Sim, 0)})
			q := e.call("x_quote_tweet", map[string]any{"text": "Look", "quoted_tweet_id": post})
			if access == config.AccessPayPerUse {
				r.fails(t, apperr.XFeatureUnavailable)
				q.fails(t, apperr.XFeatureUnavailable)
				return
			}
			var d struct {
				DryRun bool `json:"dry_run"`
			}
			r.ok(t, &d)
			if !d.DryRun {
				t.Fatalf("enterprise dry run: %s", r.Data)
			}
		})
	}
}

// TestCapabilitiesSayTheXAccess: get_capabilities says each account's
// access level with what it allows and costs, and marks likes, follows and
// quotes unusable on pay_per_use (replies only when summoned).
func TestCapabilitiesSayTheXAccess(t *testing.T) {
	for _, access := range []config.Access{config.AccessPayPerUse, config.AccessEnterprise} {
		t.Run(string(access), func(t *testing.T) {
			e := newEnv(t, envOptions{permissive: true, access: access})
			var caps struct {
				Accounts []struct {
					Name   string `json:"name"`
					Access struct {
						Access  string   `json:"access"`
						Allows  string   `json:"allows"`
						Refused []string `json:"refused_tools"`
						Prices  []struct {
							What string  `json:"what"`
							USD  float64 `json:"usd"`
						} `json:"prices"`
					} `json:"x_access"`
					Direct []struct {
						Name      string `json:"tool"`
						Available bool   `json:"available"`
						Reason    string `json:"reason"`
					} `json:"direct_tools"`
				} `json:"accounts"`
			}
			e.call("get_capabilities", map[string]any{}).ok(t, &caps)
			if len(caps.Accounts) == 0 {
				t.Fatal("no accounts")
			}
			acc := caps.Accounts[0]
			if acc.Access.Access != string(access) || acc.Access.Allows == "" {
				t.Fatalf("x_access %+v, want %s in words", acc.Access, access)
			}
			var reply, owned bool
			for _, p := range acc.Access.Prices {
				reply = reply || (strings.Contains(p.What, "reply") && p.USD == 0.010)
				owned = owned || (strings.Contains(p.What, "owned read") && p.USD == 0.001)
			}
			if !reply || !owned {
				t.Errorf("prices %+v lack the summoned reply at $0.010 or the owned read at $0.001", acc.Access.Prices)
			}
			for _, d := range acc.Direct {
				switch d.Name {
				case "x_like_tweet", "x_follow_user", "x_quote_tweet", "x_unlike_tweet", "x_unfollow_user":
					if ppu := access == config.AccessPayPerUse; d.Available == ppu || (ppu && !strings.Contains(d.Reason, "pay_per_use")) {
						t.Errorf("%s on %s: available %t (%s)", d.Name, access, d.Available, d.Reason)
					}
				case "x_reply_to_tweet":
					if !d.Available || (access == config.AccessPayPerUse) != strings.Contains(d.Reason, "summoned") {
						t.Errorf("%s on %s: available %t (%s)", d.Name, access, d.Available, d.Reason)
					}
				}
			}
			if ppu := access == config.AccessPayPerUse; ppu != slices.Contains(acc.Access.Refused, "x_like_tweet") {
				t.Errorf("refused tools %v on %s", acc.Access.Refused, access)
			}
		})
	}
}

// TestSummonsFromWhatWasRead: on pay_per_use, a reply to a mention the
// account already read (x_get_user_mentions) or to a post found by search
// is judged without reading the post again; the mention is answered, the
// stranger's post refused.
func TestSummonsFromWhatWasRead(t *testing.T) {
	var x xTraffic
	e := newEnv(t, envOptions{permissive: true, access: config.AccessPayPerUse, onX: x.hook})
	user := strangerOf(t, e.Sim, 0)
	mention, err := e.Sim.PostAs(user, "@"+xsim.DemoUsername+" does this work with golang?", "")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := e.Sim.PostAs(user, "golang generics are neat", "")
	if err != nil {
		t.Fatal(err)
	}
	e.call("x_get_user_mentions", map[string]any{}).ok(t, nil)
	e.call("x_search_tweets", map[string]any{"query": "golang generics"}).ok(t, nil)
	_, before := x.snapshot()
	e.call("x_reply_to_tweet", map[string]any{"text": "It does, yes.", "in_reply_to_id": mention}).ok(t, nil)
	e.call("x_reply_to_tweet", map[string]any{"text": "Agreed!", "in_reply_to_id": stranger}).fails(t, apperr.ReplyNotSummoned)
	_, after := x.snapshot()
	for _, p := range after[len(before):] {
		if p == "/2/tweets/"+mention || p == "/2/tweets/"+stranger {
			t.Errorf("read %s again to judge the reply", p)
		}
	}
}
