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

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/tweettext"
)

// itemView is one queue item as the page shows it.
type itemView struct {
	gateway.ApprovalItem
	// Field is the parameter a human may edit ("" when none); Text is its
	// value.
	Field    string
	Text     string
	Segments []segment
	Count    int
	Max      int
	Valid    bool
	ReplyTo  string
	QuoteOf  string
	Age      string
	Expires  string
	Pretty   string
	// Options are the post's settings in words ("Poll: A / B, 1 day").
	Options []string
	Diff    []string
	// Answered is the post a reply or quote answers (ReplyTo or QuoteOf),
	// looked up through the account's X client and cached.
	Answered postContext
	// Account is the item's account; AcctQ keeps links on it.
	Account string
}

// answeredID is the post a queued reply or quote answers, "" for none.
func answeredID(it gateway.ApprovalItem) string {
	var m struct {
		ReplyTo string `json:"in_reply_to_id"`
		QuoteOf string `json:"quoted_tweet_id"`
	}
	_ = json.Unmarshal(it.Params, &m)
	if m.ReplyTo != "" {
		return m.ReplyTo
	}
	return m.QuoteOf
}

// views renders items of account a, with the posts they answer (one
// lookup for the page).
func (s *Server) views(r *http.Request, a *Account, items []gateway.ApprovalItem) []itemView {
	var ids []string
	for _, it := range items {
		if id := answeredID(it); id != "" {
			ids = append(ids, id)
		}
	}
	posts := s.posts.lookup(r.Context(), a, ids)
	now := s.d.Now()
	out := make([]itemView, 0, len(items))
	for _, it := range items {
		v := s.view(a, it, now)
		if id := answeredID(it); id != "" {
			v.Answered = posts[id]
		}
		out = append(out, v)
	}
	return out
}

func (s *Server) view(a *Account, it gateway.ApprovalItem, now time.Time) itemView {
	v := itemView{ApprovalItem: it, Max: tweettext.MaxWeightedLength, Age: ago(now, it.CreatedAt), Expires: until(now, it.ExpiresAt)}
	if a != s.accts[0] {
		v.Account = a.Name
	}
	var m map[string]any
	_ = json.Unmarshal(it.Params, &m)
	if act, ok := a.Gateway.Action(it.Tool); ok && act.EditableText != "" {
		if t, ok := m[act.EditableText].(string); ok {
			v.Field, v.Text = act.EditableText, t
			v.Segments = segments(t)
			r := tweettext.Parse(t)
			v.Count, v.Valid = r.WeightedLength, r.Valid
		}
	}
	v.ReplyTo, _ = m["in_reply_to_id"].(string)
	v.QuoteOf, _ = m["quoted_tweet_id"].(string)
	v.Pretty = pretty(it.Params)
	v.Options = actions.DescribeOptions(it.Params)
	if it.Edited {
		v.Diff = it.EditDiff()
	}
	return v
}

// approvalsData is the approvals page.
type approvalsData struct {
	Items          []itemView
	Total          int
	Tool, Caller   string
	Offset, Limit  int
	PrevQ, NextQ   string
	Tools, Callers []string
	LastID         int64
	// Account is the account shown; AcctField its name when it is not
	// the first (forms and links carry it); Accounts every account with
	// its pending count, for the account filter.
	Account, AcctField string
	Accounts           []acctCount
}

type acctCount struct {
	Name  string
	Count int
}

func (s *Server) filterOf(r *http.Request) gateway.PendingFilter {
	q := r.URL.Query()
	f := gateway.PendingFilter{Tool: q.Get("tool"), Caller: q.Get("caller"), Limit: s.o.PageSize}
	f.Offset, _ = strconv.Atoi(q.Get("offset"))
	f.Offset = max(f.Offset, 0)
	return f
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
	for _, fc := range facets {
		if (f.Tool == "" || fc.Tool == f.Tool) && (f.Caller == "" || fc.Caller == f.Caller) {
			total += fc.Count
		}
	}
	d := approvalsData{Total: total, Tool: f.Tool, Caller: f.Caller, Offset: f.Offset, Limit: f.Limit, Account: a.Name}
	if a != s.accts[0] {
		d.AcctField = a.Name
	}
	if len(s.accts) > 1 {
		for _, o := range s.accts {
			if o == a {
				// The facets counted this account's queue already.
				n := 0
				for _, fc := range facets {
					n += fc.Count
				}
				d.Accounts = append(d.Accounts, acctCount{Name: o.Name, Count: n})
				continue
			}
			n, err := pendingTotal(ctx, o)
			if err != nil {
				s.fail(w, r, sess, statusOf(err), err)
				return
			}
			d.Accounts = append(d.Accounts, acctCount{Name: o.Name, Count: n})
		}
	}
	seenT, seenC := map[string]bool{}, map[string]bool{}
	for _, fc := range facets {
		if !seenT[fc.Tool] {
			seenT[fc.Tool] = true
			d.Tools = append(d.Tools, fc.Tool)
		}
		if !seenC[fc.Caller] {
			seenC[fc.Caller] = true
			d.Callers = append(d.Callers, fc.Caller)
		}
	}
	d.Items = s.views(r, a, items)
	// New items arrive at the end of the queue: the page listens for them
	// only when it shows that end (-1: it does not).
	d.LastID = -1
	switch {
	case len(items) > 0 && f.Offset+len(items) >= total:
		d.LastID = items[len(items)-1].ID
	case len(items) == 0 && f.Offset == 0:
		d.LastID = 0
	}
	page := func(off int) string {
		v := url.Values{}
		if d.AcctField != "" {
			v.Set("account", d.AcctField)
		}
		if f.Tool != "" {
			v.Set("tool", f.Tool)
		}
		if f.Caller != "" {
			v.Set("caller", f.Caller)
		}
		v.Set("offset", strconv.Itoa(off))
		return "?" + v.Encode()
	}
	if f.Offset > 0 {
		d.PrevQ = page(max(f.Offset-f.Limit, 0))
	}
	if f.Offset+len(items) < total {
		d.NextQ = page(f.Offset + len(items))
	}
	s.render(w, r, sess, "approvals", "Approvals", d)
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
	f.Offset = 0
	f.Limit = 100
	f.AfterID, _ = strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	items, _, err := a.Gateway.PendingFiltered(r.Context(), f)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	views := s.views(r, a, items)
	s.mu.Lock()
	csrf := sess.csrf
	s.mu.Unlock()
	s.execute(w, http.StatusOK, "items", struct {
		CSRF  string
		Items []itemView
	}{csrf, views})
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
	s.render(w, r, sess, "approval", fmt.Sprintf("Approval #%d", id), s.views(r, a, []gateway.ApprovalItem{*it})[0])
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
// CLI's approve does, with reviewer web.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	id, idErr := pathID(r)
	if err == nil {
		err = idErr
	}
	if err == nil {
		err = s.approveOne(r, a, id)
	}
	if err != nil {
		s.flash(sess, true, "#%d not approved: %s", id, apperr.As(err).Message)
	}
	s.back(w, r, s.at(a, "/approvals"))
}

func (s *Server) approveOne(r *http.Request, a *Account, id int64) error {
	it, _, err := a.Gateway.Approve(r.Context(), id, Reviewer, r.PostFormValue("note"))
	if err != nil {
		return err
	}
	s.d.Log.Info("web: approval decided", "id", id, "status", it.Status, "correlation_id", it.CorrelationID)
	if it.Status != gateway.ApprovalExecuted {
		return apperr.New(apperr.ValidationError, "%s: %s", it.Status, it.ErrorMessage)
	}
	return nil
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	id, idErr := pathID(r)
	if err == nil {
		err = idErr
	}
	if err == nil {
		_, err = a.Gateway.Reject(r.Context(), id, Reviewer, r.PostFormValue("note"))
	}
	if err != nil {
		s.flash(sess, true, "#%d not rejected: %s", id, apperr.As(err).Message)
	} else {
		s.flash(sess, false, "#%d rejected", id)
	}
	s.back(w, r, s.at(a, "/approvals"))
}

func (s *Server) edit(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	id, idErr := pathID(r)
	if err == nil {
		err = idErr
	}
	if err == nil {
		_, err = a.Gateway.Edit(r.Context(), id, r.PostFormValue("text"))
	}
	if err != nil {
		s.flash(sess, true, "#%d not edited: %s", id, apperr.As(err).Message)
	} else {
		s.flash(sess, false, "#%d edited; approve it to send the new text", id)
	}
	s.back(w, r, s.at(a, "/approvals"))
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
		if action == "approve" {
			err = s.approveOne(r, a, id)
		} else {
			_, err = a.Gateway.Reject(r.Context(), id, Reviewer, r.PostFormValue("note"))
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

// count answers the live weighted count of the edit box.
func (s *Server) count(w http.ResponseWriter, r *http.Request, _ *session) {
	res := tweettext.Parse(r.URL.Query().Get("text"))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"weighted_length": res.WeightedLength, "max": tweettext.MaxWeightedLength, "valid": res.Valid})
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
