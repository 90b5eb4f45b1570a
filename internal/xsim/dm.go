package xsim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// DMEvent is one direct-message event: a message from SenderID to the
// other participant of a one-to-one conversation.
type DMEvent struct {
	ID             string    `json:"id"`
	ConversationID string    `json:"dm_conversation_id"`
	SenderID       string    `json:"sender_id"`
	ParticipantIDs []string  `json:"participant_ids"`
	Text           string    `json:"text,omitempty"`
	MediaKeys      []string  `json:"media_keys,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	Deleted        bool      `json:"deleted,omitempty"`
}

// Community is an X community and its members.
type Community struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// MemberIDs may post in the community.
	MemberIDs []string `json:"member_ids,omitempty"`
	// MemberBase counts members outside the emulated world.
	MemberBase int `json:"member_base,omitempty"`
}

// DetailDMNotAllowed is X's 403 detail for a message to a user who does
// not take messages from the sender.
const DetailDMNotAllowed = "You cannot send messages to this user."

// DetailNotCommunityMember is X's 403 detail for a post in a community by
// someone who is not a member.
const DetailNotCommunityMember = "You are not permitted to create a Post in this Community: you are not a member."

// DetailFeatureUnavailable is X's 403 detail for an endpoint or feature
// outside the app's access level.
const DetailFeatureUnavailable = "You currently have access to a subset of X API V2 endpoints and limited v1.1 endpoints (e.g. media post, oauth) only. If you need access to this endpoint, you may need a different access level. You can learn more here: https://developer.x.com/en/portal/product"

// errFeatureUnavailable is X's client-forbidden answer for a feature the
// app's access level does not include.
func errFeatureUnavailable(clientID string) reply {
	return reply{status: http.StatusForbidden, problem: true, body: map[string]any{
		"client_id":           clientID,
		"detail":              DetailFeatureUnavailable,
		"registration_url":    "https://developer.x.com/en/portal/product",
		"title":               "Client Forbidden",
		"required_enrollment": "Appropriate Level of API Access",
		"reason":              "client-not-enrolled",
		"type":                typeClientForbidden,
		"status":              http.StatusForbidden,
	}}
}

// dmConversationID is the id X gives a one-to-one conversation: both user
// ids, smaller first, joined by a dash.
func dmConversationID(a, b string) string {
	if cmpID(a, b) > 0 {
		a, b = b, a
	}
	return a + "-" + b
}

// acceptsDMFrom applies the recipient's message setting: a user who takes
// messages only from accounts they follow refuses everyone else.
func (s *state) acceptsDMFrom(to *User, from string) bool {
	return !to.DMsFromFollowedOnly || s.isFollowing(to.ID, from)
}

// handleSendDM is POST /2/dm_conversations/with/{participant_id}/messages.
func (s *Server) handleSendDM(c *call) reply {
	pid := c.r.PathValue("participant_id")
	if bad := idParam("participant_id", pid); bad != nil {
		return *bad
	}
	var req dmMessage
	if bad := c.jsonBody(&req); bad != nil {
		return *bad
	}
	if bad := req.check(); bad != nil {
		return *bad
	}
	to := s.st.users[pid]
	if to == nil {
		return errNotFound("user", "participant_id", pid)
	}
	ev, bad := s.deliver(c, dmConversationID(c.user.ID, to.ID), []*User{to}, req)
	if bad != nil {
		return *bad
	}
	return reply{status: http.StatusCreated, body: map[string]any{"data": map[string]any{
		"dm_conversation_id": ev.ConversationID, "dm_event_id": ev.ID,
	}}}
}

// dmMessage is a message as X's v2 endpoints take it: a text, media
// attachments, or both.
type dmMessage struct {
	Text        *string `json:"text"`
	Attachments []struct {
		MediaID string `json:"media_id"`
	} `json:"attachments"`
}

// check refuses a message with nothing in it, or an empty text.
func (m dmMessage) check() *reply {
	if m.Text != nil && *m.Text == "" {
		rep := errInvalidParam("text", "", "The `text` field must not be empty.")
		return &rep
	}
	if m.Text == nil && len(m.Attachments) == 0 {
		rep := errInvalidParam("text", "", "One of `text` or `attachments` is required.")
		return &rep
	}
	return nil
}

// deliver sends a checked message from the caller to the users to in
// conversation conv, as X does: not to oneself, not to someone who does
// not take messages from the caller, and with media the caller uploaded.
// It counts and bills the message.
func (s *Server) deliver(c *call, conv string, to []*User, m dmMessage) (*DMEvent, *reply) {
	fail := func(r reply) (*DMEvent, *reply) { return nil, &r }
	ev := &DMEvent{ConversationID: conv, SenderID: c.user.ID, ParticipantIDs: []string{c.user.ID}, CreatedAt: c.now.UTC()}
	if m.Text != nil {
		ev.Text = *m.Text
	}
	for _, u := range to {
		if u.ID == c.user.ID {
			return fail(errForbidden("You cannot send a message to yourself."))
		}
		if !s.st.acceptsDMFrom(u, c.user.ID) {
			return fail(errForbidden(DetailDMNotAllowed))
		}
		ev.ParticipantIDs = append(ev.ParticipantIDs, u.ID)
	}
	for _, a := range m.Attachments {
		md := s.st.media[a.MediaID]
		if !isNumericID(a.MediaID) || md == nil || md.OwnerID != c.user.ID || md.State != "succeeded" || !c.now.Before(md.ExpiresAt) {
			return fail(errInvalidParam("attachments.media_id", a.MediaID, "Your media IDs are invalid."))
		}
		ev.MediaKeys = append(ev.MediaKeys, md.Key)
	}
	ev.ID = s.st.nextID(c.now)
	s.st.dms = append(s.st.dms, ev)
	s.st.touch(touchedDM, ev.ID)
	s.changed()
	s.count(CountDMsSent)
	s.chargeWrite(c, BillDMCreate)
	return ev, nil
}

// handleDeleteDM is DELETE /2/dm_events/{event_id}: only the sender may
// delete a message.
func (s *Server) handleDeleteDM(c *call) reply {
	id := c.r.PathValue("event_id")
	if bad := idParam("event_id", id); bad != nil {
		return *bad
	}
	i := slices.IndexFunc(s.st.dms, func(e *DMEvent) bool { return e.ID == id && !e.Deleted })
	if i < 0 || !slices.Contains(s.st.dms[i].ParticipantIDs, c.user.ID) {
		return errNotFound("dm_event", "event_id", id)
	}
	if s.st.dms[i].SenderID != c.user.ID {
		return errForbidden("You can only delete messages you sent.")
	}
	s.st.dms[i].Deleted = true
	s.st.touch(touchedDM, id)
	s.changed()
	s.count(CountDMsDeleted)
	s.chargeWrite(c, BillInteractionDel)
	return ok(map[string]any{"data": map[string]any{"deleted": true}})
}

// handleDMEvents is GET /2/dm_events and, with a participant_id in the
// path, GET /2/dm_conversations/with/{participant_id}/dm_events: the
// user's message events, newest first, paged by offset.
func (s *Server) handleDMEvents(c *call) reply {
	q := c.r.URL.Query()
	pid := c.r.PathValue("participant_id")
	if pid != "" {
		if bad := idParam("participant_id", pid); bad != nil {
			return *bad
		}
		if s.st.users[pid] == nil {
			return errNotFound("user", "participant_id", pid)
		}
	}
	fields, bad := parseList("dm_event.fields", q.Get("dm_event.fields"),
		[]string{"attachments", "created_at", "dm_conversation_id", "entities", "event_type", "id", "text"})
	if bad != nil {
		return *bad
	}
	types, bad := parseList("event_types", q.Get("event_types"), []string{"MessageCreate", "ParticipantsJoin", "ParticipantsLeave"})
	if bad != nil {
		return *bad
	}
	exp, bad := parseList("expansions", q.Get("expansions"), []string{"attachments.media_keys", "participant_ids", "referenced_posts", "sender_id"})
	if bad != nil {
		return *bad
	}
	// The ids an expansion names are in the event as well, as X sends them.
	fields["sender_id"], fields["participant_ids"] = exp["sender_id"], exp["participant_ids"]
	n, bad := c.maxResults(1, 100, 100)
	if bad != nil {
		return *bad
	}
	off, _, bad := c.pageToken()
	if bad != nil {
		return *bad
	}
	var evs []*DMEvent
	if len(types) == 0 || types["MessageCreate"] {
		for i := len(s.st.dms) - 1; i >= 0; i-- {
			e := s.st.dms[i]
			if e.Deleted || !slices.Contains(e.ParticipantIDs, c.user.ID) {
				continue
			}
			if pid != "" && e.ConversationID != dmConversationID(c.user.ID, pid) {
				continue
			}
			evs = append(evs, e)
		}
	}
	start := min(int(min(off, uint64(len(evs)))), len(evs))
	end := min(start+n, len(evs))
	page := evs[start:end]
	data := make([]map[string]any, 0, len(page))
	ids := make([]string, 0, len(page))
	for _, e := range page {
		data = append(data, renderDMEvent(e, fields))
		ids = append(ids, e.ID)
	}
	body := offsetPage(data, start, end, len(evs), n)
	s.chargeReads(c, BillDMRead, ids)
	return ok(body)
}

// renderDMEvent builds the data object of e: id, event_type and text by
// default, as X does, plus the requested fields.
func renderDMEvent(e *DMEvent, fields map[string]bool) map[string]any {
	out := map[string]any{"id": e.ID, "event_type": "MessageCreate", "text": e.Text}
	if fields["sender_id"] {
		out["sender_id"] = e.SenderID
	}
	if fields["dm_conversation_id"] {
		out["dm_conversation_id"] = e.ConversationID
	}
	if fields["created_at"] {
		out["created_at"] = formatTime(e.CreatedAt)
	}
	if fields["participant_ids"] {
		out["participant_ids"] = slices.Clone(e.ParticipantIDs)
	}
	if fields["attachments"] && len(e.MediaKeys) > 0 {
		out["attachments"] = map[string]any{"media_keys": slices.Clone(e.MediaKeys)}
	}
	return out
}

// handleSearchCommunities is GET /2/communities/search: communities whose
// name or description holds every word of the query.
func (s *Server) handleSearchCommunities(c *call) reply {
	q := c.r.URL.Query()
	query := strings.TrimSpace(q.Get("query"))
	if query == "" || len(query) > 4096 {
		return errInvalidParam("query", query, "The `query` query parameter must be 1 to 4096 characters.")
	}
	fields, bad := parseList("community.fields", q.Get("community.fields"),
		[]string{"access", "created_at", "description", "id", "join_policy", "member_count", "name"})
	if bad != nil {
		return *bad
	}
	n, bad := c.maxResults(10, 100, 10)
	if bad != nil {
		return *bad
	}
	off, _, bad := c.pageToken()
	if bad != nil {
		return *bad
	}
	words := strings.Fields(strings.ToLower(query))
	var found []*Community
	for _, cm := range s.st.communityList() {
		hay := strings.ToLower(cm.Name + " " + cm.Description)
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(hay, w) }) {
			found = append(found, cm)
		}
	}
	start := min(int(min(off, uint64(len(found)))), len(found))
	end := min(start+n, len(found))
	data := make([]map[string]any, 0, end-start)
	ids := make([]string, 0, end-start)
	for _, cm := range found[start:end] {
		d := map[string]any{"id": cm.ID, "name": cm.Name}
		if fields["description"] && cm.Description != "" {
			d["description"] = cm.Description
		}
		if fields["created_at"] {
			d["created_at"] = formatTime(cm.CreatedAt)
		}
		if fields["member_count"] {
			d["member_count"] = cm.MemberBase + len(cm.MemberIDs)
		}
		if fields["access"] {
			d["access"] = "Public"
		}
		if fields["join_policy"] {
			d["join_policy"] = "Open"
		}
		data = append(data, d)
		ids = append(ids, cm.ID)
	}
	meta := map[string]any{}
	if end < len(found) {
		meta["next_token"] = encodePageToken(uint64(end))
	}
	body := map[string]any{"meta": meta}
	if len(data) > 0 {
		body["data"] = data
	}
	s.chargeReads(c, BillCommunityRead, ids)
	return ok(body)
}

// communityList lists the communities by id.
func (s *state) communityList() []*Community {
	out := make([]*Community, 0, len(s.communities))
	for _, cm := range s.communities {
		out = append(out, cm)
	}
	slices.SortFunc(out, func(a, b *Community) int { return cmpID(a.ID, b.ID) })
	return out
}

// communityRefusal is X's answer to a post in community id by userID, or
// nil when the post may go there: the community must exist and the user
// be a member.
func (s *state) communityRefusal(id, userID string) *reply {
	cm := s.communities[id]
	if cm == nil {
		rep := errNotFound("community", "community_id", id)
		return &rep
	}
	if !slices.Contains(cm.MemberIDs, userID) {
		rep := errForbidden(DetailNotCommunityMember)
		return &rep
	}
	return nil
}

// DMs returns every message the world holds (deleted ones flagged), oldest
// first, for tests.
func (s *Server) DMs() []DMEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]DMEvent, 0, len(s.st.dms))
	for _, e := range s.st.dms {
		c := *e
		c.ParticipantIDs = slices.Clone(e.ParticipantIDs)
		c.MediaKeys = slices.Clone(e.MediaKeys)
		out = append(out, c)
	}
	return out
}

// SetQuotesNeedHigherTier makes quote posts answer X's 403 for a feature
// outside the app's access level (World.QuotesNeedHigherTier).
func (s *Server) SetQuotesNeedHigherTier(v bool) {
	s.mu.Lock()
	s.st.quotesNeedTier = v
	s.st.touch(touchedSettings, "")
	s.changed()
	s.mu.Unlock()
	s.persist()
}

// SetDMsFromFollowedOnly sets whether a user takes messages only from the
// accounts they follow.
func (s *Server) SetDMsFromFollowedOnly(userID string, v bool) error {
	s.mu.Lock()
	u := s.st.users[userID]
	if u == nil {
		s.mu.Unlock()
		return fmt.Errorf("xsim: no user %s", userID)
	}
	u.DMsFromFollowedOnly = v
	s.st.touch(touchedUser, userID)
	s.changed()
	s.mu.Unlock()
	s.persist()
	return nil
}

// Communities returns the world's communities, for tests.
func (s *Server) Communities() []Community {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Community
	for _, cm := range s.st.communityList() {
		c := *cm
		c.MemberIDs = slices.Clone(cm.MemberIDs)
		out = append(out, c)
	}
	return out
}
