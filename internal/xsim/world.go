package xsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// World is the persistent state of the emulator: accounts, posts, the social
// graph, uploaded media, OAuth grants and the billing ledger. It is a plain
// JSON-friendly snapshot; the server keeps its own indexed copy while running.
type World struct {
	Version    int    `json:"version"`
	DemoUserID string `json:"demo_user_id"`
	// DemoAccounts maps the sandbox's account names (default, brand_b...)
	// to the users they log in as, so a sandbox home runs several accounts
	// out of the box. Worlds saved before it have none but the demo user.
	DemoAccounts map[string]string `json:"demo_accounts,omitempty"`
	Users        []User            `json:"users"`
	Tweets       []Tweet           `json:"tweets"`
	Follows      []Edge            `json:"follows,omitempty"`   // From follows To (user ids)
	Likes        []Edge            `json:"likes,omitempty"`     // From (user) likes To (tweet)
	Bookmarks    []Edge            `json:"bookmarks,omitempty"` // From (user) bookmarked To (tweet)
	// Relations holds the other user-to-user relations by name (muting).
	Relations map[string][]Edge `json:"relations,omitempty"`
	Media     []Media           `json:"media,omitempty"`
	Deleted   []Edge            `json:"deleted_tweets,omitempty"` // From: author, To: post id
	Grants    []Grant           `json:"grants,omitempty"`
	Billing   []Charge          `json:"billing,omitempty"`
	Seen      []string          `json:"billing_seen,omitempty"` // "day|kind|id" keys already charged
	Suspended []string          `json:"suspended_user_ids,omitempty"`
	Lists     []List            `json:"lists,omitempty"`
	// DMs are the direct messages, oldest first.
	DMs []DMEvent `json:"dm_events,omitempty"`
	// Communities are the communities and their members.
	Communities []Community `json:"communities,omitempty"`
	// QuotesNeedHigherTier makes quote posts answer X's 403 for a feature
	// outside the app's access level, as X does on tiers without them.
	QuotesNeedHigherTier bool `json:"quotes_need_higher_tier,omitempty"`
	// Access is the access level of every account's app that AccessByUser
	// does not name; "" (every world saved before it) is AccessEnterprise.
	Access Access `json:"access,omitempty"`
	// AccessByUser is the access level of single accounts' apps, by user id.
	AccessByUser map[string]Access `json:"access_by_user,omitempty"`
	Sequence     int64             `json:"sequence"`
	SavedAt      time.Time         `json:"saved_at,omitzero"`
	// Journal names this writing of the world file for the change log
	// beside it (WorldLogPath), which continues only the file whose
	// Journal its header names. Empty: no log continues the file.
	Journal string `json:"journal,omitempty"`

	// from is the file LoadWorld read the world from, and how far, so
	// that an emulator serving that file carries on its log.
	from *worldSource
}

// worldSource is where a loaded world came from.
type worldSource struct {
	path string
	// logged is true when the log beside the file continues it; valid is
	// then the log's length without a torn last line.
	logged bool
	valid  int64
	// size is the world file's size, against which the log's is weighed.
	size int64
}

// worldVersion is bumped whenever the JSON layout changes incompatibly.
const worldVersion = 1

// User is an account.
type User struct {
	ID              string    `json:"id"`
	Username        string    `json:"username"`
	Name            string    `json:"name"`
	Description     string    `json:"description,omitempty"`
	Location        string    `json:"location,omitempty"`
	URL             string    `json:"url,omitempty"`
	ProfileImageURL string    `json:"profile_image_url,omitempty"`
	Verified        bool      `json:"verified,omitempty"`
	Protected       bool      `json:"protected,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	PinnedTweetID   string    `json:"pinned_tweet_id,omitempty"`
	// Base counts model the part of the audience that lives outside the
	// emulated world; edges inside the world are added on top.
	FollowersBase int64 `json:"followers_base"`
	FollowingBase int64 `json:"following_base"`
	ListedCount   int64 `json:"listed_count"`
	LikeBase      int64 `json:"like_base,omitempty"`
	// DMsFromFollowedOnly: the user takes direct messages only from the
	// accounts they follow.
	DMsFromFollowedOnly bool `json:"dms_from_followed_only,omitempty"`
	// SubscriptionType is the user's X subscription: None, Basic, Premium
	// or PremiumPlus. Empty means what the blue check implies (Premium
	// when verified, else None), as worlds saved before it had.
	SubscriptionType string `json:"subscription_type,omitempty"`
}

// Tweet is a post. Retweets are posts with RetweetOf set.
type Tweet struct {
	ID               string    `json:"id"`
	AuthorID         string    `json:"author_id"`
	Text             string    `json:"text"`
	CreatedAt        time.Time `json:"created_at"`
	ConversationID   string    `json:"conversation_id"`
	InReplyToTweetID string    `json:"in_reply_to_tweet_id,omitempty"`
	InReplyToUserID  string    `json:"in_reply_to_user_id,omitempty"`
	QuoteOf          string    `json:"quote_of,omitempty"`
	RetweetOf        string    `json:"retweet_of,omitempty"`
	Lang             string    `json:"lang"`
	MediaKeys        []string  `json:"media_keys,omitempty"`
	Source           string    `json:"source,omitempty"`
	// ReplySettings is who may reply; "" is everyone.
	ReplySettings string `json:"reply_settings,omitempty"`
	Poll          *Poll  `json:"poll,omitempty"`
	// EditHistory is the ids of the post's versions, oldest first, on
	// every version; empty for a post never edited.
	EditHistory []string `json:"edit_history,omitempty"`
	// CommunityID is the community the post was made in.
	CommunityID string `json:"community_id,omitempty"`
	// Engagement that happened outside the emulated world; likes, retweets,
	// replies and bookmarks made inside it are counted on top.
	RetweetBase    int64 `json:"retweet_base"`
	ReplyBase      int64 `json:"reply_base"`
	LikeBase       int64 `json:"like_base"`
	QuoteBase      int64 `json:"quote_base"`
	BookmarkBase   int64 `json:"bookmark_base"`
	ImpressionBase int64 `json:"impression_base"`
}

// Poll is a poll attached to a post.
type Poll struct {
	ID              string    `json:"id"`
	Options         []string  `json:"options"`
	DurationMinutes int       `json:"duration_minutes"`
	EndsAt          time.Time `json:"ends_at"`
	// Votes are the votes each option has had, by position; nil for none.
	Votes []int64 `json:"votes,omitempty"`
}

// Edge is a directed relation between two ids.
type Edge struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"at"`
}

// Media is an uploaded media object (or a chunked upload in progress).
type Media struct {
	ID          string    `json:"id"`
	Key         string    `json:"media_key"`
	OwnerID     string    `json:"owner_id"`
	Category    string    `json:"media_category"`
	MediaType   string    `json:"media_type"`
	TotalBytes  int64     `json:"total_bytes"`
	Received    int64     `json:"received_bytes"`
	Segments    []int     `json:"segments,omitempty"`
	Head        []byte    `json:"head,omitempty"` // first bytes, for type sniffing
	Width       int       `json:"width,omitempty"`
	Height      int       `json:"height,omitempty"`
	State       string    `json:"state"` // uploading, pending, in_progress, succeeded, failed
	StatusPolls int       `json:"status_polls,omitempty"`
	AltText     string    `json:"alt_text,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// Grant is a stored OAuth credential. Only a SHA-256 of the token is kept, so
// a saved world file never holds a usable bearer token.
type Grant struct {
	Hash      string    `json:"hash"`
	Kind      string    `json:"kind"` // access, refresh, code
	UserID    string    `json:"user_id"`
	ClientID  string    `json:"client_id"`
	Scopes    []string  `json:"scopes"`
	ExpiresAt time.Time `json:"expires_at"`
	Used      bool      `json:"used,omitempty"`
	Revoked   bool      `json:"revoked,omitempty"`
	// Authorization codes only.
	RedirectURI   string `json:"redirect_uri,omitempty"`
	Challenge     string `json:"code_challenge,omitempty"`
	ChallengeMeth string `json:"code_challenge_method,omitempty"`
	// Pair links an access token to the refresh token issued with it so that
	// revoking one can revoke the other.
	Pair string `json:"pair,omitempty"`
}

// Charge is one billed line in the pay-per-use ledger.
type Charge struct {
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	Units    int64     `json:"units"`
	Micros   int64     `json:"usd_micros"`
	Endpoint string    `json:"endpoint"`
}

// Clone returns a deep copy so callers can never alias server state.
func (w *World) Clone() *World {
	if w == nil {
		return nil
	}
	out := *w
	// A copy may be changed: it is no longer what the file holds.
	out.from = nil
	out.Users = slices.Clone(w.Users)
	out.Tweets = slices.Clone(w.Tweets)
	for i := range out.Tweets {
		out.Tweets[i].MediaKeys = slices.Clone(out.Tweets[i].MediaKeys)
	}
	out.Follows = slices.Clone(w.Follows)
	out.Likes = slices.Clone(w.Likes)
	out.Bookmarks = slices.Clone(w.Bookmarks)
	out.Media = slices.Clone(w.Media)
	for i := range out.Media {
		out.Media[i].Segments = slices.Clone(out.Media[i].Segments)
		out.Media[i].Head = slices.Clone(out.Media[i].Head)
	}
	out.Deleted = slices.Clone(w.Deleted)
	out.Grants = slices.Clone(w.Grants)
	for i := range out.Grants {
		out.Grants[i].Scopes = slices.Clone(out.Grants[i].Scopes)
	}
	out.Billing = slices.Clone(w.Billing)
	out.Seen = slices.Clone(w.Seen)
	out.Suspended = slices.Clone(w.Suspended)
	out.Lists = slices.Clone(w.Lists)
	for i := range out.Lists {
		out.Lists[i].Members = slices.Clone(out.Lists[i].Members)
	}
	out.DemoAccounts = maps.Clone(w.DemoAccounts)
	out.AccessByUser = maps.Clone(w.AccessByUser)
	out.DMs = slices.Clone(w.DMs)
	for i := range out.DMs {
		out.DMs[i].ParticipantIDs = slices.Clone(out.DMs[i].ParticipantIDs)
		out.DMs[i].MediaKeys = slices.Clone(out.DMs[i].MediaKeys)
	}
	out.Communities = slices.Clone(w.Communities)
	for i := range out.Communities {
		out.Communities[i].MemberIDs = slices.Clone(out.Communities[i].MemberIDs)
	}
	return &out
}

// Validate checks the referential integrity of a loaded world so a hand-edited
// or truncated file fails loudly instead of producing confusing answers.
func (w *World) Validate() error {
	if w.Version != worldVersion {
		return fmt.Errorf("world: version %d is not supported (want %d)", w.Version, worldVersion)
	}
	users := make(map[string]bool, len(w.Users))
	names := make(map[string]bool, len(w.Users))
	for i, u := range w.Users {
		if !isNumericID(u.ID) {
			return fmt.Errorf("world: users[%d].id %q is not a numeric id", i, u.ID)
		}
		if !validUsername(u.Username) {
			return fmt.Errorf("world: users[%d].username %q is invalid", i, u.Username)
		}
		if users[u.ID] {
			return fmt.Errorf("world: users[%d].id %q is duplicated", i, u.ID)
		}
		lu := lower(u.Username)
		if names[lu] {
			return fmt.Errorf("world: users[%d].username %q is duplicated", i, u.Username)
		}
		users[u.ID] = true
		names[lu] = true
	}
	if err := validAccess(w, users); err != nil {
		return err
	}
	if !users[w.DemoUserID] {
		return fmt.Errorf("world: demo_user_id %q is not a user", w.DemoUserID)
	}
	for name, id := range w.DemoAccounts {
		if !users[id] {
			return fmt.Errorf("world: demo_accounts[%q] %q is not a user", name, id)
		}
	}
	tweets := make(map[string]bool, len(w.Tweets))
	for i, t := range w.Tweets {
		if !isNumericID(t.ID) {
			return fmt.Errorf("world: tweets[%d].id %q is not a numeric id", i, t.ID)
		}
		if tweets[t.ID] {
			return fmt.Errorf("world: tweets[%d].id %q is duplicated", i, t.ID)
		}
		if !users[t.AuthorID] {
			return fmt.Errorf("world: tweets[%d].author_id %q is not a user", i, t.AuthorID)
		}
		tweets[t.ID] = true
	}
	for i, e := range w.Follows {
		if !users[e.From] || !users[e.To] {
			return fmt.Errorf("world: follows[%d] refers to an unknown user", i)
		}
	}
	for i, e := range w.Likes {
		if !users[e.From] || !tweets[e.To] {
			return fmt.Errorf("world: likes[%d] refers to an unknown user or tweet", i)
		}
	}
	for i, e := range w.Bookmarks {
		if !users[e.From] || !tweets[e.To] {
			return fmt.Errorf("world: bookmarks[%d] refers to an unknown user or tweet", i)
		}
	}
	for i, l := range w.Lists {
		if !isNumericID(l.ID) {
			return fmt.Errorf("world: lists[%d].id %q is not a numeric id", i, l.ID)
		}
		if !users[l.OwnerID] {
			return fmt.Errorf("world: lists[%d].owner_id %q is not a user", i, l.OwnerID)
		}
		for _, m := range l.Members {
			if !users[m] {
				return fmt.Errorf("world: lists[%d] has member %q, who is not a user", i, m)
			}
		}
		for _, f := range append(slices.Clone(l.Followers), l.PinnedBy...) {
			if !users[f] {
				return fmt.Errorf("world: lists[%d] is followed or pinned by %q, who is not a user", i, f)
			}
		}
	}
	for i, e := range w.DMs {
		if !isNumericID(e.ID) || !users[e.SenderID] || len(e.ParticipantIDs) != 2 || !users[e.ParticipantIDs[0]] || !users[e.ParticipantIDs[1]] {
			return fmt.Errorf("world: dm_events[%d] has a bad id or refers to an unknown user", i)
		}
	}
	for i, cm := range w.Communities {
		if !isNumericID(cm.ID) {
			return fmt.Errorf("world: communities[%d].id %q is not a numeric id", i, cm.ID)
		}
		for _, m := range cm.MemberIDs {
			if !users[m] {
				return fmt.Errorf("world: communities[%d] has an unknown member %q", i, m)
			}
		}
	}
	return nil
}

// LoadWorld reads a world saved by SaveWorld or an emulator serving path:
// the world file and the changes its log (WorldLogPath) adds to it.
func LoadWorld(path string) (*World, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load world: %w", err)
	}
	var w World
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("load world %s: %w", filepath.Base(path), err)
	}
	w.from = &worldSource{path: path, size: int64(len(b))}
	if err := w.replayLog(WorldLogPath(path)); err != nil {
		return nil, err
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("load world %s: %w", filepath.Base(path), err)
	}
	return &w, nil
}

// replayLog applies the log at path, when it continues w, onto w.
func (w *World) replayLog(path string) error {
	if w.Journal == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load world log: %w", err)
	}
	log, err := parseLog(b)
	if err != nil {
		return fmt.Errorf("load world log %s: %w", filepath.Base(path), err)
	}
	if log.journal != w.Journal {
		// Left over from before the world file was last written, which
		// holds all of it.
		return nil
	}
	replay(w, log.records)
	w.from.logged, w.from.valid = true, log.valid
	return nil
}

// SaveWorld writes w to path with mode 0600, atomically: a reader sees either
// the old file or the new one, never a torn write. The file holds OAuth grant
// hashes, which is why it is private.
func SaveWorld(path string, w *World) error {
	if w == nil {
		return errors.New("save world: nil world")
	}
	// No log beside the file continues this world.
	c := *w
	c.Journal = ""
	b, err := encodeWorld(&c)
	if err != nil {
		return err
	}
	return writeWorld(path, b, true)
}

func encodeWorld(w *World) ([]byte, error) {
	// Compact: indenting took as long as encoding, on every change.
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("save world: %w", err)
	}
	return append(b, '\n'), nil
}

// writeWorld replaces path with b through a private temporary file and a
// rename; durable also waits for the disk before the rename.
func writeWorld(path string, b []byte, durable bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".xsim-world-*.tmp")
	if err != nil {
		return fmt.Errorf("save world: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("save world: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("save world: %w", err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("save world: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save world: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save world: %w", err)
	}
	ok = true
	return nil
}
