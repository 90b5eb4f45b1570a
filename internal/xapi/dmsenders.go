package xapi

import (
	"context"
	"encoding/json"
	"strings"
)

// DMSender is a user who sent the account a direct message, with the DM
// event that proves it and what the message said (an opt-out phrase in it
// puts the sender on the account's suppression list).
type DMSender struct {
	UserID  string
	EventID string
	Text    string
}

// DMSenderRecorder keeps the users who sent the account a DM, so that
// whether a user wrote to the account first is known to every process of
// the home and after a restart without another read of X. The client
// calls it with what every read of the account's DM events returned,
// typed or universal, whoever asked for it.
type DMSenderRecorder interface {
	RecordDMSenders(ctx context.Context, senders []DMSender) error
}

// noteDMSenders hands the recorder the users who wrote events, leaving
// out the account's own messages. A failure is logged and the read still
// answers: an unrecorded sender only sends a later DM to a person.
func (c *Client) noteDMSenders(ctx context.Context, events []DMEvent) {
	if c.dmSenders == nil {
		return
	}
	var from []DMSender
	for _, ev := range events {
		if (ev.EventType == "" || ev.EventType == "MessageCreate") && isXID(ev.SenderID) && isXID(ev.ID) {
			from = append(from, DMSender{UserID: ev.SenderID, EventID: ev.ID, Text: ev.Text})
		}
	}
	if len(from) == 0 {
		return
	}
	me, err := c.MyUserID(ctx)
	if err != nil {
		c.log.Warn("the DM senders read are not recorded: the account's own id is unknown", "err", err)
		return
	}
	others := from[:0]
	for _, s := range from {
		if s.UserID != me {
			others = append(others, s)
		}
	}
	if len(others) == 0 {
		return
	}
	if err := c.dmSenders.RecordDMSenders(ctx, others); err != nil {
		c.log.Warn("the DM senders read are not recorded", "err", err)
	}
}

// ParseDMEvents reads the DM events out of the body of X's answer to a
// DM event list (GET /2/dm_events and the per-conversation lists). The
// body is whatever the server sent: an event without a numeric id or
// sender, or of another type than a message, is left out rather than
// guessed at, and a body that is not such a list is an error.
func ParseDMEvents(body []byte) ([]DMEvent, error) {
	var env struct {
		Data []struct {
			ID        json.RawMessage `json:"id"`
			EventType json.RawMessage `json:"event_type"`
			SenderID  json.RawMessage `json:"sender_id"`
			Text      json.RawMessage `json:"text"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, err
	}
	out := make([]DMEvent, 0, len(env.Data))
	for _, d := range env.Data {
		var ev DMEvent
		// A field of the wrong JSON type leaves the event out; the other
		// events of the page still count.
		if json.Unmarshal(d.ID, &ev.ID) != nil || json.Unmarshal(d.SenderID, &ev.SenderID) != nil || !isXID(ev.ID) || !isXID(ev.SenderID) {
			continue
		}
		if len(d.EventType) > 0 && json.Unmarshal(d.EventType, &ev.EventType) != nil {
			continue
		}
		if len(d.Text) > 0 && json.Unmarshal(d.Text, &ev.Text) != nil {
			continue
		}
		if ev.EventType != "" && ev.EventType != "MessageCreate" {
			continue
		}
		out = append(out, ev)
	}
	return out, nil
}

// dmEventsRoute reports whether path lists the account's DM events: all
// of them, one conversation by its id, or the one with a participant.
func dmEventsRoute(path string) bool {
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	switch {
	case len(segs) == 3 && segs[1] == "2" && segs[2] == "dm_events":
		return true
	case len(segs) == 5 && segs[1] == "2" && segs[2] == "dm_conversations" && segs[3] != "" && segs[4] == "dm_events":
		return true
	case len(segs) == 6 && segs[1] == "2" && segs[2] == "dm_conversations" && segs[3] == "with" && segs[4] != "" && segs[5] == "dm_events":
		return true
	}
	return false
}
