package gateway

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// TestPostedElsewhere: an account sees the posts, replies and thread parts
// the home's other accounts made within the window, or may have made
// (pending, of unknown outcome), with their text; not its own, not a call X
// refused, not one older than the window. The platform rules refuse a
// post that repeats one of them with cross_account_duplicate, recorded as
// a failed audit row before X, and an item approved after the other
// account posted the text too. On each backend, the query reads the window
// through the index on created_at.
func TestPostedElsewhere(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		var fail bool
		var ran atomic.Int64
		run := func(context.Context, json.RawMessage) (Result, error) {
			ran.Add(1)
			if fail {
				return Result{}, apperr.New(apperr.XAPIError, "refused")
			}
			return Result{Data: map[string]any{"id": "9"}}, nil
		}
		open := func(account string) *Gateway {
			e.opts.AccountID = account
			g := e.open()
			for _, tool := range []string{"x_post_tweet", "x_reply_to_tweet", "x_post_thread", "x_retweet"} {
				g.Register(targetAction(tool, "in_reply_to_id", run))
			}
			return g
		}
		other, mine := open("brand_b"), open("default")
		post := func(g *Gateway, tool string, params map[string]any) error {
			t.Helper()
			_, err := g.Do(e.ctx, Call{Tool: tool, Params: params})
			return err
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(post(other, "x_post_tweet", map[string]any{"text": "too old"}))
		e.clock.Advance(30 * time.Hour)
		since := e.clock.Now()
		must(post(other, "x_post_tweet", map[string]any{"text": "a post"}))
		must(post(other, "x_reply_to_tweet", map[string]any{"text": "a reply", "in_reply_to_id": "5"}))
		must(post(other, "x_post_thread", map[string]any{"tweets": []string{"part one", "part two"}}))
		must(post(other, "x_retweet", map[string]any{"tweet_id": "5"}))
		must(post(mine, "x_post_tweet", map[string]any{"text": "my own"}))
		fail = true
		if err := post(other, "x_post_tweet", map[string]any{"text": "refused by X"}); err == nil {
			t.Fatal("the refused call succeeded")
		}
		fail = false
		if _, err := e.db.ExecContext(e.ctx, `UPDATE mutation_audit SET status = 'unknown' WHERE params_summary LIKE '%a reply%'`); err != nil {
			t.Fatal(err)
		}

		got, err := mine.PostedElsewhere(e.ctx, since)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, p := range got {
			if p.Account != "brand_b" || p.CorrelationID == "" || p.At == "" {
				t.Errorf("posted %+v", p)
			}
			if p.Text == "a reply" && p.Status != "unknown" {
				t.Errorf("the reply of unknown outcome is %q", p.Status)
			}
			texts = append(texts, p.Text)
		}
		slices.Sort(texts)
		if want := []string{"a post", "a reply", "part one", "part two"}; !slices.Equal(texts, want) {
			t.Fatalf("posted elsewhere %q, want %q", texts, want)
		}

		// The rules refuse a repeat before anything runs.
		e.opts.Platform = xrules.Checker{Automation: xrules.Automation{
			CrossAccountWindow: func() time.Duration { return time.Hour },
			PostedElsewhere: func(ctx context.Context, w time.Duration) ([]xrules.Posted, error) {
				return mine.PostedElsewhere(ctx, e.clock.Now().Add(-w))
			},
		}}
		judged := open("default")
		runs := ran.Load()
		_, err = judged.Do(e.ctx, Call{Tool: "x_post_tweet", Params: map[string]any{"text": "A POST!"}})
		wantCode(t, err, apperr.CrossAccountDup)
		if ran.Load() != runs {
			t.Fatal("the refused post ran")
		}
		var status, code string
		if err := e.db.QueryRowContext(e.ctx, `SELECT status, COALESCE(error_code,'') FROM mutation_audit WHERE account_id = 'default' ORDER BY id DESC LIMIT 1`).
			Scan(&status, &code); err != nil || status != statusFailure || code != string(apperr.CrossAccountDup) {
			t.Fatalf("the refusal's row: %s %s (%v)", status, code, err)
		}

		// An item queued before the other account posted its text is
		// judged again when a person approves it.
		e.pol.set(approvalThenAllow)
		queued, err := judged.Do(e.ctx, Call{Tool: "x_post_tweet", Params: map[string]any{"text": "Queued first, posted elsewhere"}})
		if err != nil || queued.Kind != Routed {
			t.Fatalf("queue: %q %v", queued.Kind, err)
		}
		e.pol.set(nil)
		must(post(other, "x_post_tweet", map[string]any{"text": "queued first; posted elsewhere!"}))
		runs = ran.Load()
		_, _, err = judged.Approve(e.ctx, queued.ApprovalID, "alice", "")
		wantCode(t, err, apperr.CrossAccountDup)
		if ran.Load() != runs {
			t.Fatal("the approved repeat ran")
		}

		plan := explain(t, e, mine.qPosted.first, ts(since), "default", int64(0))
		if !strings.Contains(plan, "idx_mutation_audit_created") {
			t.Errorf("the plan does not read idx_mutation_audit_created:\n%s", plan)
		}
		if bad := badStep(plan); bad != "" {
			t.Errorf("%q in the plan:\n%s", bad, plan)
		}
	})
}

// TestPostedElsewhereSeesRowsChangeAfterTheyWereRead: what a process
// keeps of the rows it read is only what never changes; a later read sees
// a row's new status, leaves out a row that became a failure or was
// resolved as not having happened, and finds a row that committed after a
// newer one it read.
func TestPostedElsewhereSeesRowsChangeAfterTheyWereRead(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		run := func(context.Context, json.RawMessage) (Result, error) {
			return Result{Data: map[string]any{"id": "9"}}, nil
		}
		open := func(account string) *Gateway {
			e.opts.AccountID = account
			g := e.open()
			g.Register(targetAction("x_post_tweet", "in_reply_to_id", run))
			return g
		}
		other, mine := open("brand_b"), open("default")
		since := e.clock.Now()
		for _, text := range []string{"stays", "turns unknown", "fails", "did not happen"} {
			if _, err := other.Do(e.ctx, Call{Tool: "x_post_tweet", Params: map[string]any{"text": text}}); err != nil {
				t.Fatal(err)
			}
		}
		read := func() map[string]string {
			t.Helper()
			got, err := mine.PostedElsewhere(e.ctx, since)
			if err != nil {
				t.Fatal(err)
			}
			status := map[string]string{}
			for _, p := range got {
				if p.Account != "brand_b" || p.CorrelationID == "" || p.At == "" || p.Normal == nil {
					t.Errorf("posted %+v", p)
				}
				status[p.Text] = p.Status
			}
			return status
		}
		want := map[string]string{"stays": statusSuccess, "turns unknown": statusSuccess, "fails": statusSuccess, "did not happen": statusSuccess}
		if got := read(); !maps.Equal(got, want) {
			t.Fatalf("first read %v, want %v", got, want)
		}
		for _, update := range []string{
			`UPDATE mutation_audit SET status = 'unknown' WHERE params_summary LIKE '%turns unknown%'`,
			`UPDATE mutation_audit SET status = 'failure' WHERE params_summary LIKE '%fails%'`,
			`UPDATE mutation_audit SET status = 'unknown', resolution = 'did_not_happen' WHERE params_summary LIKE '%did not happen%'`,
		} {
			if _, err := e.db.ExecContext(e.ctx, update); err != nil {
				t.Fatal(err)
			}
		}
		want = map[string]string{"stays": statusSuccess, "turns unknown": "unknown"}
		if got := read(); !maps.Equal(got, want) {
			t.Fatalf("read after the rows changed %v, want %v", got, want)
		}
		// A row older than the newest one read (on PostgreSQL, ids may
		// commit out of order) is read all the same.
		if _, err := other.Do(e.ctx, Call{Tool: "x_post_tweet", Params: map[string]any{"text": "committed late"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.ExecContext(e.ctx, `UPDATE mutation_audit SET id = -5 WHERE params_summary LIKE '%committed late%'`); err != nil {
			t.Fatal(err)
		}
		want["committed late"] = statusSuccess
		if got := read(); !maps.Equal(got, want) {
			t.Fatalf("read after a row committed late %v, want %v", got, want)
		}
	})
}

// TestPostedTexts: the text of a typed post, a thread and a universal
// request's canonical body; a cut summary has none.
func TestPostedTexts(t *testing.T) {
	for material, want := range map[string][]string{
		`{"text":"hello"}`:                         {"hello"},
		`{"tweets":["one","two"]}`:                 {"one", "two"},
		`{"method":"POST","body":{"text":"raw"}}`:  {"raw"},
		`{"method":"DELETE","path":"/2/tweets/1"}`: nil,
		`{"text":"cut off…`:                        nil,
	} {
		if got := postedTexts(material); !slices.Equal(got, want) {
			t.Errorf("postedTexts(%s) = %q, want %q", material, got, want)
		}
	}
}
