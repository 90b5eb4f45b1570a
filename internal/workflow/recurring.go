package workflow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/queue"
	"github.com/tuitbot/tuitbot/internal/store"
)

// XDuplicateWindow is how long X is taken to remember a post's text when it
// refuses a repeat as duplicate content. X does not publish the window; a
// week is a cautious reading of what it refuses in practice (the emulator
// refuses within a day).
const XDuplicateWindow = 7 * 24 * time.Hour

// RecurringAhead is how far ahead occurrences become scheduled drafts, so
// that they show in the drafts list and the queue before they are due.
const RecurringAhead = 24 * time.Hour

// Recurring rule statuses.
const (
	RecurringActive = "active"
	RecurringPaused = "paused"
	RecurringEnded  = "ended"
)

// SourceRecurring marks the drafts a recurring rule made.
const SourceRecurring = "recurring"

// Every is how often a rule repeats.
type Every struct {
	N    int    `json:"n"`
	Unit string `json:"unit"`
}

// Vary says how a recurring post's text changes between occurrences: the
// variants are used in rotation after the rule's text.
type Vary struct {
	Variants []string `json:"variants,omitempty"`
}

// MaxVariants bounds vary.variants.
const MaxVariants = 50

// RecurringRequest is create_recurring_post's input after parsing.
type RecurringRequest struct {
	DraftID   int64
	Content   string
	Every     Every
	Weekdays  []string
	Time      string
	EndsAfter int
	EndsOn    string
	Vary      *Vary
}

// RecurringPost is one stored rule.
type RecurringPost struct {
	ID        int64    `json:"id"`
	Texts     []string `json:"texts"`
	Every     Every    `json:"every"`
	Weekdays  []string `json:"weekdays,omitempty"`
	Time      string   `json:"time"`
	StartsOn  string   `json:"starts_on"`
	EndsAfter int      `json:"ends_after,omitempty"`
	EndsOn    string   `json:"ends_on,omitempty"`
	Status    string   `json:"status"`
	// Created counts the occurrences made into scheduled drafts so far.
	Created int `json:"occurrences_created"`
	// NextAt is the next occurrence not yet made, in the account's
	// timezone; empty when none is left.
	NextAt    string `json:"next_at,omitempty"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	lastAt    time.Time
}

func (p *RecurringPost) recurrence() (queue.Recurrence, error) {
	r := queue.Recurrence{N: p.Every.N, Unit: p.Every.Unit}
	var err error
	if r.Anchor, err = queue.ParseDate(p.StartsOn); err != nil {
		return r, fmt.Errorf("starts_on: %w", err)
	}
	if p.EndsOn != "" {
		if r.EndsOn, err = queue.ParseDate(p.EndsOn); err != nil {
			return r, fmt.Errorf("ends_on: %w", err)
		}
	}
	if r.Hour, r.Minute, err = queue.ParseClock(p.Time); err != nil {
		return r, fmt.Errorf("time: %w", err)
	}
	for _, d := range p.Weekdays {
		wd, ok := queue.ParseWeekday(d)
		if !ok {
			return r, fmt.Errorf("weekdays: %q is not a day", d)
		}
		r.Days[wd] = true
	}
	return r, nil
}

// checkRecurring validates a rule's fields, naming the first bad one, and
// refuses a rule that would post one text again within X's duplicate
// window. now is when its first occurrence may come.
func checkRecurring(p *RecurringPost, loc *time.Location, now time.Time) (queue.Recurrence, error) {
	var zero queue.Recurrence
	switch p.Every.Unit {
	case queue.UnitDay:
		if p.Every.N < 1 || p.Every.N > 365 {
			return zero, apperr.New(apperr.InvalidInput, "every.n: must be 1-365 days (got %d)", p.Every.N)
		}
	case queue.UnitWeek:
		if p.Every.N < 1 || p.Every.N > 52 {
			return zero, apperr.New(apperr.InvalidInput, "every.n: must be 1-52 weeks (got %d)", p.Every.N)
		}
	case "":
		return zero, apperr.New(apperr.InvalidInput, "every.unit: required; allowed values: day, week")
	default:
		return zero, apperr.New(apperr.InvalidInput, "every.unit: %q is not allowed; allowed values: day, week", p.Every.Unit)
	}
	if _, _, err := queue.ParseClock(p.Time); err != nil {
		if p.Time == "" {
			return zero, apperr.New(apperr.InvalidInput, "time: required, an HH:MM time in schedule.timezone")
		}
		return zero, apperr.New(apperr.InvalidInput, "time: %v", err)
	}
	seen := map[time.Weekday]bool{}
	for i, d := range p.Weekdays {
		wd, ok := queue.ParseWeekday(d)
		if !ok {
			return zero, apperr.New(apperr.InvalidInput, "weekdays[%d]: %q is not a day; days: mon, tue, wed, thu, fri, sat, sun", i, d)
		}
		if seen[wd] {
			return zero, apperr.New(apperr.InvalidInput, "weekdays[%d]: %q is given twice", i, d)
		}
		seen[wd] = true
		p.Weekdays[i] = queue.WeekdayName(wd)
	}
	if p.EndsAfter < 0 || p.EndsAfter > 10000 {
		return zero, apperr.New(apperr.InvalidInput, "ends_after: must be 1-10000 occurrences (got %d)", p.EndsAfter)
	}
	if p.EndsOn != "" {
		d, err := queue.ParseDate(p.EndsOn)
		if err != nil {
			return zero, apperr.New(apperr.InvalidInput, "ends_on: %q is not a YYYY-MM-DD date", p.EndsOn)
		}
		if d.Before(queue.Date(now, loc)) {
			return zero, apperr.New(apperr.InvalidInput, "ends_on: %s is in the past", p.EndsOn)
		}
	}
	r, err := p.recurrence()
	if err != nil {
		return zero, apperr.Wrap(apperr.InvalidInput, err, "%v", err)
	}
	first := r.Between(loc, now, now.AddDate(2, 0, 0), 1)
	if len(first) == 0 {
		return zero, apperr.New(apperr.ValidationError, "ends_on: %s leaves the rule no occurrence", p.EndsOn)
	}
	k := len(p.Texts)
	if gap, ok := r.ShortestRepeat(loc, now, k, p.EndsAfter); ok && gap < XDuplicateWindow {
		field, what := "vary", "add vary.variants, texts used in rotation,"
		if k > 1 {
			field, what = "vary.variants", "add more variants"
		}
		e := apperr.New(apperr.DuplicateRisk, "%s: the same text would be posted again %s later, and X refuses a repeat within %s as duplicate content; %s or post less often",
			field, roundGap(gap), roundGap(XDuplicateWindow), what)
		e.Hints = []apperr.Hint{{Do: "give vary.variants: different texts posted in turn"}, {Do: "repeat less often than once a week per text"}}
		return zero, e.With("repeat_after_hours", int(gap.Hours())).With("duplicate_window_hours", int(XDuplicateWindow.Hours()))
	}
	return r, nil
}

func roundGap(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) < time.Hour {
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	}
	return fmt.Sprintf("%d hours", int(d.Hours()))
}

// textsOf gathers the texts a rule rotates through: its text, then vary's
// variants, each a valid single post and none a repeat of another.
func (s *Service) textsOf(ctx context.Context, r RecurringRequest) ([]string, error) {
	var text string
	switch {
	case r.DraftID != 0 && r.Content != "":
		return nil, apperr.New(apperr.InvalidInput, "draft_id, content: give a draft_id or content, not both")
	case r.DraftID != 0:
		d, err := s.Draft(ctx, r.DraftID)
		if err != nil {
			return nil, err
		}
		if d.ContentType != "tweet" {
			return nil, apperr.New(apperr.ValidationError, "draft_id: draft %d is a %s; a recurring post is a single post", r.DraftID, d.ContentType)
		}
		text = d.Text
	case r.Content != "":
		if err := actions.CheckText("content", r.Content, -1, false); err != nil {
			return nil, err
		}
		text = r.Content
	default:
		return nil, apperr.New(apperr.InvalidInput, "draft_id: required (or pass content)")
	}
	texts := []string{text}
	if r.Vary != nil {
		if len(r.Vary.Variants) == 0 {
			return nil, apperr.New(apperr.InvalidInput, "vary.variants: required with vary: the texts used in rotation after the rule's text")
		}
		if len(r.Vary.Variants) > MaxVariants {
			return nil, apperr.New(apperr.InvalidInput, "vary.variants: at most %d (got %d)", MaxVariants, len(r.Vary.Variants))
		}
		for i, v := range r.Vary.Variants {
			if err := actions.CheckText("vary.variants", v, i, false); err != nil {
				if ae := apperr.As(err); ae != nil && ae.Code == apperr.InvalidInput {
					ae.Message = fmt.Sprintf("vary.variants[%d]: must not be empty", i)
				}
				return nil, err
			}
			for j, t := range texts {
				if sameText(t, v) {
					other := "the rule's text"
					if j > 0 {
						other = fmt.Sprintf("vary.variants[%d]", j-1)
					}
					return nil, apperr.New(apperr.InvalidInput, "vary.variants[%d]: the same text as %s; X would refuse it as duplicate content", i, other)
				}
			}
			texts = append(texts, v)
		}
	}
	return texts, nil
}

// sameText is X's duplicate test as far as it is known: case and spacing
// do not make a text new.
func sameText(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// CreateRecurring stores a rule. It reaches nothing: the publisher makes
// each occurrence a scheduled draft shortly before it is due, which then
// goes through the gateway like any scheduled draft.
func (s *Service) CreateRecurring(ctx context.Context, loc *time.Location, r RecurringRequest) (*RecurringPost, error) {
	texts, err := s.textsOf(ctx, r)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	p := &RecurringPost{Texts: texts, Every: r.Every, Weekdays: append([]string(nil), r.Weekdays...), Time: r.Time,
		StartsOn: queue.Date(now, loc).Format(time.DateOnly), EndsAfter: r.EndsAfter, EndsOn: r.EndsOn, Status: RecurringActive}
	if _, err := checkRecurring(p, loc, now); err != nil {
		return nil, err
	}
	body, _ := json.Marshal(p.Texts)
	ts := s.ts(now)
	p.CreatedAt, p.UpdatedAt = ts, ts
	err = s.DB.QueryRowContext(ctx, `INSERT INTO recurring_posts (account_id, texts, every_n, every_unit, weekdays, at_time, starts_on, ends_after, ends_on, status, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, s.account(), string(body), p.Every.N, p.Every.Unit, strings.Join(p.Weekdays, ","),
		p.Time, p.StartsOn, p.EndsAfter, p.EndsOn, p.Status, ts, ts).Scan(&p.ID)
	if err != nil {
		return nil, dbErr(err, "store recurring post")
	}
	s.fillNext(p, loc)
	return p, nil
}

const recurringCols = `id, texts, every_n, every_unit, weekdays, at_time, starts_on, ends_after, ends_on, status, created_count, last_at, created_at, updated_at`

func scanRecurring(sc interface{ Scan(...any) error }) (*RecurringPost, error) {
	var p RecurringPost
	var texts, weekdays string
	var last sql.NullString
	if err := sc.Scan(&p.ID, &texts, &p.Every.N, &p.Every.Unit, &weekdays, &p.Time, &p.StartsOn, &p.EndsAfter, &p.EndsOn, &p.Status, &p.Created, &last, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(texts), &p.Texts); err != nil {
		return nil, fmt.Errorf("recurring post %d: texts: %w", p.ID, err)
	}
	if weekdays != "" {
		p.Weekdays = strings.Split(weekdays, ",")
	}
	if last.Valid {
		t, err := store.ParseTime(last.String)
		if err != nil {
			return nil, err
		}
		p.lastAt = t
	}
	return &p, nil
}

// fillNext sets NextAt: the next occurrence not yet made.
func (s *Service) fillNext(p *RecurringPost, loc *time.Location) {
	p.NextAt = ""
	if p.Status != RecurringActive || (p.EndsAfter > 0 && p.Created >= p.EndsAfter) {
		return
	}
	r, err := p.recurrence()
	if err != nil {
		return
	}
	after := s.Now()
	if p.lastAt.After(after) {
		after = p.lastAt
	}
	if next := r.Between(loc, after, after.AddDate(2, 0, 0), 1); len(next) == 1 {
		p.NextAt = next[0].In(loc).Format(time.RFC3339)
	}
}

// RecurringPosts lists the account's rules, oldest first.
func (s *Service) RecurringPosts(ctx context.Context, loc *time.Location) ([]*RecurringPost, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+recurringCols+` FROM recurring_posts WHERE account_id = ? ORDER BY id`, s.account())
	if err != nil {
		return nil, dbErr(err, "read recurring posts")
	}
	defer rows.Close()
	out := []*RecurringPost{}
	for rows.Next() {
		p, err := scanRecurring(rows)
		if err != nil {
			return nil, dbErr(err, "read recurring posts")
		}
		s.fillNext(p, loc)
		out = append(out, p)
	}
	return out, dbErr(rows.Err(), "read recurring posts")
}

func (s *Service) recurringTx(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id int64) (*RecurringPost, error) {
	p, err := scanRecurring(q.QueryRowContext(ctx, `SELECT `+recurringCols+` FROM recurring_posts WHERE id = ? AND account_id = ?`, id, s.account()))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.New(apperr.NotFound, "id: no recurring post %d for account %s", id, s.account())
	}
	return p, dbErr(err, "read recurring post")
}

// Recurring updates for UpdateRecurring.
const (
	RecurringPause  = "pause"
	RecurringResume = "resume"
)

// RecurringUpdate is update_recurring_post's input after parsing: pause or
// resume, and any field to change (nil or empty keeps it).
type RecurringUpdate struct {
	Action    string
	Every     *Every
	Weekdays  []string
	Time      string
	EndsAfter *int
	EndsOn    *string
	Vary      *Vary
	Content   string
}

// UpdateRecurring pauses, resumes or changes a rule. Pausing withdraws the
// occurrences already made but not yet published, so a paused rule posts
// nothing; resuming starts from the next occurrence after now (missed ones
// are not made up). A changed rule is checked again as a new one.
func (s *Service) UpdateRecurring(ctx context.Context, loc *time.Location, id int64, u RecurringUpdate) (*RecurringPost, error) {
	switch u.Action {
	case "", RecurringPause, RecurringResume:
	default:
		return nil, apperr.New(apperr.InvalidInput, "action: %q is not allowed; allowed values: pause, resume", u.Action)
	}
	changes := u.Every != nil || u.Weekdays != nil || u.Time != "" || u.EndsAfter != nil || u.EndsOn != nil || u.Vary != nil || u.Content != ""
	if u.Action == "" && !changes {
		return nil, apperr.New(apperr.InvalidInput, "action: required (pause or resume) unless a field changes")
	}
	var out *RecurringPost
	err := s.DB.LockedTx(ctx, []string{store.AccountScope(s.account())}, func(tx *sql.Tx) error {
		p, err := s.recurringTx(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.Now()
		if p.Status == RecurringEnded && u.Action == RecurringResume && !changes {
			return apperr.New(apperr.ValidationError, "action: recurring post %d has ended (ends_after or ends_on); change them to resume it", id)
		}
		switch u.Action {
		case RecurringPause:
			p.Status = RecurringPaused
		case RecurringResume:
			p.Status = RecurringActive
		}
		if changes {
			if u.Every != nil {
				p.Every = *u.Every
			}
			if u.Weekdays != nil {
				p.Weekdays = u.Weekdays
			}
			if u.Time != "" {
				p.Time = u.Time
			}
			if u.EndsAfter != nil {
				p.EndsAfter = *u.EndsAfter
			}
			if u.EndsOn != nil {
				p.EndsOn = *u.EndsOn
			}
			if u.Content != "" || u.Vary != nil {
				req := RecurringRequest{Content: u.Content, Vary: u.Vary}
				if req.Content == "" {
					req.Content = p.Texts[0]
				}
				if req.Vary == nil && len(p.Texts) > 1 {
					req.Vary = &Vary{Variants: p.Texts[1:]}
				}
				if p.Texts, err = s.textsOf(ctx, req); err != nil {
					return err
				}
			}
			if p.Status == RecurringEnded {
				p.Status = RecurringActive
			}
			if p.Status == RecurringActive && p.EndsAfter > 0 && p.Created >= p.EndsAfter {
				return apperr.New(apperr.ValidationError, "ends_after: %d occurrences were already made; give a larger number", p.Created)
			}
			if _, err := checkRecurring(p, loc, now); err != nil {
				return err
			}
		}
		// What was made ahead follows the rule as it is now: a pause or a
		// change withdraws it, and the next run makes it again if due.
		withdrawn, err := tx.ExecContext(ctx, `DELETE FROM drafts WHERE account_id = ? AND recurring_id = ? AND status = ?`, s.account(), id, DraftScheduled)
		if err != nil {
			return dbErr(err, "withdraw occurrences")
		}
		n, _ := withdrawn.RowsAffected()
		p.Created -= int(n)
		// Occurrences are made again from now: what was withdrawn, and
		// nothing of the time the rule was paused. Only occurrences made
		// ahead that wait for approval keep their place.
		if n > 0 || !p.lastAt.After(now) {
			p.lastAt = now
		}
		body, _ := json.Marshal(p.Texts)
		p.UpdatedAt = s.ts(now)
		_, err = tx.ExecContext(ctx, `UPDATE recurring_posts SET texts = ?, every_n = ?, every_unit = ?, weekdays = ?, at_time = ?, ends_after = ?, ends_on = ?,
			status = ?, created_count = ?, last_at = ?, updated_at = ? WHERE id = ? AND account_id = ?`,
			string(body), p.Every.N, p.Every.Unit, strings.Join(p.Weekdays, ","), p.Time, p.EndsAfter, p.EndsOn, p.Status, p.Created, nullTime(p.lastAt), p.UpdatedAt, id, s.account())
		out = p
		return dbErr(err, "update recurring post")
	})
	if err != nil {
		return nil, err
	}
	s.fillNext(out, loc)
	return out, nil
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return store.FormatTime(t)
}

// DeleteRecurring removes a rule and the occurrences it made that are not
// published yet; what it posted stays in the drafts history.
func (s *Service) DeleteRecurring(ctx context.Context, id int64) (withdrawn int64, err error) {
	err = s.DB.LockedTx(ctx, []string{store.AccountScope(s.account())}, func(tx *sql.Tx) error {
		if _, err := s.recurringTx(ctx, tx, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM drafts WHERE account_id = ? AND recurring_id = ? AND status = ?`, s.account(), id, DraftScheduled)
		if err != nil {
			return dbErr(err, "withdraw occurrences")
		}
		withdrawn, _ = res.RowsAffected()
		_, err = tx.ExecContext(ctx, `DELETE FROM recurring_posts WHERE id = ? AND account_id = ?`, id, s.account())
		return dbErr(err, "delete recurring post")
	})
	return withdrawn, err
}

// MakeOccurrences turns the occurrences of every active rule due within
// RecurringAhead into scheduled drafts, and returns how many it made. Each
// rule is advanced under the account's write lock; the unique index on
// (rule, occurrence) makes a second insert of one occurrence a no-op, so
// two processes never make one twice.
func (s *Service) MakeOccurrences(ctx context.Context, loc *time.Location) (int, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT id FROM recurring_posts WHERE account_id = ? AND status = ? ORDER BY id`, s.account(), RecurringActive)
	if err != nil {
		return 0, dbErr(err, "read recurring posts")
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, dbErr(err, "read recurring posts")
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, dbErr(err, "read recurring posts")
	}
	made := 0
	for _, id := range ids {
		n, err := s.makeOccurrences(ctx, loc, id)
		if err != nil {
			return made, err
		}
		made += n
	}
	return made, nil
}

func (s *Service) makeOccurrences(ctx context.Context, loc *time.Location, id int64) (int, error) {
	made := 0
	err := s.DB.LockedTx(ctx, []string{store.AccountScope(s.account())}, func(tx *sql.Tx) error {
		p, err := s.recurringTx(ctx, tx, id)
		if err != nil || p.Status != RecurringActive {
			return err
		}
		r, err := p.recurrence()
		if err != nil {
			return dbErr(err, "read recurring post")
		}
		now := s.Now()
		// Occurrences are made from the last one made, or from the rule's
		// creation: one whose time passed while nothing ran was announced
		// (next_at) and is made too, late; RescheduleMissed then decides
		// whether it still posts or moves.
		from := p.lastAt
		if from.IsZero() {
			if from, err = store.ParseTime(p.CreatedAt); err != nil {
				return dbErr(err, "read recurring post")
			}
		}
		after := maxTime(now, p.lastAt)
		left := 0
		if p.EndsAfter > 0 {
			if left = p.EndsAfter - p.Created; left <= 0 {
				return s.endRecurring(ctx, tx, p)
			}
		}
		ts := s.ts(now)
		for _, at := range r.Between(loc, from, now.Add(RecurringAhead), left) {
			text := p.Texts[p.Created%len(p.Texts)]
			res, err := tx.ExecContext(ctx, `INSERT INTO drafts (account_id, content_type, content, source, status, scheduled_for, recurring_id, occurrence_at, created_at, updated_at)
				VALUES (?, 'tweet', ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, s.account(), text, SourceRecurring, DraftScheduled, s.ts(at), p.ID, s.ts(at), ts, ts)
			if err != nil {
				return dbErr(err, "make occurrence")
			}
			if n, _ := res.RowsAffected(); n == 1 {
				p.Created++
				made++
			}
			p.lastAt = at
		}
		if p.EndsAfter > 0 && p.Created >= p.EndsAfter {
			p.Status = RecurringEnded
		} else if len(r.Between(loc, maxTime(after, p.lastAt), maxTime(after, p.lastAt).AddDate(2, 0, 0), 1)) == 0 {
			p.Status = RecurringEnded
		}
		_, err = tx.ExecContext(ctx, `UPDATE recurring_posts SET created_count = ?, last_at = ?, status = ?, updated_at = ? WHERE id = ?`,
			p.Created, nullTime(p.lastAt), p.Status, ts, p.ID)
		return dbErr(err, "advance recurring post")
	})
	return made, err
}

// nextOccurrence is rule id's occurrence after the one at occurrence (a
// stored time); zero when the rule is gone, not active, ends or cannot be
// read.
func (s *Service) nextOccurrence(ctx context.Context, tx *sql.Tx, loc *time.Location, id int64, occurrence string) (time.Time, error) {
	at, err := store.ParseTime(occurrence)
	if err != nil {
		return time.Time{}, nil
	}
	p, err := s.recurringTx(ctx, tx, id)
	if apperr.CodeOf(err) == apperr.NotFound {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	r, err := p.recurrence()
	if err != nil || p.Status != RecurringActive {
		return time.Time{}, nil
	}
	if next := r.Between(loc, at, at.AddDate(2, 0, 0), 1); len(next) == 1 {
		return next[0], nil
	}
	return time.Time{}, nil
}

func (s *Service) endRecurring(ctx context.Context, tx *sql.Tx, p *RecurringPost) error {
	_, err := tx.ExecContext(ctx, `UPDATE recurring_posts SET status = ?, updated_at = ? WHERE id = ?`, RecurringEnded, s.ts(s.Now()), p.ID)
	return dbErr(err, "end recurring post")
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
