package xsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// X's edit rules: a post may be edited for 30 minutes after it was first
// posted, at most 5 times; each edit is a new post id, and every version
// lists the whole chain, oldest first.
const (
	EditWindow = 30 * time.Minute
	MaxEdits   = 5
)

// The 403 details of refused edits. X documents the rules but not its
// wording; these are the emulator's.
const (
	DetailEditNotVisible   = "You attempted to edit a Tweet that is deleted or not visible to you."
	DetailEditNotAuthor    = "You are not allowed to edit a Tweet that you did not author."
	DetailEditNotLatest    = "Only the latest version of a Tweet can be edited."
	DetailEditNotEligible  = "This Tweet is not eligible for editing (a Tweet with a poll, a repost or a reply to someone else cannot be edited)."
	DetailEditWindowClosed = "The time to edit this Tweet has passed."
	DetailEditsExhausted   = "This Tweet has been edited the maximum number of times."
)

// chain is the ids of t's edit history, oldest first; a post never edited
// is its own chain.
func (t *Tweet) chain() []string {
	if len(t.EditHistory) == 0 {
		return []string{t.ID}
	}
	return t.EditHistory
}

// isFirstVersion reports whether t is the post as first posted: only it
// counts as a reply or quote of its target, so editing one adds none.
func (t *Tweet) isFirstVersion() bool { return t.chain()[0] == t.ID }

// isLatest reports whether t is the newest version of its post, the one
// timelines and searches show.
func (t *Tweet) isLatest() bool {
	c := t.chain()
	return c[len(c)-1] == t.ID
}

// editEligible is X's "is_edit_eligible", fixed when a post is made:
// reposts, posts with a poll and replies to someone else cannot be edited.
func editEligible(t *Tweet) bool {
	return t.RetweetOf == "" && t.Poll == nil && (t.InReplyToTweetID == "" || t.InReplyToUserID == t.AuthorID)
}

// editControls are the chain's edit controls as of now: the window runs
// from the first version's creation. Runs under s.mu.
func (s *state) editControls(t *Tweet) (remaining int, eligible bool, until time.Time) {
	c := t.chain()
	first := t
	if f := s.tweets[c[0]]; f != nil {
		first = f
	}
	return max(MaxEdits-(len(c)-1), 0), editEligible(first), first.CreatedAt.Add(EditWindow)
}

// editOptions mirrors the spec's CreatePostsEditOptions.
type editOptions struct {
	PreviousPostID string `json:"previous_post_id"`
}

// handleEditTweet is POST /2/tweets with edit_options: a new version of
// one of the caller's own posts, within X's window and edit count. Fields
// that would change what kind of post it is (a reply, a quote, a poll, a
// community) cannot be edited. Runs under s.mu.
func (s *Server) handleEditTweet(c *call, req *createTweetRequest) reply {
	var eo editOptions
	dec := json.NewDecoder(bytes.NewReader(req.EditOptions))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&eo); err != nil || !isNumericID(eo.PreviousPostID) {
		return errInvalidParam("edit_options.previous_post_id", eo.PreviousPostID,
			"The `edit_options.previous_post_id` field must hold the id of the post to edit.")
	}
	fixed := map[string]bool{"reply": req.Reply != nil, "quote_tweet_id": req.QuoteTweetID != nil, "poll": present(req.Poll),
		"community_id": present(req.CommunityID), "geo": present(req.Geo), "card_uri": present(req.CardURI),
		"direct_message_deep_link": present(req.DMDeepLink)}
	for _, name := range []string{"reply", "quote_tweet_id", "poll", "community_id", "geo", "card_uri", "direct_message_deep_link"} {
		if fixed[name] {
			return errInvalidParam(name, "", fmt.Sprintf("The `%s` field cannot be changed by an edit.", name))
		}
	}
	if rs := req.ReplySettings; rs != nil && !slices.Contains([]string{"following", "mentionedUsers", "subscribers", "verified"}, *rs) {
		return errInvalidParam("reply_settings", *rs, fmt.Sprintf("The `reply_settings` field value [%s] is not one of [following,mentionedUsers,subscribers,verified]", *rs))
	}
	prev := s.st.tweets[eo.PreviousPostID]
	switch {
	case prev == nil:
		return errForbidden(DetailEditNotVisible)
	case prev.AuthorID != c.user.ID:
		return errForbidden(DetailEditNotAuthor)
	case !prev.isLatest():
		return errForbidden(DetailEditNotLatest)
	}
	remaining, eligible, until := s.st.editControls(prev)
	switch {
	case !eligible:
		return errForbidden(DetailEditNotEligible)
	case !c.now.Before(until):
		return errForbidden(DetailEditWindowClosed)
	case remaining <= 0:
		return errForbidden(DetailEditsExhausted)
	}
	text := ""
	if req.Text != nil {
		text = *req.Text
	}
	mediaKeys := slices.Clone(prev.MediaKeys)
	if req.Media != nil {
		ids := req.Media.MediaIDs
		if len(ids) == 0 || len(ids) > 4 {
			return errInvalidParam("media.media_ids", strings.Join(ids, ","), "The `media.media_ids` field must hold between 1 and 4 media ids.")
		}
		mediaKeys = nil
		for _, mid := range ids {
			md := s.st.media[mid]
			if !isNumericID(mid) || md == nil || md.OwnerID != c.user.ID || md.State != "succeeded" || !c.now.Before(md.ExpiresAt) {
				return errInvalidParam("media.media_ids", mid, "Your media IDs are invalid.")
			}
			mediaKeys = append(mediaKeys, md.Key)
		}
	}
	if strings.TrimSpace(text) == "" && len(mediaKeys) == 0 {
		return errInvalidParam("text", text, "Post text is required unless media is attached.")
	}
	if weightedLength(text) > maxPostLength {
		return errForbidden(DetailTooLong)
	}
	chain := prev.chain()
	if s.isDuplicateExcept(c.user.ID, text, c.now, chain) {
		return errDuplicate()
	}
	t := &Tweet{AuthorID: c.user.ID, Text: text, CreatedAt: c.now.UTC(), Lang: guessLang(text), Source: "xsim",
		ConversationID: prev.ConversationID, InReplyToTweetID: prev.InReplyToTweetID, InReplyToUserID: prev.InReplyToUserID,
		QuoteOf: prev.QuoteOf, ReplySettings: prev.ReplySettings, MediaKeys: mediaKeys}
	if req.ReplySettings != nil {
		t.ReplySettings = *req.ReplySettings
	}
	t.ID = s.st.nextID(c.now)
	if t.ConversationID == prev.ID {
		// A post that starts its conversation names its first version.
		t.ConversationID = chain[0]
	}
	next := append(slices.Clone(chain), t.ID)
	for _, id := range chain {
		if v := s.st.tweets[id]; v != nil {
			v.EditHistory = next
			s.st.touch(touchedTweet, id)
		}
	}
	t.EditHistory = next
	s.st.addTweet(t)
	s.count(CountTweetsEdited)
	if hasLink(text) {
		s.chargeWrite(c, BillContentURL)
	} else {
		s.chargeWrite(c, BillContentCreate)
	}
	return reply{status: http.StatusCreated, body: map[string]any{"data": map[string]any{
		"id": t.ID, "text": t.Text, "edit_history_tweet_ids": next, "edit_history_post_ids": next,
	}}}
}

// present reports a field the request gave a value.
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// isDuplicateExcept is isDuplicate leaving out the versions of the post
// being edited: editing back to an earlier text is no duplicate.
func (s *Server) isDuplicateExcept(userID, text string, now time.Time, skip []string) bool {
	norm := strings.TrimSpace(text)
	if norm == "" {
		return false
	}
	ids := s.st.byAuthor[userID]
	for i := len(ids) - 1; i >= 0; i-- {
		t := s.st.tweets[ids[i]]
		if t.CreatedAt.Before(now.Add(-s.opts.DuplicateWindow)) {
			break
		}
		if t.RetweetOf == "" && !slices.Contains(skip, t.ID) && strings.TrimSpace(t.Text) == norm {
			return true
		}
	}
	return false
}
