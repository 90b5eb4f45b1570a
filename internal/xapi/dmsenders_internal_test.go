package xapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzParseDMEvents feeds arbitrary bodies, as a server answering a DM
// event list might send, to the parser the universal read uses: it must
// never panic, and every event it keeps is a message with a numeric id
// and sender that the body really carries, so nothing it returns can make
// a user look as if they wrote to the account when the body did not say
// so.
func FuzzParseDMEvents(f *testing.F) {
	f.Add([]byte(`{"data":[{"id":"1580705921830768642","event_type":"MessageCreate","text":"Hi","sender_id":"906948460078698496","dm_conversation_id":"906948460078698496-1580705921830768640"}],"meta":{"result_count":1}}`))
	f.Add([]byte(`{"data":[{"id":"1","event_type":"ParticipantsJoin","sender_id":"2"},{"id":"3","sender_id":"4"}]}`))
	f.Add([]byte(`{"data":[{"id":1,"sender_id":"2"},{"id":"3","sender_id":["4"]},{"id":"5","event_type":7,"sender_id":"6"}]}`))
	f.Add([]byte(`{"data":[{"id":"12345678901234567890","sender_id":"9"},{"id":"-1","sender_id":"+2"},{"id":"","sender_id":""}]}`))
	f.Add([]byte(`{"data":null,"errors":[{"title":"Not Found"}]}`))
	f.Add([]byte(`{"data":{"id":"1","sender_id":"2"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, body []byte) {
		events, err := ParseDMEvents(body)
		if err != nil {
			if events != nil {
				t.Fatalf("events %v with error %v", events, err)
			}
			return
		}
		var raw struct {
			Data []map[string]json.RawMessage `json:"data"`
		}
		if json.Unmarshal(body, &raw) != nil {
			t.Fatalf("parsed %q, which is not a DM event list", body)
		}
		for _, ev := range events {
			if !isXID(ev.ID) || !isXID(ev.SenderID) {
				t.Fatalf("kept an event with id %q and sender %q", ev.ID, ev.SenderID)
			}
			if ev.EventType != "" && ev.EventType != "MessageCreate" {
				t.Fatalf("kept an event of type %q", ev.EventType)
			}
			// encoding/json matches keys without regard to case.
			found := false
			for _, d := range raw.Data {
				if slices.Contains(stringsOf(d, "id"), ev.ID) && slices.Contains(stringsOf(d, "sender_id"), ev.SenderID) {
					found = true
				}
			}
			if !found {
				t.Fatalf("event %+v is not in the body %q", ev, body)
			}
		}
	})
}

// stringsOf is every string value under a key of d that is key in any
// case.
func stringsOf(d map[string]json.RawMessage, key string) []string {
	var out []string
	for k, v := range d {
		var s string
		if strings.EqualFold(k, key) && json.Unmarshal(v, &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// TestDMEventsRoute: the universal reads whose answer lists DM events are
// the account's list, one conversation's by its id and the one with a
// participant; a single event, a send and other routes are not.
func TestDMEventsRoute(t *testing.T) {
	for path, want := range map[string]bool{
		"/2/dm_events":                         true,
		"/2/dm_events/":                        true,
		"/2/dm_conversations/1-2/dm_events":    true,
		"/2/dm_conversations/with/7/dm_events": true,
		"/2/dm_events/123":                     false,
		"/2/dm_conversations/with/7/messages":  false,
		"/2/dm_conversations//dm_events":       false,
		"/2/dm_conversations/with//dm_events":  false,
		"/2/users/me":                          false,
		"/1.1/dm_events":                       false,
		"":                                     false,
	} {
		if got := dmEventsRoute(path); got != want {
			t.Errorf("dmEventsRoute(%q) = %v, want %v", path, got, want)
		}
	}
}
