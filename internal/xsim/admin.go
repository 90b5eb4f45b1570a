package xsim

import (
	"errors"
	"fmt"
	"strings"
)

// The methods below arrange a scenario directly, without HTTP, for tests and
// demos. They are not X behaviour: they bypass rate limits, billing and the
// side-effect counters (which count only what API calls applied).

// UserIDByUsername returns the id of the account with that handle
// (case-insensitive), or "" when there is none.
func (s *Server) UserIDByUsername(username string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.st.userByName(username); u != nil {
		return u.ID
	}
	return ""
}

// Block makes userID block targetID, as done on x.com: X's API reads
// blocks (GET /2/users/{id}/blocking) but no longer makes them.
func (s *Server) Block(userID, targetID string) error {
	s.mu.Lock()
	if s.st.users[userID] == nil || s.st.users[targetID] == nil || userID == targetID {
		s.mu.Unlock()
		return fmt.Errorf("xsim: Block: %q may not block %q: both must be users, and different", userID, targetID)
	}
	s.st.relate("blocking", Edge{From: userID, To: targetID, At: s.now().UTC()})
	s.mu.Unlock()
	s.persist()
	return nil
}

// PostAs publishes a post by userID now, as if that account had posted it on
// X (for example another account mentioning the demo account). A non-empty
// inReplyTo makes it a reply. It returns the new post id.
func (s *Server) PostAs(userID, text, inReplyTo string) (string, error) {
	id, err := s.postAs(userID, text, inReplyTo)
	if err == nil {
		s.persist()
	}
	return id, err
}

func (s *Server) postAs(userID, text, inReplyTo string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.users[userID] == nil {
		return "", fmt.Errorf("xsim: PostAs: unknown user id %q", userID)
	}
	if strings.TrimSpace(text) == "" {
		return "", errors.New("xsim: PostAs: text is empty")
	}
	now := s.now()
	t := &Tweet{AuthorID: userID, Text: text, CreatedAt: now.UTC(), Lang: guessLang(text), Source: "xsim"}
	if inReplyTo != "" {
		parent := s.st.tweets[inReplyTo]
		if parent == nil {
			return "", fmt.Errorf("xsim: PostAs: in-reply-to post %q does not exist", inReplyTo)
		}
		t.InReplyToTweetID, t.InReplyToUserID, t.ConversationID = parent.ID, parent.AuthorID, parent.ConversationID
	}
	t.ID = s.st.nextID(now)
	if t.ConversationID == "" {
		t.ConversationID = t.ID
	}
	s.st.addTweet(t)
	return t.ID, nil
}

// DMAs sends a direct message from userID to the demo account now, as if
// that user had written it on X. It returns the new event id.
func (s *Server) DMAs(userID, text string) (string, error) {
	s.mu.Lock()
	if s.st.users[userID] == nil || userID == s.st.demoUserID {
		s.mu.Unlock()
		return "", fmt.Errorf("xsim: DMAs: unknown or demo user id %q", userID)
	}
	if strings.TrimSpace(text) == "" {
		s.mu.Unlock()
		return "", errors.New("xsim: DMAs: text is empty")
	}
	now := s.now()
	ev := &DMEvent{ID: s.st.nextID(now), Text: text, SenderID: userID, ConversationID: dmConversationID(userID, s.st.demoUserID),
		ParticipantIDs: []string{userID, s.st.demoUserID}, CreatedAt: now.UTC()}
	s.st.dms = append(s.st.dms, ev)
	s.st.touch(touchedDM, ev.ID)
	s.mu.Unlock()
	s.persist()
	return ev.ID, nil
}

// Vote casts n votes for the option at position (1 for the first) of the
// poll of post tweetID, as if n accounts had voted on X. A closed poll
// takes no votes.
func (s *Server) Vote(tweetID string, position int, n int64) error {
	s.mu.Lock()
	t := s.st.tweets[tweetID]
	switch {
	case t == nil || t.Poll == nil:
		s.mu.Unlock()
		return fmt.Errorf("xsim: Vote: post %q has no poll", tweetID)
	case position < 1 || position > len(t.Poll.Options):
		s.mu.Unlock()
		return fmt.Errorf("xsim: Vote: position %d: the poll has options 1 to %d", position, len(t.Poll.Options))
	case n < 1:
		s.mu.Unlock()
		return fmt.Errorf("xsim: Vote: %d votes: must be at least 1", n)
	case !s.now().Before(t.Poll.EndsAt):
		s.mu.Unlock()
		return fmt.Errorf("xsim: Vote: the poll of post %q is closed", tweetID)
	}
	if len(t.Poll.Votes) < len(t.Poll.Options) {
		t.Poll.Votes = append(t.Poll.Votes, make([]int64, len(t.Poll.Options)-len(t.Poll.Votes))...)
	}
	t.Poll.Votes[position-1] += n
	s.st.touch(touchedTweet, tweetID)
	s.mu.Unlock()
	s.persist()
	return nil
}
