package web

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/workflow"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// TestApprovalShowsPostOptions: a queued post's poll and reply settings are
// shown in words on the list and on the item's own page.
func TestApprovalShowsPostOptions(t *testing.T) {
	s := newSite(t, nil)
	id := s.postTweetWith(s.mcpClient(), map[string]any{"text": "Which do you use?",
		"options": map[string]any{"poll": map[string]any{"options": []string{"Go", "Rust"}, "duration_minutes": 1440},
			"reply_settings": "following"}})
	c, _ := s.client()
	for _, path := range []string{"/approvals", "/approvals/" + itoa(id)} {
		code, body := s.get(c, path)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", path, code)
		}
		for _, want := range []string{"<li>Poll: Go / Rust, 1 day</li>", "<li>Replies: people you follow</li>"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s does not show %q", path, want)
			}
		}
	}
}

// TestApprovalShowsAnEditsOldAndNewText: a queued edit's card names it an
// edit of the account's post and shows the text as it stands beside the
// new text.
func TestApprovalShowsAnEditsOldAndNewText(t *testing.T) {
	s := newSite(t, nil)
	sim := s.a.Sim.Server
	if sim == nil {
		t.Fatal("the site's sandbox runs no emulator of its own")
	}
	const before, after = "The launch is on Tuesday.", "The launch is on Wednesday."
	id, err := sim.PostAs(sim.DemoUserID(), before, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.mcpClient().CallTool(context.Background(), &mcp.CallToolParams{Name: "x_edit_tweet",
		Arguments: map[string]any{"tweet_id": id, "text": after}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.Content)
	if !strings.Contains(string(raw), `routed_to_approval`) {
		t.Fatalf("x_edit_tweet was not routed to approval: %s", raw)
	}
	c, _ := s.client()
	code, body := s.get(c, "/approvals")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{"Edit @" + xsim.DemoUsername + "&#39;s post", "The post as it stands, which this edits", before, after} {
		if !strings.Contains(body, want) {
			t.Errorf("the approvals page does not show %q", want)
		}
	}
}

// TestApprovalShowsADirectMessage: a queued x_send_dm reads as a message
// to its recipient, by handle, with its text and what approving does.
func TestApprovalShowsADirectMessage(t *testing.T) {
	s := newSite(t, nil)
	gabe := s.a.Sim.Server.UserIDByUsername("gopher_gabe")
	res, err := s.mcpClient().CallTool(context.Background(), &mcp.CallToolParams{Name: "x_send_dm",
		Arguments: map[string]any{"participant_id": gabe, "text": "Could we talk about your CLI?"}})
	if err != nil || res.IsError {
		t.Fatalf("x_send_dm: %v %+v", err, res)
	}
	c, _ := s.client()
	code, body := s.get(c, "/approvals")
	if code != http.StatusOK {
		t.Fatalf("/approvals: status %d", code)
	}
	for _, want := range []string{"Message @gopher_gabe", "Could we talk about your CLI?", "private direct message"} {
		if !strings.Contains(body, want) {
			t.Errorf("/approvals does not show %q", want)
		}
	}
}

// TestCountUsesTheAccountsPostLimit: the edit box counts against the post
// limit of the account it edits for: 25,000 for the Premium brand once X
// has told its subscription, 280 for the plain default account.
func TestCountUsesTheAccountsPostLimit(t *testing.T) {
	s := newSite(t, nil)
	b, err := s.a.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.PostLimit().Limit(t.Context()); err != nil {
		t.Fatal(err)
	}
	long := url.QueryEscape(strings.Repeat("word ", 200))
	c, _ := s.client()
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"text=" + long + "&account=brand_b", `{"max":25000,"valid":true,"weighted_length":1000}`},
		{"text=" + long, `{"max":280,"valid":false,"weighted_length":1000}`},
	} {
		code, body := s.get(c, "/count?"+tc.query)
		if code != http.StatusOK || strings.TrimSpace(body) != tc.want {
			t.Errorf("/count?%.40s…: %d %s, want %s", tc.query, code, body, tc.want)
		}
	}
	if code, _ := s.get(c, "/count?text=a&account=nobody"); code != http.StatusBadRequest {
		t.Errorf("an unknown account: status %d, want 400", code)
	}
}

// TestApprovalEditFormChangesPostOptions: the item's edit form, prefilled
// with its options, changes them through the gateway's edit: the stored
// call, its words and its diff follow; a refused change names the field
// and leaves the item as it was.
func TestApprovalEditFormChangesPostOptions(t *testing.T) {
	const text = "Which do you use?"
	plain := map[string]any{"text": text}
	withMedia := map[string]any{"text": text, "media_ids": []string{"1880000000000000001"}}
	for _, tc := range []struct {
		name  string
		args  map[string]any
		form  url.Values
		want  []string // on the page after the edit
		param string   // in the stored call ("" when refused)
	}{
		{"reply settings changed", plain, url.Values{"reply_settings": {"following"}},
			[]string{"<li>Replies: people you follow</li>", "- options: null\n&#43; options: {&#34;reply_settings&#34;:&#34;following&#34;}"},
			`"options":{"reply_settings":"following"}`},
		{"a poll added", plain, url.Values{"reply_settings": {"everyone"}, "poll_option": {"Go", "Rust", "", ""}, "poll_minutes": {"1440"}},
			[]string{"<li>Poll: Go / Rust, 1 day</li>", `&#43; options: {&#34;poll&#34;:{&#34;duration_minutes&#34;:1440`},
			`"options":{"poll":{"duration_minutes":1440,"options":["Go","Rust"]}}`},
		{"disclosures and a community", plain, url.Values{"community_id": {"1500000000000000001"}, "made_with_ai": {"1"}, "paid_partnership": {"1"}},
			[]string{"<li>Community: 1500000000000000001</li>", "<li>Made with AI</li>", "<li>Paid partnership</li>"},
			`"options":{"community_id":"1500000000000000001","made_with_ai":true,"paid_partnership":true}`},
		{"a poll with media refused", withMedia, url.Values{"poll_option": {"Go", "Rust"}, "poll_minutes": {"60"}},
			[]string{"Not saved: options.poll: a post with a poll cannot carry media", `name="poll_option" value="Rust" maxlength="25" aria-invalid="true"`}, ""},
		{"a poll of one choice refused", plain, url.Values{"poll_option": {"Go", ""}, "poll_minutes": {"60"}},
			[]string{"Not saved: options.poll.options", `name="poll_option" value="Go" maxlength="25" aria-invalid="true"`}, ""},
		{"a duration that is not a number refused", plain, url.Values{"poll_option": {"Go", "Rust"}, "poll_minutes": {"a day"}},
			[]string{"Not saved: options.poll.duration_minutes", `name="poll_minutes" value="a day"`}, ""},
		{"an over-long text refused", plain, url.Values{"text": {strings.Repeat("long ", 60)}, "reply_settings": {"following"}},
			[]string{"Not saved: text", `aria-invalid="true" aria-describedby="edit-error-`, `<option value="following" selected>`}, ""},
		{"an unknown reply setting refused", plain, url.Values{"reply_settings": {"friends"}},
			[]string{"Not saved: options.reply_settings", `name="reply_settings" aria-invalid="true" aria-describedby="edit-error-`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, nil)
			id := s.postTweetWith(s.mcpClient(), tc.args)
			before, err := s.a.Gateway.Item(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			hashBefore := s.paramsHash(id)
			c, csrf := s.client()
			tc.form.Set("csrf", csrf)
			if !tc.form.Has("text") {
				tc.form.Set("text", text)
			}
			tc.form.Set("options_form", "1")
			code, body := s.postForm(c, "/approvals/"+itoa(id)+"/edit", tc.form)
			// A refusal is shown back: the item's page, its form open
			// with what was sent and the refusal naming the field.
			if want := map[bool]int{true: http.StatusOK, false: http.StatusBadRequest}[tc.param != ""]; code != want {
				t.Fatalf("edit: status %d, want %d", code, want)
			}
			if open := `class="edit" id="edit-` + itoa(id) + `">`; tc.param == "" && !strings.Contains(body, open) {
				t.Errorf("a refused edit does not show its form open")
			}
			if tc.param != "" {
				// The item's own page shows its options and the diff.
				_, body = s.get(c, "/approvals/"+itoa(id))
			}
			for _, want := range tc.want {
				if !strings.Contains(body, want) {
					t.Errorf("the page does not show %q", want)
				}
			}
			after, err := s.a.Gateway.Item(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.param == "" && (string(after.Params) != string(before.Params) || after.Edited):
				t.Errorf("a refused edit changed the item: %s", after.Params)
			case tc.param != "" && !strings.Contains(string(after.Params), tc.param):
				t.Errorf("stored call %s, want %s in it", after.Params, tc.param)
			case tc.param != "" && s.paramsHash(id) == hashBefore:
				t.Errorf("the edit kept the content hash %s", hashBefore)
			case tc.param == "" && s.paramsHash(id) != hashBefore:
				t.Errorf("a refused edit changed the content hash")
			}
			if tc.param == "" || tc.name == "disclosures and a community" {
				return // the demo account is in no community to post in
			}
			// Approved, the edited call is what ran: the audit of the
			// outcome holds the new options.
			s.postForm(c, "/approvals/"+itoa(id)+"/approve", url.Values{"csrf": {csrf}, "shown": {shownOf(t, s.a.Gateway, id)}})
			done, err := s.a.Gateway.Item(t.Context(), id)
			if err != nil || done.Status != "executed" {
				t.Fatalf("approve the edited item: %+v %v", done, err)
			}
			_, audit := s.get(c, "/audit/"+done.CorrelationID)
			if opt := strings.TrimPrefix(tc.param, `"options":`); !strings.Contains(audit, html.EscapeString(opt)) {
				t.Errorf("the audit of #%d does not hold %s:\n%s", id, opt, audit)
			}
		})
	}
}

// TestApprovalEditFormIsPrefilled: the options fields start from what the
// queued post holds, so saving the text alone keeps its options.
func TestApprovalEditFormIsPrefilled(t *testing.T) {
	s := newSite(t, nil)
	id := s.postTweetWith(s.mcpClient(), map[string]any{"text": "Which do you use?",
		"options": map[string]any{"poll": map[string]any{"options": []string{"Go", "Rust"}, "duration_minutes": 90},
			"reply_settings": "verified", "made_with_ai": true}})
	c, csrf := s.client()
	_, body := s.get(c, "/approvals/"+itoa(id))
	n := itoa(id)
	for _, want := range []string{
		`<option value="verified" selected>verified accounts</option>`,
		`<option value="everyone">everyone</option>`,
		`<label for="poll-` + n + `-0">Choice 1</label>`,
		`id="poll-` + n + `-0" name="poll_option" value="Go"`,
		`id="poll-` + n + `-1" name="poll_option" value="Rust"`,
		`id="poll-` + n + `-2" name="poll_option" value=""`,
		`name="poll_minutes" value="90"`,
		`name="made_with_ai" value="1" checked`,
		`name="paid_partnership" value="1">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the edit form does not hold %q", want)
		}
	}
	before, _ := s.a.Gateway.Item(t.Context(), id)
	form := url.Values{"csrf": {csrf}, "text": {"Which do you use most?"}, "options_form": {"1"}, "reply_settings": {"verified"},
		"poll_option": {"Go", "Rust", "", ""}, "poll_minutes": {"90"}, "made_with_ai": {"1"}}
	s.postForm(c, "/approvals/"+n+"/edit", form)
	after, err := s.a.Gateway.Item(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var b, a struct {
		Text    string          `json:"text"`
		Options json.RawMessage `json:"options"`
	}
	_ = json.Unmarshal(before.Params, &b)
	_ = json.Unmarshal(after.Params, &a)
	if a.Text != "Which do you use most?" || string(a.Options) != string(b.Options) {
		t.Errorf("saving the prefilled form: %s, want the new text with the options %s", after.Params, b.Options)
	}
}

// TestDraftsShowPostOptions: a draft's options are on the drafts page in
// the approval page's words.
func TestDraftsShowPostOptions(t *testing.T) {
	s := newSite(t, nil)
	comp, err := s.a.Composer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := comp.Compose(t.Context(), workflow.ComposeRequest{Content: "Which do you use?",
		Options: &actions.PostOptions{ReplySettings: "mentionedUsers", Poll: &actions.PollSpec{Options: []string{"Go", "Rust"}, DurationMinutes: 2 * 24 * 60}}}); err != nil {
		t.Fatalf("Compose: %v", err)
	}
	c, _ := s.client()
	_, body := s.get(c, "/drafts")
	for _, want := range []string{`<ul class="post-options" aria-label="Post settings"><li>Poll: Go / Rust, 2 days</li><li>Replies: people you mention</li></ul>`} {
		if !strings.Contains(body, want) {
			t.Errorf("/drafts does not show %q", want)
		}
	}
}

// paramsHash is the content hash the queue holds for item id.
func (s *site) paramsHash(id int64) string {
	s.t.Helper()
	var h string
	if err := s.a.DB.QueryRowContext(context.Background(), `SELECT params_hash FROM approval_queue WHERE id = ?`, id).Scan(&h); err != nil {
		s.t.Fatalf("read the content hash of #%d: %v", id, err)
	}
	return h
}
