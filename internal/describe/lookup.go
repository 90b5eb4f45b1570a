package describe

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Reader reads posts and accounts from X; *xapi.Client is one.
type Reader interface {
	GetTweets(ctx context.Context, ids []string) (*xapi.Page[xapi.Tweet], error)
	GetUsers(ctx context.Context, ids []string) (*xapi.Page[xapi.User], error)
}

// Post is a post as a reviewer sees it. Its text came from X: whoever
// shows it escapes it.
type Post struct {
	ID, Text                             string
	AuthorID, AuthorUsername, AuthorName string
	AuthorFollowers                      int64
	CreatedAt                            time.Time
	// Poll is the post's poll with its votes so far; nil when it has none.
	Poll *xapi.TweetPoll
}

// User is an account as a reviewer sees it.
type User struct {
	ID, Username, Name, Description string
	Followers                       int64
	Protected                       bool
}

// batch is how many ids X's lookups take at once.
const batch = 100

// Posts reads posts by id, with their authors. Ids X does not return
// (deleted, or not visible to this account) are absent from the map.
func Posts(ctx context.Context, r Reader, ids []string) (map[string]Post, error) {
	out := make(map[string]Post, len(ids))
	for start := 0; start < len(ids); start += batch {
		page, err := r.GetTweets(ctx, ids[start:min(start+batch, len(ids))])
		if err != nil {
			return out, fmt.Errorf("read posts from X: %w", err)
		}
		for _, tw := range page.Data {
			p := Post{ID: tw.ID, Text: tw.Text, AuthorID: tw.AuthorID, CreatedAt: tw.CreatedAt, Poll: tw.Poll}
			if tw.Author != nil {
				p.AuthorUsername, p.AuthorName, p.AuthorFollowers = tw.Author.Username, tw.Author.Name, tw.Author.PublicMetrics.FollowersCount
			}
			out[tw.ID] = p
		}
	}
	return out, nil
}

// Users reads accounts by id. Ids X does not return are absent.
func Users(ctx context.Context, r Reader, ids []string) (map[string]User, error) {
	out := make(map[string]User, len(ids))
	for start := 0; start < len(ids); start += batch {
		page, err := r.GetUsers(ctx, ids[start:min(start+batch, len(ids))])
		if err != nil {
			return out, fmt.Errorf("read accounts from X: %w", err)
		}
		for _, u := range page.Data {
			out[u.ID] = User{ID: u.ID, Username: u.Username, Name: u.Name, Description: u.Description,
				Followers: u.PublicMetrics.FollowersCount, Protected: u.Protected}
		}
	}
	return out, nil
}

// TargetLine reads t from X and says it in one line: the post's text,
// author and age, or the account's handle, name and followers. When it
// cannot be read it still names t and says why.
func TargetLine(ctx context.Context, r Reader, t Target, now time.Time) string {
	ids := []string{t.ID}
	if t.Kind == KindUser {
		users, err := Users(ctx, r, ids)
		if err != nil {
			return CannotRead(t, err)
		}
		if u, ok := users[t.ID]; ok {
			return u.Line()
		}
	} else {
		posts, err := Posts(ctx, r, ids)
		if err != nil {
			return CannotRead(t, err)
		}
		if p, ok := posts[t.ID]; ok {
			return p.Line(now)
		}
	}
	return fmt.Sprintf("%s %s (X did not return it: deleted, or not visible to this account)", t.Kind, t.ID)
}

// CannotRead names t when reading it from X failed with err.
func CannotRead(t Target, err error) string {
	return fmt.Sprintf("%s %s (cannot read it from X: %v)", t.Kind, t.ID, err)
}

// Line is the post in one line for a terminal: id, author, age and text.
func (p Post) Line(now time.Time) string {
	by := Handle(p.AuthorUsername)
	if by == "" {
		by = "user " + p.AuthorID
	}
	if p.AuthorName != "" {
		by += " (" + p.AuthorName + ")"
	}
	when := ""
	if !p.CreatedAt.IsZero() {
		when = fmt.Sprintf(", posted %s (%s)", Ago(now, p.CreatedAt), p.CreatedAt.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("post %s by %s%s: %q", p.ID, by, when, p.Text)
}

// Line is the account in one line for a terminal.
func (u User) Line() string {
	s := Handle(u.Username)
	if u.Name != "" {
		s += " (" + u.Name + ")"
	}
	s += ", " + Count(u.Followers) + " followers, user " + u.ID
	if u.Protected {
		s += ", protected"
	}
	return s
}

// Ago is how long before now t was, in words a reader takes in at a
// glance ("just now", "5 min ago", "3 h ago", "4 days ago").
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in " + Span(-d)
	case d < time.Minute:
		return "just now"
	}
	// Joined at once: a table shows one per row.
	n, unit := span(d)
	return strconv.Itoa(n) + " " + unit + " ago"
}

// In is how long after now t is ("in 3 h").
func In(now, t time.Time) string {
	if !t.After(now) {
		return Ago(now, t)
	}
	return "in " + Span(t.Sub(now))
}

// Span writes a duration in a word or two ("40 s", "4 min", "3 h", "2 days").
func Span(d time.Duration) string {
	n, unit := span(d)
	return strconv.Itoa(n) + " " + unit
}

// span is d as a number of its unit.
func span(d time.Duration) (int, string) {
	switch {
	case d < time.Minute:
		return int(d.Seconds()), "s"
	case d < time.Hour:
		return int(d.Minutes()), "min"
	case d < 48*time.Hour:
		return int(d.Hours()), "h"
	case d < 60*24*time.Hour:
		return int(d.Hours() / 24), "days"
	}
	return int(d.Hours() / 24 / 30), "months"
}

// Count writes n with thousands separators ("1,218").
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}
