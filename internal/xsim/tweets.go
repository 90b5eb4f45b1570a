package xsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// pageOpts describes how a tweet list pages.
type pageOpts struct {
	lo, hi, def int
	// byOffset pages by position (likes, bookmarks); otherwise by id, which
	// stays stable while new posts arrive.
	byOffset bool
	// sinceWindow limits results to posts newer than now-sinceWindow
	// (recent search: 7 days).
	sinceWindow time.Duration
	// timeFilters enables since_id/until_id/start_time/end_time.
	timeFilters bool
}

func parseTimeParam(c *call, name string) (time.Time, bool, *reply) {
	raw := c.r.URL.Query().Get(name)
	if raw == "" {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		rep := errInvalidParam(name, raw, fmt.Sprintf("Invalid '%s':'%s'. '%s' must be a valid RFC 3339 date-time (YYYY-MM-DDTHH:mm:ssZ).", name, raw, name))
		return time.Time{}, false, &rep
	}
	return t, true, nil
}

// tweetList answers a paged list of posts. ids are candidate ids in output
// order (newest first). Runs under s.mu.
func (s *Server) tweetList(c *call, ids []string, po pageOpts) reply {
	v, bad := c.parseView(true)
	if bad != nil {
		return *bad
	}
	n, bad := c.maxResults(po.lo, po.hi, po.def)
	if bad != nil {
		return *bad
	}
	tok, hasTok, bad := c.pageToken()
	if bad != nil {
		return *bad
	}
	q := c.r.URL.Query()
	var sinceID, untilID string
	var startT, endT time.Time
	var hasStart, hasEnd bool
	if po.timeFilters {
		for _, name := range []string{"since_id", "until_id"} {
			if raw := q.Get(name); raw != "" {
				if bad := idParam(name, raw); bad != nil {
					return *bad
				}
			}
		}
		sinceID, untilID = q.Get("since_id"), q.Get("until_id")
		if startT, hasStart, bad = parseTimeParam(c, "start_time"); bad != nil {
			return *bad
		}
		if endT, hasEnd, bad = parseTimeParam(c, "end_time"); bad != nil {
			return *bad
		}
		if hasStart && hasEnd && !startT.Before(endT) {
			return errInvalidParam("start_time", q.Get("start_time"), "Invalid 'start_time': it must be before 'end_time'.")
		}
	}
	var filtered []string
	for i, id := range ids {
		t := s.st.tweets[id]
		if t == nil || !t.isLatest() {
			continue
		}
		if po.sinceWindow > 0 && t.CreatedAt.Before(c.now.Add(-po.sinceWindow)) {
			continue
		}
		if sinceID != "" && cmpID(id, sinceID) <= 0 {
			continue
		}
		if untilID != "" && cmpID(id, untilID) >= 0 {
			continue
		}
		if hasStart && t.CreatedAt.Before(startT) {
			continue
		}
		if hasEnd && !t.CreatedAt.Before(endT) {
			continue
		}
		if hasTok {
			if po.byOffset {
				if uint64(i) < tok {
					continue
				}
			} else if v, err := strconv.ParseUint(id, 10, 64); err != nil || v >= tok {
				continue
			}
		}
		filtered = append(filtered, id)
	}
	// Offsets must refer to positions in ids, so keep them alongside.
	page := filtered
	more := false
	if len(page) > n {
		page, more = page[:n], true
	}
	in := newIncluder(s.st, v)
	data := make([]map[string]any, 0, len(page))
	for _, id := range page {
		t := s.st.tweets[id]
		data = append(data, s.st.renderTweet(t, v))
		in.forTweet(t)
	}
	meta := map[string]any{"result_count": len(page)}
	if len(page) > 0 {
		meta["newest_id"] = maxID(page)
		meta["oldest_id"] = minID(page)
	}
	if more {
		last := page[len(page)-1]
		if po.byOffset {
			meta["next_token"] = encodePageToken(uint64(slices.Index(ids, last) + 1))
		} else {
			u, _ := strconv.ParseUint(last, 10, 64)
			meta["next_token"] = encodePageToken(u)
		}
	}
	body := map[string]any{"meta": meta}
	if len(data) > 0 {
		body["data"] = data
	}
	if inc := in.object(); inc != nil {
		body["includes"] = inc
	}
	s.chargeReads(c, BillPostRead, append(slices.Clone(page), in.tweetIDs...))
	s.chargeReads(c, BillUserRead, in.userIDs)
	return ok(body)
}

func maxID(ids []string) string {
	return slices.MaxFunc(ids, cmpID)
}

func minID(ids []string) string {
	return slices.MinFunc(ids, cmpID)
}

// newestFirst returns ids in descending order.
func newestFirst(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// handleGetTweet is GET /2/tweets/{id}.
func (s *Server) handleGetTweet(c *call) reply {
	id := c.r.PathValue("id")
	if bad := idParam("id", id); bad != nil {
		return *bad
	}
	v, bad := c.parseView(true)
	if bad != nil {
		return *bad
	}
	t := s.st.tweets[id]
	if t == nil {
		return ok(map[string]any{"errors": []any{notFoundItem("tweet", "id", id)}})
	}
	in := newIncluder(s.st, v)
	in.forTweet(t)
	body := map[string]any{"data": s.st.renderTweet(t, v)}
	if inc := in.object(); inc != nil {
		body["includes"] = inc
	}
	s.chargeReads(c, BillPostRead, append([]string{id}, in.tweetIDs...))
	s.chargeReads(c, BillUserRead, in.userIDs)
	return ok(body)
}

// splitIDs parses a comma-separated ids parameter (1..100 numeric ids).
func splitIDs(c *call, param string) ([]string, *reply) {
	raw := c.r.URL.Query().Get(param)
	if raw == "" {
		rep := errInvalidParam(param, "", fmt.Sprintf("The `%s` query parameter can not be empty", param))
		return nil, &rep
	}
	ids := strings.Split(raw, ",")
	if len(ids) > 100 {
		rep := errInvalidParam(param, raw, fmt.Sprintf("The `%s` query parameter has %d items; at most 100 are allowed", param, len(ids)))
		return nil, &rep
	}
	for _, id := range ids {
		if !isNumericID(id) {
			rep := errInvalidParam(param, id, fmt.Sprintf("The `%s` query parameter value [%s] is not valid", param, id))
			return nil, &rep
		}
	}
	return ids, nil
}

// handleGetTweets is GET /2/tweets?ids=.
func (s *Server) handleGetTweets(c *call) reply {
	ids, bad := splitIDs(c, "ids")
	if bad != nil {
		return *bad
	}
	v, bad := c.parseView(true)
	if bad != nil {
		return *bad
	}
	in := newIncluder(s.st, v)
	var data, errs []any
	var found []string
	for _, id := range ids {
		t := s.st.tweets[id]
		if t == nil {
			errs = append(errs, notFoundItem("tweet", "ids", id))
			continue
		}
		data = append(data, s.st.renderTweet(t, v))
		in.forTweet(t)
		found = append(found, id)
	}
	body := batchBody(data, errs, in)
	s.chargeReads(c, BillPostRead, append(found, in.tweetIDs...))
	s.chargeReads(c, BillUserRead, in.userIDs)
	return ok(body)
}

// handleSearchRecent is GET /2/tweets/search/recent.
func (s *Server) handleSearchRecent(c *call) reply {
	q := c.r.URL.Query()
	raw := q.Get("query")
	node, err := parseQuery(raw)
	if err != nil {
		return errInvalidParam("query", raw, "There were errors processing your request: "+err.Error())
	}
	if so := q.Get("sort_order"); so != "" && so != "recency" && so != "relevancy" {
		return errInvalidParam("sort_order", so, fmt.Sprintf("The `sort_order` query parameter value [%s] is not one of [recency,relevancy]", so))
	}
	var ids []string
	for i := len(s.st.order) - 1; i >= 0; i-- {
		t := s.st.tweets[s.st.order[i]]
		if node.match(s.st.matchCtxFor(t)) {
			ids = append(ids, t.ID)
		}
	}
	return s.tweetList(c, ids, pageOpts{lo: 10, hi: 100, def: 10, sinceWindow: 7 * 24 * time.Hour, timeFilters: true})
}

// createTweetRequest mirrors the spec's CreatePostsRequest.
type createTweetRequest struct {
	Text                  *string         `json:"text"`
	Reply                 *replySettings  `json:"reply"`
	QuoteTweetID          *string         `json:"quote_tweet_id"`
	Media                 *mediaSettings  `json:"media"`
	ReplySettings         *string         `json:"reply_settings"`
	ForSuperFollowersOnly *bool           `json:"for_super_followers_only"`
	ShareWithFollowers    *bool           `json:"share_with_followers"`
	Nullcast              *bool           `json:"nullcast"`
	MadeWithAI            *bool           `json:"made_with_ai"`
	PaidPartnership       *bool           `json:"paid_partnership"`
	Poll                  json.RawMessage `json:"poll"`
	Geo                   json.RawMessage `json:"geo"`
	EditOptions           json.RawMessage `json:"edit_options"`
	CardURI               json.RawMessage `json:"card_uri"`
	CommunityID           json.RawMessage `json:"community_id"`
	DMDeepLink            json.RawMessage `json:"direct_message_deep_link"`
}

type replySettings struct {
	InReplyToTweetID          string   `json:"in_reply_to_tweet_id"`
	ExcludeReplyUserIDs       []string `json:"exclude_reply_user_ids"`
	AutoPopulateReplyMetadata *bool    `json:"auto_populate_reply_metadata"`
}

type mediaSettings struct {
	MediaIDs       []string        `json:"media_ids"`
	TaggedUserIDs  []string        `json:"tagged_user_ids"`
	Description    *string         `json:"description"`
	Title          *string         `json:"title"`
	Embeddable     *bool           `json:"embeddable"`
	PreviewMediaID *string         `json:"preview_media_id"`
	CallToActions  json.RawMessage `json:"call_to_actions"`
}

// handleCreateTweet is POST /2/tweets.
func (s *Server) handleCreateTweet(c *call) reply {
	var req createTweetRequest
	if bad := c.jsonBody(&req); bad != nil {
		return *bad
	}
	if present(req.EditOptions) {
		return s.handleEditTweet(c, &req)
	}
	for name, raw := range map[string]json.RawMessage{"geo": req.Geo,
		"card_uri": req.CardURI, "direct_message_deep_link": req.DMDeepLink} {
		if len(raw) > 0 && string(raw) != "null" {
			return errInvalidParam(name, string(raw), fmt.Sprintf("The `%s` field is not supported by this server.", name))
		}
	}
	text := ""
	if req.Text != nil {
		text = *req.Text
	}
	if rs := req.ReplySettings; rs != nil && !slices.Contains([]string{"following", "mentionedUsers", "subscribers", "verified"}, *rs) {
		return errInvalidParam("reply_settings", *rs, fmt.Sprintf("The `reply_settings` field value [%s] is not one of [following,mentionedUsers,subscribers,verified]", *rs))
	}
	var mediaIDs []string
	if req.Media != nil {
		mediaIDs = req.Media.MediaIDs
		if len(mediaIDs) == 0 || len(mediaIDs) > 4 {
			return errInvalidParam("media.media_ids", strings.Join(mediaIDs, ","), "The `media.media_ids` field must hold between 1 and 4 media ids.")
		}
	}
	if strings.TrimSpace(text) == "" && len(mediaIDs) == 0 {
		return errInvalidParam("text", text, "Post text is required unless media is attached.")
	}
	poll, bad := parsePoll(req.Poll)
	if bad != nil {
		return *bad
	}
	if poll != nil && (len(mediaIDs) > 0 || req.QuoteTweetID != nil) {
		return errInvalidParam("poll", string(req.Poll), "A post with a poll cannot have media or quote a post.")
	}
	// A subscriber may write a long post; anyone else gets X's refusal.
	if weightedLength(text) > maxLengthOf(c.user) {
		return errForbidden(DetailTooLong)
	}
	community, bad := s.communityOf(c, req.CommunityID)
	if bad != nil {
		return *bad
	}
	t := &Tweet{AuthorID: c.user.ID, Text: text, CreatedAt: c.now.UTC(), Lang: guessLang(text), Source: "xsim"}
	kind := replyOwn // not a reply: priced as a post
	if req.Reply != nil {
		pid := req.Reply.InReplyToTweetID
		if !isNumericID(pid) {
			return errInvalidParam("reply.in_reply_to_tweet_id", pid, fmt.Sprintf("The `reply.in_reply_to_tweet_id` field value [%s] is not a valid id", pid))
		}
		parent := s.st.tweets[pid]
		if parent == nil {
			return errForbidden("You attempted to reply to a Tweet that is deleted or not visible to you.")
		}
		if !s.st.mayReply(parent, c.user) {
			return errForbidden(DetailReplyNotAllowed)
		}
		kind = s.classifyReply(parent, c.user)
		if kind == replyNotSummoned && s.selfServe(c) {
			return errNotPermitted()
		}
		t.InReplyToTweetID = parent.ID
		t.InReplyToUserID = parent.AuthorID
		t.ConversationID = parent.ConversationID
	}
	if req.QuoteTweetID != nil {
		qid := *req.QuoteTweetID
		if !isNumericID(qid) {
			return errInvalidParam("quote_tweet_id", qid, fmt.Sprintf("The `quote_tweet_id` field value [%s] is not a valid id", qid))
		}
		if s.st.tweets[qid] == nil {
			return errForbidden("You attempted to quote a Tweet that is deleted or not visible to you.")
		}
		if s.selfServe(c) {
			return errNotPermitted()
		}
		if s.st.quotesNeedTier {
			return errFeatureUnavailable(c.grant.ClientID)
		}
		t.QuoteOf = qid
	}
	for _, mid := range mediaIDs {
		md := s.st.media[mid]
		if !isNumericID(mid) || md == nil || md.OwnerID != c.user.ID || md.State != "succeeded" || !c.now.Before(md.ExpiresAt) {
			return errInvalidParam("media.media_ids", mid, "Your media IDs are invalid.")
		}
		t.MediaKeys = append(t.MediaKeys, md.Key)
	}
	if s.isDuplicate(c.user.ID, text, c.now) {
		return errDuplicate()
	}
	t.ID = s.st.nextID(c.now)
	if t.ConversationID == "" {
		t.ConversationID = t.ID
	}
	if req.ReplySettings != nil {
		t.ReplySettings = *req.ReplySettings
	}
	t.CommunityID = community
	if poll != nil {
		poll.ID = s.st.nextID(c.now)
		poll.EndsAt = c.now.UTC().Add(time.Duration(poll.DurationMinutes) * time.Minute)
		t.Poll = poll
	}
	s.st.addTweet(t)
	s.count(CountTweetsCreated)
	switch {
	case kind == replySummoned && s.selfServe(c):
		// X's pay-per-use price; an Enterprise contract is priced apart.
		s.chargeWrite(c, BillSummonedReply)
	case hasLink(text):
		s.chargeWrite(c, BillContentURL)
	default:
		s.chargeWrite(c, BillContentCreate)
	}
	return reply{status: http.StatusCreated, body: map[string]any{"data": map[string]any{
		"id": t.ID, "text": t.Text, "edit_history_tweet_ids": []string{t.ID}, "edit_history_post_ids": []string{t.ID},
	}}}
}

// communityOf reads a create request's community_id: a post there needs
// the community to exist and its author to be a member.
func (s *Server) communityOf(c *call, raw json.RawMessage) (string, *reply) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var id string
	if json.Unmarshal(raw, &id) != nil || !isNumericID(id) {
		rep := errInvalidParam("community_id", string(raw), fmt.Sprintf("The `community_id` field value [%s] is not a valid id", string(raw)))
		return "", &rep
	}
	return id, s.st.communityRefusal(id, c.user.ID)
}

// DetailReplyNotAllowed is X's 403 detail for a reply its post's
// reply_settings do not allow.
const DetailReplyNotAllowed = "Reply to this Tweet is not allowed because you have not been mentioned or otherwise engaged by the author of the Tweet you are replying to."

// mayReply applies the parent's reply_settings: its author and the users it
// mentions may always reply; "following" adds whom the author follows,
// "verified" verified users. Nobody subscribes in the emulated world.
func (s *state) mayReply(parent *Tweet, u *User) bool {
	if parent.ReplySettings == "" || parent.ReplySettings == "everyone" || u.ID == parent.AuthorID {
		return true
	}
	for _, name := range mentionsOf(parent.Text) {
		if strings.EqualFold(name, u.Username) {
			return true
		}
	}
	switch parent.ReplySettings {
	case "following":
		return s.isFollowing(parent.AuthorID, u.ID)
	case "verified":
		return u.Verified
	}
	return false
}

// parsePoll reads a create request's poll by the spec's CreatePostsPoll.
func parsePoll(raw json.RawMessage) (*Poll, *reply) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var p struct {
		Options         []string `json:"options"`
		DurationMinutes *int     `json:"duration_minutes"`
		ReplySettings   *string  `json:"reply_settings"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		r := errInvalidParam("poll", string(raw), "The `poll` field is not a valid poll object.")
		return nil, &r
	}
	if len(p.Options) < 2 || len(p.Options) > 4 {
		r := errInvalidParam("poll.options", strings.Join(p.Options, ","), "The `poll.options` field must hold between 2 and 4 options.")
		return nil, &r
	}
	for _, o := range p.Options {
		if n := utf8.RuneCountInString(o); n < 1 || n > 25 {
			r := errInvalidParam("poll.options", o, "Each poll option must be between 1 and 25 characters.")
			return nil, &r
		}
	}
	if p.DurationMinutes == nil || *p.DurationMinutes < 5 || *p.DurationMinutes > 10080 {
		r := errInvalidParam("poll.duration_minutes", "", "The `poll.duration_minutes` field must be between 5 and 10080.")
		return nil, &r
	}
	return &Poll{Options: slices.Clone(p.Options), DurationMinutes: *p.DurationMinutes}, nil
}

// isDuplicate applies X's rule that an account may not repeat the text of
// one of its recent posts.
func (s *Server) isDuplicate(userID, text string, now time.Time) bool {
	return s.isDuplicateExcept(userID, text, now, nil)
}

func guessLang(text string) string {
	if strings.TrimSpace(text) == "" {
		return "zxx"
	}
	for _, r := range text {
		switch {
		case r >= 0x3040 && r <= 0x30ff:
			return "ja"
		case r >= 0xac00 && r <= 0xd7af:
			return "ko"
		}
	}
	return "en"
}

// handleDeleteTweet is DELETE /2/tweets/{id}. Deleting an already deleted
// post answers deleted:true again without a second side effect, so a retried
// delete is harmless.
func (s *Server) handleDeleteTweet(c *call) reply {
	id := c.r.PathValue("id")
	if bad := idParam("id", id); bad != nil {
		return *bad
	}
	t := s.st.tweets[id]
	if t == nil {
		if s.st.deleted[id] == c.user.ID {
			s.chargeWrite(c, BillContentManage)
			return ok(map[string]any{"data": map[string]any{"deleted": true}})
		}
		return errNotFound("tweet", "id", id)
	}
	if t.AuthorID != c.user.ID {
		return errForbidden("You are not allowed to delete a Tweet that you did not author.")
	}
	// Deleting any version of an edited post deletes every version.
	for _, v := range t.chain() {
		s.st.removeTweet(v)
	}
	s.count(CountTweetsDeleted)
	s.chargeWrite(c, BillContentManage)
	return ok(map[string]any{"data": map[string]any{"deleted": true}})
}

// handleLikingUsers is GET /2/tweets/{id}/liking_users.
func (s *Server) handleLikingUsers(c *call) reply {
	id := c.r.PathValue("id")
	if bad := idParam("id", id); bad != nil {
		return *bad
	}
	if s.st.tweets[id] == nil {
		return ok(map[string]any{"errors": []any{notFoundItem("tweet", "id", id)}, "meta": map[string]any{"result_count": 0}})
	}
	return s.userList(c, latestEdges(s.st.likers[id], edgeFrom), 1, 100, 100, BillUserRead)
}
