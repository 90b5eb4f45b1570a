package workflow

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

var usernameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`) })

// NormalizeUsername strips an @ and validates X's handle rules.
func NormalizeUsername(field, s string) (string, error) {
	u := strings.TrimPrefix(strings.TrimSpace(s), "@")
	if !usernameRE().MatchString(u) {
		return "", apperr.New(apperr.InvalidInput, "%s: %q is not an X username (1-15 letters, digits or _)", field, tweettext.TruncateRunes(s, 40))
	}
	return u, nil
}

// Target is one monitored account.
type Target struct {
	Username string `json:"username"`
	UserID   string `json:"user_id,omitempty"`
	AddedAt  string `json:"added_at"`
}

// Targets lists the target accounts.
func (s *Service) Targets(ctx context.Context) ([]Target, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT username, user_id, added_at FROM target_accounts WHERE account_id = ? ORDER BY username`, s.account())
	if err != nil {
		return nil, dbErr(err, "read targets")
	}
	defer rows.Close()
	out := []Target{}
	for rows.Next() {
		var t Target
		if err := rows.Scan(&t.Username, &t.UserID, &t.AddedAt); err != nil {
			return nil, dbErr(err, "read targets")
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// AddTarget adds an account, resolving its id on X when X is available.
func (s *Service) AddTarget(ctx context.Context, username string) (*Target, error) {
	u, err := NormalizeUsername("username", username)
	if err != nil {
		return nil, err
	}
	t := &Target{Username: u, AddedAt: s.ts(s.Now())}
	if x, err := s.X(); err == nil {
		user, _, err := x.GetUserByUsername(ctx, u)
		if err != nil {
			return nil, err
		}
		t.UserID, t.Username = user.ID, user.Username
	}
	_, err = s.DB.ExecContext(ctx, `INSERT INTO target_accounts (account_id, username, user_id, added_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(account_id, username) DO UPDATE SET user_id = excluded.user_id`, s.account(), strings.ToLower(t.Username), t.UserID, t.AddedAt)
	if err != nil {
		return nil, dbErr(err, "store target")
	}
	return t, nil
}

// RemoveTarget removes an account; removing an absent one is not_found.
func (s *Service) RemoveTarget(ctx context.Context, username string) error {
	u, err := NormalizeUsername("username", username)
	if err != nil {
		return err
	}
	res, err := s.DB.ExecContext(ctx, `DELETE FROM target_accounts WHERE account_id = ? AND username = ?`, s.account(), strings.ToLower(u))
	if err != nil {
		return dbErr(err, "remove target")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.New(apperr.NotFound, "username: @%s is not a target account", u)
	}
	return nil
}

// AuthorContext is get_author_context's data.
type AuthorContext struct {
	Author          *xapi.User   `json:"author"`
	IsTarget        bool         `json:"is_target"`
	RepliesSent     []Reply      `json:"our_replies"`
	RepliesToday    int          `json:"our_replies_today"`
	DiscoveredCount int          `json:"discovered_tweets"`
	RecentTweets    []xapi.Tweet `json:"recent_tweets"`
}

// AuthorContext gathers the author's profile, our history with them and
// their recent tweets. identifier is a username (with or without @) or id.
func (s *Service) AuthorContext(ctx context.Context, identifier string) (*AuthorContext, error) {
	id := strings.TrimSpace(identifier)
	if id == "" {
		return nil, apperr.New(apperr.InvalidInput, "identifier: required (username or user id)")
	}
	x, err := s.X()
	if err != nil {
		return nil, err
	}
	var user *xapi.User
	if strings.Trim(id, "0123456789") == "" && len(id) <= 19 {
		user, _, err = x.GetUser(ctx, id)
	} else {
		u, nerr := NormalizeUsername("identifier", id)
		if nerr != nil {
			return nil, nerr
		}
		user, _, err = x.GetUserByUsername(ctx, u)
	}
	if err != nil {
		return nil, err
	}
	out := &AuthorContext{Author: user, RepliesSent: []Reply{}, RecentTweets: []xapi.Tweet{}}
	n, err := s.count(ctx, `SELECT count(*) FROM target_accounts WHERE account_id = ? AND username = ?`, s.account(), strings.ToLower(user.Username))
	if err != nil {
		return nil, dbErr(err, "read targets")
	}
	out.IsTarget = n > 0
	// A reply is the author's when it names them, or when discovery found
	// its target written by them (replies that ran through approval may
	// name nobody).
	discovered, err := s.Discovery.AuthorTweetIDs(ctx, user.ID)
	if err != nil {
		return nil, err
	}
	out.DiscoveredCount = len(discovered)
	args := []any{s.account(), user.ID, user.Username}
	for _, id := range discovered {
		args = append(args, id)
	}
	byTarget := ""
	if len(discovered) > 0 {
		byTarget = ` OR target_tweet_id IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(discovered)), ", ") + `)`
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT target_tweet_id, reply_tweet_id, author_username, content, caller, created_at
		FROM replies_sent WHERE account_id = ? AND (author_id = ? OR lower(author_username) = lower(?)`+byTarget+`)
		ORDER BY created_at DESC LIMIT 20`, args...)
	if err != nil {
		return nil, dbErr(err, "read replies")
	}
	for rows.Next() {
		var r Reply
		if err := rows.Scan(&r.TargetTweetID, &r.ReplyTweetID, &r.AuthorUsername, &r.Content, &r.Caller, &r.CreatedAt); err != nil {
			rows.Close()
			return nil, dbErr(err, "read replies")
		}
		out.RepliesSent = append(out.RepliesSent, r)
		if r.CreatedAt >= s.ts(dayStart(s.Now())) {
			out.RepliesToday++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, dbErr(err, "read replies")
	}
	page, err := x.UserTweets(ctx, user.ID, xapi.ListParams{MaxResults: 5})
	if err != nil {
		return nil, err
	}
	if page.Data != nil {
		out.RecentTweets = page.Data
	}
	return out, nil
}
