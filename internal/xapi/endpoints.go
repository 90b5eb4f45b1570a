package xapi

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// EffectKind says what a request to an endpoint does on X.
type EffectKind string

// The effect kinds of the endpoint table.
const (
	EffectRead   EffectKind = "read"
	EffectCreate EffectKind = "create" // creates content: a post, an upload
	EffectDelete EffectKind = "delete" // destroys content: deleting a post
	EffectEngage EffectKind = "engage" // toggles a relation: like, follow, mute
	EffectOther  EffectKind = "other"  // changes state but is none of the above
)

// Pricing says how X bills a request to an endpoint.
type Pricing struct {
	// Unit is the USD price per resource returned (reads) or per request.
	Unit float64
	// PerRequest marks reads billed per call rather than per resource.
	PerRequest bool
	// Resource is the kind of resource a read returns, for same-UTC-day
	// deduplication; empty means no deduplication.
	Resource string
	// WithURL is the price of a post whose text holds a link (post creation
	// only; 0 elsewhere).
	WithURL float64
	// Reply is the price of a post that replies, link or not (post
	// creation only; 0 elsewhere).
	Reply float64
	// Owned is the per-resource price of a read of the authenticated
	// user's own resources, when the path's user is that user (X's "Owned
	// Reads"); 0 means the read has no such price.
	Owned float64
}

// Inverse is how the effect of a request is undone: the typed tool to call
// and the one parameter it takes. Param names the id the undo needs; the
// caller fills it from the request (the tweet or user the request named) or,
// for a create, from the id X returned.
type Inverse struct {
	Tool  string
	Param string
	Note  string
}

// Endpoint is one X endpoint the product knows: the single place its
// method, path, host, effect, retry behaviour, price, rate-limit key, the
// typed tool that calls it and the undo of its effect are written down.
type Endpoint struct {
	Method string
	// Path is the template; ":name" matches one path segment.
	Path  string
	Host  string
	Kind  EffectKind
	Retry retryClass
	Price Pricing
	// Tool is the typed MCP tool that performs this request, if any.
	Tool string
	// Undo is nil when the effect cannot be undone or is a read.
	Undo *Inverse
	// RawOnly rows are called by no typed method of the client; they are
	// listed so universal requests to them are priced and classified.
	RawOnly bool
	// SameAs names, for a RawOnly row, the typed tool whose effect a
	// request to it has (POST /2/dm_conversations sends a direct message,
	// as x_send_dm does): a universal request to the row gets that tool's
	// policy and limits. It is empty for a row no typed tool covers.
	SameAs string
	// Scopes are the OAuth 2.0 user-token scopes X requires for the
	// endpoint; login asks for those of every typed row (Endpoints.Scopes).
	Scopes []string
	// ScopeGroup names an optional group of tools ("list", "dm"): a row in one
	// contributes its scopes to the login only when the user asks for the
	// group, so an account that never uses them never grants them.
	ScopeGroup string
	// BodyKey, when set, makes the row a variant of the method and path's
	// plain row: it applies to a request whose JSON body has this top-level
	// field (POST /2/tweets with edit_options edits a post). Lookup, which
	// sees no body, returns the plain row; Match tells them apart.
	BodyKey string
	segs    []string
}

// RateKey is the key X's rate limits and the cost ledger use for the
// endpoint: "METHOD /template".
func (e Endpoint) RateKey() string { return e.Method + " " + e.Path }

// HasRetryClass reports whether the row says how a failed attempt may be
// retried.
func (e Endpoint) HasRetryClass() bool { return e.Retry != classUnset }

// Irreversible reports a write whose effect has no undo.
func (e Endpoint) Irreversible() bool { return e.Kind != EffectRead && e.Undo == nil }

func read(path string, p Pricing, scopes []string) Endpoint {
	return Endpoint{Method: "GET", Path: path, Host: HostAPI, Kind: EffectRead, Retry: classSafe, Price: p, Scopes: scopes}
}

func perPost() Pricing   { return Pricing{Unit: PricePostRead, Resource: kindPost} }
func perUser() Pricing   { return Pricing{Unit: PriceUserRead, Resource: kindUser} }
func perFollow() Pricing { return Pricing{Unit: PriceFollowsRead, Resource: kindUser} }
func perList() Pricing   { return Pricing{Unit: PriceListRead, Resource: kindList} }
func perDM() Pricing     { return Pricing{Unit: PriceDMRead, Resource: kindDMEvent} }

// owned gives a read of /2/users/:id/... X's owned-read price for when :id
// is the authenticated user.
func owned(p Pricing) Pricing { p.Owned = PriceOwnedRead; return p }

// grouped puts rows in an optional scope group.
func grouped(group string, rows ...Endpoint) []Endpoint {
	for i := range rows {
		rows[i].ScopeGroup = group
	}
	return rows
}

// ScopeGroupList is the scope group of the List tools.
const ScopeGroupList = "list"

// scopeGroupHint tells how to grant the scopes of an optional group when X
// refuses one of its requests for want of a scope: the default login never
// asked for them.
func scopeGroupHint(e *apperr.Error, method, tpl string) *apperr.Error {
	if e == nil || e.Code != apperr.XForbidden || !strings.Contains(strings.ToLower(e.Message), "scope") {
		return e
	}
	if r, ok := knownEndpoints().Lookup(method, tpl); ok && r.ScopeGroup != "" {
		e.WithHints(apperr.Hint{Do: "run `tuitbot auth --scopes +" + r.ScopeGroup + "` to sign in again with the " + r.ScopeGroup + " scopes"})
	}
	return e
}

// rawOnly marks a row no typed call uses.
func rawOnly(e Endpoint) Endpoint { e.RawOnly = true; return e }

func undo(tool, param, note string) *Inverse { return &Inverse{Tool: tool, Param: param, Note: note} }

// endpointTable lists every endpoint. Order matters only where templates
// overlap: literal segments come before placeholders at the same depth.
func endpointTable() []Endpoint {
	// Scope sets, as X's OpenAPI document lists them for user tokens.
	scopesTweetRead := []string{"tweet.read", "users.read"}
	scopesTweetWrite := []string{"tweet.read", "tweet.write", "users.read"}
	scopesFollowRead := []string{"follows.read", "tweet.read", "users.read"}
	scopesFollowW := []string{"follows.write", "tweet.read", "users.read"}
	scopesLikeRead := []string{"like.read", "tweet.read", "users.read"}
	scopesLikeWrite := []string{"like.write", "tweet.read", "users.read"}
	scopesBookRead := []string{"bookmark.read", "tweet.read", "users.read"}
	scopesBookWrite := []string{"bookmark.write", "tweet.read", "users.read"}
	scopesMedia := []string{"media.write"}
	scopesListRead := []string{"list.read", "tweet.read", "users.read"}
	scopesListWrite := []string{"list.write", "tweet.read", "users.read"}
	scopesDMRead := []string{"dm.read", "tweet.read", "users.read"}
	scopesDMWrite := []string{"dm.write", "tweet.read", "users.read"}
	rows := []Endpoint{
		{Method: "POST", Path: "/2/tweets", Host: HostAPI, Kind: EffectCreate, Retry: classCreate,
			Price: Pricing{Unit: PricePostCreate, WithURL: PricePostCreateWithURL, Reply: PriceSummonedReply}, Tool: "x_post_tweet", Scopes: scopesTweetWrite,
			Undo: undo("x_delete_tweet", "tweet_id", "Delete the post to reverse (deletes always need approval).")},
		{Method: "POST", Path: "/2/tweets", BodyKey: "edit_options", Host: HostAPI, Kind: EffectCreate, Retry: classCreate,
			Price: Pricing{Unit: PricePostCreate, WithURL: PricePostCreateWithURL}, Tool: "x_edit_tweet", Scopes: scopesTweetWrite,
			Undo: undo("x_edit_tweet", "tweet_id", EditUndoNote)},
		read("/2/tweets", perPost(), scopesTweetRead),
		read("/2/tweets/search/recent", perPost(), scopesTweetRead),
		// Post analytics are billed here as a read of each post they
		// describe, X publishing no price of their own for them.
		read("/2/tweets/analytics", perPost(), scopesTweetRead),
		rawOnly(read("/2/tweets/search/all", perPost(), nil)),
		rawOnly(read("/2/tweets/counts/recent", Pricing{Unit: PriceCountsRecent, PerRequest: true}, nil)),
		rawOnly(read("/2/tweets/counts/all", Pricing{Unit: PriceCountsAll, PerRequest: true}, nil)),
		read("/2/tweets/:id", perPost(), scopesTweetRead),
		{Method: "DELETE", Path: "/2/tweets/:id", Host: HostAPI, Kind: EffectDelete, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionDelete}, Tool: "x_delete_tweet", Scopes: scopesTweetWrite},
		read("/2/tweets/:id/liking_users", perUser(), scopesLikeRead),
		rawOnly(read("/2/tweets/:id/retweeted_by", perUser(), scopesTweetRead)),
		rawOnly(read("/2/tweets/:id/quote_tweets", perPost(), scopesTweetRead)),
		{Method: "PUT", Path: "/2/tweets/:tweet_id/hidden", Host: HostAPI, Kind: EffectOther, Retry: classSafe,
			Price: Pricing{Unit: PriceUnknownWrite}, RawOnly: true, Scopes: []string{"tweet.moderate.write", "tweet.read", "users.read"}},
		read("/2/users", perUser(), scopesTweetRead),
		read("/2/users/me", perUser(), scopesTweetRead),
		rawOnly(read("/2/users/search", perUser(), scopesTweetRead)),
		rawOnly(read("/2/users/by", perUser(), scopesTweetRead)),
		read("/2/users/by/username/:username", perUser(), scopesTweetRead),
		read("/2/users/:id", perUser(), scopesTweetRead),
		read("/2/users/:id/mentions", owned(perPost()), scopesTweetRead),
		read("/2/users/:id/tweets", owned(perPost()), scopesTweetRead),
		read("/2/users/:id/timelines/reverse_chronological", perPost(), scopesTweetRead),
		read("/2/users/:id/followers", owned(perFollow()), scopesFollowRead),
		read("/2/users/:id/following", owned(perFollow()), scopesFollowRead),
		{Method: "POST", Path: "/2/users/:id/following", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionCreate}, Tool: "x_follow_user", Scopes: scopesFollowW,
			Undo: undo("x_unfollow_user", "target_user_id", "Unfollow to reverse.")},
		{Method: "DELETE", Path: "/2/users/:source_user_id/following/:target_user_id", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionDelete}, Tool: "x_unfollow_user", Scopes: scopesFollowW,
			Undo: undo("x_follow_user", "target_user_id", "Follow again to reverse (a protected account must approve again).")},
		read("/2/users/:id/liked_tweets", owned(perPost()), scopesLikeRead),
		{Method: "POST", Path: "/2/users/:id/likes", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionCreate}, Tool: "x_like_tweet", Scopes: scopesLikeWrite,
			Undo: undo("x_unlike_tweet", "tweet_id", "Unlike to reverse.")},
		{Method: "DELETE", Path: "/2/users/:id/likes/:tweet_id", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionDelete}, Tool: "x_unlike_tweet", Scopes: scopesLikeWrite,
			Undo: undo("x_like_tweet", "tweet_id", "Like again to reverse.")},
		{Method: "POST", Path: "/2/users/:id/retweets", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionCreate}, Tool: "x_retweet", Scopes: scopesTweetWrite,
			Undo: undo("x_unretweet", "tweet_id", "Unretweet to reverse.")},
		{Method: "DELETE", Path: "/2/users/:id/retweets/:source_tweet_id", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionDelete}, Tool: "x_unretweet", Scopes: scopesTweetWrite,
			Undo: undo("x_retweet", "tweet_id", "Retweet again to reverse.")},
		read("/2/users/:id/bookmarks", owned(perPost()), scopesBookRead),
		{Method: "POST", Path: "/2/users/:id/bookmarks", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceBookmark}, Tool: "x_bookmark_tweet", Scopes: scopesBookWrite,
			Undo: undo("x_unbookmark_tweet", "tweet_id", "Remove the bookmark to reverse.")},
		{Method: "DELETE", Path: "/2/users/:id/bookmarks/:tweet_id", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceBookmark}, Tool: "x_unbookmark_tweet", Scopes: scopesBookWrite,
			Undo: undo("x_bookmark_tweet", "tweet_id", "Bookmark again to reverse.")},
		rawOnly(read("/2/users/:id/blocking", owned(perUser()), []string{"block.read", "tweet.read", "users.read"})),
		rawOnly(read("/2/users/:id/muting", owned(perUser()), []string{"mute.read", "tweet.read", "users.read"})),
		{Method: "POST", Path: "/2/users/:id/muting", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionCreate}, Tool: "x_mute_user", Scopes: []string{"mute.write", "tweet.read", "users.read"},
			Undo: undo("x_unmute_user", "target_user_id", "Unmute to reverse.")},
		{Method: "DELETE", Path: "/2/users/:source_user_id/muting/:target_user_id", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionDelete}, Tool: "x_unmute_user", Scopes: []string{"mute.write", "tweet.read", "users.read"},
			Undo: undo("x_mute_user", "target_user_id", "Mute again to reverse.")},
		// STATUS polls belong to the upload already billed at INIT.
		read("/2/media/upload", Pricing{PerRequest: true}, scopesMedia),
		{Method: "POST", Path: "/2/media/upload", Host: HostAPI, Kind: EffectCreate, Retry: classCreate,
			Price: Pricing{Unit: PriceMediaUpload}, Tool: "x_upload_media", Scopes: scopesMedia},
		{Method: "POST", Path: "/2/media/upload/initialize", Host: HostAPI, Kind: EffectCreate, Retry: classCreate,
			Price: Pricing{Unit: PriceMediaUpload}, Tool: "x_upload_media", Scopes: scopesMedia},
		{Method: "POST", Path: "/2/media/upload/:id/append", Host: HostAPI, Kind: EffectOther, Retry: classSafe, Scopes: scopesMedia, Tool: "x_upload_media"},
		{Method: "POST", Path: "/2/media/upload/:id/finalize", Host: HostAPI, Kind: EffectOther, Retry: classSafe, Scopes: scopesMedia, Tool: "x_upload_media"},
		{Method: "POST", Path: "/2/media/metadata", Host: HostAPI, Kind: EffectOther, Retry: classSafe,
			Price: Pricing{Unit: PriceMediaMetadata}, Scopes: scopesMedia},
		read("/2/usage/tweets", Pricing{PerRequest: true}, nil),
		read("/2/communities/search", Pricing{Unit: PriceCommunityRead, Resource: kindCommunity}, scopesTweetRead),
	}
	rows = append(rows, grouped(ScopeGroupDM,
		// Direct messages, asked for with `tuitbot auth --scopes +dm`.
		Endpoint{Method: "POST", Path: "/2/dm_conversations/with/:participant_id/messages", Host: HostAPI,
			Kind: EffectCreate, Retry: classCreate, Price: Pricing{Unit: PriceDMCreate}, Tool: "x_send_dm", Scopes: scopesDMWrite,
			Undo: undo("x_delete_dm", "dm_event_id", "Delete the message to reverse (deletes always need approval); the recipient may already have read it.")},
		// The other ways X sends a message, which no typed tool calls: to a
		// conversation by its id, and to a new group conversation. Each is a
		// message as much as x_send_dm's.
		Endpoint{Method: "POST", Path: "/2/dm_conversations/:dm_conversation_id/messages", Host: HostAPI, RawOnly: true, SameAs: "x_send_dm",
			Kind: EffectCreate, Retry: classCreate, Price: Pricing{Unit: PriceDMCreate}, Scopes: scopesDMWrite,
			Undo: undo("x_delete_dm", "dm_event_id", "Delete the message to reverse (deletes always need approval); the recipients may already have read it.")},
		Endpoint{Method: "POST", Path: "/2/dm_conversations", Host: HostAPI, RawOnly: true, SameAs: "x_send_dm",
			Kind: EffectCreate, Retry: classCreate, Price: Pricing{Unit: PriceDMCreate}, Scopes: scopesDMWrite,
			Undo: undo("x_delete_dm", "dm_event_id", "Delete the message to reverse (deletes always need approval); the recipients may already have read it.")},
		read("/2/dm_conversations/with/:participant_id/dm_events", perDM(), scopesDMRead),
		read("/2/dm_events", perDM(), scopesDMRead),
		Endpoint{Method: "DELETE", Path: "/2/dm_events/:event_id", Host: HostAPI, Kind: EffectDelete, Retry: classSafe,
			Price: Pricing{Unit: PriceInteractionDelete}, Tool: "x_delete_dm", Scopes: []string{"dm.read", "dm.write"}},
	)...)
	return append(rows, grouped(ScopeGroupList,
		// X lists list.read beside list.write for creating a list.
		Endpoint{Method: "POST", Path: "/2/lists", Host: HostAPI, Kind: EffectCreate, Retry: classCreate,
			Price: Pricing{Unit: PriceListCreate}, Tool: "x_list_create", Scopes: []string{"list.read", "list.write", "tweet.read", "users.read"},
			Undo: undo("x_list_delete", "list_id", "Delete the list to reverse (deletes always need approval).")},
		Endpoint{Method: "DELETE", Path: "/2/lists/:id", Host: HostAPI, Kind: EffectDelete, Retry: classSafe,
			Price: Pricing{Unit: PriceListManage}, Tool: "x_list_delete", Scopes: scopesListWrite},
		read("/2/lists/:id/members", perUser(), scopesListRead),
		Endpoint{Method: "POST", Path: "/2/lists/:id/members", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceListManage}, Tool: "x_list_add_member", Scopes: scopesListWrite,
			Undo: undo("x_list_remove_member", "user_id", "Remove the member from the list to reverse.")},
		Endpoint{Method: "DELETE", Path: "/2/lists/:id/members/:user_id", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceListManage}, Tool: "x_list_remove_member", Scopes: scopesListWrite,
			Undo: undo("x_list_add_member", "user_id", "Add the member to the list again to reverse.")},
		read("/2/lists/:id/tweets", perPost(), scopesListRead),
		read("/2/users/:id/owned_lists", owned(perList()), scopesListRead),
		// Listed for their owned-read price: only universal requests reach
		// them.
		rawOnly(read("/2/users/:id/pinned_lists", owned(perList()), scopesListRead)),
		// Pinning and following a List: no typed tool, priced as the List
		// writes they are. Each is undone by its DELETE through x_delete.
		Endpoint{Method: "POST", Path: "/2/users/:id/pinned_lists", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceListManage}, RawOnly: true, Scopes: scopesListWrite},
		Endpoint{Method: "DELETE", Path: "/2/users/:id/pinned_lists/:list_id", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceListManage}, RawOnly: true, Scopes: scopesListWrite},
		rawOnly(read("/2/users/:id/followed_lists", owned(perList()), scopesListRead)),
		Endpoint{Method: "POST", Path: "/2/users/:id/followed_lists", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceListManage}, RawOnly: true, Scopes: scopesListWrite},
		Endpoint{Method: "DELETE", Path: "/2/users/:id/followed_lists/:list_id", Host: HostAPI, Kind: EffectEngage, Retry: classSafe,
			Price: Pricing{Unit: PriceListManage}, RawOnly: true, Scopes: scopesListWrite},
		rawOnly(read("/2/users/:id/list_memberships", owned(perList()), scopesListRead)),
	)...)
}

// ScopeGroupDM is the scope group of the direct-message rows.
const ScopeGroupDM = "dm"

// Endpoints is the endpoint table, split once. It is immutable: callers get
// copies of rows.
type Endpoints struct {
	rows  []Endpoint
	paths [][]string // distinct path templates, split, in table order
	tpls  []string
}

// NewEndpoints builds the table.
func NewEndpoints() *Endpoints {
	e := &Endpoints{rows: endpointTable()}
	seen := map[string]bool{}
	for i := range e.rows {
		r := &e.rows[i]
		r.segs = strings.Split(r.Path, "/")
		if !seen[r.Path] {
			seen[r.Path] = true
			e.paths = append(e.paths, r.segs)
			e.tpls = append(e.tpls, r.Path)
		}
	}
	return e
}

// Scopes is every scope the typed rows outside an optional scope group
// need, sorted, plus offline.access, which is what makes X issue a refresh
// token: what login asks for by default.
func (e *Endpoints) Scopes() []string { return e.ScopesWith() }

// ScopesWith is Scopes plus the scopes of the rows in the named groups
// (ScopeGroups lists them); an unknown group adds nothing.
func (e *Endpoints) ScopesWith(groups ...string) []string {
	out := []string{"offline.access"}
	for _, r := range e.rows {
		if r.RawOnly || (r.ScopeGroup != "" && !slices.Contains(groups, r.ScopeGroup)) {
			continue
		}
		for _, sc := range r.Scopes {
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ScopeGroups lists the optional scope groups of the table, sorted.
func (e *Endpoints) ScopeGroups() []string {
	var out []string
	for _, r := range e.rows {
		if r.ScopeGroup != "" && !slices.Contains(out, r.ScopeGroup) {
			out = append(out, r.ScopeGroup)
		}
	}
	slices.Sort(out)
	return out
}

// All returns every row.
func (e *Endpoints) All() []Endpoint {
	out := make([]Endpoint, len(e.rows))
	copy(out, e.rows)
	for i := range out {
		out[i].Scopes = slices.Clone(out[i].Scopes)
	}
	return out
}

// EditUndoNote is the rollback guidance of an edit: what undoes it, and
// why a delete does not.
const EditUndoNote = "Edit the post back to its earlier text while X still allows edits (30 minutes from the first version, at most 5 edits); " +
	"deleting any version deletes the whole post with its history, so a delete does not bring the earlier text back."

// Lookup returns the plain row for a method and a concrete path (or a
// template), the one a request without a body-keyed variant meets; ok is
// false for an endpoint the table does not know.
func (e *Endpoints) Lookup(method, path string) (Endpoint, bool) {
	return e.Match(method, path, nil)
}

// Match returns the row a request with this JSON body meets: a row whose
// BodyKey the body holds (with a non-null value) before the plain row.
func (e *Endpoints) Match(method, path string, body []byte) (Endpoint, bool) {
	tpl := e.Template(path)
	m := strings.ToUpper(method)
	var keys map[string]json.RawMessage
	if len(body) > 0 && json.Unmarshal(body, &keys) != nil {
		keys = nil
	}
	var plain *Endpoint
	for i, r := range e.rows {
		if r.Method != m || r.Path != tpl {
			continue
		}
		if r.BodyKey == "" {
			if plain == nil {
				plain = &e.rows[i]
			}
			continue
		}
		if v, ok := keys[r.BodyKey]; ok && string(v) != "null" {
			return r, true
		}
	}
	if plain == nil {
		return Endpoint{}, false
	}
	return *plain, true
}

// ByTool returns the rows a typed tool calls.
func (e *Endpoints) ByTool(tool string) []Endpoint {
	var out []Endpoint
	for _, r := range e.rows {
		if r.Tool == tool {
			out = append(out, r)
		}
	}
	return out
}

// Template returns the template of a concrete path. Unknown paths keep their
// literal segments except all-digit ones, which become ":id", so that per-id
// paths never grow the rate-limit table without bound.
func (e *Endpoints) Template(path string) string {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	path = strings.TrimRight(path, "/")
	if path == "" {
		return "/"
	}
	segs := strings.Split(path, "/")
	for i, ts := range e.paths {
		if matchTemplate(ts, segs) {
			return e.tpls[i]
		}
	}
	for i, s := range segs {
		// Segment 1 is the API version ("2", "1.1") and stays literal.
		if i > 1 && isDigits(s) {
			segs[i] = ":id"
		}
	}
	return strings.Join(segs, "/")
}
