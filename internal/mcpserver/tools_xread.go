package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// xErrors are the codes any X call can produce.
var xErrors = []apperr.Code{apperr.XNotConfigured, apperr.XRateLimited, apperr.XAuthExpired, apperr.XForbidden,
	apperr.XAccountRestricted, apperr.XNetworkError, apperr.XAPIError, apperr.XNotFound}

// clamp bounds n to [lo, hi], using def when n is 0, and says when it moved it.
func clamp(field string, n, def, lo, hi int, m *envelope.Meta) int {
	if n == 0 {
		return def
	}
	c := min(max(n, lo), hi)
	if c != n {
		m.Notes = append(m.Notes, fmt.Sprintf("%s %d was clamped to %d (allowed %d-%d)", field, n, c, lo, hi))
	}
	return c
}

func pageMeta[T any](p *xapi.Page[T], m envelope.Meta) envelope.Meta {
	m.Pagination = &envelope.Pagination{NextToken: p.Meta.NextToken, ResultCount: p.Meta.ResultCount, HasMore: p.Meta.NextToken != ""}
	if p.Call.RetryCount > 0 {
		rc := p.Call.RetryCount
		m.RetryCount = &rc
	}
	return m
}

// TweetList is the data of tweet list tools.
type TweetList struct {
	Tweets []xapi.Tweet   `json:"tweets"`
	Errors []xapi.Problem `json:"errors,omitempty"`
}

// UserList is the data of user list tools.
type UserList struct {
	Users  []xapi.User    `json:"users"`
	Errors []xapi.Problem `json:"errors,omitempty"`
}

// lookedUp shapes a batch user lookup, which X does not paginate.
func lookedUp(p *xapi.Page[xapi.User], m envelope.Meta) (Result, error) {
	r, err := users(p, m)
	r.Meta.Pagination = nil
	return r, err
}

func tweets(p *xapi.Page[xapi.Tweet], m envelope.Meta) (Result, error) {
	data := TweetList{Tweets: p.Data, Errors: p.Errors}
	if data.Tweets == nil {
		data.Tweets = []xapi.Tweet{}
	}
	return Result{Data: data, Meta: pageMeta(p, m)}, nil
}

func users(p *xapi.Page[xapi.User], m envelope.Meta) (Result, error) {
	data := UserList{Users: p.Data, Errors: p.Errors}
	if data.Users == nil {
		data.Users = []xapi.User{}
	}
	return Result{Data: data, Meta: pageMeta(p, m)}, nil
}

func retryMeta(info xapi.CallInfo) envelope.Meta {
	var m envelope.Meta
	if info.RetryCount > 0 {
		rc := info.RetryCount
		m.RetryCount = &rc
	}
	return m
}

// TweetIDInput names one tweet.
type TweetIDInput struct {
	TweetID string `json:"tweet_id" jsonschema:"the tweet's id (a decimal string)"`
}

// Limits declares the arguments' limits.
func (TweetIDInput) Limits() argcheck.Limits { return argcheck.Limits{"tweet_id": {ID: true}} }

// UsernameInput names one user by handle.
type UsernameInput struct {
	Username string `json:"username" jsonschema:"the @handle, with or without the @"`
}

// UserIDInput names one user by id.
type UserIDInput struct {
	UserID string `json:"user_id" jsonschema:"the user's id (a decimal string)"`
}

// Limits declares the arguments' limits.
func (UserIDInput) Limits() argcheck.Limits { return argcheck.Limits{"user_id": {ID: true}} }

// UserIDsInput names up to 100 users.
type UserIDsInput struct {
	UserIDs []string `json:"user_ids" jsonschema:"1 to 100 user ids"`
}

// Limits declares the arguments' limits.
func (UserIDsInput) Limits() argcheck.Limits {
	return argcheck.Limits{"user_ids": {ID: true, MinItems: 1, MaxItems: xapi.MaxUsersPerLookup}}
}

// SearchInput is x_search_tweets' input.
type SearchInput struct {
	Query           string `json:"query" jsonschema:"X recent-search query (operators: quotes, OR, -, from:, to:, is:reply, is:retweet, has:links, lang:)"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"10-100, default 10 (clamped)"`
	SinceID         string `json:"since_id,omitempty" jsonschema:"only tweets newer than this id"`
	PaginationToken string `json:"pagination_token,omitempty" jsonschema:"next_token of the previous page"`
}

// Limits declares the arguments' limits.
func (SearchInput) Limits() argcheck.Limits {
	return argcheck.Limits{"since_id": {ID: true}, "query": {MaxLength: xapi.MaxQueryLength}}
}

// PageInput pages a list of the authenticated user.
type PageInput struct {
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"page size (clamped to X's range)"`
	PaginationToken string `json:"pagination_token,omitempty" jsonschema:"next_token of the previous page"`
}

// MentionsInput is x_get_user_mentions' input.
type MentionsInput struct {
	SinceID         string `json:"since_id,omitempty" jsonschema:"only mentions newer than this id"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"5-100, default 20 (clamped)"`
	PaginationToken string `json:"pagination_token,omitempty" jsonschema:"next_token of the previous page"`
}

// Limits declares the arguments' limits.
func (MentionsInput) Limits() argcheck.Limits { return argcheck.Limits{"since_id": {ID: true}} }

// UserPageInput pages a list of one user.
type UserPageInput struct {
	UserID          string `json:"user_id" jsonschema:"the user's id (a decimal string)"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"page size (clamped to X's range)"`
	PaginationToken string `json:"pagination_token,omitempty" jsonschema:"next_token of the previous page"`
}

// Limits declares the arguments' limits.
func (UserPageInput) Limits() argcheck.Limits { return argcheck.Limits{"user_id": {ID: true}} }

// TweetPageInput pages a list about one tweet.
type TweetPageInput struct {
	TweetID         string `json:"tweet_id" jsonschema:"the tweet's id (a decimal string)"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"1-100, default 100 (clamped)"`
	PaginationToken string `json:"pagination_token,omitempty" jsonschema:"next_token of the previous page"`
}

// Limits declares the arguments' limits.
func (TweetPageInput) Limits() argcheck.Limits { return argcheck.Limits{"tweet_id": {ID: true}} }

func xclient(c *Call) (*xapi.Client, error) { return c.Deps.X() }

// one runs a single-object read.
func one[T any](c *Call, read func(*xapi.Client) (*T, xapi.CallInfo, error)) (Result, error) {
	x, err := xclient(c)
	if err != nil {
		return Result{}, err
	}
	v, info, err := read(x)
	if err != nil {
		return Result{}, err
	}
	return Result{Data: v, Meta: retryMeta(info)}, nil
}

// page runs a paged read and shapes it with wrap.
func page[T any](c *Call, m envelope.Meta, wrap func(*xapi.Page[T], envelope.Meta) (Result, error), read func(*xapi.Client) (*xapi.Page[T], error)) (Result, error) {
	x, err := xclient(c)
	if err != nil {
		return Result{}, err
	}
	p, err := read(x)
	if err != nil {
		return Result{}, err
	}
	return wrap(p, m)
}

func readSpec(name, title, desc string, profiles []Profile, out any) Spec {
	return Spec{Name: name, Title: title, Description: desc, Category: "read", Needs: Needs{X: true},
		Profiles: profiles, Hints: readX, Errors: xErrors}
}

func xReadTools() []*Tool {
	return []*Tool{
		def(readSpec("get_tweet_by_id", "Get tweet", "Fetch one tweet by id, with its author and public metrics.", allProfiles, xapi.Tweet{}),
			func(ctx context.Context, c *Call, in TweetIDInput) (Result, error) {
				return one(c, func(x *xapi.Client) (*xapi.Tweet, xapi.CallInfo, error) { return x.GetTweet(ctx, in.TweetID) })
			}),
		def(readSpec("x_get_user_by_username", "Get user by username", "Look up a user profile by @handle.", allProfiles, xapi.User{}),
			func(ctx context.Context, c *Call, in UsernameInput) (Result, error) {
				name := strings.TrimPrefix(strings.TrimSpace(in.Username), "@")
				if name == "" {
					return Result{}, apperr.New(apperr.InvalidInput, "username: required")
				}
				return one(c, func(x *xapi.Client) (*xapi.User, xapi.CallInfo, error) { return x.GetUserByUsername(ctx, name) })
			}),
		def(readSpec("x_get_user_by_id", "Get user by id", "Look up a user profile by id.", allProfiles, xapi.User{}),
			func(ctx context.Context, c *Call, in UserIDInput) (Result, error) {
				return one(c, func(x *xapi.Client) (*xapi.User, xapi.CallInfo, error) { return x.GetUser(ctx, in.UserID) })
			}),
		def(readSpec("x_get_users_by_ids", "Get users by ids", "Look up 1 to 100 users by id; ids X cannot find are listed in errors.", apiProfiles, UserList{}),
			func(ctx context.Context, c *Call, in UserIDsInput) (Result, error) {
				// A batch lookup is not a list endpoint: no pagination meta.
				return page(c, envelope.Meta{}, lookedUp, func(x *xapi.Client) (*xapi.Page[xapi.User], error) { return x.GetUsers(ctx, in.UserIDs) })
			}),
		def(readSpec("x_search_tweets", "Search recent tweets", "Search the last 7 days of tweets with X's recent-search operators.", allProfiles, TweetList{}),
			func(ctx context.Context, c *Call, in SearchInput) (Result, error) {
				q := strings.TrimSpace(in.Query)
				if q == "" {
					return Result{}, apperr.New(apperr.InvalidInput, "query: required")
				}
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 10, 10, 100, &m)
				return page(c, m, tweets, func(x *xapi.Client) (*xapi.Page[xapi.Tweet], error) {
					return x.SearchRecent(ctx, xapi.SearchParams{Query: q, MaxResults: n, SinceID: in.SinceID, PaginationToken: in.PaginationToken})
				})
			}),
		def(readSpec("x_get_user_mentions", "Get mentions", "Get tweets mentioning the authenticated user.", allProfiles, TweetList{}),
			func(ctx context.Context, c *Call, in MentionsInput) (Result, error) {
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 20, 5, 100, &m)
				return page(c, m, tweets, func(x *xapi.Client) (*xapi.Page[xapi.Tweet], error) {
					me, err := x.MyUserID(ctx)
					if err != nil {
						return nil, err
					}
					p, err := x.Mentions(ctx, me, xapi.ListParams{MaxResults: n, SinceID: in.SinceID, PaginationToken: in.PaginationToken})
					if err != nil {
						return nil, err
					}
					ms := make([]optouts.Message, 0, len(p.Data))
					for _, t := range p.Data {
						m := optouts.Message{ID: t.ID, AuthorID: t.AuthorID, Text: t.Text}
						if t.Author != nil {
							m.AuthorUsername = t.Author.Username
						}
						ms = append(ms, m)
					}
					return p, recordOptOuts(ctx, c.Deps.RecordOptOut, ms)
				})
			}),
		userTweetList("x_get_user_tweets", "Get user tweets", "Get a user's recent tweets.", allProfiles, 10, 5, 100, (*xapi.Client).UserTweets),
		def(readSpec("x_get_home_timeline", "Get home timeline", "Get the authenticated user's home timeline, newest first.", allProfiles, TweetList{}),
			func(ctx context.Context, c *Call, in PageInput) (Result, error) {
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 20, 1, 100, &m)
				return page(c, m, tweets, func(x *xapi.Client) (*xapi.Page[xapi.Tweet], error) {
					return x.HomeTimeline(ctx, xapi.ListParams{MaxResults: n, PaginationToken: in.PaginationToken})
				})
			}),
		userUserList("x_get_followers", "Get followers", "Get a user's followers.", (*xapi.Client).Followers),
		userUserList("x_get_following", "Get following", "Get the accounts a user follows.", (*xapi.Client).Following),
		userTweetList("x_get_liked_tweets", "Get liked tweets", "Get the tweets a user liked.", apiProfiles, 10, 5, 100, (*xapi.Client).LikedTweets),
		def(readSpec("x_get_bookmarks", "Get bookmarks", "Get the authenticated user's bookmarks.", apiProfiles, TweetList{}),
			func(ctx context.Context, c *Call, in PageInput) (Result, error) {
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 10, 1, 100, &m)
				return page(c, m, tweets, func(x *xapi.Client) (*xapi.Page[xapi.Tweet], error) {
					return x.Bookmarks(ctx, xapi.ListParams{MaxResults: n, PaginationToken: in.PaginationToken})
				})
			}),
		def(readSpec("x_get_tweet_liking_users", "Get liking users", "Get the users who liked a tweet.", apiProfiles, UserList{}),
			func(ctx context.Context, c *Call, in TweetPageInput) (Result, error) {
				var m envelope.Meta
				n := clamp("max_results", in.MaxResults, 100, 1, 100, &m)
				return page(c, m, users, func(x *xapi.Client) (*xapi.Page[xapi.User], error) {
					return x.LikingUsers(ctx, in.TweetID, xapi.ListParams{MaxResults: n, PaginationToken: in.PaginationToken})
				})
			}),
		def(readSpec("x_get_me", "Get authenticated user", "Get the authenticated user's own profile.", apiProfiles, xapi.User{}),
			func(ctx context.Context, c *Call, _ NoInput) (Result, error) {
				return one(c, func(x *xapi.Client) (*xapi.User, xapi.CallInfo, error) { return x.Me(ctx) })
			}),
	}
}

type tweetLister func(*xapi.Client, context.Context, string, xapi.ListParams) (*xapi.Page[xapi.Tweet], error)
type userLister func(*xapi.Client, context.Context, string, xapi.ListParams) (*xapi.Page[xapi.User], error)

func userTweetList(name, title, desc string, profiles []Profile, def0, lo, hi int, list tweetLister) *Tool {
	return def(readSpec(name, title, desc, profiles, TweetList{}),
		func(ctx context.Context, c *Call, in UserPageInput) (Result, error) {
			var m envelope.Meta
			n := clamp("max_results", in.MaxResults, def0, lo, hi, &m)
			return page(c, m, tweets, func(x *xapi.Client) (*xapi.Page[xapi.Tweet], error) {
				return list(x, ctx, in.UserID, xapi.ListParams{MaxResults: n, PaginationToken: in.PaginationToken})
			})
		})
}

func userUserList(name, title, desc string, list userLister) *Tool {
	return def(readSpec(name, title, desc, apiProfiles, UserList{}),
		func(ctx context.Context, c *Call, in UserPageInput) (Result, error) {
			var m envelope.Meta
			n := clamp("max_results", in.MaxResults, 100, 1, 1000, &m)
			return page(c, m, users, func(x *xapi.Client) (*xapi.Page[xapi.User], error) {
				return list(x, ctx, in.UserID, xapi.ListParams{MaxResults: n, PaginationToken: in.PaginationToken})
			})
		})
}

// recordOptOuts records the messages (mentions, DMs) that tell the
// account to stop: X's guidelines say "If a user says 'stop,' stop",
// wherever tuitbot reads it.
func recordOptOuts(ctx context.Context, record func(context.Context, optouts.Message) (bool, error), ms []optouts.Message) error {
	if record == nil {
		return nil
	}
	for _, m := range ms {
		if _, err := record(ctx, m); err != nil {
			return err
		}
	}
	return nil
}
