package xapi

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// X's limits on a List's name and description, in characters.
const (
	MaxListName        = 25
	MaxListDescription = 100
)

// listFields are the List fields the typed reads ask for.
const listFields = "created_at,description,follower_count,member_count,private"

// List is an X List.
type List struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Description   string `json:"description,omitempty"`
	Private       bool   `json:"private"`
	OwnerID       string `json:"owner_id,omitempty"`
	MemberCount   int64  `json:"member_count"`
	FollowerCount int64  `json:"follower_count"`
	CreatedAt     string `json:"created_at,omitempty"`
}

// NewList is what creating a List takes.
type NewList struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Private     bool   `json:"private,omitempty"`
}

// Check applies X's limits, naming the field at fault.
func (n NewList) Check() error {
	name := strings.TrimSpace(n.Name)
	switch {
	case name == "":
		return apperr.New(apperr.InvalidInput, "name: must not be empty")
	case utf8.RuneCountInString(n.Name) > MaxListName:
		return apperr.New(apperr.InvalidInput, "name: %d characters, X allows at most %d", utf8.RuneCountInString(n.Name), MaxListName)
	case utf8.RuneCountInString(n.Description) > MaxListDescription:
		return apperr.New(apperr.InvalidInput, "description: %d characters, X allows at most %d",
			utf8.RuneCountInString(n.Description), MaxListDescription)
	}
	return nil
}

// CreateList creates a List owned by the authenticated user. Like a post
// it is never retried once X may have received it.
func (c *Client) CreateList(ctx context.Context, n NewList) (*List, CallInfo, error) {
	if err := n.Check(); err != nil {
		return nil, CallInfo{}, err
	}
	body, err := json.Marshal(n)
	if err != nil {
		return nil, CallInfo{}, apperr.Wrap(apperr.InternalError, err, "encode the list")
	}
	var out struct {
		Data *List `json:"data"`
	}
	info, err := c.write(ctx, "POST", "/2/lists", body, &out)
	if err != nil {
		return nil, info, err
	}
	if out.Data == nil || out.Data.ID == "" {
		return nil, info, apperr.New(apperr.XOutcomeUnknown, "X accepted POST /2/lists but returned no list id; verify before trying again")
	}
	out.Data.Description, out.Data.Private = n.Description, n.Private
	return out.Data, info, nil
}

// DeleteList deletes one of the authenticated user's Lists and reports
// X's data.deleted.
func (c *Client) DeleteList(ctx context.Context, listID string) (bool, CallInfo, error) {
	if err := checkID("list_id", listID); err != nil {
		return false, CallInfo{}, err
	}
	var out struct {
		Data struct {
			Deleted bool `json:"deleted"`
		} `json:"data"`
	}
	info, err := c.write(ctx, "DELETE", "/2/lists/"+listID, nil, &out)
	return out.Data.Deleted, info, err
}

// AddListMember adds a user to a List; the result is X's data.is_member.
func (c *Client) AddListMember(ctx context.Context, listID, userID string) (bool, CallInfo, error) {
	if err := checkID("list_id", listID); err != nil {
		return false, CallInfo{}, err
	}
	if err := checkID("user_id", userID); err != nil {
		return false, CallInfo{}, err
	}
	body, _ := json.Marshal(map[string]string{"user_id": userID})
	var out struct {
		Data struct {
			IsMember bool `json:"is_member"`
		} `json:"data"`
	}
	info, err := c.write(ctx, "POST", "/2/lists/"+listID+"/members", body, &out)
	return out.Data.IsMember, info, err
}

// RemoveListMember removes a user from a List; the result is X's
// data.is_member (false on success).
func (c *Client) RemoveListMember(ctx context.Context, listID, userID string) (bool, CallInfo, error) {
	if err := checkID("list_id", listID); err != nil {
		return false, CallInfo{}, err
	}
	if err := checkID("user_id", userID); err != nil {
		return false, CallInfo{}, err
	}
	var out struct {
		Data struct {
			IsMember bool `json:"is_member"`
		} `json:"data"`
	}
	info, err := c.write(ctx, "DELETE", "/2/lists/"+listID+"/members/"+userID, nil, &out)
	return out.Data.IsMember, info, err
}

func listIDs(d []List) []string {
	out := make([]string, len(d))
	for i := range d {
		out[i] = d[i].ID
	}
	return out
}

// OwnedLists lists the Lists userID owns ("" = the authenticated user).
// X shows another user's private Lists to nobody but their owner.
func (c *Client) OwnedLists(ctx context.Context, userID string, p ListParams) (*Page[List], error) {
	q := url.Values{"list.fields": {listFields}, "expansions": {"owner_id"}, "user.fields": {userFields}}
	if err := p.apply(q, listRange{1, 100}, false); err != nil {
		return nil, err
	}
	id, err := c.userOrMe(ctx, "user_id", userID)
	if err != nil {
		return nil, err
	}
	env, info, err := getEnvelope(ctx, c, "/2/users/"+id+"/owned_lists", q.Encode(), listIDs)
	if err != nil {
		return nil, err
	}
	out := &Page[List]{Data: env.Data, Includes: env.Includes.convert(), Meta: env.Meta, Errors: env.Errors, Call: info}
	if out.Data == nil {
		out.Data = []List{}
	}
	return out, nil
}

// ListTweets lists the recent posts of a List's members.
func (c *Client) ListTweets(ctx context.Context, listID string, p ListParams) (*Page[Tweet], error) {
	if err := checkID("list_id", listID); err != nil {
		return nil, err
	}
	q := tweetQuery()
	if err := p.apply(q, listRange{1, 100}, false); err != nil {
		return nil, err
	}
	page, err := getTweetPage(ctx, c, "/2/lists/"+listID+"/tweets", q.Encode())
	if err != nil {
		return nil, err
	}
	return page, listMissing(page.Data, page.Errors)
}

// ListMembers lists the members of a List.
func (c *Client) ListMembers(ctx context.Context, listID string, p ListParams) (*Page[User], error) {
	if err := checkID("list_id", listID); err != nil {
		return nil, err
	}
	q := userQuery()
	if err := p.apply(q, listRange{1, 100}, false); err != nil {
		return nil, err
	}
	page, err := getUserPage(ctx, c, "/2/lists/"+listID+"/members", q.Encode())
	if err != nil {
		return nil, err
	}
	return page, listMissing(page.Data, page.Errors)
}

// listMissing turns X's 200-with-errors answer about the List itself (it
// does not exist, or is someone else's private List) into the error it is,
// rather than an empty page that reads like a List with no members.
func listMissing[T any](data []T, errs []Problem) error {
	if len(data) > 0 || len(errs) == 0 || errs[0].ResourceType != "list" {
		return nil
	}
	return classifyProblems(errs)
}
