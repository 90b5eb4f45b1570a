package xapi

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// The decoder in this file reads X's read envelopes (posts, users, their
// expansions and pagination) without reflection; encoding/json's reflective
// decoding is most of the client's own CPU cost per read. It accepts only
// input it decodes exactly as encoding/json would: on anything else —
// invalid JSON, duplicate or case-folded keys, invalid UTF-8 or unpaired
// surrogates in decoded strings, non-integer numbers, partial errors,
// media expansions, deep nesting — it reports false and the caller decodes
// with encoding/json instead. FuzzFastDecode checks the equivalence.

const maxFastDepth = 64

type fastScan struct {
	b     []byte
	i     int
	depth int
	buf   []byte
}

func (s *fastScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte without consuming it.
func (s *fastScan) next() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *fastScan) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// null consumes a null literal if one is next.
func (s *fastScan) null() bool {
	return s.next() == 'n' && s.lit("null")
}

// rawString consumes a string literal and returns its decoded bytes, which
// alias the input when there are no escapes and s.buf otherwise; valid
// until the next call.
func (s *fastScan) rawString() ([]byte, bool) {
	if s.next() != '"' {
		return nil, false
	}
	s.i++
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			out := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(out) {
				return nil, false
			}
			return out, true
		case c == '\\':
			return s.escapedString(start)
		case c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

func (s *fastScan) escapedString(start int) ([]byte, bool) {
	s.buf = append(s.buf[:0], s.b[start:s.i]...)
	if !utf8.Valid(s.buf) {
		return nil, false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.buf, true
		case c < 0x20:
			return nil, false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, false
			}
			e := s.b[s.i+1]
			s.i += 2
			switch e {
			case '"', '\\', '/':
				s.buf = append(s.buf, e)
			case 'b':
				s.buf = append(s.buf, '\b')
			case 'f':
				s.buf = append(s.buf, '\f')
			case 'n':
				s.buf = append(s.buf, '\n')
			case 'r':
				s.buf = append(s.buf, '\r')
			case 't':
				s.buf = append(s.buf, '\t')
			case 'u':
				r, ok := s.hex4()
				if !ok {
					return nil, false
				}
				if utf16.IsSurrogate(r) {
					// Only a well-formed pair decodes the same everywhere.
					if r >= 0xDC00 || !s.lit(`\u`) {
						return nil, false
					}
					r2, ok := s.hex4()
					if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
						return nil, false
					}
					r = utf16.DecodeRune(r, r2)
				}
				s.buf = utf8.AppendRune(s.buf, r)
			default:
				return nil, false
			}
		case c < 0x80:
			s.buf = append(s.buf, c)
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false
			}
			s.buf = append(s.buf, s.b[s.i:s.i+n]...)
			s.i += n
		}
	}
	return nil, false
}

func (s *fastScan) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

// str decodes a string field; null leaves it unchanged, as encoding/json
// does.
func (s *fastScan) str(dst *string) bool {
	if s.null() {
		return true
	}
	b, ok := s.rawString()
	if ok {
		*dst = string(b)
	}
	return ok
}

// number consumes a JSON number and returns its literal.
func (s *fastScan) number() ([]byte, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
	default:
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

func (s *fastScan) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *fastScan) int64v(dst *int64) bool {
	if s.null() {
		return true
	}
	lit, ok := s.number()
	if !ok || bytes.ContainsAny(lit, ".eE") {
		return false
	}
	v, err := strconv.ParseInt(string(lit), 10, 64)
	if err != nil {
		return false
	}
	*dst = v
	return true
}

func (s *fastScan) intv(dst *int) bool {
	var v int64
	if s.null() {
		return true
	}
	if !s.int64v(&v) || int64(int(v)) != v {
		return false
	}
	*dst = int(v)
	return true
}

func (s *fastScan) boolv(dst *bool) bool {
	switch s.next() {
	case 't':
		*dst = true
		return s.lit("true")
	case 'f':
		*dst = false
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	return false
}

// timev hands the raw literal to time.Time's own UnmarshalJSON, exactly
// what encoding/json does.
func (s *fastScan) timev(dst *time.Time) bool {
	if s.null() {
		return true
	}
	start := s.i
	if _, ok := s.rawString(); !ok {
		return false
	}
	var t time.Time
	if t.UnmarshalJSON(s.b[start:s.i]) != nil {
		return false
	}
	*dst = t
	return true
}

// skip validates and consumes any value.
func (s *fastScan) skip() bool {
	switch s.next() {
	case '"':
		start := s.i + 1
		s.i++
		for s.i < len(s.b) {
			c := s.b[s.i]
			switch {
			case c == '"':
				s.i++
				return true
			case c < 0x20:
				return false
			case c == '\\':
				s.i = start - 1
				_, ok := s.escapedSkip()
				return ok
			}
			s.i++
		}
		return false
	case '{':
		return s.object(nil, nil)
	case '[':
		return s.array(s.skip)
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	default:
		_, ok := s.number()
		return ok
	}
}

// escapedSkip validates a string with escapes without decoding it; invalid
// UTF-8 and lone surrogates are allowed here because encoding/json accepts
// them in values it ignores.
func (s *fastScan) escapedSkip() (struct{}, bool) {
	s.i++ // opening quote
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return struct{}{}, true
		case c < 0x20:
			return struct{}{}, false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return struct{}{}, false
			}
			e := s.b[s.i+1]
			s.i += 2
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, ok := s.hex4(); !ok {
					return struct{}{}, false
				}
			default:
				return struct{}{}, false
			}
		default:
			s.i++
		}
	}
	return struct{}{}, false
}

// array consumes [v, v, ...] calling elem for each value.
func (s *fastScan) array(elem func() bool) bool {
	if s.next() != '[' {
		return false
	}
	s.i++
	if s.depth++; s.depth > maxFastDepth {
		return false
	}
	if s.next() == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch s.next() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// object consumes {"k": v, ...}. Keys found in names (exactly, once) are
// passed to field by index; other keys are skipped, unless they match a
// name case-insensitively, which encoding/json would treat as that field.
func (s *fastScan) object(names []string, field func(idx int) bool) bool {
	if s.next() != '{' {
		return false
	}
	s.i++
	if s.depth++; s.depth > maxFastDepth {
		return false
	}
	if s.next() == '}' {
		s.i++
		s.depth--
		return true
	}
	var seen uint64
	for {
		key, ok := s.rawString()
		if !ok || s.next() != ':' {
			return false
		}
		s.i++
		idx := -1
		for i, n := range names {
			if string(key) == n {
				idx = i
				break
			}
		}
		if idx < 0 {
			for _, n := range names {
				if foldEqual(key, n) {
					return false
				}
			}
			if !s.skip() {
				return false
			}
		} else {
			if seen&(1<<idx) != 0 {
				return false
			}
			seen |= 1 << idx
			if !field(idx) {
				return false
			}
		}
		switch s.next() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *fastScan) strings(dst *[]string) bool {
	if s.null() {
		*dst = nil
		return true
	}
	out := []string{}
	ok := s.array(func() bool {
		var v string
		if !s.str(&v) {
			return false
		}
		out = append(out, v)
		return true
	})
	*dst = out
	return ok
}

var (
	tweetMetricNames = []string{"retweet_count", "repost_count", "reply_count", "like_count", "quote_count", "bookmark_count", "impression_count"}
	tweetNames       = []string{"id", "text", "author_id", "created_at", "conversation_id", "in_reply_to_user_id", "lang",
		"possibly_sensitive", "public_metrics", "referenced_tweets", "referenced_posts", "attachments", "entities",
		"edit_history_tweet_ids", "edit_history_post_ids"}
	refNames        = []string{"type", "id"}
	attachNames     = []string{"media_keys", "poll_ids"}
	entityNames     = []string{"urls", "hashtags", "cashtags", "mentions"}
	urlNames        = []string{"start", "end", "url", "expanded_url", "display_url", "unwound_url", "media_key"}
	tagNames        = []string{"start", "end", "tag"}
	mentionNames    = []string{"start", "end", "username", "id"}
	userMetricNames = []string{"followers_count", "following_count", "tweet_count", "post_count", "listed_count", "like_count"}
	userNames       = []string{"id", "name", "username", "description", "location", "url", "profile_image_url", "protected",
		"verified", "verified_type", "created_at", "public_metrics"}
	envelopeNames = []string{"data", "includes", "meta", "errors"}
	includesNames = []string{"users", "tweets", "posts", "media"}
	metaNames     = []string{"result_count", "next_token", "previous_token", "newest_id", "oldest_id"}
)

func (s *fastScan) tweetMetrics(m *wireTweetMetrics) bool {
	if s.null() {
		return true
	}
	return s.object(tweetMetricNames, func(i int) bool {
		return s.int64v([]*int64{&m.Retweet, &m.Repost, &m.Reply, &m.Like, &m.Quote, &m.Bookmark, &m.Impression}[i])
	})
}

func (s *fastScan) refs(dst *[]ReferencedTweet) bool {
	if s.null() {
		*dst = nil
		return true
	}
	out := []ReferencedTweet{}
	ok := s.array(func() bool {
		var r ReferencedTweet
		if !s.null() && !s.object(refNames, func(i int) bool {
			if i == 0 {
				return s.str(&r.Type)
			}
			return s.str(&r.ID)
		}) {
			return false
		}
		out = append(out, r)
		return true
	})
	*dst = out
	return ok
}

func (s *fastScan) attachments(dst **Attachments) bool {
	if s.null() {
		*dst = nil
		return true
	}
	a := &Attachments{}
	*dst = a
	return s.object(attachNames, func(i int) bool {
		if i == 0 {
			return s.strings(&a.MediaKeys)
		}
		return s.strings(&a.PollIDs)
	})
}

func (s *fastScan) tags(dst *[]TagEntity) bool {
	if s.null() {
		*dst = nil
		return true
	}
	out := []TagEntity{}
	ok := s.array(func() bool {
		var t TagEntity
		if !s.null() && !s.object(tagNames, func(i int) bool {
			switch i {
			case 0:
				return s.intv(&t.Start)
			case 1:
				return s.intv(&t.End)
			}
			return s.str(&t.Tag)
		}) {
			return false
		}
		out = append(out, t)
		return true
	})
	*dst = out
	return ok
}

func (s *fastScan) entities(dst **Entities) bool {
	if s.null() {
		*dst = nil
		return true
	}
	e := &Entities{}
	*dst = e
	return s.object(entityNames, func(i int) bool {
		switch i {
		case 0:
			if s.null() {
				e.URLs = nil
				return true
			}
			e.URLs = []URLEntity{}
			return s.array(func() bool {
				var u URLEntity
				if !s.null() && !s.object(urlNames, func(i int) bool {
					switch i {
					case 0:
						return s.intv(&u.Start)
					case 1:
						return s.intv(&u.End)
					}
					return s.str([]*string{&u.URL, &u.ExpandedURL, &u.DisplayURL, &u.UnwoundURL, &u.MediaKey}[i-2])
				}) {
					return false
				}
				e.URLs = append(e.URLs, u)
				return true
			})
		case 1:
			return s.tags(&e.Hashtags)
		case 2:
			return s.tags(&e.Cashtags)
		}
		if s.null() {
			e.Mentions = nil
			return true
		}
		e.Mentions = []MentionEntity{}
		return s.array(func() bool {
			var m MentionEntity
			if !s.null() && !s.object(mentionNames, func(i int) bool {
				switch i {
				case 0:
					return s.intv(&m.Start)
				case 1:
					return s.intv(&m.End)
				case 2:
					return s.str(&m.Username)
				}
				return s.str(&m.ID)
			}) {
				return false
			}
			e.Mentions = append(e.Mentions, m)
			return true
		})
	})
}

func (s *fastScan) tweet(t *wireTweet) bool {
	return s.object(tweetNames, func(i int) bool {
		switch i {
		case 0:
			return s.str(&t.ID)
		case 1:
			return s.str(&t.Text)
		case 2:
			return s.str(&t.AuthorID)
		case 3:
			return s.timev(&t.CreatedAt)
		case 4:
			return s.str(&t.ConversationID)
		case 5:
			return s.str(&t.InReplyToUserID)
		case 6:
			return s.str(&t.Lang)
		case 7:
			return s.boolv(&t.PossiblySensitive)
		case 8:
			return s.tweetMetrics(&t.PublicMetrics)
		case 9:
			return s.refs(&t.ReferencedTweets)
		case 10:
			return s.refs(&t.ReferencedPosts)
		case 11:
			return s.attachments(&t.Attachments)
		case 12:
			return s.entities(&t.Entities)
		case 13:
			return s.strings(&t.EditHistoryTweetIDs)
		}
		return s.strings(&t.EditHistoryPostIDs)
	})
}

func (s *fastScan) user(u *wireUser) bool {
	return s.object(userNames, func(i int) bool {
		switch i {
		case 7:
			return s.boolv(&u.Protected)
		case 8:
			return s.boolv(&u.Verified)
		case 10:
			return s.timev(&u.CreatedAt)
		case 11:
			if s.null() {
				return true
			}
			m := &u.PublicMetrics
			return s.object(userMetricNames, func(i int) bool {
				return s.int64v([]*int64{&m.Followers, &m.Following, &m.Tweets, &m.Posts, &m.Listed, &m.Likes}[i])
			})
		}
		return s.str([]*string{&u.ID, &u.Name, &u.Username, &u.Description, &u.Location, &u.URL, &u.ProfileImageURL,
			nil, nil, &u.VerifiedType}[i])
	})
}

func (s *fastScan) tweetList(dst *[]wireTweet) bool {
	if s.null() {
		*dst = nil
		return true
	}
	out := []wireTweet{}
	ok := s.array(func() bool {
		out = append(out, wireTweet{})
		return s.null() || s.tweet(&out[len(out)-1])
	})
	*dst = out
	return ok
}

func (s *fastScan) userList(dst *[]wireUser) bool {
	if s.null() {
		*dst = nil
		return true
	}
	out := []wireUser{}
	ok := s.array(func() bool {
		out = append(out, wireUser{})
		return s.null() || s.user(&out[len(out)-1])
	})
	*dst = out
	return ok
}

// fastEnvelope decodes X's envelope with data read by data. It reports
// false whenever the caller must use encoding/json instead.
func fastEnvelope[W any](b []byte, env *envelope[W], data func(*fastScan, *W) bool) bool {
	s := &fastScan{b: b}
	ok := s.object(envelopeNames, func(i int) bool {
		switch i {
		case 0:
			return data(s, &env.Data)
		case 1:
			if s.null() {
				return true
			}
			in := &env.Includes
			return s.object(includesNames, func(i int) bool {
				switch i {
				case 0:
					return s.userList(&in.Users)
				case 1:
					return s.tweetList(&in.Tweets)
				case 2:
					return s.tweetList(&in.Posts)
				}
				// Media expansions are rare here; encoding/json reads them.
				return s.null()
			})
		case 2:
			if s.null() {
				return true
			}
			m := &env.Meta
			return s.object(metaNames, func(i int) bool {
				if i == 0 {
					return s.intv(&m.ResultCount)
				}
				return s.str([]*string{nil, &m.NextToken, &m.PreviousToken, &m.NewestID, &m.OldestID}[i])
			})
		}
		// Partial errors use Problem's own decoder: leave them to
		// encoding/json unless absent.
		return s.null()
	})
	if !ok {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func fastOneTweet(s *fastScan, d **wireTweet) bool {
	if s.null() {
		*d = nil
		return true
	}
	t := &wireTweet{}
	*d = t
	return s.tweet(t)
}

func fastOneUser(s *fastScan, d **wireUser) bool {
	if s.null() {
		*d = nil
		return true
	}
	u := &wireUser{}
	*d = u
	return s.user(u)
}

func fastTweets(s *fastScan, d *[]wireTweet) bool { return s.tweetList(d) }

func fastUsers(s *fastScan, d *[]wireUser) bool { return s.userList(d) }

// foldEqual is bytes.EqualFold(key, []byte(name)) for an ASCII name without
// converting: encoding/json matches keys to fields that way.
func foldEqual(key []byte, name string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			// Unicode folding (the Kelvin sign folds to k): the slow way.
			return bytes.EqualFold(key, []byte(name))
		}
	}
	if len(key) != len(name) {
		return false
	}
	for i := range key {
		a, b := key[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
