package toolstest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestDraftsCarryPostOptions: compose_tweet stores a draft's options and
// refuses bad ones naming the field; update_draft keeps them when it edits
// the text, replaces them when given and removes them with an empty
// object; a draft queued for approval carries them to X.
func TestDraftsCarryPostOptions(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	poll := map[string]any{"poll": map[string]any{"options": []string{"Go", "Rust"}, "duration_minutes": 1440}, "reply_settings": "following"}

	var c workflow.ComposeResult
	e.call("compose_tweet", map[string]any{"content": "Which one first?", "options": poll}).ok(t, &c)
	if o := c.Options; o == nil || o.Poll == nil || !slices.Equal(o.Poll.Options, []string{"Go", "Rust"}) || o.ReplySettings != "following" {
		t.Fatalf("composed draft options %+v, want the poll and reply settings", o)
	}
	var list struct {
		Drafts []workflow.Draft `json:"drafts"`
	}
	e.call("list_drafts", map[string]any{}).ok(t, &list)
	if len(list.Drafts) != 1 || list.Drafts[0].Options == nil || list.Drafts[0].Options.Poll == nil {
		t.Fatalf("listed drafts %+v, want the stored options", list.Drafts)
	}

	t.Run("bad options name the field and store nothing", func(t *testing.T) {
		for _, tt := range []struct {
			opts  map[string]any
			field string
		}{
			{map[string]any{"poll": map[string]any{"options": []string{"a"}, "duration_minutes": 30}}, "options.poll.options"},
			{map[string]any{"poll": map[string]any{"options": []string{"a", "b"}, "duration_minutes": 4}}, "options.poll.duration_minutes"},
			{map[string]any{"reply_settings": "friends"}, "options.reply_settings"},
		} {
			e.call("compose_tweet", map[string]any{"content": "Refused", "options": tt.opts}).fails(t, apperr.InvalidInput).mentions(t, tt.field)
			e.call("update_draft", map[string]any{"draft_id": c.ID, "options": tt.opts}).fails(t, apperr.InvalidInput).mentions(t, tt.field)
		}
		var l struct {
			Count int `json:"count"`
		}
		e.call("list_drafts", map[string]any{}).ok(t, &l)
		if l.Count != 1 {
			t.Fatalf("%d drafts, want the one stored before", l.Count)
		}
	})

	t.Run("update_draft keeps, replaces and removes them", func(t *testing.T) {
		var d workflow.Draft
		e.call("update_draft", map[string]any{"draft_id": c.ID, "content": "Which one do you reach for first?"}).ok(t, &d)
		if d.Options == nil || d.Options.Poll == nil || d.Text != "Which one do you reach for first?" {
			t.Fatalf("text edit gave %+v, want the options kept", d)
		}
		d = workflow.Draft{}
		e.call("update_draft", map[string]any{"draft_id": c.ID, "options": map[string]any{"reply_settings": "mentionedUsers"}}).ok(t, &d)
		if d.Options == nil || d.Options.Poll != nil || d.Options.ReplySettings != "mentionedUsers" {
			t.Fatalf("options edit gave %+v, want only the new reply settings", d.Options)
		}
		d = workflow.Draft{}
		e.call("update_draft", map[string]any{"draft_id": c.ID, "options": map[string]any{}}).ok(t, &d)
		if d.Options != nil {
			t.Fatalf("empty options gave %+v, want none", d.Options)
		}
	})

	t.Run("a draft queued for approval posts with its options", func(t *testing.T) {
		ce := newEnv(t, envOptions{composer: true})
		var d workflow.ComposeResult
		ce.call("compose_tweet", map[string]any{"content": "Tabs or spaces?", "options": poll}).ok(t, &d)
		if !d.RoutedToApproval {
			t.Fatalf("compose in composer mode: %+v, want queued", d)
		}
		it, err := ce.App.Gateway.Item(ce.ctx, d.ApprovalID)
		if err != nil {
			t.Fatal(err)
		}
		var params actions.PostParams
		if err := json.Unmarshal(it.Params, &params); err != nil || params.Options == nil || params.Options.Poll == nil {
			t.Fatalf("queued params %s, want the draft's options", it.Params)
		}
		_, resp, err := ce.App.Gateway.Approve(ce.ctx, it.ID, "tester", "")
		if err != nil || resp.Kind != gateway.Executed {
			t.Fatalf("approve: %v (%v)", resp.Kind, err)
		}
		tw := ce.postedText("Tabs or spaces?")
		if tw.Poll == nil || tw.ReplySettings != "following" {
			t.Fatalf("posted %+v (poll %+v), want the poll and reply settings", tw, tw.Poll)
		}
	})
}

// TestApprovalEditChangesOptions: a human editing a queued post may keep
// its options while changing the text, change or remove them; the diff
// names the change, a bad edit is refused naming the field, and the
// approved post carries what was decided.
func TestApprovalEditChangesOptions(t *testing.T) {
	e := newEnv(t, envOptions{})
	var q routed
	e.call("x_post_tweet", map[string]any{"text": "Poll before the edit", "options": map[string]any{
		"poll": map[string]any{"options": []string{"Yes", "No"}, "duration_minutes": 60}}}).ok(t, &q)
	if !q.Routed {
		t.Fatalf("answer %+v, want routed to approval", q)
	}
	g := e.App.Gateway
	text := "Poll after the edit"
	it, err := g.Edit(e.ctx, q.ApprovalID, text)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(it.Params), `"poll"`) {
		t.Fatalf("text edit dropped the options: %s", it.Params)
	}
	bad := gateway.Changes{Fields: map[string]json.RawMessage{"options": json.RawMessage(`{"poll":{"options":["Yes"],"duration_minutes":60}}`)}}
	if _, err := g.EditFields(e.ctx, q.ApprovalID, bad); apperr.CodeOf(err) != apperr.InvalidInput || !strings.Contains(err.Error(), "options.poll.options") {
		t.Fatalf("bad options edit: %v, want invalid_input naming options.poll.options", err)
	}
	other := gateway.Changes{Fields: map[string]json.RawMessage{"text_other": json.RawMessage(`"x"`)}}
	if _, err := g.EditFields(e.ctx, q.ApprovalID, other); apperr.CodeOf(err) != apperr.ValidationError || !strings.Contains(err.Error(), "text_other") {
		t.Fatalf("edit of a parameter no human may change: %v", err)
	}
	it, err = g.EditFields(e.ctx, q.ApprovalID, gateway.Changes{Fields: map[string]json.RawMessage{
		"options": json.RawMessage(`{"reply_settings":"following"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	diff := strings.Join(it.EditDiff(), "\n")
	if !strings.Contains(diff, `- options: {"poll"`) || !strings.Contains(diff, `+ options: {"reply_settings":"following"}`) {
		t.Fatalf("edit diff:\n%s\nwant the options change", diff)
	}
	if got := actions.DescribeOptions(it.Params); !slices.Equal(got, []string{"Replies: people you follow"}) {
		t.Fatalf("described options %v", got)
	}
	_, resp, err := g.Approve(e.ctx, q.ApprovalID, "tester", "")
	if err != nil || resp.Kind != gateway.Executed {
		t.Fatalf("approve: %v (%v)", resp.Kind, err)
	}
	tw := e.postedText(text)
	if tw.Poll != nil || tw.ReplySettings != "following" {
		t.Fatalf("posted %+v (poll %+v), want replies from following and no poll", tw, tw.Poll)
	}

	t.Run("null removes them", func(t *testing.T) {
		var q2 routed
		e.call("x_post_tweet", map[string]any{"text": "Settings to drop", "options": map[string]any{"reply_settings": "verified"}}).ok(t, &q2)
		it, err := g.EditFields(e.ctx, q2.ApprovalID, gateway.Changes{Fields: map[string]json.RawMessage{"options": json.RawMessage(`null`)}})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(it.Params), "options") {
			t.Fatalf("params %s, want no options", it.Params)
		}
	})
}

// TestDryRunChecksOptions: x_post_tweet_dry_run refuses bad options naming
// the field, and reports the ones it checked.
func TestDryRunChecksOptions(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})
	mediaID := uploadPNG(t, e, "dry-poll.png", 12)
	before := e.sideEffects()
	e.call("x_post_tweet_dry_run", map[string]any{"text": "Poll?", "options": map[string]any{
		"poll": map[string]any{"options": []string{"a", "b"}, "duration_minutes": 10081}}}).fails(t, apperr.InvalidInput).mentions(t, "options.poll.duration_minutes")
	e.call("x_post_tweet_dry_run", map[string]any{"text": "Poll and picture", "media_ids": []string{mediaID}, "options": map[string]any{
		"poll": map[string]any{"options": []string{"a", "b"}, "duration_minutes": 60}}}).fails(t, apperr.InvalidInput).mentions(t, "options.poll")
	var rep struct {
		Valid   bool                 `json:"valid"`
		Options *actions.PostOptions `json:"options"`
	}
	e.call("x_post_tweet_dry_run", map[string]any{"text": "Who may reply?", "options": map[string]any{"reply_settings": "subscribers"}}).ok(t, &rep)
	if !rep.Valid || rep.Options == nil || rep.Options.ReplySettings != "subscribers" {
		t.Fatalf("dry run %+v, want valid with the options it checked", rep)
	}
	e.requireNoSideEffects(before)
}

// postedText is the emulator's post with exactly text.
func (e *env) postedText(text string) xsim.Tweet {
	e.t.Helper()
	for _, tw := range e.Sim.World().Tweets {
		if tw.Text == text {
			return tw
		}
	}
	e.t.Fatalf("no post with the text %q", text)
	return xsim.Tweet{}
}
