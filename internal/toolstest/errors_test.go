package toolstest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/clock"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/xauth"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// family is one tool of each family, with arguments that are valid and
// fresh on every call (so the gateway never answers a duplicate).
type family struct {
	name  string
	tool  string
	route string // the emulator route the tool calls, for faults
	args  func(e *env, n int) map[string]any
	write bool // goes through the gateway
}

func families() []family {
	return []family{
		{"read", "get_tweet_by_id", "GET /2/tweets/{id}", func(e *env, _ int) map[string]any {
			return map[string]any{"tweet_id": e.demoTweet(nil).ID}
		}, false},
		{"write", "x_post_tweet", "POST /2/tweets", func(_ *env, n int) map[string]any {
			return map[string]any{"text": fmt.Sprintf("Error mapping check number %d: nothing to see here.", n)}
		}, true},
		{"engage", "x_bookmark_tweet", "POST /2/users/{id}/bookmarks", func(e *env, n int) map[string]any {
			return map[string]any{"tweet_id": e.engageTarget(n)}
		}, true},
	}
}

// engageTarget picks a different post the demo account has not
// bookmarked for each n.
func (e *env) engageTarget(n int) string {
	e.t.Helper()
	w := e.Sim.World()
	var ids []string
	for _, tw := range w.Tweets {
		if tw.AuthorID != w.DemoUserID && tw.RetweetOf == "" && !hasEdge(w.Bookmarks, w.DemoUserID, tw.ID) {
			ids = append(ids, tw.ID)
		}
	}
	if len(ids) == 0 {
		e.t.Fatal("no post left to bookmark")
	}
	return ids[(n*7)%len(ids)]
}

// requireAuditFailure checks the audit row of a failed gated call.
func requireAuditFailure(t *testing.T, e *env, r result, status string, code apperr.Code) {
	t.Helper()
	requireV4(t, r.Meta.CorrelationID)
	a := e.audit(r.Meta.CorrelationID)
	if a.Status != status || a.ErrorCode != string(code) {
		t.Fatalf("audit row %s/%s, want %s/%s", a.Status, a.ErrorCode, status, code)
	}
}

func TestErrorMapping(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true, agentApproval: true})
	demo := e.Sim.DemoUserID()
	n := 0
	next := func() int { n++; return n }

	for _, f := range families() {
		t.Run(f.name+"/429", func(t *testing.T) {
			t.Cleanup(e.Sim.ClearFaults)
			before := e.counters()
			e.Sim.SetFault(f.route, xsim.Fault{RateLimitNext: 1})
			r := e.call(f.tool, f.args(e, next())).fails(t, apperr.XRateLimited)
			if !r.Error.Retryable {
				t.Fatal("x_rate_limited is not retryable")
			}
			// The emulator's window resets in minutes, beyond the client's
			// wait cap, so the agent is told when to come back.
			if ms, ok := r.extra("retry_after_ms").(float64); !ok || ms <= 0 {
				t.Fatalf("retry_after_ms = %v, want a positive wait", r.extra("retry_after_ms"))
			}
			if _, ok := r.extra("rate_limit_reset").(string); !ok {
				t.Fatalf("rate_limit_reset missing: %v", r.Error.Extra)
			}
			e.requireDelta(before, nil)
			if f.write {
				requireAuditFailure(t, e, r, "failure", apperr.XRateLimited)
			}
		})

		t.Run(f.name+"/5xx", func(t *testing.T) {
			t.Cleanup(e.Sim.ClearFaults)
			before := e.counters()
			// One failure is enough for a create: had the client retried,
			// the retry would have succeeded and the counter would move.
			fail := 5
			if f.name == "write" {
				fail = 1
			}
			e.Sim.SetFault(f.route, xsim.Fault{ErrorNext: fail, ErrorStatus: 503})
			args := f.args(e, next())
			r := e.call(f.tool, args)
			switch f.name {
			case "write":
				// X may have created the post: the outcome is unknown, never
				// guessed, and an identical retry is refused until verified.
				r.fails(t, apperr.XOutcomeUnknown)
				requireAuditFailure(t, e, r, "unknown", apperr.XOutcomeUnknown)
				e.Sim.ClearFaults()
				e.call(f.tool, args).fails(t, apperr.OutcomeUnverified)
			default:
				// Safe calls are retried, then reported.
				r.fails(t, apperr.XAPIError).mentions(t, "503")
				if f.write {
					requireAuditFailure(t, e, r, "failure", apperr.XAPIError)
				}
			}
			if r.Error.Retryable {
				t.Fatalf("%s is retryable", r.Error.Code)
			}
			e.requireDelta(before, nil)
		})

		// A post answered 5xx may exist on X, so only safe calls are
		// retried (write/5xx proves the post is not).
		if f.name != "write" {
			t.Run(f.name+"/5xx once is retried", func(t *testing.T) {
				t.Cleanup(e.Sim.ClearFaults)
				before := e.counters()
				e.Sim.SetFault(f.route, xsim.Fault{ErrorNext: 1, ErrorStatus: 502})
				r := e.call(f.tool, f.args(e, next())).ok(t, nil)
				if r.Meta.RetryCount == nil || *r.Meta.RetryCount != 1 {
					t.Fatalf("meta.retry_count = %v, want 1", r.Meta.RetryCount)
				}
				want := map[string]int64{}
				if f.name == "engage" {
					want[xsim.CountBookmarks] = 1
				}
				e.requireDelta(before, want)
			})
		}

		t.Run(f.name+"/404", func(t *testing.T) {
			before := e.counters()
			var r result
			switch f.name {
			case "read":
				r = e.call("get_tweet_by_id", map[string]any{"tweet_id": "1"})
			case "engage":
				r = e.call("x_bookmark_tweet", map[string]any{"tweet_id": "2"})
				requireAuditFailure(t, e, r, "failure", apperr.XNotFound)
				e.call("x_retweet", map[string]any{"tweet_id": "3"}).fails(t, apperr.XNotFound)
			case "write":
				// Deletes reach X only through approval.
				var q routed
				e.call("x_delete_tweet", map[string]any{"tweet_id": "4"}).ok(t, &q)
				r = e.call("approve_item", map[string]any{"id": q.ApprovalID})
				var it gateway.ApprovalItem
				e.call("get_approval_item", map[string]any{"id": q.ApprovalID}).ok(t, &it)
				if it.Status != gateway.ApprovalFailed || it.ErrorCode != string(apperr.XNotFound) {
					t.Fatalf("approval item %+v, want failed with x_not_found", it)
				}
			}
			r.fails(t, apperr.XNotFound)
			if r.Error.Retryable {
				t.Fatal("x_not_found is retryable")
			}
			e.requireDelta(before, nil)
		})
	}

	t.Run("write/403 reply to a missing post", func(t *testing.T) {
		r := e.call("x_reply_to_tweet", map[string]any{"text": "Replying into the void.", "in_reply_to_id": "5"}).fails(t, apperr.XForbidden)
		requireAuditFailure(t, e, r, "failure", apperr.XForbidden)
	})

	t.Run("write/403 duplicate content", func(t *testing.T) {
		text := "A post the account already made earlier today, word for word."
		if _, err := e.Sim.PostAs(demo, text, ""); err != nil {
			t.Fatal(err)
		}
		before := e.counters()
		r := e.call("x_post_tweet", map[string]any{"text": text}).fails(t, apperr.XDuplicateContent)
		if r.Error.Retryable {
			t.Fatal("x_duplicate_content is retryable")
		}
		requireAuditFailure(t, e, r, "failure", apperr.XDuplicateContent)
		e.requireDelta(before, nil)
	})

	t.Run("403 suspended account", func(t *testing.T) {
		e.Sim.SetSuspended(demo, true)
		t.Cleanup(func() { e.Sim.SetSuspended(demo, false) })
		before := e.counters()
		for _, f := range families() {
			r := e.call(f.tool, f.args(e, next()))
			if !f.write {
				// X still serves reads to a suspended account.
				r.ok(t, nil)
				continue
			}
			r.fails(t, apperr.XAccountRestricted).mentions(t, "suspended")
			requireAuditFailure(t, e, r, "failure", apperr.XAccountRestricted)
		}
		e.call("x_retweet", map[string]any{"tweet_id": e.engageTarget(next())}).fails(t, apperr.XAccountRestricted)
		e.requireDelta(before, nil)
	})
}

// TestAuthErrors: a token X no longer accepts is x_auth_expired in every
// family, and nothing is applied.
func TestAuthErrors(t *testing.T) {
	t.Run("revoked", func(t *testing.T) {
		e := newEnv(t, envOptions{permissive: true})
		tok, err := xauth.LoadToken(e.Cfg.TokenFile())
		if err != nil {
			t.Fatal(err)
		}
		oauthPost(t, e.App.Sim.URL+"/2/oauth2/revoke", url.Values{"token": {tok.AccessToken}, "client_id": {xsim.DefaultClientID}})
		// The token looks valid here, so writes are attempted and X's 401
		// is recorded.
		requireAuthExpired(t, e, true)
	})

	t.Run("expired and the refresh token already spent", func(t *testing.T) {
		clock := clock.NewFake(time.Now())
		e := newEnv(t, envOptions{permissive: true, now: clock.Now})
		tok, err := xauth.LoadToken(e.Cfg.TokenFile())
		if err != nil {
			t.Fatal(err)
		}
		// Another client used the single-use refresh token and lost the
		// answer; then the access token runs out.
		oauthPost(t, e.App.Sim.URL+"/2/oauth2/token", url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {tok.RefreshToken}, "client_id": {xsim.DefaultClientID}})
		clock.Advance(3 * time.Hour)
		// No usable token: writes cannot be attempted and leave no row.
		requireAuthExpired(t, e, false)
	})
}

func requireAuthExpired(t *testing.T, e *env, attempted bool) {
	t.Helper()
	before := e.counters()
	for i, f := range families() {
		r := e.call(f.tool, f.args(e, i+100)).fails(t, apperr.XAuthExpired).mentions(t, "tuitbot auth")
		if r.Error.Retryable {
			t.Fatal("x_auth_expired is retryable")
		}
		switch {
		case f.write && attempted:
			requireAuditFailure(t, e, r, "failure", apperr.XAuthExpired)
		case f.write && r.Meta.CorrelationID != "":
			t.Fatalf("%s could not be attempted but has audit row %s", f.tool, r.Meta.CorrelationID)
		}
	}
	e.requireDelta(before, nil)
}

func oauthPost(t *testing.T, endpoint string, form url.Values) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", endpoint, resp.Status)
	}
}
