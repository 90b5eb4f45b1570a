package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

func TestPolicyOutcomesThroughGateway(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		reset := time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC)
		tests := []struct {
			name     string
			decision policy.Decision
			check    func(t *testing.T, e *env, resp Response, err error)
		}{
			{
				name:     "allow executes once and audits success",
				decision: policy.Decision{Outcome: policy.Allow},
				check: func(t *testing.T, e *env, resp Response, err error) {
					if err != nil {
						t.Fatalf("allow: %v", err)
					}
					if resp.Kind != Executed || resp.CorrelationID == "" {
						t.Fatalf("allow: kind %q correlation %q", resp.Kind, resp.CorrelationID)
					}
					if e.act.count() != 1 {
						t.Fatalf("allow: executed %d times", e.act.count())
					}
					if got := e.statuses(); len(got) != 1 || got[0] != statusSuccess {
						t.Fatalf("allow: audit statuses %v", got)
					}
					if e.pol.consumedCount() != 1 {
						t.Fatalf("allow: policy counters consumed %d times, want 1", e.pol.consumedCount())
					}
				},
			},
			{
				name: "deny returns the policy code and the reset time, runs nothing",
				decision: policy.Decision{Outcome: policy.Deny, Code: apperr.PolicyRateLimited, RuleID: "compat:max_mutations_per_hour",
					Reason: "hourly limit", ResetAt: reset},
				check: func(t *testing.T, e *env, resp Response, err error) {
					ae := wantCode(t, err, apperr.PolicyRateLimited)
					if got := ae.Extra["rate_limit_reset"]; got != "2026-03-02T11:00:00Z" {
						t.Fatalf("deny: rate_limit_reset = %v", got)
					}
					if ae.Extra["matched_rule_id"] != "compat:max_mutations_per_hour" || ae.Extra["policy_decision"] != "denied" {
						t.Fatalf("deny: extra %v", ae.Extra)
					}
					if ae.Retryable() {
						t.Fatal("deny: policy_denied_rate_limited must not be retryable")
					}
					if e.act.count() != 0 || len(e.audit()) != 0 || e.countRows("approval_queue") != 0 {
						t.Fatalf("deny: executed %d, audit rows %d", e.act.count(), len(e.audit()))
					}
				},
			},
			{
				name:     "dry run answers the seed's data and runs nothing",
				decision: policy.Decision{Outcome: policy.DryRun, RuleID: "compat:dry_run_mutations"},
				check: func(t *testing.T, e *env, resp Response, err error) {
					if err != nil {
						t.Fatalf("dry run: %v", err)
					}
					d := dataMap(t, resp.Answer())
					want, _ := canon(t, `{"text":"hello","n":1}`)
					if resp.Kind != DryRun || d["dry_run"] != true || d["would_execute"] != fakeTool ||
						d["params"] != want || d["matched_rule_id"] != "compat:dry_run_mutations" {
						t.Fatalf("dry run: kind %q data %v", resp.Kind, d)
					}
					if e.act.count() != 0 || len(e.audit()) != 0 {
						t.Fatalf("dry run: executed %d, audit rows %d", e.act.count(), len(e.audit()))
					}
				},
			},
			{
				name:     "require approval queues the exact canonical call",
				decision: policy.Decision{Outcome: policy.RequireApproval, RuleID: "template:safe_default:posts", Reason: "posts need review"},
				check: func(t *testing.T, e *env, resp Response, err error) {
					if err != nil {
						t.Fatalf("approval: %v", err)
					}
					d := dataMap(t, resp.Answer())
					if resp.Kind != Routed || d["routed_to_approval"] != true || resp.Queued.ApprovalQueueID != resp.ApprovalID || resp.ApprovalID == 0 {
						t.Fatalf("approval: kind %q id %d data %v", resp.Kind, resp.ApprovalID, d)
					}
					if d["matched_rule_id"] != "template:safe_default:posts" || d["reason"] != "posts need review" {
						t.Fatalf("approval: data %v", d)
					}
					var tool, params, orig, hash, rule, status string
					err = e.db.QueryRowContext(e.ctx, `SELECT tool_name, params_json, original_params, params_hash, matched_rule_id, status
					FROM approval_queue WHERE id = ?`, resp.ApprovalID).Scan(&tool, &params, &orig, &hash, &rule, &status)
					if err != nil {
						t.Fatalf("approval row: %v", err)
					}
					want, wantHash := canon(t, `{"n":1,"text":"hello"}`)
					if tool != fakeTool || params != want || orig != want || hash != wantHash || rule != "template:safe_default:posts" || status != ApprovalPending {
						t.Fatalf("approval row: tool %q params %q orig %q hash %q rule %q status %q", tool, params, orig, hash, rule, status)
					}
					if e.act.count() != 0 || len(e.audit()) != 0 {
						t.Fatalf("approval: executed %d, audit rows %d", e.act.count(), len(e.audit()))
					}
				},
			},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t)
				d := tc.decision
				e.pol.set(func(policy.Request) policy.Decision { return d })
				resp, err := e.do(e.g, json.RawMessage(`{"text":"hello","n":1}`), "")
				tc.check(t, e, resp, err)
				reqs := e.pol.requests()
				if len(reqs) != 1 || reqs[0].Tool != fakeTool || reqs[0].Category != policy.CatWrite || reqs[0].BypassApproval {
					t.Fatalf("policy saw %+v", reqs)
				}
			})
		}
	})
}

func TestRoutedIdenticalCallReturnsSameQueueID(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.pol.set(decision(policy.RequireApproval, "user:review"))
		first := e.mustDo(json.RawMessage(`{"a":1,"text":"x"}`), "")
		// Same call, keys in another order: in memory first, then from the
		// database once the in-memory window has passed.
		second := e.mustDo(json.RawMessage(`{"text":"x","a":1}`), "")
		e.clock.Advance(time.Minute)
		third := e.mustDo(map[string]any{"text": "x", "a": 1}, "")
		for i, r := range []Response{second, third} {
			if r.Kind != Routed || r.ApprovalID != first.ApprovalID {
				t.Fatalf("repeat %d: kind %q queue id %d, want %d", i+2, r.Kind, r.ApprovalID, first.ApprovalID)
			}
			if got := r.Queued.ApprovalQueueID; got != first.ApprovalID {
				t.Fatalf("repeat %d: data approval_queue_id %v", i+2, got)
			}
		}
		if n := e.countRows("approval_queue"); n != 1 {
			t.Fatalf("approval_queue has %d rows, want 1", n)
		}
		// A different call is a different item.
		other := e.mustDo(json.RawMessage(`{"text":"y","a":1}`), "")
		if other.ApprovalID == first.ApprovalID {
			t.Fatal("a different call reused the queue id")
		}
	})
}

func TestAuditRowPendingBeforeExecuteThenCompleted(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		tests := []struct {
			name       string
			run        func(ctx context.Context, params json.RawMessage) (Result, error)
			wantStatus string
			wantCode   apperr.Code
		}{
			{"success", func(context.Context, json.RawMessage) (Result, error) {
				return Result{Data: map[string]any{"id": "1"}}, nil
			}, statusSuccess, ""},
			{"failure", func(context.Context, json.RawMessage) (Result, error) {
				return Result{}, apperr.New(apperr.XForbidden, "forbidden")
			}, statusFailure, apperr.XForbidden},
			{"unknown error", func(context.Context, json.RawMessage) (Result, error) {
				return Result{}, apperr.New(apperr.XOutcomeUnknown, "X answered 503")
			}, statusUnknown, apperr.XOutcomeUnknown},
			{"unknown result", func(context.Context, json.RawMessage) (Result, error) {
				return Result{Data: map[string]any{"status": 503}, Unknown: true}, nil
			}, statusUnknown, ""},
			{"panic", func(context.Context, json.RawMessage) (Result, error) {
				panic("boom")
			}, statusUnknown, apperr.XOutcomeUnknown},
			{"cancelled", func(context.Context, json.RawMessage) (Result, error) {
				return Result{}, context.Canceled
			}, statusUnknown, apperr.InternalError},
			{"cancelled before anything was sent", func(context.Context, json.RawMessage) (Result, error) {
				return Result{}, NotSent(apperr.Wrap(apperr.MediaDownloadError, context.Canceled, "url: the download was cancelled"))
			}, statusFailure, apperr.MediaDownloadError},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t)
				var seen []auditRow
				e.act.setRun(func(ctx context.Context, p json.RawMessage) (Result, error) {
					seen = e.audit()
					return tc.run(ctx, p)
				})
				resp, err := e.do(e.g, json.RawMessage(`{"text":"t"}`), "key-1")
				if len(seen) != 1 || seen[0].status != statusPending || seen[0].completed {
					t.Fatalf("inside Execute the audit rows were %+v, want one pending row", seen)
				}
				_, wantHash := canon(t, `{"text":"t"}`)
				if seen[0].hash != wantHash || seen[0].tool != fakeTool || seen[0].key != "key-1" || seen[0].owner != e.g.instance {
					t.Fatalf("pending row %+v", seen[0])
				}
				rows := e.audit()
				if len(rows) != 1 {
					t.Fatalf("audit rows %d, want 1", len(rows))
				}
				r := rows[0]
				if r.status != tc.wantStatus || !r.completed || r.errCode != string(tc.wantCode) {
					t.Fatalf("completed row status %q completed %v code %q, want %q %q", r.status, r.completed, r.errCode, tc.wantStatus, tc.wantCode)
				}
				if r.corr != seen[0].corr {
					t.Fatal("completion wrote another row")
				}
				if tc.wantCode != "" {
					ae := wantCode(t, err, tc.wantCode)
					if ae.Extra["correlation_id"] != r.corr || resp.CorrelationID != r.corr {
						t.Fatalf("error does not carry the correlation id: %v / %q", ae.Extra, resp.CorrelationID)
					}
				} else if err != nil {
					t.Fatalf("Do: %v", err)
				}
			})
		}
	})
}

func TestCanonicalHashingIsOrderInsensitive(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		tests := []struct{ a, b string }{
			{`{"a":1,"b":2}`, `{"b":2,"a":1}`},
			{`{"a":{"y":[1,{"q":true,"p":null}],"x":"s"}}`, ` { "a" : { "x" : "s", "y" : [ 1, { "p" : null, "q" : true } ] } } `},
			{`{"t":"<&>é😀"}`, `{"t":"\u003c\u0026\u003e\u00e9\ud83d\ude00"}`},
		}
		for _, tc := range tests {
			ca, err := Canonical([]byte(tc.a))
			if err != nil {
				t.Fatal(err)
			}
			cb, err := Canonical([]byte(tc.b))
			if err != nil {
				t.Fatal(err)
			}
			if string(ca) != string(cb) || Fingerprint("x_post_tweet", ca) != Fingerprint("x_post_tweet", cb) {
				t.Fatalf("%s and %s canonicalise to %s and %s", tc.a, tc.b, ca, cb)
			}
		}
		// Numbers keep their literal form, so 1.50 and 1.5 are different calls.
		c1, _ := Canonical([]byte(`{"n":1.50}`))
		c2, _ := Canonical([]byte(`{"n":1.5}`))
		if string(c1) == string(c2) {
			t.Fatal("number literals were normalised")
		}
		if Fingerprint("a", []byte("b")) == Fingerprint("ab", nil) {
			t.Fatal("tool name and params are not separated in the fingerprint")
		}
		for _, bad := range []string{``, `{`, `{"a":1} {"b":2}`, `{"a":1}x`} {
			if _, err := Canonical([]byte(bad)); err == nil {
				t.Fatalf("Canonical(%q) accepted invalid JSON", bad)
			}
		}

		// Through the gateway: the reordered call is a duplicate, not a second run.
		e := newEnv(t)
		first := e.mustDo(json.RawMessage(`{"a":1,"b":2}`), "")
		second := e.mustDo(json.RawMessage(`{"b":2,"a":1}`), "")
		if second.Kind != Duplicate || second.CorrelationID != first.CorrelationID || e.act.count() != 1 {
			t.Fatalf("reordered call: kind %q corr %q (first %q), executed %d", second.Kind, second.CorrelationID, first.CorrelationID, e.act.count())
		}
	})
}

func TestDuplicateAnswerWinsOverPolicy(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		first := e.mustDo(json.RawMessage(`{"text":"once"}`), "")
		e.clock.Advance(time.Minute)
		for _, o := range []policy.Outcome{policy.Deny, policy.RequireApproval, policy.DryRun} {
			e.pol.set(decision(o, "user:later"))
			r, err := e.do(e.g, json.RawMessage(`{"text":"once"}`), "")
			if err != nil || r.Kind != Duplicate || r.CorrelationID != first.CorrelationID {
				t.Fatalf("%s after success: kind %q err %v", o, r.Kind, err)
			}
		}
		if e.countRows("approval_queue") != 0 || e.act.count() != 1 {
			t.Fatal("a duplicate was queued or executed")
		}
	})
}

func TestIdempotencyKeyReuseWithOtherParamsConflicts(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		first := e.mustDo(json.RawMessage(`{"text":"one"}`), "agent-key-7")
		for _, wait := range []time.Duration{0, time.Minute, 2 * time.Hour} {
			e.clock.Advance(wait)
			_, err := e.do(e.g, json.RawMessage(`{"text":"two"}`), "agent-key-7")
			ae := wantCode(t, err, apperr.IdempotencyConflict)
			if !strings.Contains(ae.Message, first.CorrelationID) || ae.Retryable() {
				t.Fatalf("after %v: conflict message %q retryable %v", wait, ae.Message, ae.Retryable())
			}
		}
		if e.act.count() != 1 {
			t.Fatalf("executed %d times, want 1", e.act.count())
		}
		if _, err := e.do(e.g, json.RawMessage(`{"text":"two"}`), strings.Repeat("k", 201)); err == nil {
			t.Fatal("a 201-character idempotency_key was accepted")
		} else {
			wantCode(t, err, apperr.InvalidInput)
		}
	})
}

func TestIdempotencyKeySameParamsReturnsCachedResult(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
			return Result{Data: map[string]any{"id": "1234", "text": "one"}}, nil
		})
		first := e.mustDo(json.RawMessage(`{"text":"one"}`), "agent-key-1")
		// In memory, from the database's 5-minute window, and by key alone
		// after that window.
		for _, wait := range []time.Duration{time.Second, time.Minute, time.Hour} {
			e.clock.Advance(wait)
			r := e.mustDo(json.RawMessage(`{"text":"one"}`), "agent-key-1")
			d := dataMap(t, r.Answer())
			if r.Kind != Duplicate || d["duplicate"] != true || d["original_correlation_id"] != first.CorrelationID || r.CorrelationID != first.CorrelationID {
				t.Fatalf("after %v: kind %q data %v", wait, r.Kind, d)
			}
			cached, _ := json.Marshal(d["cached_result"])
			if string(cached) != `{"id":"1234","text":"one"}` {
				t.Fatalf("after %v: cached_result %s", wait, cached)
			}
			if msg, _ := d["message"].(string); !strings.Contains(msg, first.CorrelationID) {
				t.Fatalf("after %v: message %q", wait, msg)
			}
		}
		if e.act.count() != 1 {
			t.Fatalf("executed %d times, want 1", e.act.count())
		}
		// The database answers are recorded as duplicate rows pointing at the original.
		var dups int
		for _, r := range e.audit() {
			if r.status == statusDuplicate {
				dups++
				if r.dupOf != first.CorrelationID || r.key != "agent-key-1" {
					t.Fatalf("duplicate row %+v", r)
				}
			}
		}
		if dups != 2 {
			t.Fatalf("%d duplicate rows, want 2 (the in-memory answer writes none)", dups)
		}
	})
}

func TestDatabaseDuplicateWindow(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		first := e.mustDo(json.RawMessage(`{"text":"w"}`), "")
		e.clock.Advance(4*time.Minute + 59*time.Second)
		dup := e.mustDo(json.RawMessage(`{"text":"w"}`), "")
		if dup.Kind != Duplicate || dup.CorrelationID != first.CorrelationID || e.act.count() != 1 {
			t.Fatalf("within the window: kind %q, executed %d", dup.Kind, e.act.count())
		}
		e.clock.Advance(2 * time.Second)
		again := e.mustDo(json.RawMessage(`{"text":"w"}`), "")
		if again.Kind != Executed || again.CorrelationID == first.CorrelationID || e.act.count() != 2 {
			t.Fatalf("after the window: kind %q, executed %d", again.Kind, e.act.count())
		}
	})
}

// insertRow writes an audit row directly, as another (possibly dead)
// process would have.
func (e *env) insertRow(owner, status, params string, created time.Time) string {
	e.t.Helper()
	c, _ := canon(e.t, params)
	id, err := identityOf(e.act.action(), json.RawMessage(c))
	if err != nil {
		e.t.Fatal(err)
	}
	corr := uuid.NewString()
	_, err = e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, params_hash, intent_key, params_summary, status, owner, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, corr, fakeTool, id.hash, id.intent, params, status, owner, store.FormatTime(created))
	if err != nil {
		e.t.Fatalf("insert audit row: %v", err)
	}
	return corr
}

func TestCrashedOwnerPendingRowBecomesInterruptedAndBlocksRepeat(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, staleLockFile := range []bool{false, true} {
			t.Run(fmt.Sprintf("stale_lock_file=%v", staleLockFile), func(t *testing.T) {
				e := newEnv(t)
				dead := uuid.NewString()
				lock := filepath.Join(e.opts.LockDir, "gateway-"+dead+".lock")
				if staleLockFile {
					// The file of a dead process: present, but nobody holds its lock.
					if err := os.WriteFile(lock, nil, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				corr := e.insertRow(dead, statusPending, `{"text":"crash"}`, e.clock.Now())
				e.open() // a restart
				rows := e.audit()
				if len(rows) != 1 || rows[0].status != statusInterrupted || !rows[0].completed || rows[0].errCode != string(apperr.XOutcomeUnknown) {
					t.Fatalf("after restart: %+v", rows)
				}
				if _, err := os.Stat(lock); !os.IsNotExist(err) {
					t.Fatalf("the dead owner's lock file was left behind: %v", err)
				}
				_, err := e.do(e.g, json.RawMessage(`{"text":"crash"}`), "")
				ae := wantCode(t, err, apperr.OutcomeUnverified)
				if ae.Extra["original_correlation_id"] != corr || ae.Retryable() {
					t.Fatalf("repeat: extra %v", ae.Extra)
				}
				if e.act.count() != 0 {
					t.Fatal("the interrupted call was executed again")
				}
			})
		}
	})
}

func TestLiveOwnerPendingRowIsNotInterrupted(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		entered, release := make(chan struct{}), make(chan struct{})
		e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
			close(entered)
			<-release
			return Result{Data: "done"}, nil
		})
		done := make(chan error, 1)
		var first Response
		go func() {
			var err error
			first, err = e.g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"slow"}`)})
			done <- err
		}()
		<-entered
		second := e.open() // another process starts while the first is mid-call
		if got := e.statuses(); len(got) != 1 || got[0] != statusPending {
			t.Fatalf("a live owner's row was touched: %v", got)
		}
		_, err := e.do(second, json.RawMessage(`{"text":"slow"}`), "")
		wantCode(t, err, apperr.MutationInFlight)
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("first call: %v", err)
		}
		if got := e.statuses(); got[0] != statusSuccess {
			t.Fatalf("first call completed as %v", got)
		}
		r, err := e.do(second, json.RawMessage(`{"text":"slow"}`), "")
		if err != nil || r.Kind != Duplicate || r.CorrelationID != first.CorrelationID {
			t.Fatalf("after completion the other process got kind %q err %v", r.Kind, err)
		}
		if e.act.count() != 1 {
			t.Fatalf("executed %d times", e.act.count())
		}
	})
}

func TestUnknownOutcomeBlocksRepeats(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		for _, viaResult := range []bool{false, true} {
			t.Run(fmt.Sprintf("via_result=%v", viaResult), func(t *testing.T) {
				e := newEnv(t)
				e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
					if viaResult {
						return Result{Data: map[string]any{"status": 503}, Unknown: true}, nil
					}
					return Result{}, apperr.New(apperr.XOutcomeUnknown, "timed out")
				})
				r, err := e.do(e.g, json.RawMessage(`{"text":"u"}`), "")
				if viaResult && (err != nil || !r.Unknown) {
					t.Fatalf("first: unknown %v err %v", r.Unknown, err)
				}
				if !viaResult {
					wantCode(t, err, apperr.XOutcomeUnknown)
				}
				for _, wait := range []time.Duration{0, time.Minute, 3 * time.Minute} {
					e.clock.Advance(wait)
					_, err := e.do(e.g, json.RawMessage(`{"text":"u"}`), "")
					wantCode(t, err, apperr.OutcomeUnverified)
				}
				if e.act.count() != 1 {
					t.Fatalf("executed %d times, want 1", e.act.count())
				}
			})
		}
	})
}

func TestThreadPartialFailureBlocksIdenticalRepeat(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
			fail := map[string]any{"posted_tweet_ids": []string{"1", "2"}, "failed_at_index": 2}
			err := apperr.New(apperr.ThreadPartial, "thread broke at tweet 2")
			err.Data = fail
			return Result{Data: fail}, err
		})
		_, err := e.do(e.g, json.RawMessage(`{"tweets":["a","b","c"]}`), "")
		wantCode(t, err, apperr.ThreadPartial)
		for _, wait := range []time.Duration{0, time.Minute} {
			e.clock.Advance(wait)
			_, err = e.do(e.g, json.RawMessage(`{"tweets":["a","b","c"]}`), "")
			wantCode(t, err, apperr.OutcomeUnverified)
		}
		if e.act.count() != 1 {
			t.Fatalf("executed %d times", e.act.count())
		}
		rows := e.audit()
		if rows[0].status != statusFailure || rows[0].errCode != string(apperr.ThreadPartial) || !strings.Contains(rows[0].result, `"posted_tweet_ids":["1","2"]`) {
			t.Fatalf("thread row %+v", rows[0])
		}
	})
}

func TestCleanFailureMayBeRetried(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
			return Result{}, apperr.New(apperr.XNetworkError, "connection refused")
		})
		for i := 0; i < 2; i++ {
			_, err := e.do(e.g, json.RawMessage(`{"text":"f"}`), "")
			wantCode(t, err, apperr.XNetworkError)
		}
		if e.act.count() != 2 {
			t.Fatalf("a clean failure blocked its retry: executed %d", e.act.count())
		}
		if e.pol.consumedCount() != 0 {
			t.Fatal("a failed call consumed policy counters")
		}
	})
}

func TestRetentionDeletesOldRowsAtStart(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		now := e.clock.Now()
		old := e.insertRow("gone", statusSuccess, `{"text":"old"}`, now.Add(-91*24*time.Hour))
		keep := e.insertRow("gone", statusSuccess, `{"text":"new"}`, now.Add(-89*24*time.Hour))
		if _, err := e.db.ExecContext(e.ctx, `INSERT INTO action_log (account_id, action_type, status, message, metadata, created_at)
		VALUES ('default','mcp_policy','allowed','x','{}',?), ('default','mcp_policy','allowed','y','{}',?)`,
			store.FormatTime(now.Add(-100*24*time.Hour)), store.FormatTime(now)); err != nil {
			t.Fatal(err)
		}
		e.open()
		var corrs []string
		for _, r := range e.audit() {
			corrs = append(corrs, r.corr)
		}
		if len(corrs) != 1 || corrs[0] != keep {
			t.Fatalf("after retention rows %v; want only %s (deleted %s)", corrs, keep, old)
		}
		if n := e.countRows("action_log"); n != 1 {
			t.Fatalf("action_log rows %d, want 1", n)
		}

		// A configured retention is honoured.
		e.opts.AuditRetention = 24 * time.Hour
		e.open()
		if n := len(e.audit()); n != 0 {
			t.Fatalf("1-day retention kept %d rows", n)
		}
	})
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestCorrelationIDsAreRFC4122v4(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		for i := 0; i < 50; i++ {
			e.mustDo(map[string]any{"text": fmt.Sprint("c", i)}, "")
		}
		e.clock.Advance(time.Minute)
		e.mustDo(map[string]any{"text": "c0"}, "") // a duplicate row
		seen := map[string]bool{}
		for _, r := range e.audit() {
			if !uuidV4.MatchString(r.corr) {
				t.Fatalf("correlation id %q is not an RFC 4122 v4 UUID", r.corr)
			}
			u, err := uuid.Parse(r.corr)
			if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 {
				t.Fatalf("correlation id %q: version %v variant %v err %v", r.corr, u.Version(), u.Variant(), err)
			}
			if seen[r.corr] {
				t.Fatalf("correlation id %q repeated", r.corr)
			}
			seen[r.corr] = true
		}
		if len(seen) != 51 {
			t.Fatalf("%d rows, want 51", len(seen))
		}
	})
}

func TestParamsSummaryTruncationIsRuneSafe(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		// No Validate limit here: a long body of multi-byte runes whose
		// 1000-byte cut falls inside a rune.
		e.g.Register(&Action{Tool: "fake_long", Category: policy.CatWrite, Execute: e.act.execute})
		for _, text := range []string{
			strings.Repeat("漢字😀", 300),
			"a" + strings.Repeat("😀", 600),
			"ab" + strings.Repeat("👩‍👩‍👧‍👦", 100),
		} {
			if _, err := e.g.Do(e.ctx, Call{Tool: "fake_long", Params: map[string]any{"text": text}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range e.audit() {
			if !utf8.ValidString(r.summary) || len(r.summary) > maxSummaryBytes || len(r.summary) < maxSummaryBytes-8 {
				t.Fatalf("params_summary of %d bytes, valid UTF-8 %v", len(r.summary), utf8.ValidString(r.summary))
			}
			if !strings.HasPrefix(r.summary, `{"text":"`) {
				t.Fatalf("params_summary does not start with the params: %q", r.summary[:20])
			}
		}
	})
}

func TestConcurrentIdenticalCallsExecuteOnce(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		other := e.open() // a second process on the same database
		const n = 200
		// Events say, per process, that a caller started waiting for the
		// in-flight call or returned. While the executor is held, the process
		// running it has its other callers waiting and none returned, and every
		// caller of the other process has its answer (mutation in flight). Only
		// then is the executor released, so every call really overlapped it.
		type event struct {
			proc   int
			waited bool
		}
		events := make(chan event, 4*n)
		e.g.memo.onWait = func() { events <- event{0, true} }
		other.memo.onWait = func() { events <- event{1, true} }
		entered, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
			once.Do(func() { close(entered) })
			<-release
			return Result{Data: "ok"}, nil
		})
		var wg sync.WaitGroup
		type out struct {
			r   Response
			err error
		}
		results := make(chan out, n)
		for i := 0; i < n; i++ {
			g, proc := e.g, i%2
			if proc == 1 {
				g = other
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := g.Do(e.ctx, Call{Tool: fakeTool, Params: json.RawMessage(`{"text":"race"}`)})
				results <- out{r, err}
				events <- event{proc, false}
			}()
		}
		<-entered
		var waiting, returned [2]int
		piledUp := func() bool {
			for p := range 2 {
				if returned[p] == 0 && waiting[p] == n/2-1 && returned[1-p] == n/2 {
					return true
				}
			}
			return false
		}
		for !piledUp() {
			ev := <-events
			if ev.waited {
				waiting[ev.proc]++
			} else {
				returned[ev.proc]++
			}
		}
		close(release)
		wg.Wait()
		close(results)
		executed, dups, inFlight := 0, 0, 0
		var orig string
		for o := range results {
			switch {
			case o.err == nil && o.r.Kind == Executed:
				executed++
				orig = o.r.CorrelationID
			case o.err == nil && o.r.Kind == Duplicate:
				dups++
			case apperr.CodeOf(o.err) == apperr.MutationInFlight:
				inFlight++
			default:
				t.Fatalf("unexpected answer %+v / %v", o.r, o.err)
			}
		}
		if executed != 1 || e.act.count() != 1 || executed+dups+inFlight != n {
			t.Fatalf("executed %d (action ran %d), duplicates %d, in flight %d", executed, e.act.count(), dups, inFlight)
		}
		r := e.mustDo(json.RawMessage(`{"text":"race"}`), "")
		if r.Kind != Duplicate || r.CorrelationID != orig {
			t.Fatalf("after the storm: %q %q", r.Kind, r.CorrelationID)
		}
	})
}

func TestUnknownToolAndInvalidParams(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		_, err := e.g.Do(e.ctx, Call{Tool: "nope", Params: json.RawMessage(`{}`)})
		wantCode(t, err, apperr.InternalError)
		_, err = e.do(e.g, json.RawMessage(`{"text":`), "")
		wantCode(t, err, apperr.InvalidInput)
		_, err = e.do(e.g, json.RawMessage(`{"text":"this text is far too long"}`), "")
		wantCode(t, err, apperr.TweetTooLong)
		if e.act.count() != 0 || len(e.audit()) != 0 || len(e.pol.requests()) != 0 {
			t.Fatal("an invalid call reached policy, audit or execution")
		}
	})
}

// TestLiveOwnerOnAnotherHostIsNotInterrupted is PostgreSQL's: hosts
// sharing the server share no lock files, so a starting host must learn
// from the server whether a pending row's owner lives. A live owner's row
// stays pending; once its session is gone, the next start recovers it.
func TestLiveOwnerOnAnotherHostIsNotInterrupted(t *testing.T) {
	t.Run(storetest.Postgres, func(t *testing.T) {
		pgtest.ServerURL(t)
		e := newEnv(t)
		corr := e.insertRow(e.g.instance, statusPending, `{"text":"elsewhere"}`, e.clock.Now())
		// The other host has its own home, so its own lock directory.
		other := e.opts
		other.LockDir = filepath.Join(t.TempDir(), "locks")
		g2, err := New(e.ctx, other)
		if err != nil {
			t.Fatal(err)
		}
		defer g2.Close()
		if rows := e.audit(); len(rows) != 1 || rows[0].corr != corr || rows[0].status != statusPending {
			t.Fatalf("a live owner's row on another host was touched: %+v", rows)
		}
		// The first host dies: its session, and the lock with it, ends.
		e.g.release()
		e.g.release = nil
		g3, err := New(e.ctx, other)
		if err != nil {
			t.Fatal(err)
		}
		defer g3.Close()
		if rows := e.audit(); len(rows) != 1 || rows[0].status != statusInterrupted {
			t.Fatalf("a dead owner's row was not recovered: %+v", rows)
		}
	})
}
