package xsim

import (
	"fmt"
)

// userList answers a paged list of users (offset tokens). Runs under s.mu.
func (s *Server) userList(c *call, ids []string, lo, hi, def int, kind string) reply {
	v, bad := c.parseView(false)
	if bad != nil {
		return *bad
	}
	n, bad := c.maxResults(lo, hi, def)
	if bad != nil {
		return *bad
	}
	off, _, bad := c.pageToken()
	if bad != nil {
		return *bad
	}
	start := min(int(min(off, uint64(len(ids)))), len(ids))
	end := min(start+n, len(ids))
	page := ids[start:end]
	in := newIncluder(s.st, v)
	data := make([]map[string]any, 0, len(page))
	for _, id := range page {
		u := s.st.users[id]
		data = append(data, s.st.renderUser(u, v))
		in.forUser(u)
	}
	body := offsetPage(data, start, end, len(ids), n)
	if inc := in.object(); inc != nil {
		body["includes"] = inc
	}
	s.chargeReads(c, kind, page)
	s.chargeReads(c, BillPostRead, in.tweetIDs)
	return ok(body)
}

// oneUser answers a single-user lookup.
func (s *Server) oneUser(c *call, u *User, param, value string) reply {
	v, bad := c.parseView(false)
	if bad != nil {
		return *bad
	}
	if u == nil {
		return ok(map[string]any{"errors": []any{notFoundItem("user", param, value)}})
	}
	in := newIncluder(s.st, v)
	in.forUser(u)
	body := map[string]any{"data": s.st.renderUser(u, v)}
	if inc := in.object(); inc != nil {
		body["includes"] = inc
	}
	s.chargeReads(c, BillUserRead, []string{u.ID})
	s.chargeReads(c, BillPostRead, in.tweetIDs)
	return ok(body)
}

func (s *Server) handleMe(c *call) reply { return s.oneUser(c, c.user, "id", c.user.ID) }

func (s *Server) handleGetUser(c *call) reply {
	id := c.r.PathValue("id")
	if bad := idParam("id", id); bad != nil {
		return *bad
	}
	return s.oneUser(c, s.st.users[id], "id", id)
}

func (s *Server) handleGetUserByName(c *call) reply {
	name := c.r.PathValue("username")
	if !validUsername(name) {
		return errInvalidParam("username", name, fmt.Sprintf("The `username` query parameter value [%s] does not match ^[A-Za-z0-9_]{1,15}$", name))
	}
	return s.oneUser(c, s.st.userByName(name), "username", name)
}

// batchBody is X's answer to a batch lookup: the found objects, an
// errors[] item per missing id, and the expansions.
func batchBody(data, errs []any, in *includer) map[string]any {
	body := map[string]any{}
	if len(data) > 0 {
		body["data"] = data
	}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	if inc := in.object(); inc != nil {
		body["includes"] = inc
	}
	return body
}

func (s *Server) handleGetUsers(c *call) reply {
	ids, bad := splitIDs(c, "ids")
	if bad != nil {
		return *bad
	}
	v, bad := c.parseView(false)
	if bad != nil {
		return *bad
	}
	in := newIncluder(s.st, v)
	var data, errs []any
	var found []string
	for _, id := range ids {
		u := s.st.users[id]
		if u == nil {
			errs = append(errs, notFoundItem("user", "ids", id))
			continue
		}
		data = append(data, s.st.renderUser(u, v))
		in.forUser(u)
		found = append(found, id)
	}
	body := batchBody(data, errs, in)
	s.chargeReads(c, BillUserRead, found)
	s.chargeReads(c, BillPostRead, in.tweetIDs)
	return ok(body)
}

// pathUser resolves the {id} path user of a list endpoint; a missing user is
// X's 200-with-errors answer.
func (s *Server) pathUser(c *call, param string) (*User, *reply) {
	id := c.r.PathValue(param)
	if bad := idParam(param, id); bad != nil {
		return nil, bad
	}
	u := s.st.users[id]
	if u == nil {
		rep := ok(map[string]any{"errors": []any{notFoundItem("user", param, id)}, "meta": map[string]any{"result_count": 0}})
		return nil, &rep
	}
	return u, nil
}

// selfUser requires the {param} path user to be the authenticated user, as
// X does for home timelines, bookmarks and every write.
func (s *Server) selfUser(c *call, param string) *reply {
	id := c.r.PathValue(param)
	if bad := idParam(param, id); bad != nil {
		return bad
	}
	if id != c.user.ID {
		rep := errNotYours(param, id)
		return &rep
	}
	return nil
}

func (s *Server) handleUserTweets(c *call) reply {
	u, bad := s.pathUser(c, "id")
	if bad != nil {
		return *bad
	}
	excl, bad := parseList("exclude", c.r.URL.Query().Get("exclude"), []string{"replies", "retweets"})
	if bad != nil {
		return *bad
	}
	var ids []string
	for _, id := range newestFirst(s.st.byAuthor[u.ID]) {
		t := s.st.tweets[id]
		if excl["replies"] && t.InReplyToTweetID != "" || excl["retweets"] && t.RetweetOf != "" {
			continue
		}
		ids = append(ids, id)
	}
	return s.tweetList(c, ids, pageOpts{lo: 5, hi: 100, def: 10, timeFilters: true})
}

func (s *Server) handleMentions(c *call) reply {
	u, bad := s.pathUser(c, "id")
	if bad != nil {
		return *bad
	}
	name := lower(u.Username)
	var ids []string
	for i := len(s.st.order) - 1; i >= 0; i-- {
		t := s.st.tweets[s.st.order[i]]
		if t.AuthorID == u.ID || t.RetweetOf != "" {
			continue
		}
		// X counts a reply to the user as a mention even when the text does
		// not repeat the handle.
		if t.InReplyToUserID == u.ID {
			ids = append(ids, t.ID)
			continue
		}
		for _, m := range mentionsOf(t.Text) {
			if lower(m) == name {
				ids = append(ids, t.ID)
				break
			}
		}
	}
	return s.tweetList(c, ids, pageOpts{lo: 5, hi: 100, def: 10, timeFilters: true})
}

func (s *Server) handleHomeTimeline(c *call) reply {
	if bad := s.selfUser(c, "id"); bad != nil {
		return *bad
	}
	excl, bad := parseList("exclude", c.r.URL.Query().Get("exclude"), []string{"replies", "retweets"})
	if bad != nil {
		return *bad
	}
	authors := map[string]bool{c.user.ID: true}
	for _, e := range s.st.following[c.user.ID] {
		authors[e.To] = true
	}
	var ids []string
	for i := len(s.st.order) - 1; i >= 0; i-- {
		t := s.st.tweets[s.st.order[i]]
		if !authors[t.AuthorID] {
			continue
		}
		if excl["replies"] && t.InReplyToTweetID != "" || excl["retweets"] && t.RetweetOf != "" {
			continue
		}
		ids = append(ids, t.ID)
	}
	return s.tweetList(c, ids, pageOpts{lo: 1, hi: 100, def: 100, timeFilters: true})
}

// latestEdges lists one end of each edge, newest edge first.
func latestEdges(es []Edge, end func(Edge) string) []string {
	ids := make([]string, 0, len(es))
	for i := len(es) - 1; i >= 0; i-- {
		ids = append(ids, end(es[i]))
	}
	return ids
}

func edgeFrom(e Edge) string { return e.From }
func edgeTo(e Edge) string   { return e.To }

func (s *Server) handleFollowers(c *call) reply {
	u, bad := s.pathUser(c, "id")
	if bad != nil {
		return *bad
	}
	return s.userList(c, latestEdges(s.st.followers[u.ID], edgeFrom), 1, 1000, 100, BillFollowRead)
}

func (s *Server) handleFollowing(c *call) reply {
	u, bad := s.pathUser(c, "id")
	if bad != nil {
		return *bad
	}
	return s.userList(c, latestEdges(s.st.following[u.ID], edgeTo), 1, 1000, 100, BillFollowRead)
}

func (s *Server) handleLikedTweets(c *call) reply {
	u, bad := s.pathUser(c, "id")
	if bad != nil {
		return *bad
	}
	return s.tweetList(c, latestEdges(s.st.likesBy[u.ID], edgeTo), pageOpts{lo: 5, hi: 100, def: 100, byOffset: true})
}

func (s *Server) handleBookmarks(c *call) reply {
	if bad := s.selfUser(c, "id"); bad != nil {
		return *bad
	}
	return s.tweetList(c, latestEdges(s.st.bookmarks[c.user.ID], edgeTo), pageOpts{lo: 1, hi: 100, def: 100, byOffset: true})
}

// tweetIDBody reads {"tweet_id": "..."} and checks that the post exists.
func (s *Server) tweetIDBody(c *call) (*Tweet, *reply) {
	var req struct {
		TweetID  string `json:"tweet_id"`
		FolderID string `json:"folder_id"`
	}
	if bad := c.jsonBody(&req); bad != nil {
		return nil, bad
	}
	if req.FolderID != "" && c.route.path != "/2/users/{id}/bookmarks" {
		rep := errInvalidParam("folder_id", req.FolderID, "The `folder_id` field is not allowed here.")
		return nil, &rep
	}
	if req.FolderID != "" {
		rep := errInvalidParam("folder_id", req.FolderID, "The `folder_id` field is not supported by this server.")
		return nil, &rep
	}
	if !isNumericID(req.TweetID) {
		rep := errInvalidParam("tweet_id", req.TweetID, fmt.Sprintf("The `tweet_id` field value [%s] is not a valid id", req.TweetID))
		return nil, &rep
	}
	t := s.st.tweets[req.TweetID]
	if t == nil {
		rep := errNotFound("tweet", "tweet_id", req.TweetID)
		return nil, &rep
	}
	return t, nil
}

// edgeCreate handles POST /2/users/{id}/likes and /bookmarks: the body
// names a post, and a repeat leaves the state (and the counter) unchanged.
func (s *Server) edgeCreate(add func(*state, Edge) bool, counter, bill, flag string) func(*call) reply {
	return func(c *call) reply {
		if bad := s.selfUser(c, "id"); bad != nil {
			return *bad
		}
		t, bad := s.tweetIDBody(c)
		if bad != nil {
			return *bad
		}
		if add(s.st, Edge{From: c.user.ID, To: t.ID, At: c.now.UTC()}) {
			s.count(counter)
		}
		s.chargeWrite(c, bill)
		return ok(map[string]any{"data": map[string]any{flag: true}})
	}
}

// edgeDelete handles DELETE /2/users/{id}/likes/{tweet_id} and
// /bookmarks/{tweet_id}.
func (s *Server) edgeDelete(remove func(st *state, user, tweet string) bool, counter, bill, flag string) func(*call) reply {
	return func(c *call) reply {
		if bad := s.selfUser(c, "id"); bad != nil {
			return *bad
		}
		tid, bad := s.pathTweet(c, "tweet_id")
		if bad != nil {
			return *bad
		}
		if remove(s.st, c.user.ID, tid) {
			s.count(counter)
		}
		s.chargeWrite(c, bill)
		return ok(map[string]any{"data": map[string]any{flag: false}})
	}
}

// pathTweet reads a post id from the path; a deleted post still counts as
// known, so undoing an engagement on it is not a 404.
func (s *Server) pathTweet(c *call, param string) (string, *reply) {
	tid := c.r.PathValue(param)
	if bad := idParam(param, tid); bad != nil {
		return "", bad
	}
	if s.st.tweets[tid] == nil && s.st.deleted[tid] == "" {
		r := errNotFound("tweet", param, tid)
		return "", &r
	}
	return tid, nil
}

// targetUserBody reads the other user of a relation write (follow, mute)
// from the body of POST /2/users/{id}/..., as X validates it.
func (s *Server) targetUserBody(c *call, verb string) (*User, *reply) {
	if bad := s.selfUser(c, "id"); bad != nil {
		return nil, bad
	}
	var req struct {
		TargetUserID string `json:"target_user_id"`
	}
	if bad := c.jsonBody(&req); bad != nil {
		return nil, bad
	}
	if !isNumericID(req.TargetUserID) {
		r := errInvalidParam("target_user_id", req.TargetUserID, fmt.Sprintf("The `target_user_id` field value [%s] is not a valid id", req.TargetUserID))
		return nil, &r
	}
	target := s.st.users[req.TargetUserID]
	if target == nil {
		r := errNotFound("user", "target_user_id", req.TargetUserID)
		return nil, &r
	}
	if target.ID == c.user.ID {
		r := errInvalidParam("target_user_id", target.ID, fmt.Sprintf("You cannot %s yourself.", verb))
		return nil, &r
	}
	return target, nil
}

func (s *Server) handleFollow(c *call) reply {
	target, bad := s.targetUserBody(c, "follow")
	if bad != nil {
		return *bad
	}
	if target.Protected && !s.st.isFollowing(c.user.ID, target.ID) {
		// Protected accounts must approve; the request stays pending.
		s.chargeWrite(c, BillInteraction)
		return ok(map[string]any{"data": map[string]any{"following": false, "pending_follow": true}})
	}
	if s.st.follow(Edge{From: c.user.ID, To: target.ID, At: c.now.UTC()}) {
		s.count(CountFollows)
	}
	s.chargeWrite(c, BillInteraction)
	return ok(map[string]any{"data": map[string]any{"following": true, "pending_follow": false}})
}

func (s *Server) handleUnfollow(c *call) reply {
	if bad := s.selfUser(c, "source_user_id"); bad != nil {
		return *bad
	}
	tid := c.r.PathValue("target_user_id")
	if bad := idParam("target_user_id", tid); bad != nil {
		return *bad
	}
	if s.st.users[tid] == nil {
		return errNotFound("user", "target_user_id", tid)
	}
	if s.st.unfollow(c.user.ID, tid) {
		s.count(CountUnfollows)
	}
	s.chargeWrite(c, BillInteractionDel)
	return ok(map[string]any{"data": map[string]any{"following": false}})
}

func (s *Server) handleRetweet(c *call) reply {
	if bad := s.selfUser(c, "id"); bad != nil {
		return *bad
	}
	t, bad := s.tweetIDBody(c)
	if bad != nil {
		return *bad
	}
	// Reposting a repost reposts the original, as on X.
	if t.RetweetOf != "" {
		if orig := s.st.tweets[t.RetweetOf]; orig != nil {
			t = orig
		}
	}
	if rid, done := s.st.retweets[t.ID][c.user.ID]; done {
		s.chargeWrite(c, BillInteraction)
		return ok(map[string]any{"data": map[string]any{"retweeted": true, "rest_id": rid}})
	}
	author := s.st.users[t.AuthorID]
	rt := &Tweet{ID: s.st.nextID(c.now), AuthorID: c.user.ID, Text: "RT @" + author.Username + ": " + t.Text,
		CreatedAt: c.now.UTC(), RetweetOf: t.ID, Lang: t.Lang, Source: "xsim"}
	rt.ConversationID = rt.ID
	s.st.addTweet(rt)
	s.count(CountRetweets)
	s.chargeWrite(c, BillInteraction)
	return ok(map[string]any{"data": map[string]any{"retweeted": true, "rest_id": rt.ID}})
}

func (s *Server) handleUnretweet(c *call) reply {
	if bad := s.selfUser(c, "id"); bad != nil {
		return *bad
	}
	tid, bad := s.pathTweet(c, "source_tweet_id")
	if bad != nil {
		return *bad
	}
	if rid, done := s.st.retweets[tid][c.user.ID]; done {
		s.st.removeTweet(rid)
		s.count(CountUnretweets)
	}
	s.chargeWrite(c, BillInteractionDel)
	return ok(map[string]any{"data": map[string]any{"retweeted": false}})
}

// offsetPage is the body of one page of an offset-paged list: its data
// (left out when empty) and meta with result_count and the tokens of the
// pages beside it, for a page [start, end) of total items read n at a time.
func offsetPage(data []map[string]any, start, end, total, n int) map[string]any {
	meta := map[string]any{"result_count": end - start}
	if end < total {
		meta["next_token"] = encodePageToken(uint64(end))
	}
	if start > 0 {
		meta["previous_token"] = encodePageToken(uint64(max(0, start-n)))
	}
	body := map[string]any{"meta": meta}
	if len(data) > 0 {
		body["data"] = data
	}
	return body
}
