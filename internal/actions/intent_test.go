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
		pairs := len(postSpellings()) * len(postSpellings())
		for _, sc := range scenarios {
			var twice, requests, posted int
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
								}
								// A human approves whatever waits.
								approve := []string{item}
								if err == nil && r.Kind == gateway.Routed && fmt.Sprint(r.ApprovalID) != item {
									approve = append(approve, fmt.Sprint(r.ApprovalID))
								}
								for _, id := range approve {
									var n int64
									fmt.Sscan(id, &n)
									if _, _, err := e.g.Approve(e.ctx, n, "tester", ""); err != nil {
										t.Errorf("approve item %d: %v", n, err)
									}
								}
							} else {
								requireNamesFirst(t, r, err, first)
							}
							n, posts := sent.take(), e.postsWithText(text)
							requests, posted = requests+n, posted+posts
							if n != 1 || posts != 1 {
								twice++
								t.Errorf("%d requests reached X and %d posts were made, want exactly 1", n, posts)
							}
							e.clock.Advance(time.Second)
						})
					}
				}
			})
			t.Logf("%s: %d of %d spelling pairs did not make exactly one post (%d posts, %d requests to X)", sc.name, twice, pairs, posted, requests)
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
