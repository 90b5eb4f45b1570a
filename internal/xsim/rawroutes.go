package xsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// rawOnlyRoutes are endpoints no typed tool of the product calls, served so
// that a universal request to them (x_post) reaches the emulator the way it
// would reach X and a test can see whether it did: the other two v2 ways to
// send a direct message, and the v1.1 forms of a message and of deleting a
// List. The v1.1 routes take the same bearer token as v2 here; X takes
// OAuth 1.0a user context for them, which the emulator does not model.
func (s *Server) rawOnlyRoutes(api func(method, path string, scopes []string, write bool, h func(*call) reply) *route) []*route {
	scopesDMWrite := []string{"dm.write", "tweet.read", "users.read"}
	return []*route{
		api("POST", "/2/dm_conversations", scopesDMWrite, true, s.handleCreateDMConversation),
		api("POST", "/2/dm_conversations/{dm_conversation_id}/messages", scopesDMWrite, true, s.handleSendDMToConversation),
		api("POST", "/1.1/direct_messages/events/new.json", scopesDMWrite, true, s.handleLegacyDMEvent),
		api("POST", "/1.1/lists/destroy.json", []string{"list.write", "tweet.read", "users.read"}, true, s.handleLegacyListDestroy),
	}
}

// handleCreateDMConversation is POST /2/dm_conversations: a new group
// conversation with the caller and participant_ids, opened by a message.
func (s *Server) handleCreateDMConversation(c *call) reply {
	var req struct {
		ConversationType string     `json:"conversation_type"`
		ParticipantIDs   []string   `json:"participant_ids"`
		Message          *dmMessage `json:"message"`
	}
	if bad := c.jsonBody(&req); bad != nil {
		return *bad
	}
	if req.ConversationType != "Group" {
		return errInvalidParam("conversation_type", req.ConversationType, "The `conversation_type` field must be Group.")
	}
	if n := len(req.ParticipantIDs); n < 2 || n > 49 {
		return errInvalidParam("participant_ids", strconv.Itoa(n), "The `participant_ids` field must name 2 to 49 users.")
	}
	if req.Message == nil {
		return errInvalidParam("message", "", "The `message` field is required.")
	}
	if bad := req.Message.check(); bad != nil {
		return *bad
	}
	var to []*User
	for _, id := range req.ParticipantIDs {
		if bad := idParam("participant_ids", id); bad != nil {
			return *bad
		}
		u := s.st.users[id]
		if u == nil {
			return errNotFound("user", "participant_ids", id)
		}
		to = append(to, u)
	}
	ev, bad := s.deliver(c, s.st.nextID(c.now), to, *req.Message)
	if bad != nil {
		return *bad
	}
	return reply{status: http.StatusCreated, body: map[string]any{"data": map[string]any{
		"dm_conversation_id": ev.ConversationID, "dm_event_id": ev.ID,
	}}}
}

// handleSendDMToConversation is POST
// /2/dm_conversations/{dm_conversation_id}/messages: a message to a
// conversation the caller is in, one-to-one ("a-b", both user ids) or a
// group that has a message already.
func (s *Server) handleSendDMToConversation(c *call) reply {
	conv := c.r.PathValue("dm_conversation_id")
	var req dmMessage
	if bad := c.jsonBody(&req); bad != nil {
		return *bad
	}
	if bad := req.check(); bad != nil {
		return *bad
	}
	var members []string
	if a, b, ok := strings.Cut(conv, "-"); ok && isNumericID(a) && isNumericID(b) && dmConversationID(a, b) == conv {
		members = []string{a, b}
	} else if i := slices.IndexFunc(s.st.dms, func(e *DMEvent) bool { return e.ConversationID == conv }); i >= 0 {
		members = s.st.dms[i].ParticipantIDs
	}
	if !slices.Contains(members, c.user.ID) {
		return errNotFound("dm_conversation", "dm_conversation_id", conv)
	}
	var to []*User
	for _, id := range members {
		if id == c.user.ID {
			continue
		}
		u := s.st.users[id]
		if u == nil {
			return errNotFound("user", "dm_conversation_id", conv)
		}
		to = append(to, u)
	}
	ev, bad := s.deliver(c, conv, to, req)
	if bad != nil {
		return *bad
	}
	return reply{status: http.StatusCreated, body: map[string]any{"data": map[string]any{
		"dm_conversation_id": ev.ConversationID, "dm_event_id": ev.ID,
	}}}
}

// legacyError is v1.1's error body: {"errors":[{"code","message"}]}.
func legacyError(status, code int, message string) reply {
	return reply{status: status, body: map[string]any{"errors": []any{map[string]any{"code": code, "message": message}}}}
}

// v1.1's error codes for the answers below.
const (
	legacyNoUser      = 108
	legacyBadRequest  = 214
	legacyNotAllowed  = 349
	legacyNoList      = 34
	legacyNotListUser = 220
)

// handleLegacyDMEvent is POST /1.1/direct_messages/events/new.json: a
// message_create event to one recipient, answered with the event.
func (s *Server) handleLegacyDMEvent(c *call) reply {
	var req struct {
		Event struct {
			Type          string `json:"type"`
			MessageCreate struct {
				Target struct {
					RecipientID string `json:"recipient_id"`
				} `json:"target"`
				MessageData struct {
					Text       *string `json:"text"`
					Attachment *struct {
						Type  string `json:"type"`
						Media struct {
							ID string `json:"id"`
						} `json:"media"`
					} `json:"attachment"`
				} `json:"message_data"`
			} `json:"message_create"`
		} `json:"event"`
	}
	if err := json.Unmarshal(c.body, &req); err != nil || req.Event.Type != "message_create" {
		return legacyError(http.StatusBadRequest, legacyBadRequest, "event.type: must be message_create")
	}
	mc := req.Event.MessageCreate
	m := dmMessage{Text: mc.MessageData.Text}
	if a := mc.MessageData.Attachment; a != nil {
		m.Attachments = append(m.Attachments, struct {
			MediaID string `json:"media_id"`
		}{a.Media.ID})
	}
	if m.check() != nil {
		return legacyError(http.StatusBadRequest, legacyBadRequest, "event.message_create.message_data: a text or an attachment is required")
	}
	to := s.st.users[mc.Target.RecipientID]
	if to == nil {
		return legacyError(http.StatusNotFound, legacyNoUser, "Cannot find specified user.")
	}
	if !s.st.acceptsDMFrom(to, c.user.ID) {
		return legacyError(http.StatusForbidden, legacyNotAllowed, DetailDMNotAllowed)
	}
	ev, bad := s.deliver(c, dmConversationID(c.user.ID, to.ID), []*User{to}, m)
	if bad != nil {
		return *bad
	}
	return ok(map[string]any{"event": map[string]any{
		"type": "message_create", "id": ev.ID, "created_timestamp": strconv.FormatInt(ev.CreatedAt.UnixMilli(), 10),
		"message_create": map[string]any{"target": map[string]any{"recipient_id": to.ID}, "sender_id": c.user.ID,
			"message_data": map[string]any{"text": ev.Text}},
	}})
}

// handleLegacyListDestroy is POST /1.1/lists/destroy.json?list_id=: the
// caller's List deleted, answered with the List as it was.
func (s *Server) handleLegacyListDestroy(c *call) reply {
	id := c.r.URL.Query().Get("list_id")
	if !isNumericID(id) {
		return legacyError(http.StatusNotFound, legacyNoList, "Sorry, that page does not exist.")
	}
	l, bad := s.ownListByID(c, "list_id", id)
	if bad != nil {
		if bad.status == http.StatusForbidden {
			return legacyError(http.StatusForbidden, legacyNotListUser, fmt.Sprintf("You cannot delete list %s: only its owner can.", id))
		}
		return legacyError(http.StatusNotFound, legacyNoList, "Sorry, that page does not exist.")
	}
	delete(s.st.lists, l.ID)
	s.count(CountListsDeleted)
	s.chargeWrite(c, BillListManage)
	mode := "public"
	if l.Private {
		mode = "private"
	}
	return ok(map[string]any{"id": json.Number(l.ID), "id_str": l.ID, "name": l.Name, "description": l.Description,
		"mode": mode, "member_count": len(l.Members), "user": map[string]any{"id_str": l.OwnerID}})
}
