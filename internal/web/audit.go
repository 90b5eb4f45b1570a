package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// auditData is the audit page: unresolved unknown outcomes first, then the
// trail as filtered.
type auditData struct {
	Unresolved []gateway.AuditEntry
	// Rows says the table has rows: they are printed after the "audit"
	// template, before "auditend" (see auditRows).
	Rows   bool
	Tool   string
	Status string
	Caller string
	Since  string
	Search string
	// StatusOptions and CallerOptions are the filters' choices, the one
	// chosen marked.
	StatusOptions, CallerOptions template.HTML
	AcctField                    string
}

// callers are who can start a mutation, for the caller filter's choices.
// An approved call names who asked for it, like any other.
var callers = []string{"mcp", "autopilot", "cli", "web"}

var statuses = []string{"pending", "success", "failure", "unknown", "interrupted", "duplicate"}

// choice is one choice of a filter; Chosen marks the one in use.
type choice struct {
	Name   string
	Chosen bool
}

// choices are names as a filter's choices, chosen marked: the template
// then compares nothing.
func choices(names []string, chosen string) []choice {
	out := make([]choice, len(names))
	for i, n := range names {
		out[i] = choice{Name: n, Chosen: n == chosen}
	}
	return out
}

// filterOptions are a select's <option>s as the "options" template of
// the site prints them, for each of its names chosen and for none ("").
// The audit page shows two filters of names fixed in the code on every
// view, and every page the account switcher: printed once, they cost a
// lookup instead of a dozen values each through the template's
// reflection.
type filterOptions map[string]template.HTML

func newFilterOptions(t *template.Template, names []string) (filterOptions, error) {
	o := make(filterOptions, len(names)+1)
	for _, chosen := range append([]string{""}, names...) {
		var b strings.Builder
		if err := t.ExecuteTemplate(&b, "options", choices(names, chosen)); err != nil {
			return nil, fmt.Errorf("web: filter options: %w", err)
		}
		o[chosen] = template.HTML(b.String())
	}
	return o, nil
}

// of is the options with chosen marked: none for a name not among them,
// as choices marks none.
func (o filterOptions) of(chosen string) template.HTML {
	if h, ok := o[chosen]; ok {
		return h
	}
	return o[""]
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx := r.Context()
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	q := r.URL.Query()
	d := auditData{Tool: q.Get("tool"), Status: q.Get("status"), Caller: q.Get("caller"), Since: q.Get("since"), Search: q.Get("q")}
	d.StatusOptions, d.CallerOptions = s.statusOptions.of(d.Status), s.callerOptions.of(d.Caller)
	if a != s.accts[0] {
		d.AcctField = a.Name
	}
	f := gateway.AuditFilter{Tool: d.Tool, Status: d.Status, Caller: d.Caller, Search: d.Search, Limit: 100, Brief: true}
	if d.Since != "" {
		t, err := time.ParseInLocation("2006-01-02", d.Since, time.Local)
		if err != nil {
			s.fail(w, r, sess, http.StatusBadRequest, fmt.Errorf("since: %q is not a date (YYYY-MM-DD)", d.Since))
			return
		}
		f.Since = t
	}
	held, _ := s.auditRows.Get().(*[]gateway.AuditEntry)
	if held == nil {
		held = new([]gateway.AuditEntry)
	}
	rows, unresolved, err := a.Gateway.RecentUnresolvedInto(ctx, f, *held)
	// Held again once the page is written (or refused).
	defer func() {
		*held = rows[:0]
		s.auditRows.Put(held)
	}()
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	d.Rows = len(rows) > 0
	// An outcome nobody knows blocks identical calls until a human says
	// what happened: those come first, whatever the filter. They are read
	// only when the rows' query did not prove there are none.
	if unresolved {
		if d.Unresolved, err = a.Gateway.Unresolved(ctx, 100); err != nil {
			s.fail(w, r, sess, statusOf(err), err)
			return
		}
	}
	at := rowsAt{base: s.o.Prefix, acct: d.AcctField, now: s.d.Now(), postURL: func(id string) string { return s.postURL(a, id, "") }}
	// A hundred rows are most of the page: they go straight into it.
	p := s.pageOf(r, sess, "audit", "Audit", d)
	s.executeThen(w, http.StatusOK, "audit", p, s.auditRest(p, rows, at))
}

// auditRest writes what follows the "audit" template of page p: the
// table's rows of entries es shown at at, then the "auditend" template.
func (s *Server) auditRest(p page, es []gateway.AuditEntry, at rowsAt) func(b *bytes.Buffer) error {
	return func(b *bytes.Buffer) error {
		if err := auditRows(b, s.tmpl, es, at); err != nil {
			return err
		}
		return s.tmpl.ExecuteTemplate(b, "auditend", p)
	}
}

type auditDetailData struct {
	E *gateway.AuditEntry
	// Act is the call in words; Text what it posted; TargetURL opens the
	// post it acted on; Undo names the undo in words.
	Act             describe.Action
	Text, TargetURL string
	Undo            string
	When            stamp
	Result          string
	Request         string
	UndoParams      string
	// Params is the recorded parameters as they were stored (raw, behind
	// a disclosure); Fields, Thread, Outcome and UndoFields say the same
	// in words.
	Params string
	Fields []describe.Field
	// Options are a post's settings in the approval's words ("Poll: A /
	// B, 1 day").
	Options   []string
	Thread    []string
	Outcome   []describe.Field
	PostedID  string
	PostedURL string
	// Posted is the posted post as X has it now, read when it carries a
	// poll (for the votes); PostedError says why it could not be read.
	Posted      *Post
	PostedError string
	UndoFields  []describe.Field
	CanRoll     bool
	CanResolve  bool
	AcctField   string
}

func (s *Server) auditDetail(w http.ResponseWriter, r *http.Request, sess *session) {
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	e, err := a.Gateway.Detail(r.Context(), r.PathValue("corr"))
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	d := auditDetailData{E: e, Result: pretty(e.Result), Request: pretty(e.Request), Text: describe.PostedText(e.ParamsSummary),
		Act: describe.Of(e.Tool, e.EquivalentTool, json.RawMessage(e.ParamsSummary)), When: stampOf(s.d.Now(), e.CreatedAt, false)}
	if t := d.Act.Target; t.Kind == describe.KindPost {
		d.TargetURL = s.postURL(a, t.ID, "")
	}
	d.Params = e.ParamsSummary
	if posts, ok := describe.ThreadOf(json.RawMessage(e.ParamsSummary)); ok {
		for _, p := range posts {
			d.Thread = append(d.Thread, p.Text)
		}
		d.Text = ""
	}
	d.Options = actions.DescribeOptions(json.RawMessage(e.ParamsSummary))
	// What the words above already say is not listed again.
	for _, f := range describe.Fields(json.RawMessage(e.ParamsSummary)) {
		if f.Name == "text" && d.Text != "" || d.Thread != nil && strings.HasPrefix(f.Name, "tweets") ||
			d.Options != nil && (f.Name == "options" || strings.HasPrefix(f.Name, "options,")) {
			continue
		}
		d.Fields = append(d.Fields, f)
	}
	if id := postedID(e.Result); id != "" {
		d.PostedID, d.PostedURL = id, s.postURL(a, id, "")
		if postsPoll(json.RawMessage(e.ParamsSummary)) {
			f := s.posts.lookup(r.Context(), a.Name, []string{id}, a.Posts)[id]
			d.Posted, d.PostedError = f.V, f.Error
		}
	} else {
		d.Outcome = describe.Fields(e.Result)
	}
	if a != s.accts[0] {
		d.AcctField = a.Name
	}
	if e.Rollback != nil && e.Rollback.Reversible && e.Rollback.UndoTool != "" {
		d.UndoParams = prettyAny(e.Rollback.UndoParams)
		if b, err := json.Marshal(e.Rollback.UndoParams); err == nil {
			d.UndoFields = describe.Fields(b)
		}
		d.Undo = describe.Of(e.Rollback.UndoTool, "", nil).Name
		_, known := a.Gateway.Action(e.Rollback.UndoTool)
		d.CanRoll = known && e.Status == "success"
	}
	d.CanResolve = (e.Status == "unknown" || e.Status == "interrupted") && e.Resolution == ""
	s.render(w, r, sess, "auditdetail", "Mutation "+e.CorrelationID, d)
}

// rollback queues the undo call through the gateway: a new mutation that
// obeys policy (usually routed to approval) like any other.
func (s *Server) rollback(w http.ResponseWriter, r *http.Request, sess *session) {
	corr := r.PathValue("corr")
	a, err := s.acct(r)
	if err != nil {
		s.flash(sess, true, "not rolled back: %s", apperr.As(err).Message)
		s.back(w, r, "/audit")
		return
	}
	e, err := a.Gateway.Detail(r.Context(), corr)
	if err != nil {
		s.flash(sess, true, "not rolled back: %s", apperr.As(err).Message)
		s.back(w, r, s.at(a, "/audit"))
		return
	}
	if e.Rollback == nil || !e.Rollback.Reversible || e.Rollback.UndoTool == "" {
		s.flash(sess, true, "mutation %s cannot be rolled back", corr)
		s.back(w, r, s.at(a, "/audit/"+corr))
		return
	}
	resp, err := a.Gateway.Do(r.Context(), gateway.Call{
		Tool: e.Rollback.UndoTool, Params: e.Rollback.UndoParams, Caller: Caller,
		// One rollback per mutation: a second click finds the first.
		IdempotencyKey: "rollback:" + corr,
	})
	switch {
	case err != nil:
		s.flash(sess, true, "rollback refused: %s", apperr.As(err).Message)
	case resp.Kind == gateway.Routed:
		s.flash(sess, false, "rollback queued for approval as #%d (%s)", resp.ApprovalID, e.Rollback.UndoTool)
		s.redirect(w, r, s.at(a, "/approvals"))
		return
	case resp.Kind == gateway.Executed:
		s.flash(sess, false, "rolled back with %s (correlation id %s)", e.Rollback.UndoTool, resp.CorrelationID)
	default:
		s.flash(sess, false, "rollback answered %s", resp.Kind)
	}
	s.back(w, r, s.at(a, "/audit/"+corr))
}

// resolve records a human's check of an unknown outcome.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request, sess *session) {
	corr := r.PathValue("corr")
	res := r.PostFormValue("resolution")
	a, err := s.acct(r)
	if err == nil {
		_, err = a.Gateway.Resolve(r.Context(), corr, res, gateway.ResolvedByWeb)
	}
	if err != nil {
		s.flash(sess, true, "not resolved: %s", apperr.As(err).Message)
	} else {
		s.flash(sess, false, "%s resolved as %s", corr, res)
	}
	s.back(w, r, s.at(a, "/audit"))
}

// auditRow is one row of the audit table as shown: when, what was done
// (in words, with the post's text or its target), the status, who asked
// and the way to the details (and the rollback). It is the "auditrow"
// template's data, and writeAuditRow's, which prints it the same without
// the template's reflection. Every value is computed here, once, and
// joined where the row prints several side by side (but Label, which
// only the template joins), so that a row left to the template prints
// (and escapes) as few values as show it.
type auditRow struct {
	At, Exact, Rel string
	Name, Tool     string
	// Said is the text it posted; otherwise PostURL and PostID open the
	// post it acted on, or Target names another target ("user 42").
	Said           string
	PostURL        string
	PostID, Target string
	// Status is the status class; StatusText the status as read, with
	// its resolution.
	Status, StatusText string
	// Caller asked for the call; DecidedBy approved it ("" when no
	// person was asked).
	Caller, DecidedBy string
	// Href is the row's detail page (on the account shown).
	Href string
}

// Label says which row Href opens, for a screen reader. Joined only by
// the template: the row as written prints its two parts.
func (r *auditRow) Label() string { return r.Name + " at " + r.Exact }

// rowsAt is where audit rows are shown: on the site under base, for
// account acct ("" for the first), at now; postURL opens a post.
type rowsAt struct {
	base, acct string
	now        time.Time
	postURL    func(id string) string
}

// auditRowOf is the audit table's row of entry e, shown at at.
func auditRowOf(e *gateway.AuditEntry, at rowsAt) auditRow {
	return rowOf(e, at, accountQuery(at.acct))
}

// accountQuery is the query that shows a page on account acct ("" for
// the first, which needs none).
func accountQuery(acct string) string {
	if acct == "" {
		return ""
	}
	return "?account=" + url.QueryEscape(acct)
}

// rowOf is auditRowOf with at's account query, the same for every row
// of a view, given.
func rowOf(e *gateway.AuditEntry, at rowsAt, acctQ string) auditRow {
	// What the row shows was written with it (or, for an older row,
	// described when it was read): nothing is decoded here.
	act := e.Shown
	r := auditRow{At: e.CreatedAt, Exact: e.CreatedAt, Rel: e.CreatedAt, Name: act.Name, Tool: e.Tool, Status: e.Status, StatusText: e.Status,
		Caller: e.Caller, DecidedBy: e.DecidedBy}
	// The exact time and the link are joined in one string, cut in two:
	// one allocation for the row's two strings of its own.
	var buf [160]byte
	b := buf[:0]
	t, ok := parseStamp(e.CreatedAt)
	if ok {
		b = appendExact(b, t, time.Local)
		r.Rel = describe.Ago(at.now, t)
	}
	exact := len(b)
	b = append(b, at.base...)
	b = append(b, "/audit/"...)
	b = append(b, url.PathEscape(e.CorrelationID)...)
	b = append(b, acctQ...)
	joined := string(b)
	if ok {
		r.Exact = joined[:exact]
	}
	r.Href = joined[exact:]
	if e.Resolution != "" {
		r.StatusText += " (" + e.Resolution + ")"
	}
	switch t := act.Target; {
	case act.Text != "":
		r.Said = act.Text
	case t.Kind == describe.KindPost && at.postURL != nil:
		r.PostURL, r.PostID = at.postURL(t.ID), t.ID
	case t.Kind != describe.KindNone:
		r.Target = string(t.Kind) + " " + t.ID
	}
	return r
}

// auditRows appends the table's body of entries es shown at at to b:
// every row as the "auditrow" template of t prints it, in order.
func auditRows(b *bytes.Buffer, t *template.Template, es []gateway.AuditEntry, at rowsAt) error {
	plus, err := plusOf(t)
	if err != nil {
		return err
	}
	// A row is some 600 bytes.
	b.Grow(len(es) * 700)
	acctQ := accountQuery(at.acct)
	for i := range es {
		r := rowOf(&es[i], at, acctQ)
		if err := printAuditRow(b, t, plus, &r); err != nil {
			return err
		}
	}
	return nil
}

// postsPoll reports whether stored post parameters attach a poll, whose
// votes only X knows.
func postsPoll(params json.RawMessage) bool {
	var p struct {
		Options *struct {
			Poll json.RawMessage `json:"poll"`
		} `json:"options"`
	}
	return json.Unmarshal(params, &p) == nil && p.Options != nil && len(p.Options.Poll) > 0 && string(p.Options.Poll) != "null"
}
