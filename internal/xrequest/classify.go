package xrequest

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/tuitbot/tuitbot/internal/xapi"
)

// Effect kinds returned by Classify.
const (
	KindTweetCreate = "tweet_create"
	KindTweetDelete = "tweet_delete"
	KindTweetEdit   = "tweet_edit"
	KindLike        = "like"
	KindUnlike      = "unlike"
	KindFollow      = "follow"
	KindUnfollow    = "unfollow"
	KindRetweet     = "retweet"
	KindUnretweet   = "unretweet"
	KindBookmark    = "bookmark"
	KindUnbookmark  = "unbookmark"
	KindMediaUpload = "media_upload"
	KindRead        = "read"
	KindOther       = "other"
)

// Variants of KindTweetCreate, told apart by the body (v2) or the query
// (v1.1) rather than by the path.
const (
	VariantReply = "reply"
	VariantQuote = "quote"
)

// Effect is what a universal request does on X.
//
// Endpoint names the endpoint-table row the request matched, as "METHOD
// /path/template" (for example "DELETE /2/tweets/{tweet}"); it is empty
// for a read and for a write no row covers. UserID is the acting account
// named in the path (/2/users/{id}/...); TweetID is the tweet acted on;
// TargetUserID is the other account of a follow or unfollow, or the member
// a List gains or loses; ListID is the List acted on.
//
// For a tweet create, Variant is VariantReply when the request carries a
// reply (v2 body "reply", v1.1 query in_reply_to_status_id) and
// VariantQuote when it quotes (v2 body "quote_tweet_id", v1.1 query
// attachment_url); a request doing both is a reply. ReplyTo and QuoteOf
// hold the tweet replied to or quoted when the request names it readably.
//
// Ids that travel outside the path (body or query) and the variant are
// filled by ClassifyChecked only.
type Effect struct {
	Kind string
	// Tool is the typed tool whose effect the matched row has, when the
	// row names one; Equivalent falls back to the kind's tool.
	Tool         string
	Endpoint     string
	Variant      string
	TweetID      string
	UserID       string
	TargetUserID string
	ListID       string
	ReplyTo      string
	QuoteOf      string
	// DMEventID is the direct message a delete names.
	DMEventID string
	// ConversationID is the direct-message conversation a message goes to.
	ConversationID string
}

// Mutates reports whether the effect changes state on X. Only GET is a
// read; an unrecognised write is still a write.
func (e Effect) Mutates() bool { return e.Kind != KindRead }

// Listed reports whether the request is a read or matched a row of the
// endpoint table. A write that is not listed does something nobody wrote
// down (a new X endpoint, a spelling of an old one X may read otherwise):
// a person must look at it, whatever the policy rules say.
func (e Effect) Listed() bool { return e.Kind == KindRead || e.Endpoint != "" }

// Fields an endpoint row can fill, named in path templates as {name} and
// in idSource.field.
const (
	fieldUser   = "user"
	fieldTweet  = "tweet"
	fieldTarget = "target"
	fieldMedia  = "media" // a media id in the path; recorded nowhere
	fieldList   = "list"
	fieldDM     = "dm_event"
	fieldConv   = "conversation"
	fieldReply  = "reply"
	fieldQuote  = "quote"
)

// Where an idSource looks.
const (
	inBody  = "body"
	inQuery = "query"
)

// idSource is an id X takes outside the path: a top-level field of the
// JSON body (or, with sub, a field of the object under key) or a query
// parameter. For fieldReply and fieldQuote the presence of key alone sets
// the variant, since X acts on the presence.
type idSource struct {
	in    string
	key   string
	sub   string
	field string
	// parse extracts the id from the raw value; nil keeps the value.
	parse func(string) string
}

// endpoint is one row of the endpoint table.
type endpoint struct {
	// tool is the typed tool with the same effect (empty: the kind's).
	tool   string
	method string
	// path is a template of '/'-separated segments: fixed segments and
	// {field} placeholders matching any one non-empty segment.
	path string
	kind string
	// from lists ids taken from the body or query; a path placeholder for
	// the same field wins.
	from []idSource
}

// variant is a body-keyed row of X's table: a request to its row's method
// and path has its effect when the JSON body holds key with a non-null
// value (an edit is a POST /2/tweets with edit_options). A request without
// the key is the row itself, so no two rows match one request.
type variant struct {
	of              string // the typed tool of the plain row it refines
	key, tool, kind string
	from            []idSource
}

// name is the row as Effect.Endpoint reports it.
func (ep endpoint) name() string { return ep.method + " " + ep.path }

func body(key, field string) idSource  { return idSource{in: inBody, key: key, field: field} }
func query(key, field string) idSource { return idSource{in: inQuery, key: key, field: field} }

// endpoints is the one table every universal write is classified against:
// every write of X's endpoint table, most with the effect of a typed tool.
// The v2 rows are X's endpoint table itself (v2Rows), so a typed tool
// added there is classified too; the legacy v1.1 forms and the DM media
// upload, which no typed tool calls, are listed here. Every v1.1 form
// that sends a message or deletes is listed with the typed tool that does
// the same, so it meets that tool's policy and limits; a v1.1 write not
// listed is no row's, and goes to a person (Effect.Listed). A request matches a row when the
// method is equal (ASCII case ignored) and the path, cut into segments as
// Classify does, matches the template. No two rows may match the same
// request; a test and a fuzz target hold the table to that.
//
// v1.1 endpoints take their ids as query parameters as well as in the path
// (statuses/destroy/{id}.json and statuses/destroy.json?id=), and both
// forms are rows, so neither spelling escapes the delete rules. The
// ".json" suffix is not part of any template: Classify drops it from every
// segment, so /1.1/statuses/destroy, /1.1/statuses/destroy.json and
// /1.1/statuses/destroy/1.json all meet their row.
//
// It is built on each call rather than kept in a package variable so no
// caller can change it.
func endpoints() []endpoint {
	v11ID := []idSource{query("id", fieldTweet)}
	v11User := []idSource{query("user_id", fieldTarget)}
	v11Status := []idSource{
		query("in_reply_to_status_id", fieldReply),
		{in: inQuery, key: "attachment_url", field: fieldQuote, parse: statusID},
	}
	v11DM := []idSource{query("id", fieldDM)}
	v11List := []idSource{query("list_id", fieldList)}
	v11Member := []idSource{query("list_id", fieldList), query("user_id", fieldTarget)}
	return append(v2Rows(xapi.Known()), []endpoint{
		// The DM media upload, which no typed tool calls.
		{"", "POST", "/2/chat/media/upload/initialize", KindMediaUpload, nil},
		{"", "POST", "/2/chat/media/upload/{media}/append", KindMediaUpload, nil},
		{"", "POST", "/2/chat/media/upload/{media}/finalize", KindMediaUpload, nil},

		// Legacy v1.1, still reachable on api.x.com and the upload hosts.
		{"", "POST", "/1.1/statuses/update", KindTweetCreate, v11Status},
		{"", "POST", "/1.1/statuses/update_with_media", KindTweetCreate, v11Status},
		{"", "POST", "/1.1/statuses/destroy", KindTweetDelete, v11ID},
		{"", "POST", "/1.1/statuses/destroy/{tweet}", KindTweetDelete, v11ID},
		{"", "POST", "/1.1/statuses/retweet", KindRetweet, v11ID},
		{"", "POST", "/1.1/statuses/retweet/{tweet}", KindRetweet, v11ID},
		{"", "POST", "/1.1/statuses/unretweet", KindUnretweet, v11ID},
		{"", "POST", "/1.1/statuses/unretweet/{tweet}", KindUnretweet, v11ID},
		{"", "POST", "/1.1/favorites/create", KindLike, v11ID},
		{"", "POST", "/1.1/favorites/create/{tweet}", KindLike, v11ID},
		{"", "POST", "/1.1/favorites/destroy", KindUnlike, v11ID},
		{"", "POST", "/1.1/favorites/destroy/{tweet}", KindUnlike, v11ID},
		{"", "POST", "/1.1/friendships/create", KindFollow, v11User},
		{"", "POST", "/1.1/friendships/create/{target}", KindFollow, v11User},
		{"", "POST", "/1.1/friendships/destroy", KindUnfollow, v11User},
		{"", "POST", "/1.1/friendships/destroy/{target}", KindUnfollow, v11User},
		{"", "POST", "/1.1/media/upload", KindMediaUpload, nil},
		// Direct messages: the event API and its retired predecessor.
		{"x_send_dm", "POST", "/1.1/direct_messages/events/new", kindOf("x_send_dm"), nil},
		{"x_send_dm", "POST", "/1.1/direct_messages/new", kindOf("x_send_dm"), nil},
		{"x_delete_dm", "DELETE", "/1.1/direct_messages/events/destroy", kindOf("x_delete_dm"), v11DM},
		{"x_delete_dm", "POST", "/1.1/direct_messages/destroy", kindOf("x_delete_dm"), v11DM},
		// Lists, by list_id (a slug and owner name the List too; the id is
		// then unknown, the effect is not).
		{"x_list_create", "POST", "/1.1/lists/create", kindOf("x_list_create"), nil},
		{"x_list_delete", "POST", "/1.1/lists/destroy", kindOf("x_list_delete"), v11List},
		{"x_list_add_member", "POST", "/1.1/lists/members/create", kindOf("x_list_add_member"), v11Member},
		{"x_list_remove_member", "POST", "/1.1/lists/members/destroy", kindOf("x_list_remove_member"), v11Member},
	}...)
}

// kindTools pairs each effect kind with the typed tool that has it.
func kindTools() map[string]string {
	return map[string]string{
		KindTweetCreate: "x_post_tweet", KindTweetDelete: "x_delete_tweet", KindTweetEdit: "x_edit_tweet",
		KindLike: "x_like_tweet", KindUnlike: "x_unlike_tweet",
		KindFollow: "x_follow_user", KindUnfollow: "x_unfollow_user",
		KindRetweet: "x_retweet", KindUnretweet: "x_unretweet",
		KindBookmark: "x_bookmark_tweet", KindUnbookmark: "x_unbookmark_tweet",
		KindMediaUpload: "x_upload_media",
	}
}

// kindOf is the kind of a typed tool's effect; a tool without a kind of
// its own (x_mute_user) is KindOther, and its row still names the tool.
func kindOf(tool string) string {
	for k, t := range kindTools() {
		if t == tool {
			return k
		}
	}
	return KindOther
}

// v2Rows derives the v2 rows from X's endpoint table: every write, matched
// as the effect of the typed tool that makes it or has its effect
// (SameAs), or as KindOther with no tool when none does. Path
// placeholders become the fields they name: the acting user after /2/users, the tweet, the other
// user. A write that creates nothing and acts on one object the path does
// not name takes that object's id from the body, under the name its undo
// takes (tweet_id for a like, target_user_id for a follow).
func v2Rows(eps *xapi.Endpoints) []endpoint {
	var out []endpoint
	for _, r := range eps.All() {
		if r.Kind == xapi.EffectRead {
			continue
		}
		tool := r.Tool
		if tool == "" {
			tool = r.SameAs
		}
		segs := strings.Split(strings.TrimPrefix(r.Path, "/"), "/")
		named := map[string]bool{}
		for i, sg := range segs {
			name, ok := strings.CutPrefix(sg, ":")
			if !ok {
				continue
			}
			f := fieldOfPlaceholder(segs, i, name)
			named[f] = true
			segs[i] = "{" + f + "}"
		}
		ep := endpoint{tool: tool, method: r.Method, path: "/" + strings.Join(segs, "/"), kind: kindOf(tool)}
		if r.BodyKey != "" {
			continue // a variant of the plain row (variants)
		}
		switch {
		case tool == "x_post_tweet":
			ep.from = []idSource{
				{in: inBody, key: "reply", sub: "in_reply_to_tweet_id", field: fieldReply},
				body("quote_tweet_id", fieldQuote),
			}
		case r.Kind != xapi.EffectCreate && r.Undo != nil:
			if f := fieldOfParam(r.Undo.Param); f != "" && !named[f] {
				ep.from = []idSource{body(r.Undo.Param, f)}
			}
		}
		out = append(out, ep)
	}
	return out
}

// variants derives the body-keyed rows from X's endpoint table. Only the
// edit names an id in its body (the post it edits).
func variants(eps *xapi.Endpoints) []variant {
	var out []variant
	for _, r := range eps.All() {
		if r.BodyKey == "" || r.Tool == "" {
			continue
		}
		plain, ok := eps.Lookup(r.Method, r.Path)
		if !ok || plain.Tool == "" {
			continue
		}
		v := variant{of: plain.Tool, key: r.BodyKey, tool: r.Tool, kind: kindOf(r.Tool)}
		if r.Tool == "x_edit_tweet" {
			v.from = []idSource{{in: inBody, key: "edit_options", sub: "previous_post_id", field: fieldTweet}}
		}
		out = append(out, v)
	}
	return out
}

// fieldOfPlaceholder names the field a placeholder of an endpoint-table
// template fills.
func fieldOfPlaceholder(segs []string, i int, name string) string {
	switch {
	case i == 2 && segs[1] == "users":
		return fieldUser
	case segs[1] == "media":
		return fieldMedia
	case i == 2 && segs[1] == "tweets":
		return fieldTweet
	case i == 2 && segs[1] == "lists":
		return fieldList
	case i == 2 && segs[1] == "dm_conversations":
		return fieldConv
	}
	if f := fieldOfParam(name); f != "" {
		return f
	}
	return name
}

// fieldOfParam names the field an id parameter holds.
func fieldOfParam(param string) string {
	switch param {
	case "tweet_id", "source_tweet_id":
		return fieldTweet
	case "target_user_id", "user_id", "participant_id":
		// user_id is the member of a List write, the other account;
		// participant_id the recipient of a direct message.
		return fieldTarget
	case "event_id", "dm_event_id":
		return fieldDM
	case "list_id":
		// the List a pin or a List follow names
		return fieldList
	}
	return ""
}

// Classify recognises a universal request from its method and path alone,
// against the endpoint table. A GET is always a read; a write that matches
// no row is KindOther.
//
// It errs towards recognising: the method and fixed path segments match in
// any ASCII case, empty segments and a trailing slash are ignored, a
// ".json" suffix is dropped from every segment, matrix parameters are cut
// off, and ids are not required to be numeric. A delete spelled oddly must
// still be seen as a delete so the always-approve-deletes rule holds; the
// path itself is validated by Check, not here. A path that passes Check is
// classified in its canonical (decoded) form.
func Classify(method, path string) Effect {
	e, _ := classify(method, path)
	return e
}

// classify is Classify that also returns the matched row, if any.
func classify(method, path string) (Effect, *endpoint) {
	if asciiLower(method) == "get" {
		return Effect{Kind: KindRead}, nil
	}
	rows := endpoints()
	segs := pathSegments(path)
	matched := matchRows(rows, method, segs)
	if len(matched) == 0 {
		return Effect{Kind: KindOther}, nil
	}
	// The table test and the fuzz target keep this at one row; should two
	// ever match, the first row wins so the answer stays deterministic.
	ep := &rows[matched[0]]
	tool := ep.tool
	if tool == "" {
		tool = kindTools()[ep.kind]
	}
	e := Effect{Kind: ep.kind, Tool: tool, Endpoint: ep.name()}
	for i, t := range templateSegments(ep.path) {
		if f, ok := placeholder(t); ok {
			e.set(f, segs[i])
		}
	}
	return e, ep
}

// matchRows returns the index of every row the request matches.
func matchRows(rows []endpoint, method string, segs []string) []int {
	var out []int
	for i, ep := range rows {
		if strings.EqualFold(ep.method, method) && segmentsMatch(templateSegments(ep.path), segs) {
			out = append(out, i)
		}
	}
	return out
}

// pathSegments cuts path into the segments rows are matched against. A
// path that passes Check is decoded first; empty segments are dropped, and
// each segment loses matrix parameters and a ".json" suffix.
func pathSegments(path string) []string {
	if p, err := checkPath(path); err == nil {
		path = p
	}
	var segs []string
	for s := range strings.SplitSeq(path, "/") {
		if i := strings.IndexByte(s, ';'); i >= 0 {
			s = s[:i]
		}
		if s = jsonID(s); s != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

func templateSegments(path string) []string {
	return strings.Split(strings.TrimPrefix(path, "/"), "/")
}

// placeholder returns the field a template segment {field} names.
func placeholder(t string) (string, bool) {
	if len(t) > 2 && t[0] == '{' && t[len(t)-1] == '}' {
		return t[1 : len(t)-1], true
	}
	return "", false
}

// segmentsMatch reports whether segs has the template's shape: a
// placeholder matches any one segment, a fixed segment matches ignoring
// ASCII case.
func segmentsMatch(tmpl, segs []string) bool {
	if len(tmpl) != len(segs) {
		return false
	}
	for i, t := range tmpl {
		if _, ok := placeholder(t); ok {
			continue
		}
		if !strings.EqualFold(t, segs[i]) {
			return false
		}
	}
	return true
}

// jsonID strips the ".json" suffix v1.1 puts after the last segment.
func jsonID(seg string) string {
	if len(seg) > len(".json") && strings.EqualFold(seg[len(seg)-len(".json"):], ".json") {
		return seg[:len(seg)-len(".json")]
	}
	return seg
}

// set fills one field unless it already holds a value: the path is read
// first, and what the path names is what X acts on.
func (e *Effect) set(field, v string) {
	var dst *string
	switch field {
	case fieldUser:
		dst = &e.UserID
	case fieldTweet:
		dst = &e.TweetID
	case fieldTarget:
		dst = &e.TargetUserID
	case fieldReply:
		dst = &e.ReplyTo
	case fieldQuote:
		dst = &e.QuoteOf
	case fieldList:
		dst = &e.ListID
	case fieldDM:
		dst = &e.DMEventID
	case fieldConv:
		dst = &e.ConversationID
	default:
		return
	}
	if *dst == "" {
		*dst = v
	}
}

// ClassifyChecked classifies c like Classify and also reads what X takes
// outside the path, as the matched row lists it: tweet_id in the body of a
// v2 like, retweet or bookmark, target_user_id in the body of a v2 follow,
// the id / user_id query parameters of the v1.1 forms, and whether a tweet
// create is a reply or a quote. Rollback guidance needs the ids (undoing a
// like needs the tweet); policy needs the variant. An id that is missing
// or not a string or number is left empty.
func ClassifyChecked(c *Checked) Effect {
	if c == nil {
		return Effect{Kind: KindOther}
	}
	e, ep := classify(c.Method, c.Path)
	if ep == nil {
		return e
	}
	var obj map[string]any
	if len(c.Body) > 0 {
		obj = bodyObject(c.Body)
	}
	from := ep.from
	for _, v := range variants(xapi.Known()) {
		if ep.tool != "" && v.of == ep.tool && obj[v.key] != nil {
			e.Kind, e.Tool, from = v.kind, v.tool, v.from
			break
		}
	}
	for _, src := range from {
		v, present := src.lookup(obj, c.Query)
		if !present {
			continue
		}
		switch src.field {
		case fieldReply:
			e.Variant = VariantReply
		case fieldQuote:
			if e.Variant == "" {
				e.Variant = VariantQuote
			}
		}
		if src.parse != nil {
			v = src.parse(v)
		}
		e.set(src.field, v)
	}
	return e
}

// lookup returns the source's value as a string ("" when it is not a
// string or number) and whether the key is present at all (in the body:
// with a non-null value).
func (src idSource) lookup(obj map[string]any, q url.Values) (string, bool) {
	if src.in == inQuery {
		vs, ok := q[src.key]
		if !ok || len(vs) == 0 {
			return "", false
		}
		return vs[0], true
	}
	raw, ok := obj[src.key]
	if !ok || raw == nil {
		return "", false
	}
	if src.sub != "" {
		inner, ok := raw.(map[string]any)
		if !ok {
			return "", true
		}
		raw = inner[src.sub]
	}
	return scalarString(raw), true
}

// bodyObject decodes a JSON object body, or returns nil.
func bodyObject(body []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil
	}
	return obj
}

// scalarString accepts a JSON string or number.
func scalarString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}

// statusID returns the tweet id of a status URL such as
// https://x.com/jack/status/20, or "".
func statusID(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	segs := strings.Split(strings.Trim(p.Path, "/"), "/")
	for i := 0; i+1 < len(segs); i++ {
		if (segs[i] == "status" || segs[i] == "statuses") && isDigits(segs[i+1]) {
			return segs[i+1]
		}
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Same returns the row of X's endpoint table whose effect the request has,
// whatever form (v2, v1.1, odd spelling) it was sent in. ok is false for a
// read and for a write no row covers.
func (e Effect) Same(eps *xapi.Endpoints) (xapi.Endpoint, bool) {
	tool := e.Tool
	if tool == "" {
		tool = kindTools()[e.Kind]
	}
	if tool == "" {
		return xapi.Endpoint{}, false
	}
	rows := eps.ByTool(tool)
	if len(rows) == 0 {
		return xapi.Endpoint{}, false
	}
	return rows[0], true
}

// Equivalent names the typed tool that does on X what a request with this
// effect does, so the request gets that tool's policy too. A reply or quote
// is its own tool. It is empty for a write no typed tool covers and for
// reads.
func (e Effect) Equivalent() string {
	ep, ok := e.Same(xapi.Known())
	switch {
	case !ok:
		return ""
	case e.Kind == KindTweetCreate && e.Variant == VariantReply:
		return "x_reply_to_tweet"
	case e.Kind == KindTweetCreate && e.Variant == VariantQuote:
		return "x_quote_tweet"
	}
	return ep.Tool
}
