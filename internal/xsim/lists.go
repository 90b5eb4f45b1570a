package xsim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// List is an X List: owned by one user, holding members whose posts make
// its timeline. A private List is visible to its owner alone.
type List struct {
	ID          string    `json:"id"`
	OwnerID     string    `json:"owner_id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Private     bool      `json:"private,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// Members are user ids in the order they joined.
	Members []string `json:"members,omitempty"`
	// FollowerBase counts followers outside the emulated world.
	FollowerBase int64 `json:"follower_base,omitempty"`
	// Followers are the users of the world who follow the List, and
	// PinnedBy those who pinned it, in the order they did.
	Followers []string `json:"followers,omitempty"`
	PinnedBy  []string `json:"pinned_by,omitempty"`
}

func listFieldNames() []string {
	return []string{"created_at", "description", "follower_count", "id", "member_count", "name", "private"}
}

// visibleList returns the List the caller may see: X answers a private
// List of someone else exactly as a List that does not exist.
func (s *state) visibleList(id, viewer string) *List {
	l := s.lists[id]
	if l == nil || l.Private && l.OwnerID != viewer {
		return nil
	}
	return l
}

func (s *state) renderList(l *List, fields map[string]bool, owner bool) map[string]any {
	m := map[string]any{"id": l.ID, "name": l.Name}
	if fields["created_at"] {
		m["created_at"] = formatTime(l.CreatedAt)
	}
	if fields["description"] {
		m["description"] = l.Description
	}
	if fields["follower_count"] {
		m["follower_count"] = l.FollowerBase + int64(len(l.Followers))
	}
	if fields["member_count"] {
		m["member_count"] = len(l.Members)
	}
	if fields["private"] {
		m["private"] = l.Private
	}
	if owner {
		m["owner_id"] = l.OwnerID
	}
	return m
}

// pathList resolves the {id} List of a read; a List the caller cannot see
// is X's 200-with-errors answer.
func (s *Server) pathList(c *call) (*List, *reply) {
	id := c.r.PathValue("id")
	if bad := idParam("id", id); bad != nil {
		return nil, bad
	}
	l := s.st.visibleList(id, c.user.ID)
	if l == nil {
		rep := ok(map[string]any{"errors": []any{notFoundItem("list", "id", id)}, "meta": map[string]any{"result_count": 0}})
		return nil, &rep
	}
	return l, nil
}

// ownList resolves the {id} List of a write: it must exist (404) and be
// the caller's own (403), as X requires of every List write.
func (s *Server) ownList(c *call) (*List, *reply) {
	id := c.r.PathValue("id")
	if bad := idParam("id", id); bad != nil {
		return nil, bad
	}
	return s.ownListByID(c, "id", id)
}

// ownListByID is ownList for a List id taken from param.
func (s *Server) ownListByID(c *call, param, id string) (*List, *reply) {
	l := s.st.visibleList(id, c.user.ID)
	if l == nil {
		rep := errNotFound("list", param, id)
		return nil, &rep
	}
	if l.OwnerID != c.user.ID {
		rep := errForbidden(fmt.Sprintf("You are not allowed to change the list with id: [%s]: only its owner can.", id))
		return nil, &rep
	}
	// Every change to a List comes through here.
	s.st.touch(touchedList, l.ID)
	return l, nil
}

// handleCreateList is POST /2/lists.
func (s *Server) handleCreateList(c *call) reply {
	var req struct {
		Name        *string `json:"name"`
		Description string  `json:"description"`
		Private     bool    `json:"private"`
	}
	if bad := c.jsonBody(&req); bad != nil {
		return *bad
	}
	switch {
	case req.Name == nil:
		return errInvalidParam("name", "", "The `name` field is required.")
	case strings.TrimSpace(*req.Name) == "" || utf8.RuneCountInString(*req.Name) > 25:
		return errInvalidParam("name", *req.Name, "The `name` field must be 1 to 25 characters long.")
	case utf8.RuneCountInString(req.Description) > 100:
		return errInvalidParam("description", req.Description, "The `description` field must be at most 100 characters long.")
	}
	l := &List{ID: s.st.nextID(c.now), OwnerID: c.user.ID, Name: *req.Name, Description: req.Description,
		Private: req.Private, CreatedAt: c.now.UTC()}
	s.st.lists[l.ID] = l
	s.st.touch(touchedList, l.ID)
	s.count(CountListsCreated)
	s.chargeWrite(c, BillListCreate)
	return reply{status: http.StatusCreated, body: map[string]any{"data": map[string]any{"id": l.ID, "name": l.Name}}}
}

// handleDeleteList is DELETE /2/lists/{id}.
func (s *Server) handleDeleteList(c *call) reply {
	l, bad := s.ownList(c)
	if bad != nil {
		return *bad
	}
	delete(s.st.lists, l.ID)
	s.count(CountListsDeleted)
	s.chargeWrite(c, BillListManage)
	return ok(map[string]any{"data": map[string]any{"deleted": true}})
}

// handleAddListMember is POST /2/lists/{id}/members. Adding a member
// twice leaves the List as it was and answers is_member: true again; X
// bills every request, so only the caller can keep a repeat from costing.
func (s *Server) handleAddListMember(c *call) reply {
	l, bad := s.ownList(c)
	if bad != nil {
		return *bad
	}
	var req struct {
		UserID string `json:"user_id"`
	}
	if bad := c.jsonBody(&req); bad != nil {
		return *bad
	}
	if !isNumericID(req.UserID) {
		return errInvalidParam("user_id", req.UserID, fmt.Sprintf("The `user_id` field value [%s] is not a valid id", req.UserID))
	}
	if s.st.users[req.UserID] == nil {
		return errNotFound("user", "user_id", req.UserID)
	}
	if !slices.Contains(l.Members, req.UserID) {
		l.Members = append(l.Members, req.UserID)
		s.count(CountListMembersAdded)
	}
	s.chargeWrite(c, BillListManage)
	return ok(map[string]any{"data": map[string]any{"is_member": true}})
}

// handleRemoveListMember is DELETE /2/lists/{id}/members/{user_id}.
func (s *Server) handleRemoveListMember(c *call) reply {
	l, bad := s.ownList(c)
	if bad != nil {
		return *bad
	}
	uid := c.r.PathValue("user_id")
	if bad := idParam("user_id", uid); bad != nil {
		return *bad
	}
	if s.st.users[uid] == nil {
		return errNotFound("user", "user_id", uid)
	}
	if i := slices.Index(l.Members, uid); i >= 0 {
		l.Members = slices.Delete(l.Members, i, i+1)
		s.count(CountListMembersRemoved)
	}
	s.chargeWrite(c, BillListManage)
	return ok(map[string]any{"data": map[string]any{"is_member": false}})
}

// handleListMembers is GET /2/lists/{id}/members, newest member first.
func (s *Server) handleListMembers(c *call) reply {
	l, bad := s.pathList(c)
	if bad != nil {
		return *bad
	}
	ids := slices.Clone(l.Members)
	slices.Reverse(ids)
	return s.userList(c, ids, 1, 100, 100, BillUserRead)
}

// handleListTweets is GET /2/lists/{id}/tweets: the members' posts, newest
// first.
func (s *Server) handleListTweets(c *call) reply {
	l, bad := s.pathList(c)
	if bad != nil {
		return *bad
	}
	var ids []string
	for _, m := range l.Members {
		ids = append(ids, s.st.byAuthor[m]...)
	}
	slices.SortFunc(ids, cmpID)
	return s.tweetList(c, newestFirst(ids), pageOpts{lo: 1, hi: 100, def: 100})
}

// handleOwnedLists is GET /2/users/{id}/owned_lists: the user's Lists,
// newest first, without the private ones unless the caller owns them.
func (s *Server) handleOwnedLists(c *call) reply {
	u, bad := s.pathUser(c, "id")
	if bad != nil {
		return *bad
	}
	return s.listPage(c, s.st.listsWhere(c.user.ID, func(l *List) bool { return l.OwnerID == u.ID }), true)
}

// handleFollowedLists is GET /2/users/{id}/followed_lists: the Lists the
// user follows that the caller may see, newest List first. X reads them
// for any user, app-only tokens too.
func (s *Server) handleFollowedLists(c *call) reply {
	u, bad := s.pathUser(c, "id")
	if bad != nil {
		return *bad
	}
	return s.listPage(c, s.st.listsWhere(c.user.ID, func(l *List) bool { return slices.Contains(l.Followers, u.ID) }), true)
}

// handleListMemberships is GET /2/users/{id}/list_memberships: the Lists
// the user is a member of that the caller may see, newest List first (a
// private List someone else keeps of the user stays hidden, as it does on
// X).
func (s *Server) handleListMemberships(c *call) reply {
	u, bad := s.pathUser(c, "id")
	if bad != nil {
		return *bad
	}
	return s.listPage(c, s.st.listsWhere(c.user.ID, func(l *List) bool { return slices.Contains(l.Members, u.ID) }), true)
}

// handlePinnedLists is GET /2/users/{id}/pinned_lists: the authenticated
// user's pinned Lists, newest List first. X serves it for the
// authenticated user alone and the spec gives it no pagination.
func (s *Server) handlePinnedLists(c *call) reply {
	if bad := s.selfUser(c, "id"); bad != nil {
		return *bad
	}
	return s.listPage(c, s.st.listsWhere(c.user.ID, func(l *List) bool { return slices.Contains(l.PinnedBy, c.user.ID) }), false)
}

// listsWhere returns the Lists viewer may see that keep, newest first.
func (s *state) listsWhere(viewer string, keep func(*List) bool) []*List {
	var out []*List
	for _, l := range s.lists {
		if keep(l) && s.visibleList(l.ID, viewer) != nil {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b *List) int { return cmpID(b.ID, a.ID) })
	return out
}

// listPage answers a read of Lists: list.fields, the owner_id expansion
// with the owners' user.fields and, when paged, max_results (1 to 100)
// and pagination_token, as X's spec gives them for every such read.
func (s *Server) listPage(c *call, lists []*List, paged bool) reply {
	q := c.r.URL.Query()
	fields, bad := parseList("list.fields", q.Get("list.fields"), listFieldNames())
	if bad != nil {
		return *bad
	}
	exp, bad := parseList("expansions", q.Get("expansions"), []string{"owner_id"})
	if bad != nil {
		return *bad
	}
	// Only user.fields applies to the expanded owners; expansions were
	// read above with the List vocabulary.
	var v view
	if v.userFields, bad = parseList("user.fields", q.Get("user.fields"), userFieldNames()); bad != nil {
		return *bad
	}
	start, end, n := 0, len(lists), len(lists)
	if paged {
		if n, bad = c.maxResults(1, 100, 100); bad != nil {
			return *bad
		}
		off, _, bad := c.pageToken()
		if bad != nil {
			return *bad
		}
		start = int(min(off, uint64(len(lists))))
		end = min(start+n, len(lists))
	}
	page := lists[start:end]
	data := make([]map[string]any, 0, len(page))
	ids := make([]string, 0, len(page))
	for _, l := range page {
		data = append(data, s.st.renderList(l, fields, exp["owner_id"]))
		ids = append(ids, l.ID)
	}
	body := offsetPage(data, start, end, len(lists), n)
	if exp["owner_id"] && len(page) > 0 {
		in := newIncluder(s.st, v)
		for _, l := range page {
			in.user(l.OwnerID)
		}
		body["includes"] = in.object()
		s.chargeReads(c, BillUserRead, in.userIDs)
	}
	s.chargeReads(c, BillListRead, ids)
	return ok(body)
}

// listIDBody reads {"list_id": "..."}, the body of a pin or a List
// follow, and resolves a List the caller may see (404 otherwise).
func (s *Server) listIDBody(c *call) (*List, *reply) {
	var req struct {
		ListID string `json:"list_id"`
	}
	if bad := c.jsonBody(&req); bad != nil {
		return nil, bad
	}
	if !isNumericID(req.ListID) {
		rep := errInvalidParam("list_id", req.ListID, fmt.Sprintf("The `list_id` field value [%s] is not a valid id", req.ListID))
		return nil, &rep
	}
	l := s.st.visibleList(req.ListID, c.user.ID)
	if l == nil {
		rep := errNotFound("list", "list_id", req.ListID)
		return nil, &rep
	}
	// Every pin and List follow comes through here.
	s.st.touch(touchedList, l.ID)
	return l, nil
}

// pathListID resolves the {list_id} of an unpin or a List unfollow.
func (s *Server) pathListID(c *call) (*List, *reply) {
	id := c.r.PathValue("list_id")
	if bad := idParam("list_id", id); bad != nil {
		return nil, bad
	}
	l := s.st.visibleList(id, c.user.ID)
	if l == nil {
		rep := errNotFound("list", "list_id", id)
		return nil, &rep
	}
	// Every unpin and List unfollow comes through here.
	s.st.touch(touchedList, l.ID)
	return l, nil
}

// handleFollowList is POST /2/users/{id}/followed_lists. Following a List
// is not the "Following" X removed from self-serve apps on 2026-04-16:
// that is the Follows group of its API reference (users following users);
// List follows are a group of the Lists reference, which the entry does
// not name.
func (s *Server) handleFollowList(c *call) reply {
	if bad := s.selfUser(c, "id"); bad != nil {
		return *bad
	}
	l, bad := s.listIDBody(c)
	if bad != nil {
		return *bad
	}
	if !slices.Contains(l.Followers, c.user.ID) {
		l.Followers = append(l.Followers, c.user.ID)
	}
	s.chargeWrite(c, BillListManage)
	return ok(map[string]any{"data": map[string]any{"following": true}})
}

// handleUnfollowList is DELETE /2/users/{id}/followed_lists/{list_id}.
func (s *Server) handleUnfollowList(c *call) reply {
	if bad := s.selfUser(c, "id"); bad != nil {
		return *bad
	}
	l, bad := s.pathListID(c)
	if bad != nil {
		return *bad
	}
	if i := slices.Index(l.Followers, c.user.ID); i >= 0 {
		l.Followers = slices.Delete(l.Followers, i, i+1)
	}
	s.chargeWrite(c, BillListManage)
	return ok(map[string]any{"data": map[string]any{"following": false}})
}

// handlePinList is POST /2/users/{id}/pinned_lists. X pins only a List
// the user owns or follows; it says there is a limit to how many, but not
// what it is, so the emulator sets none.
func (s *Server) handlePinList(c *call) reply {
	if bad := s.selfUser(c, "id"); bad != nil {
		return *bad
	}
	l, bad := s.listIDBody(c)
	if bad != nil {
		return *bad
	}
	if l.OwnerID != c.user.ID && !slices.Contains(l.Followers, c.user.ID) {
		return errForbidden(fmt.Sprintf("You cannot pin the list with id: [%s]: only a List you own or follow can be pinned.", l.ID))
	}
	if !slices.Contains(l.PinnedBy, c.user.ID) {
		l.PinnedBy = append(l.PinnedBy, c.user.ID)
	}
	s.chargeWrite(c, BillListManage)
	return ok(map[string]any{"data": map[string]any{"pinned": true}})
}

// handleUnpinList is DELETE /2/users/{id}/pinned_lists/{list_id}.
func (s *Server) handleUnpinList(c *call) reply {
	if bad := s.selfUser(c, "id"); bad != nil {
		return *bad
	}
	l, bad := s.pathListID(c)
	if bad != nil {
		return *bad
	}
	if i := slices.Index(l.PinnedBy, c.user.ID); i >= 0 {
		l.PinnedBy = slices.Delete(l.PinnedBy, i, i+1)
	}
	s.chargeWrite(c, BillListManage)
	return ok(map[string]any{"data": map[string]any{"pinned": false}})
}

// listSnapshot returns the Lists for the world file, by id.
func (s *state) listSnapshot() []List {
	out := make([]List, 0, len(s.lists))
	for _, l := range s.lists {
		c := *l
		c.Members = slices.Clone(l.Members)
		c.Followers = slices.Clone(l.Followers)
		c.PinnedBy = slices.Clone(l.PinnedBy)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b List) int { return cmpID(a.ID, b.ID) })
	if len(out) == 0 {
		return nil
	}
	return out
}

// ListMembers returns the members of a List, for tests: nil when there is
// no such List, empty (not nil) when it has none.
func (s *Server) ListMembers(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.st.lists[id]; l != nil {
		return append([]string{}, l.Members...)
	}
	return nil
}
