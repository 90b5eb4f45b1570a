package web

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/tweettext"
	"github.com/tuitbot/tuitbot/internal/workflow"
)

// threadSeparator splits a thread's posts in the edit box.
const threadSeparator = "\n---\n"

// draftView is one draft or scheduled item as the page shows it.
type draftView struct {
	workflow.Draft
	// Body is the edit box's text: the post, or a thread's posts
	// separated by a line of three dashes.
	Body string
	// When is the scheduled time in local time; Day and Time its values
	// for the date and time inputs (two narrow inputs fit a calendar's
	// column where one datetime input does not).
	When, Day, Time string
	Count, Max      int
	Editable        bool
	// SelfNumbered says a thread's posts carry their own numbers ("1.
	// …", "2/ …"): the list then adds none.
	SelfNumbered bool
	// Options are the post's settings in the approval page's words.
	Options []string
}

// calDay is one day of the week calendar.
type calDay struct {
	Date, Label string
	Today       bool
	Items       []draftView
	// Free are the day's empty queue slots still to come.
	Free []freeSlot
}

// freeSlot is an empty queue slot a draft can be placed in.
type freeSlot struct {
	// At is the slot's time as the form sends it (RFC 3339, UTC); Time
	// its local time of day.
	At, Time string
}

type draftsData struct {
	// From is the first day shown (today unless asked), YYYY-MM-DD;
	// Span names the 7 days ("Sat 28 Nov – Fri 4 Dec").
	From, Span   string
	PrevQ, NextQ string
	Days         []calDay
	Unscheduled  []draftView
	Queued       []draftView
	Later        int // scheduled after the days shown
	// Placeable are the drafts a free slot's form offers.
	Placeable []draftView
	AcctField string
	Missing   string
	CanAct    bool
	// Back keeps a draft action on the days shown.
	Back string
}

// dayStart is the local midnight that starts t's day: the calendar shows
// the 7 days from one, today's unless asked, so what comes next is first.
func dayStart(t time.Time) time.Time {
	t = t.In(time.Local)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
}

// weekStart is the Monday of t's week.
func weekStart(t time.Time) time.Time {
	day := dayStart(t)
	return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
}

// selfNumbered reports posts that each begin with their own place in the
// thread ("1. ", "2/", "3)").
func selfNumbered(posts []string) bool {
	for i, p := range posts {
		rest, ok := strings.CutPrefix(strings.TrimSpace(p), strconv.Itoa(i+1))
		if !ok || rest == "" || !strings.ContainsRune(".)/:", rune(rest[0])) {
			return false
		}
	}
	return len(posts) > 0
}

func draftOf(d workflow.Draft) draftView {
	v := draftView{Draft: d, Editable: d.Status == "draft" || d.Status == "scheduled", Options: d.Options.Describe()}
	if d.ContentType == "thread" {
		v.SelfNumbered = selfNumbered(d.Tweets)
		v.Body = strings.Join(d.Tweets, threadSeparator)
		for _, t := range d.Tweets {
			v.Count = max(v.Count, tweettext.WeightedLength(t))
		}
	} else {
		v.Body = d.Text
		v.Count = tweettext.WeightedLength(d.Text)
	}
	if d.ScheduledFor != "" {
		if t, err := store.ParseTime(d.ScheduledFor); err == nil {
			lt := t.In(time.Local)
			v.When, v.Day, v.Time = lt.Format("Mon 2 Jan 15:04"), lt.Format("2006-01-02"), lt.Format("15:04")
		}
	}
	return v
}

func (s *Server) drafts(w http.ResponseWriter, r *http.Request, sess *session) {
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	d := draftsData{CanAct: a.Composer != nil}
	if a != s.accts[0] {
		d.AcctField = a.Name
	}
	if a.Workflow == nil {
		d.Missing = "drafts need the workflow service (the database), which is not available"
		s.render(w, r, sess, "drafts", "Drafts and schedule", d)
		return
	}
	start := dayStart(s.d.Now())
	// from= is the first day; week= is its older spelling.
	name, from := "from", r.URL.Query().Get("from")
	if from == "" {
		name, from = "week", r.URL.Query().Get("week")
	}
	if from != "" {
		t, err := time.ParseInLocation("2006-01-02", from, time.Local)
		if err != nil {
			s.fail(w, r, sess, http.StatusBadRequest, apperr.New(apperr.InvalidInput, "%s: %q is not a date (YYYY-MM-DD)", name, from))
			return
		}
		start = dayStart(t)
	}
	end := start.AddDate(0, 0, 7)
	all, err := a.Workflow.Drafts(r.Context(), "")
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	d.From = start.Format("2006-01-02")
	d.Span = start.Format("Mon 2 Jan") + " – " + end.AddDate(0, 0, -1).Format("Mon 2 Jan")
	q := func(t time.Time) string {
		v := url.Values{"from": {t.Format("2006-01-02")}}
		if d.AcctField != "" {
			v.Set("account", d.AcctField)
		}
		return "?" + v.Encode()
	}
	d.PrevQ, d.NextQ, d.Back = q(start.AddDate(0, 0, -7)), q(end), "/drafts"+q(start)
	nowDay := s.d.Now().In(time.Local).Format("2006-01-02")
	for i := range 7 {
		day := start.AddDate(0, 0, i)
		d.Days = append(d.Days, calDay{Date: day.Format("2006-01-02"), Label: day.Format("Mon 2 Jan"), Today: day.Format("2006-01-02") == nowDay})
	}
	for _, dr := range all {
		v := draftOf(dr)
		v.Max = a.postMax()
		switch {
		case dr.Status == "scheduled" && dr.ScheduledFor != "":
			t, err := store.ParseTime(dr.ScheduledFor)
			if err != nil {
				d.Unscheduled = append(d.Unscheduled, v)
				continue
			}
			if t.Before(start) || !t.Before(end) {
				if !t.Before(end) {
					d.Later++
				}
				continue
			}
			i := int(t.In(time.Local).Sub(start).Hours() / 24)
			if i >= 0 && i < 7 {
				d.Days[i].Items = append(d.Days[i].Items, v)
			}
		case dr.Status == "draft":
			d.Unscheduled = append(d.Unscheduled, v)
		case dr.Status == "queued":
			d.Queued = append(d.Queued, v)
		}
	}
	for _, v := range d.Unscheduled {
		if v.Status == "draft" {
			d.Placeable = append(d.Placeable, v)
		}
	}
	if err := s.freeSlots(r, a, start, d.Days); err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	for i := range d.Days {
		sort.Slice(d.Days[i].Items, func(x, y int) bool { return d.Days[i].Items[x].ScheduledFor < d.Days[i].Items[y].ScheduledFor })
	}
	s.render(w, r, sess, "drafts", "Drafts and schedule", d)
}

func draftID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.New(apperr.InvalidInput, "%q is not a draft id", r.PathValue("id"))
	}
	return id, nil
}

// draftAction runs one change to a draft of the request's account and
// returns to the calendar with what happened.
func (s *Server) draftAction(w http.ResponseWriter, r *http.Request, sess *session, verb string, do func(a *Account, id int64) (string, error)) {
	a, err := s.acct(r)
	var id int64
	if err == nil {
		id, err = draftID(r)
	}
	var msg string
	if err == nil {
		if a.Workflow == nil || a.Composer == nil {
			err = apperr.New(apperr.DBError, "drafts cannot be changed here: the workflow service is not available")
		} else {
			msg, err = do(a, id)
		}
	}
	if err != nil {
		s.flash(sess, true, "draft %d not %s: %s", id, verb, apperr.As(err).Message)
	} else {
		s.flash(sess, false, "%s", msg)
	}
	s.back(w, r, s.at(a, "/drafts"))
}

func (s *Server) draftEdit(w http.ResponseWriter, r *http.Request, sess *session) {
	s.draftAction(w, r, sess, "edited", func(a *Account, id int64) (string, error) {
		cur, err := a.Workflow.Draft(r.Context(), id)
		if err != nil {
			return "", err
		}
		body := strings.ReplaceAll(r.PostFormValue("text"), "\r\n", "\n")
		var u workflow.DraftUpdate
		if cur.ContentType == "thread" {
			for _, p := range strings.Split(body, threadSeparator) {
				if p = strings.TrimSpace(p); p != "" {
					u.Tweets = append(u.Tweets, p)
				}
			}
			if len(u.Tweets) == 0 {
				return "", apperr.New(apperr.InvalidInput, "text: a thread needs at least one post")
			}
		} else {
			u.Content = &body
		}
		if _, err := a.Workflow.UpdateDraft(r.Context(), id, u); err != nil {
			return "", err
		}
		return "draft " + strconv.FormatInt(id, 10) + " saved", nil
	})
}

func (s *Server) draftReschedule(w http.ResponseWriter, r *http.Request, sess *session) {
	s.draftAction(w, r, sess, "rescheduled", func(a *Account, id int64) (string, error) {
		var u workflow.DraftUpdate
		raw := r.PostFormValue("when")
		if day := r.PostFormValue("day"); raw == "" && day != "" {
			at := r.PostFormValue("time")
			if at == "" {
				at = "09:00"
			}
			raw = day + "T" + at
		}
		if raw == "" || r.PostFormValue("unschedule") == "1" {
			u.Unschedule = true
		} else {
			t, err := time.ParseInLocation("2006-01-02T15:04", raw, time.Local)
			if err != nil {
				return "", apperr.New(apperr.InvalidInput, "when: %q is not a date and time", raw)
			}
			u.ScheduledFor = &t
		}
		d, err := a.Workflow.UpdateDraft(r.Context(), id, u)
		if err != nil {
			return "", err
		}
		if d.ScheduledFor == "" {
			return "draft " + strconv.FormatInt(id, 10) + " unscheduled", nil
		}
		return "draft " + strconv.FormatInt(id, 10) + " scheduled for " + draftOf(*d).When, nil
	})
}

func (s *Server) draftDelete(w http.ResponseWriter, r *http.Request, sess *session) {
	s.draftAction(w, r, sess, "deleted", func(a *Account, id int64) (string, error) {
		if err := a.Composer.DeleteDraft(r.Context(), id); err != nil {
			return "", err
		}
		return "draft " + strconv.FormatInt(id, 10) + " deleted", nil
	})
}

func (s *Server) draftToApproval(w http.ResponseWriter, r *http.Request, sess *session) {
	s.draftAction(w, r, sess, "sent to approval", func(a *Account, id int64) (string, error) {
		res, err := a.Composer.SendToApproval(r.Context(), id, Caller)
		if err != nil {
			return "", err
		}
		return "draft " + strconv.FormatInt(id, 10) + " queued for approval as #" + strconv.FormatInt(res.ApprovalID, 10), nil
	})
}

// freeSlots adds the week's empty queue slots that are still to come to
// their days.
func (s *Server) freeSlots(r *http.Request, a *Account, start time.Time, days []calDay) error {
	if a.Queue == nil {
		return nil
	}
	p, err := a.Queue()
	if err != nil || len(p.Rules) == 0 {
		// A broken [queue] is reported where it is configured; the
		// calendar still shows what is scheduled.
		return nil
	}
	slots, err := a.Workflow.QueueSlots(r.Context(), p, start, 7)
	if err != nil {
		return err
	}
	now := s.d.Now()
	for _, sl := range slots {
		t, err := time.Parse(time.RFC3339, sl.At)
		if err != nil || sl.Status != "free" || !t.After(now) {
			continue
		}
		lt := t.In(time.Local)
		i := int(lt.Sub(start).Hours() / 24)
		if i >= 0 && i < len(days) && days[i].Date == lt.Format("2006-01-02") {
			days[i].Free = append(days[i].Free, freeSlot{At: t.UTC().Format(time.RFC3339), Time: lt.Format("15:04")})
		}
	}
	return nil
}

// draftToSlot places a draft in the queue slot it was dropped on (or
// chosen for in the slot's form).
func (s *Server) draftToSlot(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	var id int64
	var msg string
	if err == nil {
		id, err = strconv.ParseInt(r.PostFormValue("draft_id"), 10, 64)
		if err != nil || id <= 0 {
			err = apperr.New(apperr.InvalidInput, "draft_id: %q is not a draft id", r.PostFormValue("draft_id"))
		}
	}
	var at time.Time
	if err == nil {
		if at, err = time.Parse(time.RFC3339, r.PostFormValue("slot")); err != nil {
			err = apperr.New(apperr.InvalidInput, "slot: %q is not a time", r.PostFormValue("slot"))
		}
	}
	if err == nil {
		switch {
		case a.Composer == nil || a.Queue == nil:
			err = apperr.New(apperr.DBError, "drafts cannot be placed here: the workflow service is not available")
		default:
			var p queue.Policy
			if p, err = a.Queue(); err == nil {
				var res *workflow.ComposeResult
				if res, err = a.Composer.ScheduleInQueue(r.Context(), p, workflow.QueueRequest{DraftID: id, Slot: &at}); err == nil {
					msg = "draft " + strconv.FormatInt(id, 10) + " placed in the queue slot of " + draftOf(res.Draft).When
				}
			}
		}
	}
	if err != nil {
		s.flash(sess, true, "draft %d not placed: %s", id, apperr.As(err).Message)
	} else {
		s.flash(sess, false, "%s", msg)
	}
	s.back(w, r, s.at(a, "/drafts"))
}
