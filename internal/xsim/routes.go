package xsim

import "strings"

const mediaBodyLimit = 16 << 20 // one simple upload (GIF limit) or chunk, plus multipart overhead

// routeTable lists every emulated endpoint.
func (s *Server) routeTable() []*route {
	// Scope sets, as X's OpenAPI document lists them for OAuth 2.0 user tokens.
	scopesTweetRead := []string{"tweet.read", "users.read"}
	scopesTweetWrite := []string{"tweet.read", "tweet.write", "users.read"}
	scopesFollowRead := []string{"follows.read", "tweet.read", "users.read"}
	scopesFollowW := []string{"follows.write", "tweet.read", "users.read"}
	scopesLikeRead := []string{"like.read", "tweet.read", "users.read"}
	scopesLikeWrite := []string{"like.write", "tweet.read", "users.read"}
	scopesBookRead := []string{"bookmark.read", "tweet.read", "users.read"}
	scopesBookWrite := []string{"bookmark.write", "tweet.read", "users.read"}
	scopesMedia := []string{"media.write"}
	scopesMuteW := []string{"mute.write", "tweet.read", "users.read"}
	scopesListRead := []string{"list.read", "tweet.read", "users.read"}
	scopesListWrite := []string{"list.write", "tweet.read", "users.read"}
	scopesDMRead := []string{"dm.read", "tweet.read", "users.read"}
	scopesDMWrite := []string{"dm.write", "tweet.read", "users.read"}
	api := func(method, path string, scopes []string, write bool, h func(*call) reply) *route {
		return &route{key: method + " " + path, method: method, path: path, api: true, scopes: scopes, write: write, handle: h}
	}
	open := func(method, path string, h func(*call) reply) *route {
		return &route{key: method + " " + path, method: method, path: path, handle: h}
	}
	rs := []*route{
		// Posts.
		api("GET", "/2/tweets", scopesTweetRead, false, s.handleGetTweets),
		api("POST", "/2/tweets", scopesTweetWrite, true, s.handleCreateTweet),
		api("GET", "/2/tweets/{id}", scopesTweetRead, false, s.handleGetTweet),
		api("DELETE", "/2/tweets/{id}", scopesTweetWrite, true, s.handleDeleteTweet),
		api("GET", "/2/tweets/search/recent", scopesTweetRead, false, s.handleSearchRecent),
		api("GET", "/2/tweets/analytics", scopesTweetRead, false, s.handlePostAnalytics),
		api("GET", "/2/tweets/{id}/liking_users", scopesLikeRead, false, s.handleLikingUsers),
		// Users.
		api("GET", "/2/users/me", scopesTweetRead, false, s.handleMe),
		api("GET", "/2/users", scopesTweetRead, false, s.handleGetUsers),
		api("GET", "/2/users/{id}", scopesTweetRead, false, s.handleGetUser),
		api("GET", "/2/users/by/username/{username}", scopesTweetRead, false, s.handleGetUserByName),
		api("GET", "/2/users/{id}/tweets", scopesTweetRead, false, s.handleUserTweets),
		api("GET", "/2/users/{id}/mentions", scopesTweetRead, false, s.handleMentions),
		api("GET", "/2/users/{id}/timelines/reverse_chronological", scopesTweetRead, false, s.handleHomeTimeline),
		api("GET", "/2/users/{id}/followers", scopesFollowRead, false, s.handleFollowers),
		api("GET", "/2/users/{id}/following", scopesFollowRead, false, s.handleFollowing),
		api("GET", "/2/users/{id}/liked_tweets", scopesLikeRead, false, s.handleLikedTweets),
		api("GET", "/2/users/{id}/bookmarks", scopesBookRead, false, s.handleBookmarks),
		// Graph and engagement writes.
		api("POST", "/2/users/{id}/likes", scopesLikeWrite, true, s.edgeCreate((*state).like, CountLikes, BillInteraction, "liked")),
		api("DELETE", "/2/users/{id}/likes/{tweet_id}", scopesLikeWrite, true, s.edgeDelete((*state).unlike, CountUnlikes, BillInteractionDel, "liked")),
		api("POST", "/2/users/{id}/following", scopesFollowW, true, s.handleFollow),
		api("DELETE", "/2/users/{source_user_id}/following/{target_user_id}", scopesFollowW, true, s.handleUnfollow),
		api("POST", "/2/users/{id}/retweets", scopesTweetWrite, true, s.handleRetweet),
		api("DELETE", "/2/users/{id}/retweets/{source_tweet_id}", scopesTweetWrite, true, s.handleUnretweet),
		api("POST", "/2/users/{id}/bookmarks", scopesBookWrite, true, s.edgeCreate((*state).bookmark, CountBookmarks, BillBookmark, "bookmarked")),
		api("DELETE", "/2/users/{id}/bookmarks/{tweet_id}", scopesBookWrite, true, s.edgeDelete((*state).unbookmark, CountUnbookmarks, BillBookmark, "bookmarked")),
		api("POST", "/2/users/{id}/muting", scopesMuteW, true, s.relationCreate("muting", "mute", "muting", BillInteraction)),
		api("DELETE", "/2/users/{source_user_id}/muting/{target_user_id}", scopesMuteW, true, s.relationDelete("muting", "muting", BillInteractionDel)),
		api("GET", "/2/users/{id}/muting", []string{"mute.read", "tweet.read", "users.read"}, false, s.relationList("muting")),
		// X's API reads blocks but no longer makes them.
		api("GET", "/2/users/{id}/blocking", []string{"block.read", "tweet.read", "users.read"}, false, s.relationList("blocking")),
		// Lists.
		api("POST", "/2/lists", []string{"list.read", "list.write", "tweet.read", "users.read"}, true, s.handleCreateList),
		api("DELETE", "/2/lists/{id}", scopesListWrite, true, s.handleDeleteList),
		api("GET", "/2/lists/{id}/members", scopesListRead, false, s.handleListMembers),
		api("POST", "/2/lists/{id}/members", scopesListWrite, true, s.handleAddListMember),
		api("DELETE", "/2/lists/{id}/members/{user_id}", scopesListWrite, true, s.handleRemoveListMember),
		api("GET", "/2/lists/{id}/tweets", scopesListRead, false, s.handleListTweets),
		api("GET", "/2/users/{id}/owned_lists", scopesListRead, false, s.handleOwnedLists),
		api("GET", "/2/users/{id}/followed_lists", scopesListRead, false, s.handleFollowedLists),
		api("POST", "/2/users/{id}/followed_lists", scopesListWrite, true, s.handleFollowList),
		api("DELETE", "/2/users/{id}/followed_lists/{list_id}", scopesListWrite, true, s.handleUnfollowList),
		api("GET", "/2/users/{id}/pinned_lists", scopesListRead, false, s.handlePinnedLists),
		api("POST", "/2/users/{id}/pinned_lists", scopesListWrite, true, s.handlePinList),
		api("DELETE", "/2/users/{id}/pinned_lists/{list_id}", scopesListWrite, true, s.handleUnpinList),
		api("GET", "/2/users/{id}/list_memberships", scopesListRead, false, s.handleListMemberships),
		// Media.
		api("POST", "/2/media/upload", scopesMedia, true, s.handleMediaUpload),
		api("GET", "/2/media/upload", scopesMedia, false, s.handleMediaStatus),
		api("POST", "/2/media/upload/initialize", scopesMedia, true, s.handleMediaInit),
		api("POST", "/2/media/upload/{id}/append", scopesMedia, true, s.handleMediaAppend),
		api("POST", "/2/media/upload/{id}/finalize", scopesMedia, true, s.handleMediaFinalize),
		api("POST", "/2/media/metadata", scopesMedia, true, s.handleMediaMetadata),
		// Direct messages.
		api("POST", "/2/dm_conversations/with/{participant_id}/messages", scopesDMWrite, true, s.handleSendDM),
		api("GET", "/2/dm_conversations/with/{participant_id}/dm_events", scopesDMRead, false, s.handleDMEvents),
		api("GET", "/2/dm_events", scopesDMRead, false, s.handleDMEvents),
		api("DELETE", "/2/dm_events/{event_id}", []string{"dm.read", "dm.write"}, true, s.handleDeleteDM),
		// Communities.
		api("GET", "/2/communities/search", scopesTweetRead, false, s.handleSearchCommunities),
		// Usage (X requires an app token here; the emulator accepts any valid token).
		api("GET", "/2/usage/tweets", nil, false, s.handleUsage),
		// OAuth 2.0.
		open("GET", "/i/oauth2/authorize", s.handleAuthorize),
		open("POST", "/2/oauth2/token", s.handleToken),
		open("POST", "/2/oauth2/revoke", s.handleRevoke),
	}
	rs = append(rs, s.rawOnlyRoutes(api)...)
	for _, r := range rs {
		if strings.HasPrefix(r.path, "/2/media/upload") {
			r.maxBody = mediaBodyLimit
		}
	}
	return rs
}
