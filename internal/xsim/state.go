package xsim

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// twepoch is X's snowflake epoch (2010-11-04T01:42:54.657Z) in milliseconds.
const twepoch = 1288834974657

// state is the server's indexed, mutable copy of a World. Every access is
// guarded by Server.mu.
type state struct {
	demoUserID string
	// demoAccounts are the sandbox accounts by name (World.DemoAccounts).
	demoAccounts map[string]string
	users        map[string]*User
	byName       map[string]string   // lower-case username -> id
	tweets       map[string]*Tweet   // live tweets
	order        []string            // live tweet ids, ascending
	byAuthor     map[string][]string // author -> tweet ids ascending
	deleted      map[string]string   // deleted post id -> its author
	following    map[string][]Edge   // follower -> edges
	followers    map[string][]Edge   // followee -> edges
	likesBy      map[string][]Edge   // user -> liked tweets
	likers       map[string][]Edge   // tweet -> users
	bookmarks    map[string][]Edge   // user -> bookmarked tweets
	// relations: relation name -> user -> edges to other users.
	relations  map[string]map[string][]Edge
	bookmarked map[string]int // tweet -> bookmark count
	retweets   map[string]map[string]string
	replies    map[string]int // tweet -> replies inside the world
	quotes     map[string]int
	media      map[string]*Media
	grants     map[string]*Grant
	billing    []Charge
	seen       map[string]bool
	suspended  map[string]bool
	lists      map[string]*List
	// dms are the direct messages, oldest first.
	dms         []*DMEvent
	communities map[string]*Community
	// quotesNeedTier is World.QuotesNeedHigherTier.
	quotesNeedTier bool
	// access and accessByUser are World.Access and World.AccessByUser.
	access       Access
	accessByUser map[string]Access
	lastID       int64
	// changes, with a state file, is what changed since the file last
	// took the state in (see worldlog.go); nil without one.
	changes *changes
}

func newState(w *World) *state {
	s := &state{
		demoUserID:   w.DemoUserID,
		demoAccounts: maps.Clone(w.DemoAccounts),
		users:        map[string]*User{},
		byName:       map[string]string{},
		tweets:       map[string]*Tweet{},
		byAuthor:     map[string][]string{},
		deleted:      map[string]string{},
		following:    map[string][]Edge{},
		followers:    map[string][]Edge{},
		likesBy:      map[string][]Edge{},
		likers:       map[string][]Edge{},
		bookmarks:    map[string][]Edge{},
		relations:    map[string]map[string][]Edge{},
		bookmarked:   map[string]int{},
		retweets:     map[string]map[string]string{},
		replies:      map[string]int{},
		quotes:       map[string]int{},
		media:        map[string]*Media{},
		grants:       map[string]*Grant{},
		seen:         map[string]bool{},
		suspended:    map[string]bool{},
		lists:        map[string]*List{},
		communities:  map[string]*Community{},
		lastID:       w.Sequence,
	}
	for i := range w.DMs {
		e := w.DMs[i]
		e.ParticipantIDs = slices.Clone(e.ParticipantIDs)
		e.MediaKeys = slices.Clone(e.MediaKeys)
		s.dms = append(s.dms, &e)
	}
	for i := range w.Communities {
		cm := w.Communities[i]
		cm.MemberIDs = slices.Clone(cm.MemberIDs)
		s.communities[cm.ID] = &cm
	}
	s.quotesNeedTier = w.QuotesNeedHigherTier
	s.access, s.accessByUser = w.Access, maps.Clone(w.AccessByUser)
	if s.accessByUser == nil {
		s.accessByUser = map[string]Access{}
	}
	// A loaded world spells each id, language and source afresh wherever it
	// appears; kept once, the demo world's strings take half the memory.
	in := interner{}
	for i := range w.Users {
		u := w.Users[i]
		u.ID = in.of(u.ID)
		s.users[u.ID] = &u
		s.byName[lower(u.Username)] = u.ID
	}
	tweets := slices.Clone(w.Tweets)
	slices.SortFunc(tweets, func(a, b Tweet) int { return cmpID(a.ID, b.ID) })
	for i := range tweets {
		t := tweets[i]
		in.tweet(&t)
		s.addTweet(&t)
	}
	for _, e := range w.Follows {
		s.follow(in.edge(e))
	}
	for _, e := range w.Likes {
		if s.tweets[e.To] != nil {
			s.like(in.edge(e))
		}
	}
	for _, e := range w.Bookmarks {
		if s.tweets[e.To] != nil {
			s.bookmark(in.edge(e))
		}
	}
	for name, es := range w.Relations {
		for _, e := range es {
			if s.users[e.From] != nil && s.users[e.To] != nil {
				s.relate(name, e)
			}
		}
	}
	for i := range w.Media {
		m := w.Media[i]
		s.media[m.ID] = &m
	}
	for _, d := range w.Deleted {
		s.deleted[d.To] = d.From
	}
	for i := range w.Grants {
		g := w.Grants[i]
		s.grants[g.Hash] = &g
	}
	s.billing = slices.Clone(w.Billing)
	for _, k := range w.Seen {
		s.seen[k] = true
	}
	for _, id := range w.Suspended {
		s.suspended[id] = true
	}
	for i := range w.Lists {
		l := w.Lists[i]
		l.Members = slices.Clone(l.Members)
		s.lists[l.ID] = &l
	}
	return s
}

// interner keeps one copy of each string of a world being loaded.
type interner map[string]string

func (in interner) of(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	in[s] = s
	return s
}

func (in interner) edge(e Edge) Edge {
	e.From, e.To = in.of(e.From), in.of(e.To)
	return e
}

// tweet interns a post's strings: ids recur as authors, conversations,
// replies, quotes and retweets, a few languages and sources cover every
// post, and a retweet repeats its original's text.
func (in interner) tweet(t *Tweet) {
	for _, f := range []*string{&t.ID, &t.Text, &t.AuthorID, &t.ConversationID, &t.InReplyToTweetID, &t.InReplyToUserID,
		&t.QuoteOf, &t.RetweetOf, &t.Lang, &t.Source, &t.ReplySettings, &t.CommunityID} {
		*f = in.of(*f)
	}
	for i := range t.MediaKeys {
		t.MediaKeys[i] = in.of(t.MediaKeys[i])
	}
	for i := range t.EditHistory {
		t.EditHistory[i] = in.of(t.EditHistory[i])
	}
}

// snapshot converts the state back into a World.
func (s *state) snapshot(now time.Time) *World {
	w := &World{Version: worldVersion, DemoUserID: s.demoUserID, DemoAccounts: maps.Clone(s.demoAccounts), Sequence: s.lastID, SavedAt: now.UTC()}
	for _, u := range s.users {
		w.Users = append(w.Users, *u)
	}
	slices.SortFunc(w.Users, func(a, b User) int { return cmpID(a.ID, b.ID) })
	for _, id := range s.order {
		w.Tweets = append(w.Tweets, *s.tweets[id])
	}
	for _, es := range s.following {
		w.Follows = append(w.Follows, es...)
	}
	for _, es := range s.likesBy {
		w.Likes = append(w.Likes, es...)
	}
	for _, es := range s.bookmarks {
		w.Bookmarks = append(w.Bookmarks, es...)
	}
	sortEdgesStable(w.Follows)
	sortEdgesStable(w.Likes)
	sortEdgesStable(w.Bookmarks)
	w.Relations = s.relationEdges()
	for _, m := range s.media {
		w.Media = append(w.Media, *m)
	}
	slices.SortFunc(w.Media, func(a, b Media) int { return cmpID(a.ID, b.ID) })
	for id, author := range s.deleted {
		w.Deleted = append(w.Deleted, Edge{From: author, To: id})
	}
	slices.SortFunc(w.Deleted, func(a, b Edge) int { return cmpID(a.To, b.To) })
	for _, g := range s.grants {
		w.Grants = append(w.Grants, *g)
	}
	slices.SortFunc(w.Grants, func(a, b Grant) int { return strings.Compare(a.Hash, b.Hash) })
	w.Billing = slices.Clone(s.billing)
	for k := range s.seen {
		w.Seen = append(w.Seen, k)
	}
	slices.Sort(w.Seen)
	for id := range s.suspended {
		w.Suspended = append(w.Suspended, id)
	}
	slices.SortFunc(w.Suspended, cmpID)
	w.Lists = s.listSnapshot()
	for _, e := range s.dms {
		c := *e
		c.ParticipantIDs = slices.Clone(e.ParticipantIDs)
		c.MediaKeys = slices.Clone(e.MediaKeys)
		w.DMs = append(w.DMs, c)
	}
	for _, cm := range s.communityList() {
		c := *cm
		c.MemberIDs = slices.Clone(cm.MemberIDs)
		w.Communities = append(w.Communities, c)
	}
	w.QuotesNeedHigherTier = s.quotesNeedTier
	w.Access, w.AccessByUser = s.access, s.accessSnapshot()
	return w
}

func sortEdgesStable(es []Edge) {
	slices.SortStableFunc(es, func(a, b Edge) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		if c := cmpID(a.From, b.From); c != 0 {
			return c
		}
		return cmpID(a.To, b.To)
	})
}

// nextID returns a snowflake-shaped id for time t that is strictly greater
// than every id handed out before, so ordering by id is ordering by time.
func (s *state) nextID(t time.Time) string {
	id := max((t.UnixMilli()-twepoch)<<22, s.lastID+1)
	s.lastID = id
	return strconv.FormatInt(id, 10)
}

func (s *state) addTweet(t *Tweet) {
	s.touch(touchedTweet, t.ID)
	s.tweets[t.ID] = t
	s.order = insertSorted(s.order, t.ID)
	s.byAuthor[t.AuthorID] = insertSorted(s.byAuthor[t.AuthorID], t.ID)
	if n, err := strconv.ParseInt(t.ID, 10, 64); err == nil && n > s.lastID {
		s.lastID = n
	}
	if t.InReplyToTweetID != "" && t.isFirstVersion() {
		s.replies[t.InReplyToTweetID]++
	}
	if t.QuoteOf != "" && t.isFirstVersion() {
		s.quotes[t.QuoteOf]++
	}
	if t.RetweetOf != "" {
		m := s.retweets[t.RetweetOf]
		if m == nil {
			m = map[string]string{}
			s.retweets[t.RetweetOf] = m
		}
		m[t.AuthorID] = t.ID
	}
}

func (s *state) removeTweet(id string) {
	t := s.tweets[id]
	if t == nil {
		return
	}
	s.touch(touchedTweet, id)
	delete(s.tweets, id)
	s.order = removeSorted(s.order, id)
	s.byAuthor[t.AuthorID] = removeSorted(s.byAuthor[t.AuthorID], id)
	s.deleted[id] = t.AuthorID
	if t.InReplyToTweetID != "" && t.isFirstVersion() {
		s.replies[t.InReplyToTweetID]--
	}
	if t.QuoteOf != "" && t.isFirstVersion() {
		s.quotes[t.QuoteOf]--
	}
	if t.RetweetOf != "" {
		delete(s.retweets[t.RetweetOf], t.AuthorID)
	}
	for _, e := range s.likers[id] {
		s.touchEdge(touchedLike, "", e.From, id)
		s.likesBy[e.From] = dropEdge(s.likesBy[e.From], e.From, id)
	}
	delete(s.likers, id)
	for user, es := range s.bookmarks {
		if hasEdge(es, user, id) {
			s.touchEdge(touchedBookmark, "", user, id)
			s.bookmarks[user] = dropEdge(es, user, id)
		}
	}
	delete(s.bookmarked, id)
	// X removes a user's retweets of a deleted post along with it.
	for _, rid := range s.retweets[id] {
		s.removeTweet(rid)
	}
	delete(s.retweets, id)
}

func (s *state) follow(e Edge) bool {
	if s.isFollowing(e.From, e.To) {
		return false
	}
	s.touchEdge(touchedFollow, "", e.From, e.To)
	s.following[e.From] = append(s.following[e.From], e)
	s.followers[e.To] = append(s.followers[e.To], e)
	return true
}

func (s *state) unfollow(from, to string) bool {
	if !s.isFollowing(from, to) {
		return false
	}
	s.touchEdge(touchedFollow, "", from, to)
	s.following[from] = dropEdge(s.following[from], from, to)
	s.followers[to] = dropEdge(s.followers[to], from, to)
	return true
}

func (s *state) isFollowing(from, to string) bool {
	return hasEdge(s.following[from], from, to)
}

func (s *state) like(e Edge) bool {
	if hasEdge(s.likesBy[e.From], e.From, e.To) {
		return false
	}
	s.touchEdge(touchedLike, "", e.From, e.To)
	s.likesBy[e.From] = append(s.likesBy[e.From], e)
	s.likers[e.To] = append(s.likers[e.To], e)
	return true
}

func (s *state) unlike(user, tweet string) bool {
	if !hasEdge(s.likesBy[user], user, tweet) {
		return false
	}
	s.touchEdge(touchedLike, "", user, tweet)
	s.likesBy[user] = dropEdge(s.likesBy[user], user, tweet)
	s.likers[tweet] = dropEdge(s.likers[tweet], user, tweet)
	return true
}

func (s *state) bookmark(e Edge) bool {
	if hasEdge(s.bookmarks[e.From], e.From, e.To) {
		return false
	}
	s.touchEdge(touchedBookmark, "", e.From, e.To)
	s.bookmarks[e.From] = append(s.bookmarks[e.From], e)
	s.bookmarked[e.To]++
	return true
}

func (s *state) unbookmark(user, tweet string) bool {
	if !hasEdge(s.bookmarks[user], user, tweet) {
		return false
	}
	s.touchEdge(touchedBookmark, "", user, tweet)
	s.bookmarks[user] = dropEdge(s.bookmarks[user], user, tweet)
	s.bookmarked[tweet]--
	return true
}

func (s *state) userByName(name string) *User {
	id, ok := s.byName[lower(name)]
	if !ok {
		return nil
	}
	return s.users[id]
}

func hasEdge(es []Edge, from, to string) bool {
	for _, e := range es {
		if e.From == from && e.To == to {
			return true
		}
	}
	return false
}

func dropEdge(es []Edge, from, to string) []Edge {
	return slices.DeleteFunc(es, func(e Edge) bool { return e.From == from && e.To == to })
}

func insertSorted(ids []string, id string) []string {
	i, found := slices.BinarySearchFunc(ids, id, cmpID)
	if found {
		return ids
	}
	return slices.Insert(ids, i, id)
}

func removeSorted(ids []string, id string) []string {
	i, found := slices.BinarySearchFunc(ids, id, cmpID)
	if !found {
		return ids
	}
	return slices.Delete(ids, i, i+1)
}

// cmpID orders decimal ids numerically without parsing them.
func cmpID(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func isNumericID(s string) bool {
	if len(s) == 0 || len(s) > 19 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	if len(s) == 19 {
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return false
		}
	}
	return true
}

func validUsername(s string) bool {
	if len(s) == 0 || len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func lower(s string) string { return strings.ToLower(s) }
