package mcpserver

import (
	"context"

	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// OwnedListsInput is x_get_owned_lists' input.
type OwnedListsInput struct {
	UserID          string `json:"user_id,omitempty" jsonschema:"the owner's user id (a decimal string); default: the authenticated user"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"1-100, default 100 (clamped)"`
	PaginationToken string `json:"pagination_token,omitempty" jsonschema:"next_token of the previous page"`
}

// Limits declares the arguments' limits.
func (OwnedListsInput) Limits() argcheck.Limits { return argcheck.Limits{"user_id": {ID: true}} }

// ListPageInput pages through one List.
type ListPageInput struct {
	ListID          string `json:"list_id" jsonschema:"the List's id (a decimal string)"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"1-100, default 100 (clamped)"`
	PaginationToken string `json:"pagination_token,omitempty" jsonschema:"next_token of the previous page"`
}

// Limits declares the arguments' limits.
func (ListPageInput) Limits() argcheck.Limits { return argcheck.Limits{"list_id": {ID: true}} }

// ListsList is the data of x_get_owned_lists.
type ListsList struct {
	Lists  []xapi.List    `json:"lists"`
	Errors []xapi.Problem `json:"errors,omitempty"`
}

func lists(p *xapi.Page[xapi.List], m envelope.Meta) (Result, error) {
	return Result{Data: ListsList{Lists: p.Data, Errors: p.Errors}, Meta: pageMeta(p, m)}, nil
}

// listReadTools read Lists. X shows a private List to its owner alone;
// to anyone else it is a List that does not exist (x_not_found).
func listReadTools() []*Tool {
	return []*Tool{
		def(readSpec("x_get_owned_lists", "Get owned lists", "Get the Lists a user owns (default: yours); another user's private Lists are not shown.", apiProfiles, ListsList{}),
			func(ctx context.Context, c *Call, in OwnedListsInput) (Result, error) {
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 100, 1, 100, &m)
				return page(c, m, lists, func(x *xapi.Client) (*xapi.Page[xapi.List], error) {
					return x.OwnedLists(ctx, in.UserID, xapi.ListParams{MaxResults: n, PaginationToken: in.PaginationToken})
				})
			}),
		def(readSpec("x_get_list_tweets", "Get list tweets", "Get the recent tweets of a List's members, newest first.", apiProfiles, TweetList{}),
			func(ctx context.Context, c *Call, in ListPageInput) (Result, error) {
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 100, 1, 100, &m)
				return page(c, m, tweets, func(x *xapi.Client) (*xapi.Page[xapi.Tweet], error) {
					return x.ListTweets(ctx, in.ListID, xapi.ListParams{MaxResults: n, PaginationToken: in.PaginationToken})
				})
			}),
		def(readSpec("x_get_list_members", "Get list members", "Get the members of a List, newest first.", apiProfiles, UserList{}),
			func(ctx context.Context, c *Call, in ListPageInput) (Result, error) {
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 100, 1, 100, &m)
				return page(c, m, users, func(x *xapi.Client) (*xapi.Page[xapi.User], error) {
					return x.ListMembers(ctx, in.ListID, xapi.ListParams{MaxResults: n, PaginationToken: in.PaginationToken})
				})
			}),
	}
}
