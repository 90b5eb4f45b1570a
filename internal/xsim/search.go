package xsim

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Recent search query language (the subset agents use): bare keywords
// (implicit AND), "quoted phrases", OR, - negation, parentheses, and the
// operators from:, to:, @handle, #hashtag, is:reply, is:retweet, is:quote,
// is:verified, has:links, has:media, has:mentions, has:hashtags, lang:,
// conversation_id:, url:, and min_likes:, min_replies:, min_reposts: (a
// whole number, 0 or more). As on X, AND binds tighter than OR, and a query
// must contain at least one positive term.
//
// Since X moved search to a new index (changelog 2026-05-04), keyword
// search no longer returns reposts: a repost's text is not in the keyword
// index, so keywords, phrases, hashtags and cashtags never match one, while
// operators alone (from:x is:retweet) still find it. The same entry added
// the min_ operators.

// maxQueryLen is X's recent-search query length limit.
const maxQueryLen = 512

// maxQueryDepth bounds parenthesis nesting so a hostile query cannot exhaust
// the stack.
const maxQueryDepth = 32

// queryError reports why a search query was refused.
type queryError struct {
	Pos int // byte offset in the query
	Msg string
}

func (e *queryError) Error() string { return fmt.Sprintf("query: %s (at position %d)", e.Msg, e.Pos) }

type tokKind int

const (
	tokWord tokKind = iota
	tokPhrase
	tokLParen
	tokRParen
	tokOr
	tokNeg
)

type qtoken struct {
	kind tokKind
	text string
	pos  int
}

func lexQuery(q string) ([]qtoken, error) {
	var toks []qtoken
	i := 0
	for i < len(q) {
		r, size := utf8.DecodeRuneInString(q[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return nil, &queryError{Pos: i, Msg: "invalid UTF-8"}
		case unicode.IsSpace(r):
			i += size
		case r == '(':
			toks = append(toks, qtoken{kind: tokLParen, pos: i})
			i++
		case r == ')':
			toks = append(toks, qtoken{kind: tokRParen, pos: i})
			i++
		case r == '-':
			next := i + 1
			if next >= len(q) {
				return nil, &queryError{Pos: i, Msg: "negation '-' must be followed by a term"}
			}
			nr, _ := utf8.DecodeRuneInString(q[next:])
			if unicode.IsSpace(nr) || nr == ')' {
				return nil, &queryError{Pos: i, Msg: "negation '-' must be followed by a term"}
			}
			toks = append(toks, qtoken{kind: tokNeg, pos: i})
			i++
		case r == '"':
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				return nil, &queryError{Pos: i, Msg: "unterminated quoted phrase"}
			}
			toks = append(toks, qtoken{kind: tokPhrase, text: q[i+1 : i+1+end], pos: i})
			i += end + 2
		default:
			start := i
			for i < len(q) {
				r, size := utf8.DecodeRuneInString(q[i:])
				if unicode.IsSpace(r) || r == '(' || r == ')' || r == '"' {
					break
				}
				if r == utf8.RuneError && size == 1 {
					return nil, &queryError{Pos: i, Msg: "invalid UTF-8"}
				}
				i += size
			}
			w := q[start:i]
			if w == "OR" {
				toks = append(toks, qtoken{kind: tokOr, pos: start})
			} else {
				toks = append(toks, qtoken{kind: tokWord, text: w, pos: start})
			}
		}
	}
	return toks, nil
}

// qnode is a parsed query; match reports whether a post satisfies it.
type qnode interface {
	match(m *matchCtx) bool
	positive() bool
	String() string
}

type andNode []qnode
type orNode []qnode
type notNode struct{ n qnode }
type termNode struct{ words []string } // keyword or phrase: contiguous words
type opNode struct {
	op, value string
	n         int64 // the min_ operators' threshold
}

func (a andNode) match(m *matchCtx) bool {
	for _, n := range a {
		if !n.match(m) {
			return false
		}
	}
	return true
}
func (a andNode) positive() bool {
	for _, n := range a {
		if n.positive() {
			return true
		}
	}
	return false
}
func (a andNode) String() string { return "AND(" + joinNodes(a) + ")" }

func (o orNode) match(m *matchCtx) bool {
	for _, n := range o {
		if n.match(m) {
			return true
		}
	}
	return false
}
func (o orNode) positive() bool {
	for _, n := range o {
		if !n.positive() {
			return false
		}
	}
	return true
}
func (o orNode) String() string { return "OR(" + joinNodes(o) + ")" }

func (n notNode) match(m *matchCtx) bool { return !n.n.match(m) }
func (n notNode) positive() bool         { return false }
func (n notNode) String() string         { return "NOT(" + n.n.String() + ")" }

func (t termNode) match(m *matchCtx) bool { return m.t.RetweetOf == "" && m.hasPhrase(t.words) }
func (t termNode) positive() bool         { return true }
func (t termNode) String() string         { return fmt.Sprintf("%q", strings.Join(t.words, " ")) }

func (o opNode) positive() bool { return true }
func (o opNode) String() string { return o.op + ":" + o.value }
func (o opNode) match(m *matchCtx) bool {
	switch o.op {
	case "from":
		return m.author == o.value || m.authorID == o.value
	case "to":
		return m.replyTo == o.value || m.replyToID == o.value
	case "is":
		switch o.value {
		case "reply":
			return m.t.InReplyToTweetID != ""
		case "retweet":
			return m.t.RetweetOf != ""
		case "quote":
			return m.t.QuoteOf != ""
		case "verified":
			return m.verified
		}
	case "has":
		switch o.value {
		case "links":
			return hasLink(m.t.Text)
		case "media", "images", "videos":
			return len(m.t.MediaKeys) > 0
		case "mentions":
			return len(mentionsOf(m.t.Text)) > 0
		case "hashtags":
			for _, w := range m.words {
				if strings.HasPrefix(w, "#") {
					return true
				}
			}
			return false
		}
	case "lang":
		return strings.EqualFold(m.t.Lang, o.value)
	case "conversation_id":
		return m.t.ConversationID == o.value
	case "url":
		for _, w := range m.words {
			if isURLWord(w) && strings.Contains(w, o.value) {
				return true
			}
		}
		return false
	case "min_likes":
		return m.metric("like_count") >= o.n
	case "min_replies":
		return m.metric("reply_count") >= o.n
	case "min_reposts":
		return m.metric("retweet_count") >= o.n
	}
	return false
}

func joinNodes(ns []qnode) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.String()
	}
	return strings.Join(parts, " ")
}

// operatorValues lists the accepted operators; nil means any non-empty value.
func operatorValues(op string) ([]string, bool) {
	switch op {
	case "from", "to", "lang", "conversation_id", "url", "min_likes", "min_replies", "min_reposts":
		return nil, true
	case "is":
		return []string{"reply", "retweet", "quote", "verified"}, true
	case "has":
		return []string{"links", "media", "images", "videos", "mentions", "hashtags"}, true
	}
	return nil, false
}

type qparser struct {
	toks  []qtoken
	i     int
	depth int
	q     string
}

// parseQuery parses a recent-search query.
func parseQuery(q string) (qnode, error) {
	if strings.TrimSpace(q) == "" {
		return nil, &queryError{Pos: 0, Msg: "query is empty"}
	}
	if len(q) > maxQueryLen {
		return nil, &queryError{Pos: maxQueryLen, Msg: fmt.Sprintf("query is longer than %d characters", maxQueryLen)}
	}
	toks, err := lexQuery(q)
	if err != nil {
		return nil, err
	}
	p := &qparser{toks: toks, q: q}
	n, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		t := p.toks[p.i]
		if t.kind == tokRParen {
			return nil, &queryError{Pos: t.pos, Msg: "unbalanced ')'"}
		}
		return nil, &queryError{Pos: t.pos, Msg: "unexpected token"}
	}
	if !n.positive() {
		return nil, &queryError{Pos: 0, Msg: "query must contain at least one positive (non-negated) term"}
	}
	return n, nil
}

func (p *qparser) peek() (qtoken, bool) {
	if p.i >= len(p.toks) {
		return qtoken{}, false
	}
	return p.toks[p.i], true
}

func (p *qparser) parseOr() (qnode, error) {
	first, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	alts := []qnode{first}
	for {
		t, ok := p.peek()
		if !ok || t.kind != tokOr {
			break
		}
		p.i++
		next, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		alts = append(alts, next)
	}
	if len(alts) == 1 {
		return first, nil
	}
	return orNode(alts), nil
}

func (p *qparser) parseAnd() (qnode, error) {
	var terms []qnode
	for {
		t, ok := p.peek()
		if !ok || t.kind == tokOr || t.kind == tokRParen {
			break
		}
		n, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		terms = append(terms, n)
	}
	if len(terms) == 0 {
		pos := len(p.q)
		if t, ok := p.peek(); ok {
			pos = t.pos
		}
		return nil, &queryError{Pos: pos, Msg: "expected a term"}
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return andNode(terms), nil
}

func (p *qparser) parseUnary() (qnode, error) {
	t, _ := p.peek()
	if t.kind == tokNeg {
		p.i++
		if p.depth++; p.depth > maxQueryDepth {
			return nil, &queryError{Pos: t.pos, Msg: "query is nested too deeply"}
		}
		defer func() { p.depth-- }()
		n, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return notNode{n}, nil
	}
	return p.parsePrimary()
}

func (p *qparser) parsePrimary() (qnode, error) {
	t, ok := p.peek()
	if !ok {
		return nil, &queryError{Pos: len(p.q), Msg: "expected a term"}
	}
	switch t.kind {
	case tokLParen:
		p.i++
		if p.depth++; p.depth > maxQueryDepth {
			return nil, &queryError{Pos: t.pos, Msg: "query is nested too deeply"}
		}
		n, err := p.parseOr()
		p.depth--
		if err != nil {
			return nil, err
		}
		c, ok := p.peek()
		if !ok || c.kind != tokRParen {
			return nil, &queryError{Pos: t.pos, Msg: "unbalanced '('"}
		}
		p.i++
		return n, nil
	case tokPhrase:
		p.i++
		words := wordsOf(t.text, false)
		if len(words) == 0 {
			return nil, &queryError{Pos: t.pos, Msg: "quoted phrase is empty"}
		}
		return termNode{words: words}, nil
	case tokWord:
		p.i++
		return p.word(t)
	default:
		return nil, &queryError{Pos: t.pos, Msg: "expected a term"}
	}
}

func (p *qparser) word(t qtoken) (qnode, error) {
	w := t.text
	if i := strings.IndexByte(w, ':'); i > 0 && !isURLWord(w) {
		op := strings.ToLower(w[:i])
		if isOperatorName(op) {
			values, known := operatorValues(op)
			if !known {
				return nil, &queryError{Pos: t.pos, Msg: fmt.Sprintf("Reference to invalid operator '%s'", op)}
			}
			val := w[i+1:]
			if val == "" {
				return nil, &queryError{Pos: t.pos, Msg: fmt.Sprintf("operator '%s:' needs a value", op)}
			}
			switch op {
			case "from", "to":
				val = strings.ToLower(strings.TrimPrefix(val, "@"))
				if !validUsername(val) && !isNumericID(val) {
					return nil, &queryError{Pos: t.pos, Msg: fmt.Sprintf("invalid value '%s' for operator '%s:'", w[i+1:], op)}
				}
			case "url":
				val = strings.ToLower(val)
			case "min_likes", "min_replies", "min_reposts":
				// Digits only: no sign, fraction or exponent, and no more
				// than a count can hold.
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil || strings.TrimLeft(val, "0123456789") != "" {
					return nil, &queryError{Pos: t.pos, Msg: fmt.Sprintf("invalid value '%s' for operator '%s:': it must be a whole number, 0 or more", val, op)}
				}
				return opNode{op: op, value: val, n: n}, nil
			default:
				val = strings.ToLower(val)
				if values != nil && !containsStr(values, val) {
					return nil, &queryError{Pos: t.pos, Msg: fmt.Sprintf("invalid value '%s' for operator '%s:'", w[i+1:], op)}
				}
			}
			return opNode{op: op, value: val}, nil
		}
	}
	words := wordsOf(w, false)
	if len(words) == 0 {
		// Pure punctuation carries no searchable content; X ignores it, but
		// an empty term would match everything, so refuse it.
		return nil, &queryError{Pos: t.pos, Msg: fmt.Sprintf("term '%s' has no searchable characters", w)}
	}
	return termNode{words: words}, nil
}

func isOperatorName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z') {
			return false
		}
	}
	return true
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// matchCtx is a post prepared for matching.
type matchCtx struct {
	st        *state
	t         *Tweet
	words     []string
	author    string
	authorID  string
	replyTo   string
	replyToID string
	verified  bool
}

func (s *state) matchCtxFor(t *Tweet) *matchCtx {
	m := &matchCtx{st: s, t: t, words: wordsOf(t.Text, false), authorID: t.AuthorID, replyToID: t.InReplyToUserID}
	if u := s.users[t.AuthorID]; u != nil {
		m.author = lower(u.Username)
		m.verified = u.Verified
	}
	if u := s.users[t.InReplyToUserID]; u != nil {
		m.replyTo = lower(u.Username)
	}
	return m
}

// metric is one of the post's public metrics, as its answer reports it.
func (m *matchCtx) metric(name string) int64 { return m.st.tweetMetrics(m.t)[name] }

func wordEq(tok, q string) bool {
	if tok == q {
		return true
	}
	// A bare keyword matches the hashtag or cashtag of the same word.
	return len(tok) > 1 && (tok[0] == '#' || tok[0] == '$') && q[0] != '#' && q[0] != '$' && tok[1:] == q
}

func (m *matchCtx) hasPhrase(words []string) bool {
	if len(words) == 0 {
		return false
	}
outer:
	for i := 0; i+len(words) <= len(m.words); i++ {
		for j, w := range words {
			if !wordEq(m.words[i+j], w) {
				continue outer
			}
		}
		return true
	}
	return false
}
