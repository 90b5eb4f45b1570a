package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestAuditRowStoresWhatItShows: every row the gateway writes (a call, a
// duplicate) carries what a list of rows shows, described from the
// parameters' summary, so a secret the summary masks is not in it either;
// brief and full rows read it back, on both backends.
func TestAuditRowStoresWhatItShows(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		run := func(context.Context, json.RawMessage) (Result, error) {
			return Result{Data: map[string]any{"id": "9"}}, nil
		}
		e.g.Register(targetAction("x_like_tweet", "tweet_id", run))
		e.g.Register(&Action{Tool: "x_follow_user", Category: policy.CatWrite, Execute: run})
		e.g.Register(&Action{Tool: "x_post_tweet", Category: policy.CatWrite, Execute: run,
			// The summary masks what the row may not keep.
			Summary: func(params json.RawMessage) any {
				var p struct{ Text string }
				_ = json.Unmarshal(params, &p)
				return map[string]string{"text": strings.ReplaceAll(p.Text, "s3cr3t", "***")}
			}})
		long := strings.Repeat("é", describe.ListedTextRunes+5)
		calls := []struct {
			name               string
			call               Call
			wantName, wantDesc string
			wantKind           string
			wantShown          describe.Recorded
		}{
			{"a like names its post", Call{Tool: "x_like_tweet", Params: map[string]any{"tweet_id": "123"}},
				"Like", "123", "post", describe.Recorded{Name: "Like", Target: describe.Target{Kind: describe.KindPost, ID: "123"}}},
			{"a follow names its account", Call{Tool: "x_follow_user", Params: map[string]any{"target_user_id": "42"}},
				"Follow", "42", "user", describe.Recorded{Name: "Follow", Target: describe.Target{Kind: describe.KindUser, ID: "42"}}},
			{"a post keeps its text as the summary has it", Call{Tool: "x_post_tweet", Params: map[string]any{"text": "token=s3cr3t hi"}},
				"Post", "token=*** hi", "", describe.Recorded{Name: "Post", Text: "token=*** hi"}},
			{"a long text is shortened", Call{Tool: "x_post_tweet", Params: map[string]any{"text": long}},
				"Post", long[:2*(describe.ListedTextRunes-1)] + "…", "", describe.Recorded{Name: "Post", Text: long[:2*(describe.ListedTextRunes-1)] + "…"}},
			{"a duplicate shows the action alone", Call{Tool: "x_like_tweet", Params: map[string]any{"tweet_id": "123"}},
				"Like", "", "", describe.Recorded{Name: "Like"}},
		}
		for _, c := range calls {
			// Past the memory's window: a repeat is found in the database
			// and written as a duplicate row.
			e.clock.Advance(time.Minute)
			resp, err := e.g.Do(e.ctx, c.call)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			corr := resp.CorrelationID
			if resp.Kind == Duplicate {
				if err := e.db.QueryRowContext(e.ctx, `SELECT correlation_id FROM mutation_audit WHERE status = 'duplicate'`).Scan(&corr); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
			}
			var name, desc, kind, summary string
			if err := e.db.QueryRowContext(e.ctx, `SELECT action_name, description, target_kind, params_summary FROM mutation_audit
				WHERE correlation_id = ?`, corr).Scan(&name, &desc, &kind, &summary); err != nil {
				t.Fatalf("%s: read the row: %v", c.name, err)
			}
			if name != c.wantName || desc != c.wantDesc || kind != c.wantKind {
				t.Errorf("%s: action_name %q, description %q, target_kind %q; want %q, %q, %q", c.name, name, desc, kind, c.wantName, c.wantDesc, c.wantKind)
			}
			if strings.Contains(desc, "s3cr3t") {
				t.Errorf("%s: description %q holds what the summary masks", c.name, desc)
			}
			for _, brief := range []bool{true, false} {
				rows, err := e.g.Recent(e.ctx, AuditFilter{Limit: 1, Brief: brief})
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != 1 || rows[0].CorrelationID != corr || rows[0].Shown != c.wantShown {
					t.Errorf("%s: brief %t rows %+v, want %s showing %+v", c.name, brief, rows, corr, c.wantShown)
				}
			}
		}
	})
}

// TestOldAuditRowIsDescribedWhenRead: a row written before what it shows
// was stored (an upgraded home) is described from its summary when read,
// the same as a row that stores it.
func TestOldAuditRowIsDescribedWhenRead(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		e.g.Register(targetAction("x_like_tweet", "tweet_id", nil))
		now := store.FormatTime(e.clock.Now())
		for _, r := range []struct{ corr, tool, equiv, summary string }{
			{"old-like", "x_like_tweet", "", `{"tweet_id":"77"}`},
			{"old-post", "x_post_tweet", "", `{"text":"from before"}`},
			{"old-raw", "x_delete", "x_delete_tweet", `{"method":"DELETE","host":"api.x.com","path":"/2/tweets/88"}`},
			{"old-cut", "x_like_tweet", "", `{"tweet_id":"7`},
		} {
			if _, err := e.db.ExecContext(e.ctx, `INSERT INTO mutation_audit (correlation_id, tool_name, equivalent_tool, params_hash, params_summary,
				status, account_id, caller, created_at) VALUES (?, ?, NULLIF(?, ''), ?, ?, 'success', 'default', 'mcp', ?)`,
				r.corr, r.tool, r.equiv, "h"+r.corr, r.summary, now); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]describe.Recorded{
			"old-like": {Name: "Like", Target: describe.Target{Kind: describe.KindPost, ID: "77"}},
			"old-post": {Name: "Post", Text: "from before"},
			"old-raw":  {Name: "Delete post", Target: describe.Target{Kind: describe.KindPost, ID: "88"}},
			"old-cut":  {Name: "Like"},
		}
		for _, brief := range []bool{true, false} {
			rows, err := e.g.Recent(e.ctx, AuditFilter{Limit: 100, Brief: brief})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(want) {
				t.Fatalf("brief %t: %d rows, want %d", brief, len(rows), len(want))
			}
			for _, r := range rows {
				if r.Shown != want[r.CorrelationID] {
					t.Errorf("brief %t: %s shows %+v, want %+v", brief, r.CorrelationID, r.Shown, want[r.CorrelationID])
				}
			}
		}
	})
}

// TestWhatARowShowsStaysOffItsExports: get_recent_mutations' rows (an
// AuditEntry's JSON) and the audit export keep their fields: what a list
// of rows shows is the page's, and the parameters' summary already says
// the same to a program.
func TestWhatARowShowsStaysOffItsExports(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		run := func(context.Context, json.RawMessage) (Result, error) {
			return Result{Data: map[string]any{"id": "9"}}, nil
		}
		e.g.Register(targetAction("x_like_tweet", "tweet_id", run))
		if _, err := e.g.Do(e.ctx, Call{Tool: "x_like_tweet", Params: map[string]any{"tweet_id": "123"}}); err != nil {
			t.Fatal(err)
		}
		rows, err := e.g.Recent(e.ctx, AuditFilter{Limit: 1})
		if err != nil || len(rows) != 1 || rows[0].Shown.Name != "Like" {
			t.Fatalf("rows %+v, %v", rows, err)
		}
		b, err := json.Marshal(rows[0])
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]any
		if err := json.Unmarshal(b, &keys); err != nil {
			t.Fatal(err)
		}
		for k := range keys {
			if strings.Contains(strings.ToLower(k), "shown") || k == "action_name" || k == "description" || k == "target_kind" {
				t.Errorf("a row's JSON has %q: %s", k, b)
			}
		}
		var cols []string
		if err := e.g.ExportAudit(e.ctx, time.Time{}, func(c []string, _ []any) error { cols = c; return nil }); err != nil {
			t.Fatal(err)
		}
		want := "id correlation_id created_at completed_at tool_name equivalent_tool status caller loop_name decided_by params_summary result_summary " +
			"error_code error_message elapsed_ms approval_id duplicate_of idempotency_key params_hash resolution"
		if got := strings.Join(cols, " "); got != want {
			t.Errorf("the export's columns are\n%s\nwant\n%s", got, want)
		}
	})
}
