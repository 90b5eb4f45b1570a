package xapi

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// MaxDMLength is the longest direct message X takes, in characters.
const MaxDMLength = 10000

// DMEventTypes are the event_types X's DM event lists filter on.
var DMEventTypes = []string{"MessageCreate", "ParticipantsJoin", "ParticipantsLeave"}

// dmEventFields are the DM event fields every DM read asks for; the
// sender and participants come with their expansions.
const (
	dmEventFields     = "attachments,created_at,dm_conversation_id,event_type,id,text"
	dmEventExpansions = "sender_id,participant_ids"
)

// SentDM is X's answer to a sent direct message.
type SentDM struct {
	ConversationID string `json:"dm_conversation_id"`
	EventID        string `json:"dm_event_id"`
}

// DMEvent is one event of a direct-message conversation.
type DMEvent struct {
	ID             string    `json:"id"`
	EventType      string    `json:"event_type"`
	Text           string    `json:"text,omitempty"`
	SenderID       string    `json:"sender_id,omitempty"`
	ConversationID string    `json:"dm_conversation_id,omitempty"`
	CreatedAt      time.Time `json:"created_at,omitzero"`
	ParticipantIDs []string  `json:"participant_ids,omitempty"`
	MediaKeys      []string  `json:"media_keys,omitempty"`
}

type wireDMEvent struct {
	DMEvent
	Attachments *struct {
		MediaKeys []string `json:"media_keys"`
	} `json:"attachments"`
}

// SendDM sends a direct message to one user, with an optional uploaded
// media id. Like a post it is never retried once X may have received it.
func (c *Client) SendDM(ctx context.Context, participantID, text, mediaID string) (SentDM, CallInfo, error) {
	if err := checkID("participant_id", participantID); err != nil {
		return SentDM{}, CallInfo{}, err
	}
	body := map[string]any{}
	if text != "" {
		body["text"] = text
	}
	if mediaID != "" {
		if err := checkID("media_id", mediaID); err != nil {
			return SentDM{}, CallInfo{}, err
		}
		body["attachments"] = []map[string]string{{"media_id": mediaID}}
	}
	if len(body) == 0 {
		return SentDM{}, CallInfo{}, apperr.New(apperr.InvalidInput, "text: required unless media_id is given")
	}
	b, err := json.Marshal(body)
	if err != nil {
		return SentDM{}, CallInfo{}, apperr.Wrap(apperr.InternalError, err, "encode the message")
	}
	var out struct {
		Data *SentDM `json:"data"`
	}
	info, err := c.write(ctx, "POST", "/2/dm_conversations/with/"+participantID+"/messages", b, &out)
	if err != nil {
		return SentDM{}, info, err
	}
	if out.Data == nil || out.Data.EventID == "" {
		return SentDM{}, info, apperr.New(apperr.XOutcomeUnknown, "X accepted the direct message but returned no event id; verify before sending again")
	}
	return *out.Data, info, nil
}

// DeleteDM deletes one of the authenticated user's direct-message events
// and reports X's data.deleted.
func (c *Client) DeleteDM(ctx context.Context, eventID string) (bool, CallInfo, error) {
	if err := checkID("dm_event_id", eventID); err != nil {
		return false, CallInfo{}, err
	}
	var out struct {
		Data struct {
			Deleted bool `json:"deleted"`
		} `json:"data"`
	}
	info, err := c.write(ctx, "DELETE", "/2/dm_events/"+eventID, nil, &out)
	return out.Data.Deleted, info, err
}

// DMEventParams select a page of direct-message events.
type DMEventParams struct {
	// ParticipantID limits the events to the one-to-one conversation with
	// that user; empty lists every conversation's events.
	ParticipantID   string
	MaxResults      int
	PaginationToken string
	// EventTypes filters by DMEventTypes; empty means all.
	EventTypes []string
}

// DMEvents lists direct-message events, newest first.
func (c *Client) DMEvents(ctx context.Context, p DMEventParams) (*Page[DMEvent], error) {
	path := "/2/dm_events"
	if p.ParticipantID != "" {
		if err := checkID("participant_id", p.ParticipantID); err != nil {
			return nil, err
		}
		path = "/2/dm_conversations/with/" + p.ParticipantID + "/dm_events"
	}
	q := url.Values{"dm_event.fields": {dmEventFields}, "expansions": {dmEventExpansions}}
	if err := (ListParams{MaxResults: p.MaxResults, PaginationToken: p.PaginationToken}).apply(q, listRange{1, 100}, false); err != nil {
		return nil, err
	}
	if len(p.EventTypes) > 0 {
		for _, t := range p.EventTypes {
			if !slices.Contains(DMEventTypes, t) {
				return nil, apperr.New(apperr.InvalidInput, "event_types: %q is not one of %s", truncate(t, 40), strings.Join(DMEventTypes, ", "))
			}
		}
		q.Set("event_types", strings.Join(p.EventTypes, ","))
	}
	env, info, err := getEnvelope(ctx, c, path, q.Encode(), func(d []wireDMEvent) []string {
		ids := make([]string, len(d))
		for i := range d {
			ids[i] = d[i].ID
		}
		return ids
	})
	if err != nil {
		return nil, err
	}
	out := &Page[DMEvent]{Data: make([]DMEvent, 0, len(env.Data)), Meta: env.Meta, Errors: env.Errors, Call: info}
	for _, w := range env.Data {
		ev := w.DMEvent
		if w.Attachments != nil {
			ev.MediaKeys = w.Attachments.MediaKeys
		}
		out.Data = append(out.Data, ev)
	}
	c.noteDMSenders(ctx, out.Data)
	return out, nil
}

// Community is an X community.
type Community struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Access      string `json:"access,omitempty"`
	JoinPolicy  string `json:"join_policy,omitempty"`
	MemberCount int    `json:"member_count"`
	CreatedAt   string `json:"created_at,omitempty"`
}

// communityFields are the community fields a search asks for.
const communityFields = "access,created_at,description,id,join_policy,member_count,name"

// SearchCommunities finds communities by name or description.
func (c *Client) SearchCommunities(ctx context.Context, query string, maxResults int, paginationToken string) (*Page[Community], error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, apperr.New(apperr.InvalidInput, "query: must not be empty")
	}
	if len(query) > 4096 {
		return nil, apperr.New(apperr.InvalidInput, "query: longer than X's 4096 characters")
	}
	q := url.Values{"query": {query}, "community.fields": {communityFields}}
	if err := (ListParams{MaxResults: maxResults, PaginationToken: paginationToken}).apply(q, listRange{10, 100}, false); err != nil {
		return nil, err
	}
	env, info, err := getEnvelope(ctx, c, "/2/communities/search", q.Encode(), func(d []Community) []string {
		ids := make([]string, len(d))
		for i := range d {
			ids[i] = d[i].ID
		}
		return ids
	})
	if err != nil {
		return nil, err
	}
	out := &Page[Community]{Data: env.Data, Meta: env.Meta, Errors: env.Errors, Call: info}
	if out.Data == nil {
		out.Data = []Community{}
	}
	return out, nil
}
