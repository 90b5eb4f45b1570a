package xsim

import "maps"

// Counter names: each counts side effects actually applied, so a test can
// prove a mutation happened exactly once whatever the client saw.
const (
	CountTweetsCreated = "tweets_created"
	CountTweetsDeleted = "tweets_deleted"
	CountTweetsEdited  = "tweets_edited"
	CountLikes         = "likes"
	CountUnlikes       = "unlikes"
	CountFollows       = "follows"
	CountUnfollows     = "unfollows"
	CountRetweets      = "retweets"
	CountUnretweets    = "unretweets"
	CountBookmarks     = "bookmarks"
	CountUnbookmarks   = "unbookmarks"
	CountMediaUploaded = "media_uploaded"
	CountMediaMetadata = "media_metadata"
	// List writes that changed a List (a repeated add changes nothing).
	CountListsCreated       = "lists_created"
	CountListsDeleted       = "lists_deleted"
	CountListMembersAdded   = "list_members_added"
	CountListMembersRemoved = "list_members_removed"
	CountDMsSent            = "dms_sent"
	CountDMsDeleted         = "dms_deleted"
)

func counterNames() []string {
	return []string{
		CountTweetsCreated, CountTweetsDeleted, CountTweetsEdited, CountLikes, CountUnlikes, CountFollows, CountUnfollows,
		CountRetweets, CountUnretweets, CountBookmarks, CountUnbookmarks, CountMediaUploaded, CountMediaMetadata,
		CountListsCreated, CountListsDeleted, CountListMembersAdded, CountListMembersRemoved,
		CountDMsSent, CountDMsDeleted,
	}
}

// Counters returns a copy of the side-effect counters (every name present).
func (s *Server) Counters() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.counters)
}

// ResetCounters sets every counter back to zero.
func (s *Server) ResetCounters() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range counterNames() {
		s.counters[k] = 0
	}
}

// count records an applied side effect. Runs under s.mu.
func (s *Server) count(name string) { s.counters[name]++ }
