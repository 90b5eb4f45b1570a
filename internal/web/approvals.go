package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/notify"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// itemView is one queue item as the page shows it: what it does in words,
// the post or account it touches, and why it waits.
//
// The fields the templates show are its own, not reached through an
// embedded struct, and computed once here: a template finds an embedded
// field by a reflective search on every use, and calls a function or a
// method through reflection, which were most of a long page's time.
type itemView struct {
	// The item's own fields, as the gateway read them.
	ID                                  int64
	Tool, Caller, Loop, Status          string
	Edited                              bool
	ReviewedAt, ReviewedBy, ReviewNotes string
	CorrelationID                       string
	ErrorCode, ErrorMessage             string
	// IDText is ID in decimal, as element ids and links spell it;
	// Pending says the item still waits for a decision.
	IDText  string
	Pending bool
	// Shown is the content hash of the item as this page shows it: the
	// decision forms post it back, and the decision holds only for it.
	Shown string
	// CSRF is the page's token, which the item's forms carry.
	CSRF string
	// Path is the item's address on this site (with the site's prefix);
	// its forms post below it.
	Path string
	// ToolLabel names such actions ("Replies"); Effect says what
	// approving does; Danger marks an action that deletes.
	ToolLabel, Effect string
	Danger            bool
	// CountText is Count/Max as shown ("12/280"); Unit says what is
	// counted ("weighted characters" for a post, "characters" for a
	// direct message).
	CountText, Unit string
	// Field is the parameter a human may edit ("" when none); Text is its
	// value.
	Field    string
	Text     string
	Segments []segment
	Count    int
	Max      int
	Valid    bool
	// Act is the item in words; Title its card title ("Reply to @gabe").
	Act   describe.Action
	Title string
	// Target is the post or account it acts on (nil: none).
	Target *targetView
	// Rule says why it waits, in a sentence; the rule id goes beside it.
	Rule, RuleID string
	Age, Expires stamp
	// Notified says when a notification about the item last went out
	// ("notified via telegram 2 min ago"); empty when none did.
	Notified string
	Pretty   string
	// Options are the post's settings in words ("Poll: A / B, 1 day").
	Options []string
	// Opts is the edit form's options fields (nil: the item's action
	// takes no options a human may change).
	Opts *optionsForm
	Diff []string
	// EditError is why the edit just sent was refused; the form then
	// opens with what was sent. BadText marks the text as the cause.
	EditError string
	BadText   bool
	// Account is the item's account when it is not the first; links and
	// forms carry it.
	Account string
	// Back is where its decisions return: the page it is on (Here), at
	// the item that takes its place.
	Back, Here string
	// ShowParams shows the parameters one by one (Fields): nothing else
	// says what the call does (a raw API request, a target that is not
	// known). The raw JSON (Pretty) stays behind a disclosure.
	ShowParams bool
	Fields     []describe.Field
	// Thread is a thread's posts, in order (nil for any other call).
	Thread []threadPost
	// HandOff marks a hand-off's card: IntentURL is X's Web Intent that
	// does it (Do it on X, in place of Approve); Outcome says what the
	// last check found.
	HandOff   bool
	IntentURL string
	Outcome   string
}

// threadPost is one post of a queued thread as its card shows it.
type threadPost struct {
	// N is its place (1-based), Of the thread's length; Index is N-1 as
	// the edit form sends it.
	N, Of, Index int
	Text         string
	Segments     []segment
	CountText    string
	Valid        bool
	Media        []string
}

// textLimit is how long the edited text of a call may be: a post's
// weighted length against the account's post limit, or a direct
// message's characters against X's 10,000.
type textLimit struct {
	Max  int
	Unit string
	dm   bool
}

// limitFor is the limit of tool's text for account a.
func (a *Account) limitFor(tool string) textLimit {
	if tool == "x_send_dm" {
		return textLimit{Max: xapi.MaxDMLength, Unit: "characters", dm: true}
	}
	return textLimit{Max: a.postMax(), Unit: "weighted characters"}
}

// count measures text against the limit.
func (l textLimit) count(text string) (int, bool) {
	if l.dm {
		n := utf8.RuneCountInString(text)
		return n, n <= l.Max && strings.TrimSpace(text) != ""
	}
	r := tweettext.ParseWithin(text, l.Max)
	return r.WeightedLength, r.Valid
}

// stamp is a time shown relative to now, with the exact time on hover.
type stamp struct {
	At, Rel, Exact string
}

func stampOf(now time.Time, at string, in bool) stamp {
	t, ok := parseStamp(at)
	if !ok {
		return stamp{At: at, Rel: at, Exact: at}
	}
	st := stamp{At: at, Rel: describe.Ago(now, t), Exact: exactOf(t)}
	if in {
		st.Rel = describe.In(now, t)
	}
	return st
}

// parseStamp reads a stored time, or a post's from discovery, which keeps
// X's own spelling.
func parseStamp(at string) (time.Time, bool) {
	if t, ok := parseStored(at); ok {
		return t, true
	}
	t, err := store.ParseTime(at)
	if err != nil {
		if t, err = time.Parse(time.RFC3339, at); err != nil {
			return time.Time{}, false
		}
	}
	return t, true
}

// targetView is the post or account an item acts on, as looked up.
type targetView struct {
	// Item is the queue item's id, for element ids.
	Item int64
	Kind describe.Kind
	ID   string
	// Label names it for the card ("The post this deletes").
	Label string
	// URL opens the post on X (or the sandbox's view of it).
	URL   string
	Post  *Post
	User  *describe.User
	Error string
	When  stamp
	// Followers of the post's author or of the account.
	Followers string
	// Scored shows the discovery score line (replies and quotes).
	Scored bool
}

// views renders items of account a with the posts and accounts they act
// on (one lookup of each for the page).
func (s *Server) views(r *http.Request, a *Account, items []gateway.ApprovalItem) []itemView {
	acts := make([]describe.Action, len(items))
	var postIDs, userIDs []string
	for i, it := range items {
		acts[i] = describe.Of(it.Tool, it.EquivalentTool, it.Params)
		switch t := acts[i].Target; t.Kind {
		case describe.KindPost:
			postIDs = append(postIDs, t.ID)
		case describe.KindUser:
			userIDs = append(userIDs, t.ID)
		}
	}
	posts := s.posts.lookup(r.Context(), a.Name, postIDs, a.Posts)
	users := s.users.lookup(r.Context(), a.Name, userIDs, a.Users)
	now := s.d.Now()
	var notified map[int64]notify.Notified
	if s.d.Notified != nil {
		itemIDs := make([]int64, len(items))
		for i, it := range items {
			itemIDs[i] = it.ID
		}
		var err error
		if notified, err = s.d.Notified(r.Context(), a.Name, itemIDs); err != nil {
			s.d.Log.Warn("web: read notifications", "error", err)
		}
	}
	out := make([]itemView, 0, len(items))
	for i, it := range items {
		v := s.view(a, it, acts[i], now)
		who := ""
		if tv := v.Target; tv != nil {
			switch tv.Kind {
			case describe.KindPost:
				f := posts[tv.ID]
				tv.Post, tv.Error = f.V, f.Error
				if p := f.V; p != nil {
					who = describe.Handle(p.AuthorUsername)
					tv.URL = s.postURL(a, p.ID, p.AuthorUsername)
					tv.Followers = describe.Count(p.Followers)
					if p.CreatedAt != "" {
						tv.When = stampOf(now, p.CreatedAt, false)
					}
				}
			case describe.KindUser:
				f := users[tv.ID]
				tv.User, tv.Error = f.V, f.Error
				if u := f.V; u != nil {
					who = describe.Handle(u.Username)
					tv.Followers = describe.Count(u.Followers)
					if !a.Sandbox {
						tv.URL = "https://x.com/" + url.PathEscape(u.Username)
					}
				}
			}
		}
		if n, ok := notified[it.ID]; ok {
			v.Notified = "notified via " + n.Channel + " " + describe.Ago(now, n.At)
		}
		v.Title = v.Act.Title(who)
		out = append(out, v)
	}
	return out
}

func (s *Server) view(a *Account, it gateway.ApprovalItem, act describe.Action, now time.Time) itemView {
	v := itemView{ID: it.ID, Tool: it.Tool, Caller: it.Caller, Loop: it.Loop, Status: it.Status, Edited: it.Edited,
		ReviewedAt: it.ReviewedAt, ReviewedBy: it.ReviewedBy, ReviewNotes: it.ReviewNotes, CorrelationID: it.CorrelationID,
		ErrorCode: it.ErrorCode, ErrorMessage: it.ErrorMessage,
		IDText: strconv.FormatInt(it.ID, 10), Pending: it.Status == gateway.ApprovalPending, Shown: it.ContentHash,
		Path: s.o.Prefix + "/approvals/" + strconv.FormatInt(it.ID, 10), ToolLabel: act.Plural, Effect: act.Effect, Danger: act.Verb == "deletes",
		Act: act, Title: act.Name,
		Age: stampOf(now, it.CreatedAt, false), Expires: stampOf(now, it.ExpiresAt, true)}
	if a != s.accts[0] {
		v.Account = a.Name
	}
	var m map[string]any
	_ = json.Unmarshal(it.Params, &m)
	lim := a.limitFor(it.Tool)
	v.Max, v.Unit = lim.Max, lim.Unit
	if gact, ok := a.Gateway.Action(it.Tool); ok && gact.EditableText != "" {
		if t, ok := m[gact.EditableText].(string); ok {
			v.Field, v.Text = gact.EditableText, t
			v.Segments = segments(t)
			v.Count, v.Valid = lim.count(t)
			if v.Opts = optionsFormOf(gact, it.Params); v.Opts != nil {
				v.Opts.place(v.IDText)
			}
		}
	}
	if posts, ok := describe.ThreadOf(it.Params); ok && it.Tool == "x_post_thread" {
		v.Thread = threadPosts(posts, lim)
	}
	if t := act.Target; t.Kind != describe.KindNone {
		tv := &targetView{Item: it.ID, Kind: t.Kind, ID: t.ID, Scored: act.Verb == "answers" || act.Verb == "quotes"}
		tv.Label = act.TargetLabel()
		if t.Kind == describe.KindPost {
			// A link even when the post cannot be read: the reviewer may
			// still open it.
			tv.URL = s.postURL(a, t.ID, "")
		}
		v.Target = tv
	}
	v.CountText = countText(v.Count, v.Max)
	v.ShowParams = v.Field == "" && v.Thread == nil && (v.Target == nil || describe.IsRaw(it.Tool))
	if v.ShowParams {
		v.Fields = describe.Fields(it.Params)
	}
	v.Rule, v.RuleID = ruleSentence(act, it, a.Policy.Rules)
	v.Pretty = pretty(it.Params)
	v.Options = actions.DescribeOptions(it.Params)
	if it.Edited {
		v.Diff = it.EditDiff()
		if v.Thread != nil {
			v.Diff = threadDiff(it.OriginalParams, it.Params)
		}
	}
	return v
}

// threadPosts are a thread's posts as its card shows them, each counted
// against the limit.
func threadPosts(posts []describe.ThreadPost, lim textLimit) []threadPost {
	out := make([]threadPost, len(posts))
	for i, p := range posts {
		n, ok := lim.count(p.Text)
		out[i] = threadPost{N: i + 1, Of: len(posts), Index: i, Text: p.Text, Segments: segments(p.Text),
			CountText: countText(n, lim.Max), Valid: ok, Media: p.Media}
	}
	return out
}

// threadDiff is the whole thread after an edit, post by post: a post
// left as it was on one line, a changed one as its old and its new text,
// an added or removed one as such.
func threadDiff(before, after json.RawMessage) []string {
	old, _ := describe.ThreadOf(before)
	now, _ := describe.ThreadOf(after)
	var out []string
	for i := range max(len(old), len(now)) {
		n := strconv.Itoa(i + 1)
		switch {
		case i >= len(old):
			out = append(out, "+ post "+n+": "+now[i].Text)
		case i >= len(now):
			out = append(out, "- post "+n+": "+old[i].Text)
		case old[i].Text == now[i].Text:
			out = append(out, "  post "+n+": "+now[i].Text)
		default:
			out = append(out, "- post "+n+": "+old[i].Text, "+ post "+n+": "+now[i].Text)
		}
	}
	return out
}

// ruleSentence says why an item waits ("Posts need your approval (policy:
// approval mode)") and returns the deciding rule's id for those who want it.
func ruleSentence(act describe.Action, it gateway.ApprovalItem, rules []policy.Rule) (string, string) {
	id := it.MatchedRuleID
	if strings.HasPrefix(id, xrules.RouteRulePrefix) {
		// One of X's automation rules: its reason says which, in words.
		return act.Plural + " go to a person under X's automation rules (" + it.Reason + ")", id
	}
	if id == "" || id == "approval_mode" {
		return act.Plural + " need your approval (policy: approval mode is on)", "approval_mode"
	}
	why := it.Reason
	for _, r := range rules {
		if r.ID != id {
			continue
		}
		switch {
		case r.Source == policy.SourceHard && id == policy.RuleHardComposerApproval:
			return act.Plural + " need your approval (policy: composer mode)", id
		case r.Source == policy.SourceHard:
			return act.Plural + " always need your approval (a built-in rule)", id
		case r.Source == policy.SourceCompat:
			why = "the " + r.Label + " setting"
		case r.Label != "":
			why = r.Label
		}
	}
	if strings.HasPrefix(id, "hard:") && why == it.Reason {
		return act.Plural + " always need your approval (a built-in rule)", id
	}
	return act.Plural + " need your approval (policy: " + why + ")", id
}

// postURL opens post id: on x.com, or, in the sandbox, this site's view of
// the emulator's post.
func (s *Server) postURL(a *Account, id, username string) string {
	if a.Sandbox {
		return s.o.Prefix + s.at(a, "/posts/"+url.PathEscape(id))
	}
	if username == "" {
		return "https://x.com/i/web/status/" + url.PathEscape(id)
	}
	return "https://x.com/" + url.PathEscape(username) + "/status/" + url.PathEscape(id)
}

// approvalsData is the approvals page.
type approvalsData struct {
	Items         []itemView
	Total         int
	Tool, Caller  string
	Offset, Limit int
	PrevQ, NextQ  string
	// Tools and Callers are the filters' choices with their counts.
	Tools, Callers []facetOption
	LastID         int64
	// Account is the account shown; AcctField its name when it is not
	// the first (forms and links carry it); Others the other accounts
	// with their pending counts.
	Account, AcctField string
	Others             []acctCount
	// Filtered says a filter hides some of the queue.
	Filtered bool
	// HandOffs are the open hand-offs, as cards; Done the latest ones a
	// check resolved; CanCheck offers to check on X now.
	HandOffs []itemView
	Done     []handOffLine
	CanCheck bool
}

// handOffLine is a resolved hand-off in one line.
type handOffLine struct {
	ID          int64
	Name        string
	Status      string
	Evidence    string
	ResolvedAt  stamp
	Correlation string
}

// facetOption is one choice of a filter, with how many items it holds.
type facetOption struct {
	Value, Label string
	Count        int
}

type acctCount struct {
	Name, Q string
	Count   int
}

func (s *Server) filterOf(r *http.Request) gateway.PendingFilter {
	q := r.URL.Query()
	f := gateway.PendingFilter{Tool: q.Get("tool"), Caller: q.Get("caller"), Limit: s.o.PageSize}
	f.Offset, _ = strconv.Atoi(q.Get("offset"))
	f.Offset = max(f.Offset, 0)
	return f
}

// queueQuery is the query of the approvals page of account a with filter
// f at offset off.
func (s *Server) queueQuery(a *Account, f gateway.PendingFilter, off int) string {
	v := url.Values{}
	if a != s.accts[0] {
		v.Set("account", a.Name)
	}
	if f.Tool != "" {
		v.Set("tool", f.Tool)
	}
	if f.Caller != "" {
		v.Set("caller", f.Caller)
	}
	if off > 0 {
		v.Set("offset", strconv.Itoa(off))
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// withCSRF has each item's forms carry the session's token.
func withCSRF(views []itemView, csrf string) {
	for i := range views {
		views[i].CSRF = csrf
	}
}

// countText is a post's weighted length against its limit, as shown.
func countText(n, limit int) string { return strconv.Itoa(n) + "/" + strconv.Itoa(limit) }

// placeBacks has each item's forms return to the page it is on, at the
// item that takes its place once it leaves the list (the next one, or the
// one before the last), so a reviewer keeps their place in a long queue.
func placeBacks(views []itemView, here string) {
	for i := range views {
		at := ""
		switch {
		case i+1 < len(views):
			at = "#item-" + strconv.FormatInt(views[i+1].ID, 10)
		case i > 0:
			at = "#item-" + strconv.FormatInt(views[i-1].ID, 10)
		}
		views[i].Back, views[i].Here = here+at, here
	}
}

func (s *Server) approvals(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx := r.Context()
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	f := s.filterOf(r)
	// The facets (counts by tool and caller) fill the filters and give the
	// total, so the queue is counted once.
	facets, err := a.Gateway.PendingFacets(ctx)
	if err != nil {
		s.fail(w, r, sess, http.StatusInternalServerError, err)
		return
	}
	f.NoCount = true
	items, _, err := a.Gateway.PendingFiltered(ctx, f)
	if err != nil {
		s.fail(w, r, sess, http.StatusBadRequest, err)
		return
	}
	total := 0
	tools, callers := map[string]int{}, map[string]int{}
	for _, fc := range facets {
		if (f.Tool == "" || fc.Tool == f.Tool) && (f.Caller == "" || fc.Caller == f.Caller) {
			total += fc.Count
		}
		if f.Caller == "" || fc.Caller == f.Caller {
			tools[fc.Tool] += fc.Count
		}
		if f.Tool == "" || fc.Tool == f.Tool {
			callers[fc.Caller] += fc.Count
		}
	}
	d := approvalsData{Total: total, Tool: f.Tool, Caller: f.Caller, Offset: f.Offset, Limit: f.Limit, Account: a.Name,
		Filtered: f.Tool != "" || f.Caller != ""}
	if a != s.accts[0] {
		d.AcctField = a.Name
	}
	for _, o := range s.accts {
		if o == a {
			continue
		}
		n, err := pendingTotal(ctx, o)
		if err != nil {
			s.fail(w, r, sess, statusOf(err), err)
			return
		}
		d.Others = append(d.Others, acctCount{Name: o.Name, Q: s.at(o, "/approvals"), Count: n})
	}
	for _, fc := range facets {
		if _, ok := tools[fc.Tool]; ok && !hasOption(d.Tools, fc.Tool) {
			d.Tools = append(d.Tools, facetOption{Value: fc.Tool, Label: describe.Of(fc.Tool, "", nil).Plural, Count: tools[fc.Tool]})
		}
		if _, ok := callers[fc.Caller]; ok && !hasOption(d.Callers, fc.Caller) {
			d.Callers = append(d.Callers, facetOption{Value: fc.Caller, Label: fc.Caller, Count: callers[fc.Caller]})
		}
	}
	d.Items = s.views(r, a, items)
	placeBacks(d.Items, "/approvals"+s.queueQuery(a, f, f.Offset))
	withCSRF(d.Items, s.csrfOf(sess))
	if err := s.handOffViews(r, a, &d); err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	withCSRF(d.HandOffs, s.csrfOf(sess))
	// New items arrive at the end of the queue: the page listens for them
	// only when it shows that end (-1: it does not).
	d.LastID = -1
	switch {
	case len(items) > 0 && f.Offset+len(items) >= total:
		d.LastID = items[len(items)-1].ID
	case len(items) == 0 && f.Offset == 0:
		d.LastID = 0
	}
	if f.Offset > 0 {
		d.PrevQ = s.queueQuery(a, f, max(f.Offset-f.Limit, 0))
		if d.PrevQ == "" {
			d.PrevQ = "?"
		}
	}
	if f.Offset+len(items) < total {
		d.NextQ = s.queueQuery(a, f, f.Offset+len(items))
	}
	s.render(w, r, sess, "approvals", "Approvals", d)
}

func hasOption(opts []facetOption, v string) bool {
	for _, o := range opts {
		if o.Value == v {
			return true
		}
	}
	return false
}

// approvalsNew renders the items after ?after=ID, for the event stream's
// listener to append without a reload.
func (s *Server) approvalsNew(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f := s.filterOf(r)
	here := "/approvals" + s.queueQuery(a, f, f.Offset)
	f.Offset = 0
	f.Limit = 100
	f.AfterID, _ = strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	items, _, err := a.Gateway.PendingFiltered(r.Context(), f)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	views := s.views(r, a, items)
	placeBacks(views, here)
	withCSRF(views, s.csrfOf(sess))
	s.execute(w, http.StatusOK, "items", struct{ Items []itemView }{views})
}

func (s *Server) approvalDetail(w http.ResponseWriter, r *http.Request, sess *session) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.fail(w, r, sess, http.StatusNotFound, fmt.Errorf("%q is not an approval id", r.PathValue("id")))
		return
	}
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	it, err := a.Gateway.Item(r.Context(), id)
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	v := s.views(r, a, []gateway.ApprovalItem{*it})[0]
	v.CSRF = s.csrfOf(sess)
	s.render(w, r, sess, "approval", fmt.Sprintf("Approval #%d", id), v)
}

func statusOf(err error) int {
	switch apperr.CodeOf(err) {
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.InvalidInput, apperr.ValidationError, apperr.ApprovalNotPending:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// back returns to the page the form was on (a path of this site, without
// the prefix, only).
func (s *Server) back(w http.ResponseWriter, r *http.Request, fallback string) {
	to := r.PostFormValue("back")
	if to == "" || !strings.HasPrefix(to, "/") || strings.HasPrefix(to, "//") || strings.ContainsAny(to, "\\\r\n") {
		to = fallback
	}
	s.redirect(w, r, to)
}

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.New(apperr.InvalidInput, "%q is not an approval id", r.PathValue("id"))
	}
	return id, nil
}

// approve replays exactly the queued call through the gateway, as the
// CLI's approve does, with reviewer web, and says what it did: "Approved:
// posted as post 123", with a link to it.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	id, idErr := pathID(r)
	if err == nil {
		err = idErr
	}
	var it *gateway.ApprovalItem
	if err == nil {
		it, err = s.approveOne(r, a, id, r.PostFormValue("shown"))
	}
	if err != nil {
		s.flash(sess, true, "#%d not approved: %s", id, apperr.As(err).Message)
	} else {
		msg, text, href := s.approvedNote(r, a, it)
		s.flashLink(sess, msg, text, href)
	}
	s.back(w, r, s.at(a, "/approvals"))
}

// approvedNote says what an approved item did, and links to it: the post
// it created, or the post or account it acted on.
func (s *Server) approvedNote(r *http.Request, a *Account, it *gateway.ApprovalItem) (msg, text, href string) {
	v := s.views(r, a, []gateway.ApprovalItem{*it})[0]
	if id := postedID(it.Result); id != "" {
		return "Approved: posted as ", "post " + id, s.postURL(a, id, "")
	}
	msg = "Approved: " + v.Title + " (#" + strconv.FormatInt(it.ID, 10) + ")"
	if t := v.Target; t != nil && t.URL != "" {
		return msg + " · ", "open the " + string(t.Kind), t.URL
	}
	return msg, "", ""
}

// shownDecision is the web's decision on the content a form says its page
// showed; a form without it (a page from before it was sent) decides
// nothing.
func shownDecision(r *http.Request, shown string) (gateway.Decision, error) {
	if shown == "" {
		return gateway.Decision{}, apperr.New(apperr.InvalidInput, "shown: the form does not say what it showed; reload the page and decide again")
	}
	return gateway.Decision{Reviewer: Reviewer, Notes: r.PostFormValue("note"), Shown: shown}, nil
}

// approveOne approves item id as the page showed it (shown, its content
// hash).
func (s *Server) approveOne(r *http.Request, a *Account, id int64, shown string) (*gateway.ApprovalItem, error) {
	d, err := shownDecision(r, shown)
	if err != nil {
		return nil, err
	}
	it, _, err := a.Gateway.ApproveWith(r.Context(), id, d)
	if err != nil {
		return nil, err
	}
	s.d.Log.Info("web: approval decided", "id", id, "status", it.Status, "correlation_id", it.CorrelationID)
	if it.Status != gateway.ApprovalExecuted {
		return it, apperr.New(apperr.ValidationError, "%s: %s", it.Status, it.ErrorMessage)
	}
	return it, nil
}

// titleOf names item id of account a for a message ("Like @gabe's post
// (#4)"); the id alone when it cannot be read.
func (s *Server) titleOf(r *http.Request, a *Account, id int64) string {
	if a != nil {
		if it, err := a.Gateway.Item(r.Context(), id); err == nil {
			return s.views(r, a, []gateway.ApprovalItem{*it})[0].Title + " (#" + strconv.FormatInt(id, 10) + ")"
		}
	}
	return "#" + strconv.FormatInt(id, 10)
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	id, idErr := pathID(r)
	if err == nil {
		err = idErr
	}
	if err == nil {
		err = s.rejectOne(r, a, id, r.PostFormValue("shown"))
	}
	if err != nil {
		s.flash(sess, true, "#%d not rejected: %s", id, apperr.As(err).Message)
	} else {
		s.flash(sess, false, "Rejected: %s", s.titleOf(r, a, id))
	}
	s.back(w, r, s.at(a, "/approvals"))
}

// rejectOne rejects item id as the page showed it.
func (s *Server) rejectOne(r *http.Request, a *Account, id int64, shown string) error {
	d, err := shownDecision(r, shown)
	if err == nil {
		_, err = a.Gateway.RejectWith(r.Context(), id, d)
	}
	return err
}

func (s *Server) edit(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	id, idErr := pathID(r)
	if err == nil {
		err = idErr
	}
	// The same edit as the CLI's: the gateway validates the whole edited
	// call, naming the field, and changes nothing when it refuses.
	text := r.PostFormValue("text")
	ch := gateway.Changes{Text: &text}
	if err == nil && r.PostFormValue("post") != "" {
		// One post of a thread: the thread is edited whole, that post
		// replaced.
		ch = gateway.Changes{}
		var tweets json.RawMessage
		if tweets, err = s.threadWith(r, a, id, text); err == nil {
			ch.Fields = map[string]json.RawMessage{"tweets": tweets}
		}
	} else if err == nil && r.PostFormValue("options_form") != "" {
		var raw json.RawMessage
		if raw, err = optionsFromForm(r); err == nil {
			ch.Fields = map[string]json.RawMessage{optionsField: raw}
		}
	}
	if err == nil {
		_, err = a.Gateway.EditFields(r.Context(), id, ch)
	}
	if err != nil && a != nil && idErr == nil && s.editRefused(w, r, sess, a, id, err) {
		return
	}
	if err != nil {
		s.flash(sess, true, "#%d not edited: %s", id, apperr.As(err).Message)
	} else {
		s.flash(sess, false, "Edited: %s; approve it to send it as edited", s.titleOf(r, a, id))
	}
	s.back(w, r, s.at(a, "/approvals"))
}

// threadWith is the posts of thread item id with the one the form names
// (post, 0-based) replaced by text.
func (s *Server) threadWith(r *http.Request, a *Account, id int64, text string) (json.RawMessage, error) {
	it, err := a.Gateway.Item(r.Context(), id)
	if err != nil {
		return nil, err
	}
	posts, ok := describe.ThreadOf(it.Params)
	if !ok {
		return nil, apperr.New(apperr.ValidationError, "approval item %d is no thread", id)
	}
	i, err := strconv.Atoi(r.PostFormValue("post"))
	if err != nil || i < 0 || i >= len(posts) {
		return nil, apperr.New(apperr.InvalidInput, "post: %q is not a post of this %d-post thread", r.PostFormValue("post"), len(posts))
	}
	tweets := make([]string, len(posts))
	for j, p := range posts {
		tweets[j] = p.Text
	}
	tweets[i] = text
	return json.Marshal(tweets)
}

// editRefused shows a refused edit back on the item's page: the form open
// with what was sent, the refusal beside it naming the field, the item
// itself unchanged. False when the item cannot be shown (no longer
// pending, or gone): the caller then reports the refusal as a message.
func (s *Server) editRefused(w http.ResponseWriter, r *http.Request, sess *session, a *Account, id int64, refusal error) bool {
	it, err := a.Gateway.Item(r.Context(), id)
	if err != nil || it.Status != gateway.ApprovalPending {
		return false
	}
	v := s.views(r, a, []gateway.ApprovalItem{*it})[0]
	if v.Field == "" {
		return false
	}
	msg := apperr.As(refusal).Message
	field := fieldOf(msg)
	v.EditError, v.BadText = msg, field == v.Field
	v.Text = r.PostFormValue("text")
	v.Count, v.Valid = a.limitFor(it.Tool).count(v.Text)
	v.CountText = countText(v.Count, v.Max)
	if v.Opts != nil && r.PostFormValue("options_form") != "" {
		v.Opts.refill(r, field)
		v.Opts.place(v.IDText)
	}
	v.Back, v.Here = "", ""
	v.CSRF = s.csrfOf(sess)
	s.renderStatus(w, r, http.StatusBadRequest, sess, "approval", fmt.Sprintf("Approval #%d: not edited", id), v)
	return true
}

// bulk approves or rejects the selected items one by one; each is its own
// decision, so one failure does not stop the rest.
func (s *Server) bulk(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	if err != nil {
		s.flash(sess, true, "%s", apperr.As(err).Message)
		s.back(w, r, "/approvals")
		return
	}
	action := r.PostFormValue("action")
	if action != "approve" && action != "reject" {
		s.flash(sess, true, "choose Approve selected or Reject selected")
		s.back(w, r, "/approvals")
		return
	}
	var done []string
	var failed []string
	for _, raw := range r.PostForm["id"] {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			continue
		}
		// Each selected item's card posts the hash of what it showed.
		shown := r.PostFormValue("shown-" + strconv.FormatInt(id, 10))
		if action == "approve" {
			_, err = s.approveOne(r, a, id, shown)
		} else {
			err = s.rejectOne(r, a, id, shown)
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("#%d (%s)", id, apperr.As(err).Message))
			continue
		}
		done = append(done, "#"+raw)
	}
	verb := map[string]string{"approve": "approved", "reject": "rejected"}[action]
	switch {
	case len(done) == 0 && len(failed) == 0:
		s.flash(sess, true, "select at least one item")
	case len(failed) > 0:
		s.flash(sess, true, "%s: %s; failed: %s", verb, strings.Join(done, ", "), strings.Join(failed, "; "))
	default:
		s.flash(sess, false, "%s: %s", verb, strings.Join(done, ", "))
	}
	s.back(w, r, s.at(a, "/approvals"))
}

// count answers the live count of the edit box, against the limit of the
// tool it edits (?tool=: a direct message's, else the post limit of the
// account it names, ?account=).
func (s *Server) count(w http.ResponseWriter, r *http.Request, _ *session) {
	a, err := s.acct(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	lim := a.limitFor(r.URL.Query().Get("tool"))
	n, ok := lim.count(r.URL.Query().Get("text"))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"weighted_length": n, "max": lim.Max, "valid": ok})
}

// postMax is the longest post the account may write, as last learned
// (x_api.max_post_length, or the subscription X told): the page never
// waits on X to count.
func (a *Account) postMax() int {
	if a == nil || a.Workflow == nil || a.Workflow.PostLimit == nil {
		return tweettext.MaxWeightedLength
	}
	return a.Workflow.PostLimit.Known().Max
}

// events streams "pending" events when items newer than ?after=ID arrive.
// Another process (the MCP server) may queue them, so the stream polls
// the queue rather than waiting for an in-process signal.
func (s *Server) events(w http.ResponseWriter, r *http.Request, _ *session) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	a, err := s.acct(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	f := gateway.PendingFilter{Tool: r.URL.Query().Get("tool"), Caller: r.URL.Query().Get("caller"), Limit: 500}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": connected\n\n")
	fl.Flush()
	t := time.NewTicker(s.o.PollEvery)
	defer t.Stop()
	for {
		f.AfterID = after
		items, n, err := a.Gateway.PendingFiltered(r.Context(), f)
		switch {
		case err != nil && r.Context().Err() == nil:
			s.d.Log.Warn("web: event stream poll failed", "error", err)
		case err == nil && len(items) > 0:
			// The page fetches the items after its own mark; the stream
			// moves its mark so it reports each item once.
			fmt.Fprintf(w, "event: pending\ndata: {\"after\":%d,\"new\":%d}\n\n", after, n)
			fl.Flush()
			after = items[len(items)-1].ID
		}
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
}

// pendingTotal counts an account's pending items without writing (the
// facets only read; PendingCount would first expire stale items).
func pendingTotal(ctx context.Context, a *Account) (int, error) {
	fs, err := a.Gateway.PendingFacets(ctx)
	n := 0
	for _, f := range fs {
		n += f.Count
	}
	return n, err
}

// handOffViews fills d's hand-offs: the open ones as approval cards with
// Do it on X, and the latest resolved ones as lines.
func (s *Server) handOffViews(r *http.Request, a *Account, d *approvalsData) error {
	hs, err := a.Gateway.HandOffs(r.Context(), "", 60)
	if err != nil {
		return err
	}
	d.CanCheck = a.CheckHandOffs != nil
	var open []gateway.HandOff
	now := s.d.Now()
	for _, h := range hs {
		if h.Status == gateway.HandOffOpen {
			open = append(open, h)
			continue
		}
		if len(d.Done) < 10 {
			line := handOffLine{ID: h.ID, Name: describe.Of(h.Effect, "", h.Params()).Name, Status: h.Status,
				ResolvedAt: stampOf(now, h.ResolvedAt, false), Correlation: h.CorrelationID}
			switch {
			case h.PostID != "":
				line.Evidence = "post " + h.PostID
			case h.UserID != "":
				line.Evidence = "user " + h.UserID
			}
			d.Done = append(d.Done, line)
		}
	}
	items := make([]gateway.ApprovalItem, len(open))
	for i, h := range open {
		items[i] = h.Item()
	}
	d.HandOffs = s.views(r, a, items)
	for i := range d.HandOffs {
		v := &d.HandOffs[i]
		h := open[i]
		v.HandOff, v.IntentURL, v.Pending = true, h.IntentURL, false
		v.IDText = "handoff-" + strconv.FormatInt(h.ID, 10)
		v.Path = s.o.Prefix + "/audit/" + h.CorrelationID
		v.Rule, v.RuleID = h.Reason, "x_platform"
		if v.Rule == "" {
			v.Rule = "X's API does not let the account do this; a person can, on x.com."
		}
		v.Outcome = "not seen on X yet"
		if at, err := store.ParseTime(h.CheckedAt); err == nil {
			v.Outcome += ", checked " + describe.Ago(now, at)
		}
	}
	return nil
}

// checkHandOffs looks on X now whether a person did the open hand-offs.
func (s *Server) checkHandOffs(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	if err == nil && a.CheckHandOffs == nil {
		err = apperr.New(apperr.XNotConfigured, "hand-offs cannot be checked: X is not configured")
	}
	var done []gateway.HandOff
	if err == nil {
		done, err = a.CheckHandOffs(r.Context())
	}
	switch {
	case err != nil:
		s.flash(sess, true, "Not checked: %s", apperr.As(err).Message)
	case len(done) == 0:
		s.flash(sess, false, "Checked X: no hand-off changed.")
	default:
		parts := make([]string, len(done))
		for i, h := range done {
			parts[i] = fmt.Sprintf("hand-off %d %s", h.ID, h.Status)
		}
		s.flash(sess, false, "Checked X: %s.", strings.Join(parts, ", "))
	}
	if a == nil {
		s.back(w, r, "/approvals")
		return
	}
	s.back(w, r, s.at(a, "/approvals"))
}
