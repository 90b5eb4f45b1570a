package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// maxPostedElsewhere bounds the rows PostedElsewhere reads, newest first:
// far more posts than a home's accounts make in the longest window.
const maxPostedElsewhere = 5000

// PostedElsewhere lists the posts (posts, replies, quotes, thread parts)
// the home's other accounts made since since, or may have made: a call
// still pending, or whose outcome is unknown and not resolved as not
// having happened. Each comes with its text, read from the audit row: the
// typed call's parameters, or a universal request's canonical body. A row
// whose parameters were too long to keep whole is left out.
func (g *Gateway) PostedElsewhere(ctx context.Context, since time.Time) ([]xrules.Posted, error) {
	q := qPostedElsewhere
	if g.opts.DB.Dialect == store.Postgres {
		q = qPostedElsewherePostgres
	}
	// Every post a gated call makes runs this query: it is prepared once
	// rather than parsed again per call.
	rows, err := g.stmts.queryRead(ctx, q, ts(since), g.opts.AccountID, maxPostedElsewhere)
	if err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read the posts of the home's other accounts: %v", err)
	}
	defer rows.Close()
	var out []xrules.Posted
	for rows.Next() {
		var p xrules.Posted
		var request, summary string
		if err := rows.Scan(&p.Account, &p.CorrelationID, &p.Status, &p.At, &request, &summary); err != nil {
			return nil, apperr.Wrap(apperr.DBError, err, "read the posts of the home's other accounts: %v", err)
		}
		material := summary
		if request != "" {
			material = request
		}
		for _, text := range postedTexts(material) {
			p.Text, p.Normal = text, g.normals.of(text)
			out = append(out, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, apperr.Wrap(apperr.DBError, err, "read the posts of the home's other accounts: %v", err)
	}
	return out, nil
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

// qPostedElsewhere reads the window from the index on created_at, newest
// first; the account, status and tool are filtered on the rows it finds.
const qPostedElsewhere = `SELECT account_id, correlation_id, status, created_at, COALESCE(request_json, ''), params_summary
	FROM mutation_audit INDEXED BY idx_mutation_audit_created
	WHERE created_at >= ?1 AND account_id <> ?2 AND status IN ('pending','success','unknown','interrupted')
	AND COALESCE(resolution, '') <> 'did_not_happen'
	AND COALESCE(equivalent_tool, tool_name) IN ('x_post_tweet', 'x_reply_to_tweet', 'x_quote_tweet', 'x_post_thread')
	ORDER BY created_at DESC LIMIT ?3`

const qPostedElsewherePostgres = `SELECT account_id, correlation_id, status, created_at, COALESCE(request_json, ''), params_summary
	FROM mutation_audit
	WHERE created_at >= ?1 AND account_id <> ?2 AND status IN ('pending','success','unknown','interrupted')
	AND COALESCE(resolution, '') <> 'did_not_happen'
	AND COALESCE(equivalent_tool, tool_name) IN ('x_post_tweet', 'x_reply_to_tweet', 'x_quote_tweet', 'x_post_thread')
	ORDER BY created_at DESC LIMIT ?3`

// normals keeps the normal forms of the texts PostedElsewhere read, so
// that a call compares its text with the other accounts' posts without
// normalising each of them again: that cost grew with every post in the
// window, on every post.
type normals struct {
	mu sync.Mutex
	m  map[string]*xrules.NormalForm
}

func (n *normals) of(text string) *xrules.NormalForm {
	n.mu.Lock()
	defer n.mu.Unlock()
	if f, ok := n.m[text]; ok {
		return f
	}
	// Bounded: past twice what one read returns, start again.
	if n.m == nil || len(n.m) >= 2*maxPostedElsewhere {
		n.m = map[string]*xrules.NormalForm{}
	}
	f := xrules.Normal(text)
	n.m[text] = f
	return f
}
