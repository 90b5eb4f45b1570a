package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// maxPostedElsewhere is how many rows one read of PostedElsewhere's
// window returns, newest first: more posts than a home's accounts make in
// a day, so that a window of a day is one read. A longer window, or a
// busier home, is read on (see readWindow). It is written into the
// query: SQLite plans a statement again at every run when its LIMIT is
// bound.
const maxPostedElsewhere = 5000

// PostedElsewhere lists the posts (posts, replies, quotes, thread parts)
// the home's other accounts made since since, or may have made: a call
// still pending, or whose outcome is unknown and not resolved as not
// having happened. Each comes with its text, read from the audit row: the
// typed call's parameters, or a universal request's canonical body. A row
// whose parameters were too long to keep whole is left out.
func (g *Gateway) PostedElsewhere(ctx context.Context, since time.Time) ([]xrules.Posted, error) {
	return g.windows.read(ctx, since, g.postedElsewhere)
}

// postedRef is a row of the window as a read returns it.
type postedRef struct {
	id     int64
	status string
	posts  []xrules.Posted // read with the row; nil for a kept row
}

// postedElsewhere is one read of the window that begins at since.
func (g *Gateway) postedElsewhere(ctx context.Context, since time.Time) ([]xrules.Posted, error) {
	// Every post a gated call makes runs this query: it is prepared once
	// rather than parsed again per call. What a row holds besides its
	// status never changes: the query returns it only for the rows newer
	// than any this process keeps, whose texts are parsed and normalised
	// once, here.
	known := g.posted.newest()
	window, err := g.readWindow(ctx, since, known)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read the posts of the home's other accounts: %v", err)
	}
	var out []xrules.Posted
	for _, f := range window {
		posts := f.posts
		if posts != nil {
			g.posted.keep(f.id, posts)
		} else if f.id <= known {
			if posts, err = g.posted.of(ctx, f.id, g.postedRow); err != nil {
				return nil, apperr.Wrap(apperr.DBError, err, "read the posts of the home's other accounts: %v", err)
			}
		}
		for _, p := range posts {
			p.Status = f.status
			out = append(out, p)
		}
	}
	g.posted.prune(window)
	return out, nil
}

// readWindow reads every row of the window that begins at since, newest
// first, each once. The first read is the newest rows, all the common
// window holds; when it returns as many as its limit, the rows of the
// time it ended at are read whole (there may be more of them than a read
// returns), and the read goes on from strictly before that time. Each
// step ends at an older time than the last, so the reads end however
// many rows share one time.
func (g *Gateway) readWindow(ctx context.Context, since time.Time, known int64) ([]postedRef, error) {
	q, account := g.qPosted, g.opts.AccountID
	window, err := readPosted(ctx, g.stmts, nil, q.first, ts(since), account, known)
	last := len(window) // what the last read with a limit returned
	var seen map[int64]bool
	for err == nil && last == q.limit {
		// A row's time is not read with it (the driver would make a
		// string of it for every row of every read): the time a read
		// ended at is read by the id of its last row.
		var end string
		if end, err = g.postedAt(ctx, window[len(window)-1].id); err != nil {
			break
		}
		if seen == nil {
			seen = make(map[int64]bool, 2*len(window))
		}
		for _, f := range window[len(window)-last:] {
			seen[f.id] = true
		}
		var ties []postedRef
		if ties, err = readPosted(ctx, g.stmts, nil, q.at, end, account, known); err != nil {
			break
		}
		for _, f := range ties {
			if !seen[f.id] {
				seen[f.id] = true
				window = append(window, f)
			}
		}
		before := len(window)
		window, err = readPosted(ctx, g.stmts, window, q.older, ts(since), account, known, end)
		last = len(window) - before
	}
	return window, err
}

// postedAt is the time of audit row id.
func (g *Gateway) postedAt(ctx context.Context, id int64) (string, error) {
	rows, err := g.stmts.queryRead(ctx, g.qPosted.timeOf, id)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return "", err
		}
		return "", fmt.Errorf("audit row %d is gone", id)
	}
	var at string
	if err := rows.Scan(&at); err != nil {
		return "", err
	}
	return at, rows.Err()
}

// readPosted appends to window the rows one of PostedElsewhere's queries
// returns; args are the query's (the third is the newest id kept).
func readPosted(ctx context.Context, stmts *stmtCache, window []postedRef, query string, args ...any) ([]postedRef, error) {
	known := args[2].(int64)
	rows, err := stmts.queryRead(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			f                                   postedRef
			account, corr, at, request, summary sql.NullString
		)
		if err := rows.Scan(&f.id, &f.status, &account, &corr, &at, &request, &summary); err != nil {
			return nil, err
		}
		if f.id > known {
			f.posts = postsOf(account.String, corr.String, at.String, request.String, summary.String)
		}
		window = append(window, f)
	}
	return window, rows.Err()
}

// postedRow reads the posts of audit row id, one per text it publishes:
// a row older than the newest this process keeps, yet not kept (it
// committed after a newer one, or the rows kept were let go).
func (g *Gateway) postedRow(ctx context.Context, id int64) ([]xrules.Posted, error) {
	rows, err := g.stmts.queryRead(ctx, qPostedRow, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("audit row %d is gone", id)
	}
	var account, corr, at, request, summary string
	if err := rows.Scan(&account, &corr, &at, &request, &summary); err != nil {
		return nil, err
	}
	return postsOf(account, corr, at, request, summary), rows.Err()
}

// postsOf is an audit row's posts, one per text it publishes, each with
// its normal form.
func postsOf(account, corr, at, request, summary string) []xrules.Posted {
	material := summary
	if request != "" {
		material = request
	}
	texts := postedTexts(material)
	out := make([]xrules.Posted, 0, len(texts))
	for _, text := range texts {
		out = append(out, xrules.Posted{Account: account, CorrelationID: corr, At: at, Text: text, Normal: xrules.Normal(text)})
	}
	return out
}

// postedTexts is what an audit row's parameters publish: a typed post's
// text, a thread's posts, or the text of a universal request's body.
func postedTexts(material string) []string {
	var m struct {
		Text   string   `json:"text"`
		Tweets []string `json:"tweets"`
		Body   *struct {
			Text string `json:"text"`
		} `json:"body"`
	}
	if json.Unmarshal([]byte(material), &m) != nil {
		return nil
	}
	var out []string
	for _, t := range append([]string{m.Text}, m.Tweets...) {
		if t != "" {
			out = append(out, t)
		}
	}
	if m.Body != nil && m.Body.Text != "" {
		out = append(out, m.Body.Text)
	}
	return out
}

// postedQueries are PostedElsewhere's queries in a dialect, with the
// limit of a read written into them. Each reads the window from the index
// on created_at, newest first; the account, status and tool are filtered
// on the rows it finds. A row's other columns come only with the rows
// whose id is above ?3. On SQLite the values compared with columns are
// behind a unary plus, so that it plans each statement once whatever
// statistics sample (see Gateway.arg).
type postedQueries struct {
	limit int
	// first reads the newest rows of the window that begins at ?1.
	first string
	// at reads every row of time ?1.
	at string
	// older reads the newest rows of the window that begins at ?1 from
	// strictly before time ?4.
	older string
	// timeOf reads the time of audit row ?.
	timeOf string
}

// postedElsewhereQueries are PostedElsewhere's queries in dialect d, each
// read returning at most limit rows.
func postedElsewhereQueries(d store.Dialect, limit int) postedQueries {
	a, indexed := argIn(d), ""
	if d == store.SQLite {
		indexed = " INDEXED BY idx_mutation_audit_created"
	}
	rows := `SELECT id, status, CASE WHEN id > ?3 THEN account_id END, CASE WHEN id > ?3 THEN correlation_id END,
	CASE WHEN id > ?3 THEN created_at END, CASE WHEN id > ?3 THEN COALESCE(request_json, '') END, CASE WHEN id > ?3 THEN params_summary END
	FROM mutation_audit` + indexed + `
	WHERE `
	filter := ` AND account_id <> ` + a + `2 AND status IN ('pending','success','unknown','interrupted')
	AND COALESCE(resolution, '') <> 'did_not_happen'
	AND COALESCE(equivalent_tool, tool_name) IN ('x_post_tweet', 'x_reply_to_tweet', 'x_quote_tweet', 'x_post_thread')`
	newest := ` ORDER BY created_at DESC LIMIT ` + strconv.Itoa(limit)
	return postedQueries{
		limit:  limit,
		first:  rows + `created_at >= ` + a + `1` + filter + newest,
		at:     rows + `created_at = ` + a + `1` + filter,
		older:  rows + `created_at >= ` + a + `1 AND created_at < ` + a + `4` + filter + newest,
		timeOf: `SELECT created_at FROM mutation_audit WHERE id = ` + a,
	}
}

// qPostedRow reads what PostedElsewhere keeps of an audit row.
const qPostedRow = `SELECT account_id, correlation_id, created_at, COALESCE(request_json, ''), params_summary
	FROM mutation_audit WHERE id = ?`

// postedRows keeps, by audit row id, the posts PostedElsewhere made of the
// rows it read, texts in normal form: an audit row's account, call, time
// and parameters never change, so a call reads and normalises only the
// rows that are new to this process, not every post in the window again.
// It is let go of only after a read (see prune), never while one still
// needs the rows it keeps.
type postedRows struct {
	mu  sync.Mutex
	m   map[int64][]xrules.Posted
	max int64 // the newest id kept
}

// newest is the newest row id kept; 0 when none.
func (r *postedRows) newest() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.max
}

// keep keeps the posts of row id.
func (r *postedRows) keep(id int64, posts []xrules.Posted) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[int64][]xrules.Posted{}
	}
	r.m[id] = posts
	r.max = max(r.max, id)
}

// of returns the posts of row id, read by read when not kept.
func (r *postedRows) of(ctx context.Context, id int64, read func(context.Context, int64) ([]xrules.Posted, error)) ([]xrules.Posted, error) {
	r.mu.Lock()
	posts, ok := r.m[id]
	r.mu.Unlock()
	if ok {
		return posts, nil
	}
	posts, err := read(ctx, id)
	if err != nil {
		return nil, err
	}
	r.keep(id, posts)
	return posts, nil
}

// prune bounds what is kept once a read of the window is done: past twice
// the rows the window holds (rows that left it, or turned to failures),
// only the window's rows are kept, which the next read needs again. The
// bound follows the window, so a window longer than one read is kept
// whole rather than let go of row by row.
func (r *postedRows) prune(window []postedRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) <= max(2*len(window), maxPostedElsewhere) {
		return
	}
	m := make(map[int64][]xrules.Posted, len(window))
	r.max = 0
	for _, f := range window {
		if posts, ok := r.m[f.id]; ok {
			m[f.id] = posts
			r.max = max(r.max, f.id)
		}
	}
	r.m = m
}

// windowReads shares PostedElsewhere's reads of the window among the calls
// of this process that ask at once: every post reads it, and the read costs
// what the window holds. A call that asks while a read runs joins the next
// read, which starts when that one ends: the read a call gets always began
// after it asked, so it sees every post committed before, as a read of its
// own would. The shared read starts at the earliest since of the calls
// that joined it; each call keeps the posts of its own window.
type windowReads struct {
	mu      sync.Mutex
	running bool
	next    *windowRead
}

// windowRead is one read and the calls waiting for it.
type windowRead struct {
	ctx   context.Context
	since time.Time
	done  chan struct{}
	posts []xrules.Posted
	err   error
}

// read returns the posts of the window that begins at since, read by do.
func (w *windowReads) read(ctx context.Context, since time.Time, do func(context.Context, time.Time) ([]xrules.Posted, error)) ([]xrules.Posted, error) {
	w.mu.Lock()
	if !w.running {
		w.running = true
		w.mu.Unlock()
		posts, err := do(ctx, since)
		w.finish(do)
		return posts, err
	}
	r := w.next
	if r == nil {
		// The read outlives a caller that gives up: others wait for it.
		r = &windowRead{ctx: context.WithoutCancel(ctx), since: since, done: make(chan struct{})}
		w.next = r
	} else if since.Before(r.since) {
		r.since = since
	}
	w.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if r.err != nil {
		return nil, r.err
	}
	from := ts(since)
	var out []xrules.Posted
	for _, p := range r.posts {
		if p.At >= from {
			out = append(out, p)
		}
	}
	return out, nil
}

// finish ends the running read: the calls that joined the next one get it
// started, on a goroutine of its own so that the caller that finished
// returns.
func (w *windowReads) finish(do func(context.Context, time.Time) ([]xrules.Posted, error)) {
	w.mu.Lock()
	r := w.next
	w.next = nil
	w.running = r != nil
	w.mu.Unlock()
	if r == nil {
		return
	}
	go func() {
		w.mu.Lock()
		since := r.since
		w.mu.Unlock()
		r.posts, r.err = do(r.ctx, since)
		close(r.done)
		w.finish(do)
	}()
}
