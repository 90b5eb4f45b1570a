package xapi

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// Fields the typed reads ask X for. X's query parameter for post fields is
// tweet.fields; user.fields and expansions=author_id bring the authors.
// note_tweet brings a long post's whole text, which text alone cuts short.
// expansions=attachments.poll_ids with poll.fields brings a poll post's
// options, votes, end and whether it is still open: attachments alone
// names only the poll's id.
const (
	tweetFields = "attachments,author_id,conversation_id,created_at,entities,in_reply_to_user_id,lang,note_tweet,possibly_sensitive,public_metrics,referenced_tweets"
	userFields  = "created_at,description,location,name,profile_image_url,protected,public_metrics,url,username,verified,verified_type"
	pollFields  = "duration_minutes,end_datetime,id,options,voting_status"
	expansions  = "attachments.poll_ids,author_id"
)

// MaxBatchIDs is X's limit of ids per batch lookup.
const MaxBatchIDs = 100

// isXID reports whether s is an X id: 1-19 ASCII digits.
func isXID(s string) bool { return len(s) <= 19 && isDigits(s) }

// isUsername reports whether s is an X handle: 1-15 of [A-Za-z0-9_].
func isUsername(s string) bool {
	if len(s) == 0 || len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ListParams page through a list endpoint. Zero values are omitted so X
// applies its defaults.
type ListParams struct {
	MaxResults      int
	PaginationToken string
	// SinceID is honoured by mentions, user posts and the home timeline.
	SinceID string
}

// SearchParams are the recent-search inputs.
type SearchParams struct {
	Query           string
	MaxResults      int
	SinceID         string
	PaginationToken string
}

// The default queries, encoded once, on first use: most single lookups
// send exactly these, and a process that never reads X does not encode
// them.
var (
	encodedTweetQuery = sync.OnceValue(func() string { return tweetQuery().Encode() })
	encodedUserQuery  = sync.OnceValue(func() string { return userQuery().Encode() })
	// The account's own user also tells its X subscription.
	encodedMeQuery = sync.OnceValue(func() string {
		return url.Values{"user.fields": {userFields + ",subscription_type"}}.Encode()
	})
)

func tweetQuery() url.Values {
	return url.Values{
		"tweet.fields": {tweetFields},
		"expansions":   {expansions},
		"user.fields":  {userFields},
		"poll.fields":  {pollFields},
	}
}

func userQuery() url.Values {
	return url.Values{"user.fields": {userFields}}
}

func checkID(field, id string) error {
	if !isXID(id) {
		return apperr.New(apperr.InvalidInput, "%s: %q is not an X id (1-19 digits)", field, truncate(id, 40))
	}
	return nil
}

func checkIDs(field string, ids []string) error {
	if len(ids) == 0 {
		return apperr.New(apperr.InvalidInput, "%s: at least one id is required", field)
	}
	if len(ids) > MaxBatchIDs {
		return apperr.New(apperr.InvalidInput, "%s: %d ids given, X accepts at most %d", field, len(ids), MaxBatchIDs)
	}
	for i, id := range ids {
		if err := checkID(field+"["+strconv.Itoa(i)+"]", id); err != nil {
			return err
		}
	}
	return nil
}

// listRange is X's max_results range of one list endpoint.
type listRange struct{ min, max int }

func (p ListParams) apply(q url.Values, r listRange, sinceOK bool) error {
	if p.MaxResults != 0 {
		if p.MaxResults < r.min || p.MaxResults > r.max {
			return apperr.New(apperr.InvalidInput, "max_results: %d is outside X's range %d-%d for this endpoint", p.MaxResults, r.min, r.max)
		}
		q.Set("max_results", strconv.Itoa(p.MaxResults))
	}
	if p.PaginationToken != "" {
		if strings.ContainsAny(p.PaginationToken, "\x00\r\n") || len(p.PaginationToken) > 512 {
			return apperr.New(apperr.InvalidInput, "pagination_token: not a valid X pagination token")
		}
		q.Set("pagination_token", p.PaginationToken)
	}
	if p.SinceID != "" {
		if !sinceOK {
			return apperr.New(apperr.InvalidInput, "since_id: this endpoint does not support since_id")
		}
		if err := checkID("since_id", p.SinceID); err != nil {
			return err
		}
		q.Set("since_id", p.SinceID)
	}
	return nil
}

// getEnvelope runs a typed GET and decodes X's envelope inside the retry
// loop, so a cut-off or malformed answer counts as a failed attempt and the
// ledger learns what was returned without parsing the body twice.
func getEnvelope[W any](ctx context.Context, c *Client, path, query string, ids func(W) []string) (*envelope[W], CallInfo, error) {
	var env envelope[W]
	r := newRequest("GET", HostAPI, path, nil, nil)
	r.rawQuery = query
	r.decode = func(body []byte) (*readResources, error) {
		env = envelope[W]{}
		if err := json.Unmarshal(body, &env); err != nil {
			return nil, err
		}
		rr := &readResources{dataIDs: ids(env.Data)}
		rr.items = len(rr.dataIDs)
		env.Includes.resources(rr)
		return rr, nil
	}
	res, err := c.exec(ctx, r)
	if err != nil {
		return nil, CallInfo{}, err
	}
	return &env, res.callInfo(), nil
}

func tweetIDs(d []wireTweet) []string {
	out := make([]string, len(d))
	for i := range d {
		out[i] = d[i].ID
	}
	return out
}

func userIDs(d []wireUser) []string {
	out := make([]string, len(d))
	for i := range d {
		out[i] = d[i].ID
	}
	return out
}

func oneTweetID(d *wireTweet) []string {
	if d == nil {
		return nil
	}
	return []string{d.ID}
}

func oneUserID(d *wireUser) []string {
	if d == nil {
		return nil
	}
	return []string{d.ID}
}

// getOneTweet fetches a single post; a 200 without data (X reports missing
// resources that way) becomes an error built from errors[].
func getOneTweet(ctx context.Context, c *Client, path, query string) (*Tweet, CallInfo, error) {
	env, info, err := getEnvelope(ctx, c, path, query, oneTweetID)
	if err != nil {
		return nil, info, err
	}
	if env.Data == nil {
		return nil, info, classifyProblems(env.Errors)
	}
	one := []Tweet{env.Data.convert()}
	attachAuthors(one, convertUsers(env.Includes.Users))
	attachPolls(one, env.Includes.Polls)
	c.seen.note(query, one)
	return &one[0], info, nil
}

func getOneUser(ctx context.Context, c *Client, path, query string) (*User, CallInfo, error) {
	env, info, err := getEnvelope(ctx, c, path, query, oneUserID)
	if err != nil {
		return nil, info, err
	}
	if env.Data == nil {
		return nil, info, classifyProblems(env.Errors)
	}
	u := env.Data.convert()
	return &u, info, nil
}

func getTweetPage(ctx context.Context, c *Client, path, query string) (*Page[Tweet], error) {
	env, info, err := getEnvelope(ctx, c, path, query, tweetIDs)
	if err != nil {
		return nil, err
	}
	p := &Page[Tweet]{Data: convertTweets(env.Data), Includes: env.Includes.convert(), Meta: env.Meta, Errors: env.Errors, Call: info}
	if p.Data == nil {
		p.Data = []Tweet{}
	}
	attachAuthors(p.Data, p.Includes.Users)
	attachPolls(p.Data, p.Includes.Polls)
	c.seen.note(query, p.Data)
	return p, nil
}

func getUserPage(ctx context.Context, c *Client, path, query string) (*Page[User], error) {
	env, info, err := getEnvelope(ctx, c, path, query, userIDs)
	if err != nil {
		return nil, err
	}
	p := &Page[User]{Data: convertUsers(env.Data), Includes: env.Includes.convert(), Meta: env.Meta, Errors: env.Errors, Call: info}
	if p.Data == nil {
		p.Data = []User{}
	}
	return p, nil
}

// Me returns the authenticated user and caches its id for the write
// endpoints, which need it in their paths.
func (c *Client) Me(ctx context.Context) (*User, CallInfo, error) {
	u, info, err := getOneUser(ctx, c, "/2/users/me", encodedMeQuery())
	if err != nil {
		return nil, info, err
	}
	if u.ID != "" {
		c.meMu.Lock()
		c.meID, c.meUsername = u.ID, u.Username
		c.meMu.Unlock()
	}
	return u, info, nil
}

// MyAccount returns the authenticated user's id and username, calling X
// only when the username is not known yet.
func (c *Client) MyAccount(ctx context.Context) (id, username string, err error) {
	c.meMu.Lock()
	id, username = c.meID, c.meUsername
	c.meMu.Unlock()
	if id != "" && username != "" {
		return id, username, nil
	}
	u, _, err := c.Me(ctx)
	if err != nil {
		return "", "", err
	}
	if !isXID(u.ID) {
		return "", "", apperr.New(apperr.XAPIError, "X returned no usable id for the authenticated user")
	}
	return u.ID, u.Username, nil
}

// encodedSummonQuery asks for what tells whether a post summoned an
// account (its author, @mentions, the author it replies to and the posts
// it quotes), and for no
// expansion: each expanded object is billed as a read of its own.
var encodedSummonQuery = sync.OnceValue(func() string {
	return url.Values{"tweet.fields": {"author_id,entities,in_reply_to_user_id,referenced_tweets"}}.Encode()
})

// SummonState fetches one post with its author, @mentions and referenced
// posts, with the cheapest read X has for it (one post, no expansions).
func (c *Client) SummonState(ctx context.Context, id string) (*Tweet, CallInfo, error) {
	if err := checkID("tweet_id", id); err != nil {
		return nil, CallInfo{}, err
	}
	return getOneTweet(ctx, c, "/2/tweets/"+id, encodedSummonQuery())
}

// MyUserID returns the authenticated user's id, calling X only the first
// time.
func (c *Client) MyUserID(ctx context.Context) (string, error) {
	c.meMu.Lock()
	id := c.meID
	c.meMu.Unlock()
	if id != "" {
		return id, nil
	}
	u, _, err := c.Me(ctx)
	if err != nil {
		return "", err
	}
	if !isXID(u.ID) {
		return "", apperr.New(apperr.XAPIError, "X returned no usable id for the authenticated user")
	}
	return u.ID, nil
}

func (c *Client) userOrMe(ctx context.Context, field, userID string) (string, error) {
	if userID == "" {
		return c.MyUserID(ctx)
	}
	return userID, checkID(field, userID)
}

// GetTweet fetches one post with its author.
func (c *Client) GetTweet(ctx context.Context, id string) (*Tweet, CallInfo, error) {
	if err := checkID("tweet_id", id); err != nil {
		return nil, CallInfo{}, err
	}
	return getOneTweet(ctx, c, "/2/tweets/"+id, encodedTweetQuery())
}

// encodedEditQuery asks for what decides whether a post may be edited.
var encodedEditQuery = sync.OnceValue(func() string {
	return url.Values{"tweet.fields": {"author_id,created_at,attachments,edit_controls"}}.Encode()
})

// EditState fetches one post with its author, attachments and
// edit_controls: what decides whether it may be edited now.
func (c *Client) EditState(ctx context.Context, id string) (*Tweet, CallInfo, error) {
	if err := checkID("tweet_id", id); err != nil {
		return nil, CallInfo{}, err
	}
	return getOneTweet(ctx, c, "/2/tweets/"+id, encodedEditQuery())
}

// GetTweets fetches up to 100 posts; ids X cannot return are listed in
// Page.Errors.
func (c *Client) GetTweets(ctx context.Context, ids []string) (*Page[Tweet], error) {
	if err := checkIDs("ids", ids); err != nil {
		return nil, err
	}
	q := tweetQuery()
	q.Set("ids", strings.Join(ids, ","))
	return getTweetPage(ctx, c, "/2/tweets", q.Encode())
}

// SearchRecent runs X's recent search (last 7 days).
func (c *Client) SearchRecent(ctx context.Context, p SearchParams) (*Page[Tweet], error) {
	query := strings.TrimSpace(p.Query)
	if query == "" {
		return nil, apperr.New(apperr.InvalidInput, "query: must not be empty")
	}
	if len(query) > 4096 {
		return nil, apperr.New(apperr.InvalidInput, "query: %d bytes, X accepts at most 4096", len(query))
	}
	q := tweetQuery()
	q.Set("query", query)
	lp := ListParams{MaxResults: p.MaxResults, PaginationToken: p.PaginationToken, SinceID: p.SinceID}
	if err := lp.apply(q, listRange{10, 100}, true); err != nil {
		return nil, err
	}
	return getTweetPage(ctx, c, "/2/tweets/search/recent", q.Encode())
}

// GetUser fetches one user by id.
func (c *Client) GetUser(ctx context.Context, id string) (*User, CallInfo, error) {
	if err := checkID("user_id", id); err != nil {
		return nil, CallInfo{}, err
	}
	return getOneUser(ctx, c, "/2/users/"+id, encodedUserQuery())
}

// GetUsers fetches up to 100 users by id.
func (c *Client) GetUsers(ctx context.Context, ids []string) (*Page[User], error) {
	if err := checkIDs("ids", ids); err != nil {
		return nil, err
	}
	q := userQuery()
	q.Set("ids", strings.Join(ids, ","))
	return getUserPage(ctx, c, "/2/users", q.Encode())
}

// GetUserByUsername fetches one user by handle (without the @).
func (c *Client) GetUserByUsername(ctx context.Context, username string) (*User, CallInfo, error) {
	username = strings.TrimPrefix(strings.TrimSpace(username), "@")
	if !isUsername(username) {
		return nil, CallInfo{}, apperr.New(apperr.InvalidInput, "username: %q is not an X handle (1-15 letters, digits or _)", truncate(username, 40))
	}
	return getOneUser(ctx, c, "/2/users/by/username/"+username, encodedUserQuery())
}

func (c *Client) tweetList(ctx context.Context, userID, field, suffix string, p ListParams, r listRange, sinceOK bool) (*Page[Tweet], error) {
	q := tweetQuery()
	if err := p.apply(q, r, sinceOK); err != nil {
		return nil, err
	}
	id, err := c.userOrMe(ctx, field, userID)
	if err != nil {
		return nil, err
	}
	return getTweetPage(ctx, c, "/2/users/"+id+suffix, q.Encode())
}

func (c *Client) userList(ctx context.Context, userID, suffix string, p ListParams, r listRange) (*Page[User], error) {
	q := userQuery()
	if err := p.apply(q, r, false); err != nil {
		return nil, err
	}
	id, err := c.userOrMe(ctx, "user_id", userID)
	if err != nil {
		return nil, err
	}
	return getUserPage(ctx, c, "/2/users/"+id+suffix, q.Encode())
}

// Mentions lists posts mentioning userID ("" = the authenticated user).
func (c *Client) Mentions(ctx context.Context, userID string, p ListParams) (*Page[Tweet], error) {
	return c.tweetList(ctx, userID, "user_id", "/mentions", p, listRange{5, 100}, true)
}

// UserTweets lists posts by userID ("" = the authenticated user).
func (c *Client) UserTweets(ctx context.Context, userID string, p ListParams) (*Page[Tweet], error) {
	return c.tweetList(ctx, userID, "user_id", "/tweets", p, listRange{5, 100}, true)
}

// HomeTimeline lists the authenticated user's home timeline, newest first.
func (c *Client) HomeTimeline(ctx context.Context, p ListParams) (*Page[Tweet], error) {
	return c.tweetList(ctx, "", "user_id", "/timelines/reverse_chronological", p, listRange{1, 100}, true)
}

// LikedTweets lists posts userID liked ("" = the authenticated user).
func (c *Client) LikedTweets(ctx context.Context, userID string, p ListParams) (*Page[Tweet], error) {
	return c.tweetList(ctx, userID, "user_id", "/liked_tweets", p, listRange{5, 100}, false)
}

// Bookmarks lists the authenticated user's bookmarks.
func (c *Client) Bookmarks(ctx context.Context, p ListParams) (*Page[Tweet], error) {
	return c.tweetList(ctx, "", "user_id", "/bookmarks", p, listRange{1, 100}, false)
}

// Followers lists users following userID ("" = the authenticated user).
func (c *Client) Followers(ctx context.Context, userID string, p ListParams) (*Page[User], error) {
	return c.userList(ctx, userID, "/followers", p, listRange{1, 1000})
}

// Following lists users userID follows ("" = the authenticated user).
func (c *Client) Following(ctx context.Context, userID string, p ListParams) (*Page[User], error) {
	return c.userList(ctx, userID, "/following", p, listRange{1, 1000})
}

// LikingUsers lists users who liked a post.
func (c *Client) LikingUsers(ctx context.Context, tweetID string, p ListParams) (*Page[User], error) {
	if err := checkID("tweet_id", tweetID); err != nil {
		return nil, err
	}
	q := userQuery()
	if err := p.apply(q, listRange{1, 100}, false); err != nil {
		return nil, err
	}
	return getUserPage(ctx, c, "/2/tweets/"+tweetID+"/liking_users", q.Encode())
}
