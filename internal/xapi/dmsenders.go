package xapi

import "sync"

// maxDMSenders bounds the senders a client remembers; past it the memory
// starts over, which sends a DM to a person, never a wrong answer.
const maxDMSenders = 8192

// seenDMSenders remembers the users whose messages this client read in
// the account's DM events (any conversation, any page), so that whether a
// user wrote to the account first is known without another read.
type seenDMSenders struct {
	mu   sync.Mutex
	from map[string]bool
}

func (s *seenDMSenders) note(events []DMEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range events {
		if ev.SenderID == "" || (ev.EventType != "" && ev.EventType != "MessageCreate") {
			continue
		}
		if s.from == nil || len(s.from) >= maxDMSenders {
			s.from = map[string]bool{}
		}
		s.from[ev.SenderID] = true
	}
}

// DMedBy reports whether this client read a direct message user sent:
// to the authenticated account, as DM events are only the account's own.
func (c *Client) DMedBy(user string) bool {
	c.dmSenders.mu.Lock()
	defer c.dmSenders.mu.Unlock()
	return c.dmSenders.from[user]
}
