package xsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/xsim"
	"github.com/tuitbot/tuitbot/internal/xspec"
)

// specClient drives the emulator through xspec's validating transport.
type specClient struct {
	t     *testing.T
	base  string
	token string
	hc    *http.Client
	mu    sync.Mutex
	errs  []error
	// badReq marks the next calls as deliberately invalid requests: their
	// request violations are expected, their responses must still conform.
	badReq bool
	routes map[string]bool // "METHOD template" exercised
	spec   *xspec.Spec
}

func (c *specClient) call(method, path, contentType string, body []byte) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if tpl, err := c.spec.Route(req); err == nil {
		c.routes[method+" "+tpl] = true
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, out
}

func (c *specClient) json(method, path string, v any) (int, map[string]any) {
	c.t.Helper()
	var b []byte
	if v != nil {
		var err error
		if b, err = json.Marshal(v); err != nil {
			c.t.Fatal(err)
		}
	}
	ct := ""
	if b != nil {
		ct = "application/json"
	}
	return c.call(method, path, ct, b)
}

func multipartBody(t *testing.T, fields map[string]string, file []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if file != nil {
		fw, err := w.CreateFormFile("media", "upload.bin")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(file); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mp4Bytes(n int) []byte {
	b := make([]byte, n)
	copy(b, []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"))
	return b
}

func TestEmulatorConformsToSpec(t *testing.T) {
	spec := xspec.FromEnv(t)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	opts := xsim.DefaultOptions()
	opts.World = xsim.DemoWorldAt(7, now)
	opts.Now = func() time.Time { return now }
	s := xsim.New(opts)
	base, err := s.Start(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tok, _, _ := s.IssueToken("", s.AllScopes())
	c := &specClient{t: t, base: base, token: tok, spec: spec, routes: map[string]bool{}}
	c.hc = &http.Client{Transport: spec.RoundTripper(http.DefaultTransport, func(err error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		var v *xspec.Violation
		if errors.As(err, &v) && !v.Response && c.badReq {
			return
		}
		c.errs = append(c.errs, err)
	})}

	// Every /2 route the emulator serves must be in X's document.
	for _, r := range s.Routes() {
		method, path, _ := strings.Cut(r, " ")
		if !strings.HasPrefix(path, "/2/") || strings.HasPrefix(path, "/2/oauth2/") {
			continue
		}
		if !spec.HasOperation(method, path) {
			t.Errorf("emulated route %s is not in X's OpenAPI document", r)
		}
	}

	me := s.DemoUserID()
	w := s.World()
	var other, otherTweet string
	for _, u := range w.Users {
		if u.ID != me {
			other = u.ID
			break
		}
	}
	for i := len(w.Tweets) - 1; i >= 0; i-- {
		if tw := w.Tweets[i]; tw.AuthorID != me && tw.RetweetOf == "" {
			otherTweet = tw.ID
			break
		}
	}
	tf := "tweet.fields=author_id,created_at,conversation_id,public_metrics,referenced_tweets,lang,entities,attachments,in_reply_to_user_id,edit_controls,possibly_sensitive,reply_settings,source"
	pf := "post.fields=created_at,conversation_id,public_metrics,lang,entities,attachments"
	uf := "user.fields=created_at,description,location,public_metrics,profile_image_url,protected,url,verified,verified_type,subscription_type"
	ex := "expansions=author_id,referenced_posts,attachments.media_keys,in_reply_to_user_id,entities.mentions.username"
	mf := "media.fields=media_key,type,width,height,alt_text,url,preview_image_url"
	q := func(parts ...string) string { return "?" + strings.Join(parts, "&") }

	// Writes first so reads see replies, quotes, media and retweets.
	pngData := pngBytes(t)
	ct, body := multipartBody(t, map[string]string{"media_category": "tweet_image"}, pngData)
	status, up := c.call("POST", "/2/media/upload", ct, body)
	if status != 200 {
		t.Fatalf("simple upload: %d %v", status, up)
	}
	mediaID := up["data"].(map[string]any)["id"].(string)
	c.json("POST", "/2/media/metadata", map[string]any{"id": mediaID, "metadata": map[string]any{"alt_text": map[string]any{"text": "a tiny image"}}})

	video := mp4Bytes(1500)
	_, ini := c.json("POST", "/2/media/upload/initialize", map[string]any{"media_type": "video/mp4", "total_bytes": len(video), "media_category": "tweet_video"})
	vid := ini["data"].(map[string]any)["id"].(string)
	for i, chunk := range [][]byte{video[:1000], video[1000:]} {
		ct, body := multipartBody(t, map[string]string{"segment_index": fmt.Sprint(i)}, chunk)
		if st, _ := c.call("POST", "/2/media/upload/"+vid+"/append", ct, body); st != 200 {
			t.Fatalf("append %d: %d", i, st)
		}
	}
	c.json("POST", "/2/media/upload/"+vid+"/finalize", nil)
	for i := 0; i < 3; i++ {
		c.json("GET", "/2/media/upload?command=STATUS&media_id="+vid, nil)
	}
	// JSON (base64) variants of the upload bodies.
	c.json("POST", "/2/media/upload", map[string]any{"media": pngData, "media_category": "tweet_image"})

	_, created := c.json("POST", "/2/tweets", map[string]any{"text": "spec check with media https://example.com", "media": map[string]any{"media_ids": []string{mediaID, vid}}})
	mine := created["data"].(map[string]any)["id"].(string)
	c.json("POST", "/2/tweets", map[string]any{"text": "a reply for the spec", "reply": map[string]any{"in_reply_to_tweet_id": otherTweet}})
	c.json("POST", "/2/tweets", map[string]any{"text": "a quote for the spec", "quote_tweet_id": otherTweet})
	c.json("POST", "/2/tweets", map[string]any{"text": "a quote for the spec"}) // 403 duplicate
	c.json("POST", "/2/tweets", map[string]any{"text": ""})                     // 400
	_, polled := c.json("POST", "/2/tweets", map[string]any{"text": "a poll for the spec", "reply_settings": "following",
		"poll": map[string]any{"options": []string{"yes", "no"}, "duration_minutes": 60}})
	pollTweet := polled["data"].(map[string]any)["id"].(string)
	c.json("POST", "/2/tweets", map[string]any{"text": "a poll with media", "media": map[string]any{"media_ids": []string{mediaID}},
		"poll": map[string]any{"options": []string{"yes", "no"}, "duration_minutes": 60}}) // 400
	_, edited := c.json("POST", "/2/tweets", map[string]any{"text": "spec check, edited", "edit_options": map[string]any{"previous_post_id": mine}})
	editedID := edited["data"].(map[string]any)["id"].(string)
	c.json("POST", "/2/tweets", map[string]any{"text": "an edit of a poll", "edit_options": map[string]any{"previous_post_id": pollTweet}})    // 403
	c.json("POST", "/2/tweets", map[string]any{"text": "an edit of an old version", "edit_options": map[string]any{"previous_post_id": mine}}) // 403
	// A long post: refused for the plain demo account, posted by the
	// Premium brand, read back with its note.
	long := strings.TrimSpace(strings.Repeat("A long post for the spec, https://example.com #golang. ", 20))
	c.json("POST", "/2/tweets", map[string]any{"text": long}) // 403 too long
	plainToken := c.token
	c.token, _, _ = s.IssueToken(s.DemoAccounts()["brand_b"], s.AllScopes())
	_, longCreated := c.json("POST", "/2/tweets", map[string]any{"text": long})
	longTweet := longCreated["data"].(map[string]any)["id"].(string)
	c.json("GET", "/2/users/me"+q(uf), nil)
	_, made := c.json("POST", "/2/lists", map[string]any{"name": "brand list"})
	brandList := made["data"].(map[string]any)["id"].(string)
	c.token = plainToken
	c.json("POST", "/2/users/"+me+"/likes", map[string]any{"tweet_id": otherTweet})
	c.json("POST", "/2/users/"+me+"/likes", map[string]any{"tweet_id": "12"}) // 404
	c.json("POST", "/2/users/"+other+"/likes", map[string]any{"tweet_id": otherTweet})
	c.json("POST", "/2/users/"+me+"/retweets", map[string]any{"tweet_id": otherTweet})
	c.json("POST", "/2/users/"+me+"/bookmarks", map[string]any{"tweet_id": otherTweet})
	c.json("POST", "/2/users/"+me+"/following", map[string]any{"target_user_id": other})
	c.json("POST", "/2/users/"+me+"/muting", map[string]any{"target_user_id": other})
	_, made = c.json("POST", "/2/lists", map[string]any{"name": "spec list", "description": "for the spec", "private": true})
	listID := made["data"].(map[string]any)["id"].(string)
	c.json("POST", "/2/lists/"+listID+"/members", map[string]any{"user_id": other})
	c.json("POST", "/2/lists/"+listID+"/members", map[string]any{"user_id": other}) // already a member
	c.json("POST", "/2/lists/"+listID+"/members", map[string]any{"user_id": "12"})  // 404
	theirs := w.Lists[0]
	c.json("POST", "/2/lists/"+theirs.ID+"/members", map[string]any{"user_id": other}) // 403: not the owner
	// Pins and List follows: a List neither owned nor followed cannot be
	// pinned; followed, it can.
	if st, _ := c.json("POST", "/2/users/"+me+"/pinned_lists", map[string]any{"list_id": theirs.ID}); st != 403 {
		t.Errorf("a pin of a List neither owned nor followed = %d, want 403", st)
	}
	c.json("POST", "/2/users/"+me+"/followed_lists", map[string]any{"list_id": theirs.ID})
	c.json("POST", "/2/users/"+me+"/followed_lists", map[string]any{"list_id": brandList})
	c.json("POST", "/2/users/"+me+"/pinned_lists", map[string]any{"list_id": theirs.ID})
	c.json("POST", "/2/users/"+me+"/pinned_lists", map[string]any{"list_id": listID})
	// X's API reads blocks but no longer makes them: made as on x.com.
	for _, u := range w.Users {
		if u.ID != me && u.ID != other {
			if err := s.Block(me, u.ID); err != nil {
				t.Fatal(err)
			}
		}
		if len(s.World().Relations["blocking"]) == 2 {
			break
		}
	}
	// Direct messages: sent, refused by a user who takes messages only
	// from those they follow, read back, deleted.
	_, sent := c.json("POST", "/2/dm_conversations/with/"+other+"/messages", map[string]any{"text": "hello from the spec check"})
	dmID := sent["data"].(map[string]any)["dm_event_id"].(string)
	c.json("POST", "/2/dm_conversations/with/"+other+"/messages", map[string]any{"text": "with media", "attachments": []map[string]string{{"media_id": mediaID}}})
	var closed string
	for _, u := range w.Users {
		if u.DMsFromFollowedOnly {
			closed = u.ID
		}
	}
	if st, _ := c.json("POST", "/2/dm_conversations/with/"+closed+"/messages", map[string]any{"text": "refused"}); st != 403 {
		t.Errorf("a message to a user who takes none from us = %d, want 403", st)
	}
	// The ways no typed tool uses: to a conversation by its id, and to a
	// new group.
	conv := sent["data"].(map[string]any)["dm_conversation_id"].(string)
	if st, _ := c.json("POST", "/2/dm_conversations/"+conv+"/messages", map[string]any{"text": "again, by conversation"}); st != 201 {
		t.Errorf("a message to conversation %s = %d, want 201", conv, st)
	}
	var third string
	for _, u := range w.Users {
		if u.ID != me && u.ID != other && !u.DMsFromFollowedOnly {
			third = u.ID
			break
		}
	}
	if st, _ := c.json("POST", "/2/dm_conversations", map[string]any{"conversation_type": "Group", "participant_ids": []string{other, third},
		"message": map[string]any{"text": "hello, group"}}); st != 201 {
		t.Errorf("a new group conversation = %d, want 201", st)
	}
	c.json("POST", "/2/dm_conversations/1-2/messages", map[string]any{"text": "not ours"}) // 404
	// Communities: a member posts, a non-member is refused.
	var member, notMember string
	for _, cm := range w.Communities {
		if slices.Contains(cm.MemberIDs, me) {
			member = cm.ID
		} else {
			notMember = cm.ID
		}
	}
	if st, _ := c.json("POST", "/2/tweets", map[string]any{"text": "a community post for the spec", "community_id": member}); st != 201 {
		t.Errorf("a member's community post = %d, want 201", st)
	}
	if st, _ := c.json("POST", "/2/tweets", map[string]any{"text": "not a member", "community_id": notMember}); st != 403 {
		t.Errorf("a non-member's community post = %d, want 403", st)
	}
	// A quote on a world where quotes need a higher tier.
	s.SetQuotesNeedHigherTier(true)
	if st, _ := c.json("POST", "/2/tweets", map[string]any{"text": "a tiered quote", "quote_tweet_id": otherTweet}); st != 403 {
		t.Errorf("a quote that needs a higher tier = %d, want 403", st)
	}
	s.SetQuotesNeedHigherTier(false)
	// Self-serve access, as X is in 2026: an unsummoned reply, a like, a
	// follow and a quote answer X's bare 403.
	if err := s.SetAccess(xsim.AccessPayPerUse); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		path string
		body map[string]any
	}{
		{"/2/tweets", map[string]any{"text": "an unsummoned reply", "reply": map[string]any{"in_reply_to_tweet_id": otherTweet}}},
		{"/2/tweets", map[string]any{"text": "a self-serve quote", "quote_tweet_id": otherTweet}},
		{"/2/users/" + me + "/likes", map[string]any{"tweet_id": otherTweet}},
		{"/2/users/" + me + "/following", map[string]any{"target_user_id": other}},
	} {
		if st, _ := c.json("POST", r.path, r.body); st != 403 {
			t.Errorf("self-serve POST %s = %d, want 403", r.path, st)
		}
	}
	if st, _ := c.json("GET", "/2/users/"+me+"/mentions?max_results=5", nil); st != 200 {
		t.Errorf("a self-serve owned read = %d, want 200", st)
	}
	if err := s.SetAccess(xsim.AccessEnterprise); err != nil {
		t.Fatal(err)
	}

	reads := []string{
		"/2/tweets/" + mine + q(tf, ex, uf, mf),
		"/2/tweets/" + editedID + q(tf, ex, uf, mf),
		"/2/tweets/" + otherTweet + q(pf, "expansions=referenced_posts,author_id"),
		"/2/tweets/1",
		"/2/tweets/" + pollTweet + q("expansions=attachments.poll_ids", "tweet.fields=attachments,reply_settings"),
		"/2/tweets/" + pollTweet + q("expansions=attachments.poll_ids,author_id", "poll.fields=duration_minutes,end_datetime,id,options,voting_status"),
		"/2/tweets/" + longTweet + q("tweet.fields=note_tweet,entities,author_id", ex, uf),
		"/2/tweets/" + longTweet + q("post.fields=note_post"),
		"/2/tweets" + q("ids="+longTweet+","+mine, "tweet.fields=note_tweet"),
		"/2/tweets/search/recent" + q("query="+url.QueryEscape("long post"), "tweet.fields=note_tweet"),
		"/2/users/" + s.DemoAccounts()["brand_b"] + "/tweets" + q("tweet.fields=note_tweet", "max_results=5"),
		"/2/tweets" + q("ids="+mine+","+otherTweet+",1", tf, ex, uf),
		"/2/tweets/search/recent" + q("query=golang", "max_results=10", tf, ex, uf),
		"/2/tweets/search/recent" + q("query="+url.QueryEscape("(rust OR golang) -is:retweet has:links"), "max_results=100", "sort_order=recency"),
		"/2/tweets/search/recent" + q("query="+url.QueryEscape("(rust")),
		"/2/tweets/search/recent" + q("query="+url.QueryEscape("golang min_likes:1 min_replies:0 min_reposts:0"), tf),
		"/2/tweets/search/recent" + q("query="+url.QueryEscape("golang min_likes:lots")),
		"/2/tweets/" + otherTweet + "/liking_users" + q(uf, "max_results=10"),
		"/2/users/me" + q(uf, "expansions=pinned_post_id", tf),
		"/2/users/" + other + q(uf),
		"/2/users/1",
		"/2/users" + q("ids="+me+","+other+",1", uf),
		"/2/users/by/username/" + xsim.DemoUsername + q(uf),
		"/2/users/by/username/nobody_at_all",
		"/2/users/" + me + "/mentions" + q(tf, ex, uf, "max_results=5"),
		"/2/users/" + me + "/tweets" + q(tf, ex, mf, "max_results=100", "exclude=replies"),
		"/2/users/" + me + "/timelines/reverse_chronological" + q(tf, ex, uf, "max_results=20"),
		"/2/users/" + other + "/timelines/reverse_chronological",
		"/2/users/" + me + "/followers" + q(uf, "max_results=5"),
		"/2/users/" + me + "/following" + q(uf, "max_results=1000"),
		"/2/users/" + me + "/liked_tweets" + q(tf, ex, "max_results=5"),
		"/2/users/" + me + "/bookmarks" + q(tf, ex, "max_results=5"),
		"/2/lists/" + listID + "/members" + q(uf, "max_results=5"),
		"/2/lists/" + theirs.ID + "/members",
		"/2/lists/1/members",
		"/2/lists/" + theirs.ID + "/tweets" + q(tf, ex, uf, "max_results=10"),
		"/2/lists/1/tweets",
		"/2/users/" + me + "/owned_lists" + q("list.fields=created_at,description,follower_count,member_count,private", "expansions=owner_id", uf),
		"/2/users/" + theirs.OwnerID + "/owned_lists" + q("max_results=1"),
		"/2/users/" + me + "/blocking" + q(uf, "expansions=pinned_post_id", tf, "max_results=1"),
		"/2/users/" + other + "/blocking", // 403: another user's
		"/2/users/" + me + "/muting" + q(uf, "max_results=10"),
		"/2/users/" + other + "/muting", // 403
		"/2/users/" + me + "/pinned_lists" + q("list.fields=created_at,description,follower_count,member_count,private", "expansions=owner_id", uf),
		"/2/users/" + other + "/pinned_lists", // 403
		"/2/users/" + me + "/followed_lists" + q("list.fields=follower_count,member_count", "expansions=owner_id", uf, "max_results=1"),
		"/2/users/" + theirs.OwnerID + "/followed_lists",
		"/2/users/" + other + "/list_memberships" + q("list.fields=created_at,member_count,private", "expansions=owner_id", uf, "max_results=5"),
		"/2/users/" + me + "/list_memberships",
		"/2/usage/tweets" + q("days=7"),
		"/2/dm_events" + q("dm_event.fields=id,text,event_type,created_at,dm_conversation_id,attachments", "expansions=sender_id,participant_ids", "max_results=10", "event_types=MessageCreate"),
		"/2/dm_conversations/with/" + other + "/dm_events" + q("dm_event.fields=id,text,created_at", "expansions=sender_id", "max_results=1"),
		"/2/communities/search" + q("query=go", "community.fields=id,name,description,member_count,created_at,access,join_policy", "max_results=10"),
		"/2/tweets/analytics" + q("ids="+mine+","+otherTweet, "start_time=2026-01-01T00:00:00Z", "end_time=2030-01-01T00:00:00Z",
			"granularity=total", "analytics.fields=impressions,likes,retweets,replies,quote_tweets,bookmarks,engagements"),
	}
	for _, p := range reads {
		c.json("GET", p, nil)
	}
	c.badReq = true
	for _, p := range []string{
		"/2/tweets/search/recent" + q("query=rust", "max_results=5"),
		"/2/usage/tweets" + q("days=91"),
		"/2/tweets/abc",
		"/2/tweets/analytics" + q("ids="+mine, "start_time=yesterday", "end_time=2030-01-01T00:00:00Z"),
	} {
		if st, _ := c.json("GET", p, nil); st != 400 {
			t.Errorf("GET %s = %d, want 400", p, st)
		}
	}
	c.badReq = false
	// Follow a next_token.
	_, page := c.json("GET", "/2/users/"+me+"/followers?max_results=5", nil)
	if tok, _ := page["meta"].(map[string]any)["next_token"].(string); tok != "" {
		c.json("GET", "/2/users/"+me+"/followers?max_results=5&pagination_token="+tok, nil)
	}
	for _, path := range []string{"/2/users/" + me + "/blocking", "/2/users/" + me + "/followed_lists"} {
		_, page = c.json("GET", path+"?max_results=1", nil)
		meta, _ := page["meta"].(map[string]any)
		tok, _ := meta["next_token"].(string)
		if tok == "" {
			t.Errorf("GET %s?max_results=1 gave no next_token: %v", path, page)
			continue
		}
		c.json("GET", path+"?max_results=1&pagination_token="+tok, nil)
	}
	_, page = c.json("GET", "/2/tweets/search/recent?query=rust&max_results=10", nil)
	if tok, _ := page["meta"].(map[string]any)["next_token"].(string); tok != "" {
		c.json("GET", "/2/tweets/search/recent?query=rust&max_results=10&next_token="+tok, nil)
	}

	// Undo everything.
	c.json("DELETE", "/2/users/"+me+"/likes/"+otherTweet, nil)
	c.json("DELETE", "/2/users/"+me+"/retweets/"+otherTweet, nil)
	c.json("DELETE", "/2/users/"+me+"/bookmarks/"+otherTweet, nil)
	c.json("DELETE", "/2/users/"+me+"/following/"+other, nil)
	c.json("DELETE", "/2/users/"+me+"/muting/"+other, nil)
	c.json("DELETE", "/2/users/"+me+"/pinned_lists/"+theirs.ID, nil)
	c.json("DELETE", "/2/users/"+me+"/followed_lists/"+theirs.ID, nil)
	c.json("DELETE", "/2/users/"+me+"/followed_lists/"+brandList, nil)
	c.json("DELETE", "/2/lists/"+listID+"/members/"+other, nil)
	c.json("DELETE", "/2/lists/"+listID, nil)
	c.json("DELETE", "/2/lists/"+listID, nil)    // 404 once deleted
	c.json("DELETE", "/2/lists/"+theirs.ID, nil) // 403
	c.json("DELETE", "/2/tweets/"+mine, nil)
	c.json("DELETE", "/2/tweets/5", nil) // 404
	c.json("DELETE", "/2/dm_events/"+dmID, nil)

	// Error bodies: 401, 403 scope, 429.
	c.token = "bogus"
	c.json("GET", "/2/users/me", nil)
	limited, _, _ := s.IssueToken("", []string{"tweet.read", "users.read"})
	c.token = limited
	c.json("POST", "/2/tweets", map[string]any{"text": "no scope"})
	c.token = tok
	s.SetFault("GET /2/users/me", xsim.Fault{RateLimitNext: 1})
	c.json("GET", "/2/users/me", nil)
	s.SetFault("GET /2/users/me", xsim.Fault{ErrorNext: 1})
	c.json("GET", "/2/users/me", nil)

	for _, err := range c.errs {
		msg := err.Error()
		if i := strings.Index(msg, "\n"); i > 0 {
			msg = msg[:i]
		}
		t.Error(msg)
	}
	for _, r := range s.Routes() {
		// X's document has no v1.1 operation to exercise.
		if strings.HasPrefix(r, "GET /i/") || strings.Contains(r, "/2/oauth2/") || strings.Contains(r, " /1.1/") {
			continue
		}
		if !c.routes[r] {
			t.Errorf("route %s was not exercised", r)
		}
	}
}
