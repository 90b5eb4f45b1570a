package web

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// kindParams are stored parameters of a call of every mutation tool, as
// an agent would queue them. A new tool fails TestNoPageShowsAJSONObject
// until it has a row here.
var kindParams = map[string]map[string]any{
	"x_post_tweet":     {"text": "A plain post", "options": map[string]any{"reply_settings": "following", "poll": map[string]any{"options": []string{"Yes", "No"}, "duration_minutes": 60}}},
	"x_reply_to_tweet": {"text": "A reply", "in_reply_to_id": "1880000000000000001"},
	"x_quote_tweet":    {"text": "A quote", "quoted_tweet_id": "1880000000000000001"},
	"x_post_thread": {"tweets": []string{"1. The first post of the thread", "2. The second post", "3. The last one"},
		"media_ids": [][]string{{"1880000000000000009"}}},
	"x_edit_tweet":            {"tweet_id": "1880000000000000001", "text": "An edited text"},
	"x_delete_tweet":          {"tweet_id": "1880000000000000001"},
	"x_like_tweet":            {"tweet_id": "1880000000000000001"},
	"x_unlike_tweet":          {"tweet_id": "1880000000000000001"},
	"x_retweet":               {"tweet_id": "1880000000000000001"},
	"x_unretweet":             {"tweet_id": "1880000000000000001"},
	"x_bookmark_tweet":        {"tweet_id": "1880000000000000001"},
	"x_unbookmark_tweet":      {"tweet_id": "1880000000000000001"},
	"x_follow_user":           {"target_user_id": "2244994945"},
	"x_unfollow_user":         {"target_user_id": "2244994945"},
	"x_mute_user":             {"target_user_id": "2244994945"},
	"x_unmute_user":           {"target_user_id": "2244994945"},
	"x_list_create":           {"name": "Go people", "description": "who write Go", "private": true},
	"x_list_delete":           {"list_id": "1880000000000000002"},
	"x_list_add_member":       {"list_id": "1880000000000000002", "user_id": "2244994945"},
	"x_list_remove_member":    {"list_id": "1880000000000000002", "user_id": "2244994945"},
	"x_send_dm":               {"participant_id": "2244994945", "text": "Hello there"},
	"x_delete_dm":             {"dm_event_id": "1880000000000000003"},
	"x_upload_media":          {"file_path": "/media/chart.png", "alt_text": "A chart"},
	"x_upload_media_from_url": {"url": "https://example.com/chart.png", "alt_text": "A chart"},
	"x_post":                  {"method": "POST", "host": "api.x.com", "path": "/2/users/1/pinned_lists", "body": `{"list_id":"1880000000000000002"}`},
	"x_put":                   {"method": "PUT", "host": "api.x.com", "path": "/2/tweets/1880000000000000001/hidden", "body": `{"hidden":true}`},
	"x_delete":                {"method": "DELETE", "host": "api.x.com", "path": "/2/users/1/pinned_lists/1880000000000000002"},
}

// jsonObject finds a JSON object as a page prints it (the template
// escapes its quotes).
var jsonObject = regexp.MustCompile(`[{\[]\s*(&#34;|&quot;|"|\{)`)

// shownHTML is a page less what a person does not see without asking:
// the raw parameters behind a closed disclosure, and scripts.
func shownHTML(page string) string {
	for _, tag := range []string{"details", "script"} {
		for {
			i := strings.Index(page, "<"+tag)
			if i < 0 {
				break
			}
			j := strings.Index(page[i:], "</"+tag+">")
			if j < 0 {
				break
			}
			page = page[:i] + page[i+j+len(tag)+3:]
		}
	}
	return page
}

// cardOf is item id's card on a page.
func cardOf(t *testing.T, page string, id int64) string {
	t.Helper()
	i := strings.Index(page, fmt.Sprintf(`id="item-%d"`, id))
	if i < 0 {
		t.Fatalf("no card of item %d on the page", id)
	}
	j := strings.Index(page[i:], "</article>")
	if j < 0 {
		return page[i:]
	}
	return page[i : i+j]
}

// queueRaw puts a pending item of tool with params in the queue as it is
// stored, whatever it takes to make the call valid (a media file, an
// existing list): the pages only show it.
func (s *site) queueRaw(tool string, params map[string]any) int64 {
	s.t.Helper()
	b, err := json.Marshal(params)
	if err != nil {
		s.t.Fatal(err)
	}
	now := time.Now()
	res, err := s.a.DB.ExecContext(context.Background(), `INSERT INTO approval_queue (account_id, tool_name, params_json, original_params,
		params_hash, matched_rule_id, reason, caller, status, created_at, expires_at) VALUES ('default', ?, ?, ?, ?, 'approval_mode', 'approval mode is on', 'mcp', 'pending', ?, ?)`,
		tool, string(b), string(b), "h-"+tool, store.FormatTime(now), store.FormatTime(now.Add(24*time.Hour)))
	if err != nil {
		s.t.Fatalf("queue %s: %v", tool, err)
	}
	id, _ := res.LastInsertId()
	return id
}

// TestNoPageShowsAJSONObject: for every mutation tool of the registry, a
// queued call reads as words on its card and its detail page: no JSON
// object is shown (the raw parameters stay behind a disclosure).
func TestNoPageShowsAJSONObject(t *testing.T) {
	s := newSite(t, nil)
	ids := map[string]int64{}
	for _, m := range actions.Mutations() {
		p, ok := kindParams[m.Name]
		if !ok {
			t.Errorf("%s: no parameters in kindParams: add a call of it", m.Name)
			continue
		}
		ids[m.Name] = s.queueRaw(m.Name, p)
	}
	c, _ := s.client()
	_, queue := s.get(c, "/approvals")
	for tool, id := range ids {
		card := cardOf(t, queue, id)
		if m := jsonObject.FindString(shownHTML(card)); m != "" {
			t.Errorf("%s: the card shows a JSON object (%q):\n%s", tool, m, card)
		}
		code, page := s.get(c, fmt.Sprintf("/approvals/%d", id))
		if code != http.StatusOK {
			t.Errorf("%s: detail page: status %d", tool, code)
			continue
		}
		if m := jsonObject.FindString(shownHTML(page)); m != "" {
			t.Errorf("%s: the detail page shows a JSON object (%q)", tool, m)
		}
	}
	// The thread reads as its numbered posts, each with its count and
	// media, and a post written "1. …" is not numbered twice.
	thread := cardOf(t, queue, ids["x_post_thread"])
	for _, want := range []string{"The first post of the thread", fmt.Sprintf("%d/280", tweettext.WeightedLength("1. The first post of the thread")), "1880000000000000009", "The last one"} {
		if !strings.Contains(thread, want) {
			t.Errorf("the thread's card does not show %q", want)
		}
	}
	if strings.Count(thread, `<li class="thread-post"`) != 3 {
		t.Errorf("the thread's card does not list its 3 posts:\n%s", thread)
	}
	if !strings.Contains(thread, "Post 2 of 3") {
		t.Errorf("the thread's posts are not numbered:\n%s", thread)
	}
}

// TestEachKindCountsAgainstItsLimit: a direct message counts against
// X's 10,000 characters, not a post's 280; a post against the account's.
func TestEachKindCountsAgainstItsLimit(t *testing.T) {
	s := newSite(t, nil)
	dm := strings.Repeat("a long message ", 22)[:329]
	dmID := s.queueRaw("x_send_dm", map[string]any{"participant_id": "2244994945", "text": dm})
	postID := s.queueRaw("x_post_tweet", map[string]any{"text": dm})
	c, _ := s.client()
	_, page := s.get(c, "/approvals")
	card := cardOf(t, page, dmID)
	if !strings.Contains(card, "329/10000") || strings.Contains(card, "/280") || strings.Contains(card, `class="wcount over"`) {
		t.Errorf("the message is not counted against 10,000:\n%s", card)
	}
	if !strings.Contains(card, `data-tool="x_send_dm"`) {
		t.Error("the message's edit box does not ask for its own limit")
	}
	post := cardOf(t, page, postID)
	if !strings.Contains(post, "329/280") || !strings.Contains(post, `class="wcount over"`) {
		t.Errorf("the post is not counted against 280:\n%s", post)
	}
	for _, tc := range []struct{ query, want string }{
		{"text=" + url.QueryEscape(dm) + "&tool=x_send_dm", `{"max":10000,"valid":true,"weighted_length":329}`},
		{"text=" + url.QueryEscape(dm), `{"max":280,"valid":false,"weighted_length":329}`},
	} {
		if _, body := s.get(c, "/count?"+tc.query); strings.TrimSpace(body) != tc.want {
			t.Errorf("/count?%.30s…: %s, want %s", tc.query, body, tc.want)
		}
	}
}

// TestThreadIsEditedPostByPost: one post of a queued thread is edited on
// its own; the queued call keeps the others, and the card then shows the
// whole thread against the original, post by post, in words.
func TestThreadIsEditedPostByPost(t *testing.T) {
	s := newSite(t, nil)
	resp, err := s.a.Gateway.Do(context.Background(), gateway.Call{Tool: "x_post_thread", Caller: "mcp",
		Params: map[string]any{"tweets": []string{"First of three", "Second of three", "Third of three"}}})
	if err != nil || resp.Kind != gateway.Routed {
		t.Fatalf("thread not queued: %+v %v", resp, err)
	}
	id := resp.ApprovalID
	c, csrf := s.client()
	s.postForm(c, fmt.Sprintf("/approvals/%d/edit", id), url.Values{"csrf": {csrf}, "post": {"1"}, "text": {"Second, now better"}})
	it, err := s.a.Gateway.Item(context.Background(), id)
	if err != nil || !it.Edited {
		t.Fatalf("the edit did not reach the queue: %+v %v", it, err)
	}
	var p struct{ Tweets []string }
	_ = json.Unmarshal(it.Params, &p)
	if want := []string{"First of three", "Second, now better", "Third of three"}; strings.Join(p.Tweets, "|") != strings.Join(want, "|") {
		t.Fatalf("the thread reads %q, want %q", p.Tweets, want)
	}
	_, page := s.get(c, "/approvals")
	card := html.UnescapeString(cardOf(t, page, id))
	for _, want := range []string{"The whole thread against the original", "  post 1: First of three", "- post 2: Second of three",
		"+ post 2: Second, now better", "  post 3: Third of three"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card's diff does not show %q:\n%s", want, card)
		}
	}
	// A post too long for the account is refused, naming it; the thread
	// stays as it was.
	_, body := s.postForm(c, fmt.Sprintf("/approvals/%d/edit", id), url.Values{"csrf": {csrf}, "post": {"2"}, "text": {strings.Repeat("long ", 60)}})
	if !strings.Contains(body, "tweets[2]") {
		t.Errorf("a 300-character third post was not refused by name:\n%.400s", shownHTML(body))
	}
	if again, _ := s.a.Gateway.Item(context.Background(), id); string(again.Params) != string(it.Params) {
		t.Errorf("a refused post edit changed the thread: %s", again.Params)
	}
	// A post the thread does not have is refused, naming the field.
	_, body = s.postForm(c, fmt.Sprintf("/approvals/%d/edit", id), url.Values{"csrf": {csrf}, "post": {"7"}, "text": {"x"}})
	if !strings.Contains(body, "post: ") {
		t.Errorf("editing post 8 of 3 was not refused by name:\n%.400s", shownHTML(body))
	}
}

// TestAuditDetailSaysTheRequestInWords: an executed post's and an
// executed thread's audit pages say what they did in words (the effect,
// the posts, the post it made, the undo) and keep the raw request, result
// and undo call behind one disclosure.
func TestAuditDetailSaysTheRequestInWords(t *testing.T) {
	s := newSite(t, nil)
	ctx := context.Background()
	var corrs []string
	for _, call := range []gateway.Call{
		{Tool: "x_post_tweet", Caller: "mcp", Params: map[string]any{"text": "An audited post"}},
		{Tool: "x_post_thread", Caller: "mcp", Params: map[string]any{"tweets": []string{"Audited thread, first", "Audited thread, second"}}},
	} {
		resp, err := s.a.Gateway.Do(ctx, call)
		if err == nil && resp.Kind == gateway.Routed {
			_, resp, err = s.a.Gateway.Approve(ctx, resp.ApprovalID, "test", "")
		}
		if err != nil || resp.CorrelationID == "" {
			t.Fatalf("%s did not run: %+v %v", call.Tool, resp, err)
		}
		corrs = append(corrs, resp.CorrelationID)
	}
	c, _ := s.client()
	for i, want := range [][]string{
		{"Posts this text from your account.", "An audited post", "Posted as", "It can be undone"},
		{"Posts these posts as a thread", "Post 1 of 2", "Audited thread, second", "It can be undone"},
	} {
		code, page := s.get(c, "/audit/"+corrs[i])
		if code != http.StatusOK {
			t.Fatalf("audit %s: status %d", corrs[i], code)
		}
		shown := shownHTML(page)
		if m := jsonObject.FindString(shown); m != "" {
			t.Errorf("audit %d shows a JSON object (%q)", i, m)
		}
		for _, w := range want {
			if !strings.Contains(shown, w) {
				t.Errorf("audit %d does not say %q", i, w)
			}
		}
		if !strings.Contains(page, `<details class="raw" id="raw">`) || strings.Count(page, `<pre class="params">`) < 3 {
			t.Errorf("audit %d does not keep the raw request behind a disclosure", i)
		}
	}
}

// TestLinkPagePostOpensOnAPhone: the phone link page of a reply links to
// the post it answers at an address the phone can open without a
// session: in the sandbox a view through the link itself, which shows
// the post and says it lives in the emulator; a forged one is not found.
func TestLinkPagePostOpensOnAPhone(t *testing.T) {
	s := newSite(t, linksOn)
	text := "A post by Gabe that a reply answers"
	answered := s.post("gopher_gabe", text)
	id := s.queueReply(s.a.Gateway, answered, "A reply from a phone")
	it, err := s.a.Gateway.Item(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.a.Links().Links(context.Background(), "default", it, "phone")
	if err != nil {
		t.Fatal(err)
	}
	view := strings.TrimPrefix(l.View, phoneBase)
	_, _, page := s.linkReq("GET", view, nil, "")
	m := regexp.MustCompile(`<a href="([^"]+)" class="target-link">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the link page has no link to the answered post:\n%s", page)
	}
	href := m[1]
	u, err := url.Parse(phoneBase + view)
	if err != nil {
		t.Fatal(err)
	}
	target := u.ResolveReference(&url.URL{Path: html.UnescapeString(href)})
	status, _, post := s.linkReq("GET", target.Path, nil, "")
	if status != http.StatusOK || !strings.Contains(post, text) || !strings.Contains(post, "sandbox") {
		t.Fatalf("the post link %s answers %d on a phone:\n%.600s", target.Path, status, post)
	}
	if status, _, _ := s.linkReq("GET", "/a/forged-token/post", nil, ""); status != http.StatusNotFound {
		t.Errorf("a forged link's post view answers %d, want 404", status)
	}
}

// TestSandboxPagesSayItIsTheEmulator: every page of a sandbox account
// names the emulator it talks to, and analytics and the autopilot page
// call its spend simulated.
func TestSandboxPagesSayItIsTheEmulator(t *testing.T) {
	s := newSite(t, nil)
	if ok, err := SeedDemo(context.Background(), *s.srv.accts[0]); err != nil || !ok {
		t.Fatalf("demo world: %v %v", ok, err)
	}
	c, _ := s.client()
	at := "sandbox emulator at " + s.a.Sim.URL
	for path, wants := range map[string][]string{
		"/approvals": {at},
		"/settings":  {at},
		"/analytics": {at, "Simulated X spend per day", "Simulated X spend (7 days)"},
		"/autopilot": {at, "Simulated X spend today (" + at + ")"},
	} {
		_, page := s.get(c, path)
		for _, w := range wants {
			if !strings.Contains(page, w) {
				t.Errorf("%s does not say %q", path, w)
			}
		}
		if strings.Contains(page, "<dt>X spend") || strings.Contains(page, ">X spend today") || strings.Contains(page, "<strong>X spend per day") {
			t.Errorf("%s shows the sandbox's spend as real X spend", path)
		}
	}
}
