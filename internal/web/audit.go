package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// auditData is the audit page: unresolved unknown outcomes first, then the
// trail as filtered.
type auditData struct {
	Unresolved []gateway.AuditEntry
	// Body is the table's body, each row as the "auditrow" template
	// printed it ("" without rows).
	Body   template.HTML
	Tool   string
	Status string
	Caller string
	Since  string
	Search string
	// Statuses and Callers are the filters' choices, the one chosen
	// marked.
	Statuses  []choice
	Callers   []choice
	AcctField string
}

// callers are who can start a mutation, for the caller filter's choices.
var callers = []string{"mcp", "autopilot", "approval", "cli", "web"}

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

func (s *Server) audit(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx := r.Context()
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	q := r.URL.Query()
	d := auditData{Tool: q.Get("tool"), Status: q.Get("status"), Caller: q.Get("caller"), Since: q.Get("since"), Search: q.Get("q")}
	d.Statuses, d.Callers = choices(statuses, d.Status), choices(callers, d.Caller)
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
	rows, unresolved, err := a.Gateway.RecentUnresolved(ctx, f)
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	at := rowsAt{base: s.o.Prefix, acct: d.AcctField, now: s.d.Now(), postURL: func(id string) string { return s.postURL(a, id, "") }}
	if d.Body, err = s.auditRows.print(s.tmpl, rows, at); err != nil {
		s.fail(w, r, sess, http.StatusInternalServerError, err)
		return
	}
	// An outcome nobody knows blocks identical calls until a human says
	// what happened: those come first, whatever the filter. They are read
	// only when the rows' query did not prove there are none.
	if unresolved {
		if d.Unresolved, err = a.Gateway.Unresolved(ctx, 100); err != nil {
			s.fail(w, r, sess, statusOf(err), err)
			return
		}
	}
	s.render(w, r, sess, "audit", "Audit", d)
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
	CanRoll         bool
	CanResolve      bool
	AcctField       string
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
	if a != s.accts[0] {
		d.AcctField = a.Name
	}
	if e.Rollback != nil && e.Rollback.Reversible && e.Rollback.UndoTool != "" {
		d.UndoParams = prettyAny(e.Rollback.UndoParams)
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
// and the way to the details (and the rollback). Every value is computed
// here, once, and joined where the row prints several side by side, so
// the template prints (and escapes) as few values per row as show it:
// with a hundred rows, each printed value is a noticeable part of the
// page's time.
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
	Caller             string
	// Href is the row's detail page (on the account shown); Label says
	// which row it opens, for a screen reader.
	Href, Label string
}

// rowsAt is where audit rows are shown: on the site under base, for
// account acct ("" for the first), at now; postURL opens a post.
type rowsAt struct {
	base, acct string
	now        time.Time
	postURL    func(id string) string
}

// auditRowOf is the audit table's row of entry e, shown at at.
func auditRowOf(e *gateway.AuditEntry, at rowsAt) auditRow {
	when := stampOf(at.now, e.CreatedAt, false)
	// What the row shows was written with it (or, for an older row,
	// described when it was read): nothing is decoded here.
	act := e.Shown
	r := auditRow{At: when.At, Exact: when.Exact, Rel: when.Rel, Name: act.Name, Tool: e.Tool, Status: e.Status, StatusText: e.Status,
		Caller: e.Caller, Href: at.base + "/audit/" + url.PathEscape(e.CorrelationID), Label: act.Name + " at " + when.Exact}
	if at.acct != "" {
		r.Href += "?account=" + url.QueryEscape(at.acct)
	}
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

// rowKey is everything an audit table row as printed depends on, besides
// the site's path prefix (one per server): auditRowOf computes the row
// from nothing else. The time counts as shown relative to now, so a row
// is printed again when that changes.
type rowKey struct {
	acct, corr, createdAt, rel   string
	tool, status, resolution, by string
	shown                        describe.Recorded
}

// maxPrintedRows bounds printedRows: a few pages of every account.
const maxPrintedRows = 2000

// printedRows keeps audit table rows as the "auditrow" template printed
// them, with their rowKey: a row printed before is printed the same again,
// so a page reloaded prints only the rows that changed. Escaping a value
// costs the template a call through reflection, and with a hundred rows
// of ten values each those calls were most of the page's time. The HTML
// is the template's own output, escaped for where each value goes;
// nothing here writes or escapes any.
type printedRows struct {
	mu sync.Mutex
	// rows are by correlation id, which names one row of one account:
	// a short key to hash, and the row's key then says whether what was
	// printed is still the row.
	rows map[string]*printedRow
}

// printedRow is one row as printed (never changed once kept), the key it
// was printed for, and its time as read (ok false when it did not read as one), so that a page
// shown again need not read the row's time again to say how long ago it
// was.
type printedRow struct {
	key  rowKey
	when time.Time
	ok   bool
	html string
}

// print is the table's body of entries es shown at at: every row as the
// "auditrow" template of t prints it, in order.
func (p *printedRows) print(t *template.Template, es []gateway.AuditEntry, at rowsAt) (template.HTML, error) {
	kept := make([]*printedRow, len(es))
	p.mu.Lock()
	for i := range es {
		kept[i] = p.rows[es[i].CorrelationID]
	}
	p.mu.Unlock()
	n := 0
	var b bytes.Buffer
	for i := range es {
		e := &es[i]
		k := rowKey{acct: at.acct, corr: e.CorrelationID, createdAt: e.CreatedAt, rel: e.CreatedAt,
			tool: e.Tool, status: e.Status, resolution: e.Resolution, by: e.Caller, shown: e.Shown}
		var when time.Time
		var ok bool
		if kept[i] != nil && kept[i].key.createdAt == e.CreatedAt {
			when, ok = kept[i].when, kept[i].ok
		} else {
			when, ok = parseStamp(e.CreatedAt)
		}
		if ok {
			// As stampOf says it.
			k.rel = describe.Ago(at.now, when)
		}
		if kept[i] == nil || kept[i].key != k {
			b.Reset()
			r := auditRowOf(e, at)
			if err := printAuditRow(&b, t, &r); err != nil {
				return "", err
			}
			kept[i] = &printedRow{key: k, when: when, ok: ok, html: b.String()}
			p.mu.Lock()
			if len(p.rows) >= maxPrintedRows || p.rows == nil {
				// Start over rather than track what was used last: a
				// page's rows are printed again at once.
				p.rows = make(map[string]*printedRow, maxPrintedRows)
			}
			p.rows[k.corr] = kept[i]
			p.mu.Unlock()
		}
		n += len(kept[i].html)
	}
	var body strings.Builder
	body.Grow(n)
	for _, r := range kept {
		body.WriteString(r.html)
	}
	// The template's own output, kept whole: already escaped.
	return template.HTML(body.String()), nil
}
