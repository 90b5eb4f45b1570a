package actions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xrequest"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// switchPolicy allows every call, or routes it to approval while route is
// set (an approved replay is allowed, as the real engine does).
type switchPolicy struct{ route atomic.Bool }

func (p *switchPolicy) Reserve(_ context.Context, _ *sql.Tx, req policy.Request) (policy.Decision, policy.Reservation, error) {
	if p.route.Load() && !req.BypassApproval {
		return policy.Decision{Outcome: policy.RequireApproval, RuleID: "test:review", Reason: "a human reviews posts"}, policy.Reservation{}, nil
	}
	return policy.Decision{Outcome: policy.Allow}, policy.Reservation{}, nil
}

func (*switchPolicy) Release(context.Context, policy.Reservation) error { return nil }

// spelling is one way to ask for the same post.
type spelling struct {
	name, tool string
	params     func(text string) any
}

// postSpellings are the ways an agent can ask for one post with text:
// the typed tool (with the text in NFC or in NFD), a universal POST on
// either host that can carry it, with or without null optional fields,
// and a thread of one post, with or without an empty media list.
func postSpellings() []spelling {
	raw := func(host, body string) RawParams {
		return RawParams{Method: "POST", Host: host, Path: "/2/tweets", Body: body,
			Headers: []xrequest.KV{{Key: "Content-Type", Value: "application/json"}}}
	}
	body := func(text string) string { b, _ := json.Marshal(map[string]string{"text": text}); return string(b) }
	return []spelling{
		{"typed", "x_post_tweet", func(t string) any { return PostParams{Text: t} }},
		{"typed NFD", "x_post_tweet", func(t string) any { return PostParams{Text: norm.NFD.String(t)} }},
		{"universal", "x_post", func(t string) any { return raw("", body(t)) }},
		{"universal upload.x.com", "x_post", func(t string) any { return raw("upload.x.com", body(t)) }},
		{"universal null fields", "x_post", func(t string) any {
			text, _ := json.Marshal(t)
			return raw("api.x.com", `{ "media": null, "reply": null, "quote_tweet_id": null, "reply_settings": null, "text": `+string(text)+` }`)
		}},
		{"thread of one", "x_post_thread", func(t string) any { return ThreadParams{Tweets: []string{t}} }},
		{"thread of one, empty media", "x_post_thread", func(t string) any {
			return ThreadParams{Tweets: []string{t}, MediaIDs: [][]string{{}}}
		}},
	}
}

// arrivals counts the POST /2/tweets requests that reach the emulator.
type arrivals struct {
	mu sync.Mutex
	n  int
}

func (a *arrivals) add(context.Context) { a.mu.Lock(); a.n++; a.mu.Unlock() }

func (a *arrivals) take() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.n
	a.n = 0
	return n
}

// TestOneIntentWhateverTheSpelling: every pair of spellings of one post,
// within the duplicate window (answered from this process's memory or from
// the database), after an unknown outcome, and while the first waits for
// approval, reaches X once, makes exactly one post, and the second answer
// names the first call (its correlation id, or its approval item).
func TestOneIntentWhateverTheSpelling(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		pol := &switchPolicy{}
		// X's own duplicate filter is kept out of the way (a window shorter
		// than the clock's step), so what reaches X is what X would post.
		e := newXEnvWith(t, pol, func(o *xsim.Options) { o.DuplicateWindow = time.Millisecond })
		sent := &arrivals{}
		watch := func(f xsim.Fault) {
			f.OnArrive = sent.add
			e.sim.SetFault("POST /2/tweets", f)
		}
		watch(xsim.Fault{})
		cell := 0
		scenarios := []struct {
			name string
			// first runs the first call and returns its correlation id (or
			// approval item, as "item N").
			first func(t *testing.T, s spelling, text string) string
			// gap is the time between the two calls.
			gap time.Duration
		}{
			{"within the memory window", executed(e), time.Second},
			{"within the database window", executed(e), time.Minute},
			{"after an unknown outcome", func(t *testing.T, s spelling, text string) string {
				watch(xsim.Fault{ApplyThenFailNext: 1, ErrorStatus: 503})
				defer watch(xsim.Fault{})
				r, err := e.g.Do(e.ctx, gateway.Call{Tool: s.tool, Params: s.params(text)})
				if err != nil {
					if apperr.CodeOf(err) != apperr.XOutcomeUnknown {
						t.Fatalf("first call: %v, want x_outcome_unknown", err)
					}
					corr, _ := apperr.As(err).Extra["correlation_id"].(string)
					return corr
				}
				if !r.Unknown {
					t.Fatalf("first call answered %+v, want an unknown outcome", r)
				}
				return r.CorrelationID
			}, time.Second},
			{"while waiting for approval", func(t *testing.T, s spelling, text string) string {
				pol.route.Store(true)
				r, err := e.g.Do(e.ctx, gateway.Call{Tool: s.tool, Params: s.params(text)})
				if err != nil || r.Kind != gateway.Routed {
					t.Fatalf("first call: %+v %v, want routed to approval", r, err)
				}
				return fmt.Sprintf("item %d", r.ApprovalID)
			}, time.Minute},
		}
		for _, sc := range scenarios {
			twice := 0
			t.Run(sc.name, func(t *testing.T) {
				for _, a := range postSpellings() {
					for _, b := range postSpellings() {
						cell++
						text := fmt.Sprintf("Cell %d: un café, s'il vous plaît, and only one post about it.", cell)
						t.Run(a.name+" then "+b.name, func(t *testing.T) {
							defer pol.route.Store(false)
							sent.take()
							first := sc.first(t, a, text)
							if first == "" {
								t.Fatal("the first call has no correlation id")
							}
							e.clock.Advance(sc.gap)
							r, err := e.g.Do(e.ctx, gateway.Call{Tool: b.tool, Params: b.params(text)})
							if item, ok := strings.CutPrefix(first, "item "); ok {
								if err != nil || r.Kind != gateway.Routed || r.Queued == nil || !r.Queued.Duplicate || fmt.Sprint(r.ApprovalID) != item {
									t.Errorf("second call: %+v %v, want the queued item %s", r.Queued, err, item)
								} else if _, _, err := e.g.Approve(e.ctx, r.ApprovalID, "tester", ""); err != nil {
									t.Errorf("approve item %s: %v", item, err)
								}
							} else {
								requireNamesFirst(t, r, err, first)
							}
							n := sent.take()
							posts := e.postsWithText(text)
							if n != 1 || posts != 1 {
								twice++
								t.Errorf("%d requests reached X and %d posts were made, want exactly 1", n, posts)
							}
							e.clock.Advance(time.Second)
						})
					}
				}
			})
			t.Logf("%s: %d of %d spelling pairs reached X more than once", sc.name, twice, len(postSpellings())*len(postSpellings()))
		}
	})
}

// executed runs the first call, which must execute.
func executed(e *xenv) func(t *testing.T, s spelling, text string) string {
	return func(t *testing.T, s spelling, text string) string {
		r, err := e.g.Do(e.ctx, gateway.Call{Tool: s.tool, Params: s.params(text)})
		if err != nil || r.Kind != gateway.Executed || r.Unknown {
			t.Fatalf("first call: %+v %v, want executed", r, err)
		}
		return r.CorrelationID
	}
}

// requireNamesFirst checks that a repeat was answered by the first call:
// a duplicate of it, or refused because its outcome is unknown.
func requireNamesFirst(t *testing.T, r gateway.Response, err error, first string) {
	t.Helper()
	if err != nil {
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.OutcomeUnverified || ae.Extra["original_correlation_id"] != first {
			t.Errorf("second call failed with %v, want outcome_unverified naming %s", err, first)
		}
		return
	}
	if r.Kind != gateway.Duplicate || r.CorrelationID != first || r.Duplicate == nil || r.Duplicate.OriginalCorrelationID != first {
		t.Errorf("second call answered %s (correlation id %s), want a duplicate of %s", r.Kind, r.CorrelationID, first)
	}
}

// postsWithText counts the live posts on the emulator whose text is text,
// in whatever normal form X stored it.
func (e *xenv) postsWithText(text string) int {
	n := 0
	for _, tw := range e.sim.World().Tweets {
		if norm.NFC.String(tw.Text) == norm.NFC.String(text) {
			n++
		}
	}
	return n
}

// TestUniversalRequestsHaveTheTypedIntent: every typed tool a universal
// request can do the work of has the same intent key as that request, on
// any host, and the request loses it as soon as it asks for more.
func TestUniversalRequestsHaveTheTypedIntent(t *testing.T) {
	acts := map[string]*gateway.Action{}
	for _, a := range All(Deps{}) {
		acts[a.Tool] = a
	}
	key := func(tool string, params any) string {
		t.Helper()
		b, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		k, err := gateway.IntentKey(acts[tool], b)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	raw := func(method, host, path, body string) RawParams {
		return RawParams{Method: method, Host: host, Path: path, Body: body}
	}
	tests := []struct {
		tool  string
		typed any
		raw   RawParams
	}{
		{"x_post_tweet", PostParams{Text: "t", MediaIDs: []string{"5", "6"}}, raw("POST", "", "/2/tweets", `{"text":"t","media":{"media_ids":["5","6"]}}`)},
		{"x_reply_to_tweet", PostParams{Text: "t", InReplyToID: "7"}, raw("POST", "upload.x.com", "/2/tweets", `{"text":"t","reply":{"in_reply_to_tweet_id":"7"}}`)},
		{"x_quote_tweet", PostParams{Text: "t", QuotedTweetID: "7"}, raw("POST", "upload.twitter.com", "/2/tweets", `{"quote_tweet_id":"7","text":"t"}`)},
		{"x_delete_tweet", TweetIDParams{TweetID: "7"}, raw("DELETE", "", "/2/tweets/7", "")},
		{"x_like_tweet", TweetIDParams{TweetID: "7"}, raw("POST", "", "/2/users/1/likes", `{"tweet_id":"7"}`)},
		{"x_unlike_tweet", TweetIDParams{TweetID: "7"}, raw("DELETE", "", "/2/users/1/likes/7", "")},
		{"x_retweet", TweetIDParams{TweetID: "7"}, raw("POST", "", "/2/users/1/retweets", `{"tweet_id":"7"}`)},
		{"x_unretweet", TweetIDParams{TweetID: "7"}, raw("DELETE", "", "/2/users/1/retweets/7", "")},
		{"x_bookmark_tweet", TweetIDParams{TweetID: "7"}, raw("POST", "", "/2/users/1/bookmarks", `{"tweet_id":"7"}`)},
		{"x_unbookmark_tweet", TweetIDParams{TweetID: "7"}, raw("DELETE", "", "/2/users/1/bookmarks/7", "")},
		{"x_follow_user", UserIDParams{TargetUserID: "9"}, raw("POST", "", "/2/users/1/following", `{"target_user_id":"9"}`)},
		{"x_unfollow_user", UserIDParams{TargetUserID: "9"}, raw("DELETE", "", "/2/users/1/following/9", "")},
		{"x_mute_user", UserIDParams{TargetUserID: "9"}, raw("POST", "", "/2/users/1/muting", `{"target_user_id":"9"}`)},
		{"x_unmute_user", UserIDParams{TargetUserID: "9"}, raw("DELETE", "", "/2/users/1/muting/9", "")},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.tool] = true
		universal := map[string]string{"POST": "x_post", "DELETE": "x_delete"}[tt.raw.Method]
		if got, want := key(universal, tt.raw), key(tt.tool, tt.typed); got != want {
			t.Errorf("%s %s %s: intent key differs from %s's", universal, tt.raw.Method, tt.raw.Path, tt.tool)
		}
	}
	for tool, shape := range paramShapes() {
		if shape != shapeNone && !covered[tool] {
			t.Errorf("%s can be spelled as a universal request, but no case here shows that both have one intent", tool)
		}
	}

	// A request that asks X for more than the typed tool can, or for
	// something else, is another intent.
	typed := key("x_post_tweet", PostParams{Text: "t"})
	for _, body := range []string{
		`{"text":"t","reply_settings":"following"}`,
		`{"text":"t","media":{"media_ids":["5"]}}`,
		`{"text":"t","reply":{"in_reply_to_tweet_id":"7","exclude_reply_user_ids":["8"]}}`,
		`{"text":"t2"}`,
	} {
		if key("x_post", raw("POST", "", "/2/tweets", body)) == typed {
			t.Errorf("x_post %s has x_post_tweet {text: t}'s intent", body)
		}
	}
	// A thread of more than one post is a thread.
	if key("x_post_thread", ThreadParams{Tweets: []string{"t", "u"}}) == key("x_post_tweet", PostParams{Text: "t"}) {
		t.Error("a thread of two posts has its first post's intent")
	}
}
