package toolstest

import (
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// posts keeps the writes among requests: what would create or change a
// post on X.
func posts(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}

// TestRawPostsMeetTheTypedLengthCheck: a long post through x_post, in any
// spelling of a post, reply or v1.1 status, is refused on an account
// without a subscription with tweet_too_long, as x_post_tweet is, before
// any write reaches X; the same post from the Premium account goes out.
func TestRawPostsMeetTheTypedLengthCheck(t *testing.T) {
	var xl xLog
	e := newEnv(t, envOptions{permissive: true, onX: xl.hook})
	n := xl.len()
	e.call("x_post_tweet", map[string]any{"text": longText}).fails(t, apperr.TweetTooLong).mentions(t, "exceeds 280", "account is None")
	reply := e.demoTweet(nil).ID
	for _, c := range []struct {
		name, path, body, field string
		query                   []map[string]string
	}{
		{"post", "/2/tweets", `{"text":"` + longText + `"}`, "body.text", nil},
		{"trailing slash", "/2/tweets/", `{"text":"` + longText + `"}`, "body.text", nil},
		{"letter case", "/2/Tweets", `{"text":"` + longText + `"}`, "body.text", nil},
		{"reply", "/2/tweets", `{"text":"` + longText + `","reply":{"in_reply_to_tweet_id":"` + reply + `"}}`, "body.text", nil},
		{"quote", "/2/tweets", `{"text":"` + longText + `","quote_tweet_id":"` + reply + `"}`, "body.text", nil},
		{"v1.1 status", "/1.1/statuses/update.json", "", "query.status", []map[string]string{{"key": "status", "value": longText}}},
	} {
		args := map[string]any{"path": c.path}
		if c.body != "" {
			args["body"] = c.body
		}
		if c.query != nil {
			args["query"] = c.query
		}
		e.call("x_post", args).fails(t, apperr.TweetTooLong).mentions(t, c.field, "1000", "exceeds 280", "account is None", "x_post_thread")
	}
	if got := posts(xl.since(n)); len(got) != 0 {
		t.Errorf("refused long posts reached X: %v", got)
	}

	// From the sandbox's Premium account the same raw post goes out.
	e = newEnv(t, envOptions{permissive: true})
	before := e.counters()
	var sent struct {
		Status int `json:"status"`
	}
	executed(t, e.call("x_post", map[string]any{"path": "/2/tweets", "body": `{"text":"` + longText + `"}`, "account": "brand_b"}), &sent)
	if sent.Status != 201 {
		t.Fatalf("the Premium account's long raw post answered %d", sent.Status)
	}
	e.requireDelta(before, map[string]int64{xsim.CountTweetsCreated: 1})
}

// TestRawEditsMeetTheTypedEditChecks: under the default policy, a raw edit
// of someone else's post is refused with edit_window_closed naming
// author_id, as x_edit_tweet is, before anything is queued or written; a
// raw edit of one's own post waits for approval until its window closes,
// not a day; an edit with no post to edit, or too long a text, is refused
// as the typed tool refuses it.
func TestRawEditsMeetTheTypedEditChecks(t *testing.T) {
	e, clk, writes := editEnv(t, envOptions{})
	edit := func(id, text string) map[string]any {
		return map[string]any{"path": "/2/tweets", "body": `{"text":"` + text + `","edit_options":{"previous_post_id":"` + id + `"}}`}
	}
	other := e.demoTweet(nil)
	pending := e.pendingCount()
	e.call("x_edit_tweet", map[string]any{"tweet_id": other.ID, "text": "Not mine to edit."}).fails(t, apperr.EditWindowClosed).mentions(t, "author_id")
	e.call("x_post", edit(other.ID, "Not mine to edit.")).fails(t, apperr.EditWindowClosed).mentions(t, other.ID, "author_id")
	e.call("x_post", map[string]any{"path": "/2/tweets/", "body": `{"text":"Not mine.","edit_options":{"previous_post_id":"` + other.ID + `"}}`}).
		fails(t, apperr.EditWindowClosed).mentions(t, "author_id")
	e.call("x_post", map[string]any{"path": "/2/tweets", "body": `{"text":"No post named.","edit_options":{}}`}).
		fails(t, apperr.InvalidInput).mentions(t, "edit_options.previous_post_id")
	e.call("x_post", map[string]any{"path": "/2/tweets", "body": `{"text":"A number.","edit_options":{"previous_post_id":` + other.ID + `}}`}).
		fails(t, apperr.InvalidInput).mentions(t, "edit_options.previous_post_id")
	if got := e.pendingCount(); got != pending {
		t.Errorf("refused raw edits left %d items waiting, want %d", got, pending)
	}

	id, err := e.Sim.PostAs(e.Sim.DemoUserID(), "A post edited raw.", "")
	if err != nil {
		t.Fatal(err)
	}
	posted := clk.Now()
	clk.Advance(5 * time.Minute)
	e.call("x_post", edit(id, strings.Repeat("x", 281))).fails(t, apperr.TweetTooLong).mentions(t, "body.text", "exceeds 280")
	var q routed
	e.call("x_post", edit(id, "A post edited raw, and approved.")).ok(t, &q)
	it, err := e.App.Gateway.Item(e.ctx, q.ApprovalID)
	if err != nil || !q.Routed || it.EquivalentTool != "x_edit_tweet" {
		t.Fatalf("a raw edit of our own post answered %+v, item %+v (%v); want it waiting as x_edit_tweet", q, it, err)
	}
	if want := posted.Add(xsim.EditWindow).UTC().Format("2006-01-02T15:04:05.000Z"); it.ExpiresAt != want {
		t.Errorf("the raw edit's item expires at %s, want the end of the edit window %s", it.ExpiresAt, want)
	}
	if writes.Load() != 0 || e.counters()[xsim.CountTweetsEdited] != 0 {
		t.Errorf("%d writes reached the emulator before any approval", writes.Load())
	}
}
