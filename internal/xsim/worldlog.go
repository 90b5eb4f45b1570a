package xsim

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strings"
	"sync"
)

// The world log is how a change reaches the disk at a cost that does not
// grow with the world. The world file is rewritten only now and then (when
// the log has grown as large as the world, and when the emulator closes);
// every change in between is appended to WorldLogPath(state) as one line
// before its answer is sent, and LoadWorld replays the lines onto the
// world file. Like the rewrites before it, an append is not synced: once
// write returns, the change survives the death of the process.
//
// A line is the CRC-32C of its JSON in eight hex digits, a space, the JSON
// and a newline. The first line is a header naming the world file the log
// continues (World.Journal, new at every rewrite of the file): a log whose
// header names another is left over from before the last rewrite, which
// holds all of it, and is ignored. Every other line is a logRecord: the
// values, after the change, of what the change touched, so replay is a set
// of plain puts and removals. A last line cut short or garbled is a write
// the emulator was killed in the middle of, never answered, and is dropped;
// a bad line with lines after it is damage, and loading fails.

// WorldLogPath is the change log kept beside the world file at state.
func WorldLogPath(state string) string { return state + ".log" }

// logRecord is one line of the world log.
type logRecord struct {
	// Journal, in the header only, is the World.Journal of the world file
	// the log continues.
	Journal string  `json:"journal,omitempty"`
	Users   []User  `json:"users,omitempty"`
	Tweets  []Tweet `json:"tweets,omitempty"`
	// Deleted are posts deleted by the change: From is the author, To the
	// post.
	Deleted   []Edge                 `json:"deleted_tweets,omitempty"`
	Follows   *edgeChanges           `json:"follows,omitempty"`
	Likes     *edgeChanges           `json:"likes,omitempty"`
	Bookmarks *edgeChanges           `json:"bookmarks,omitempty"`
	Relations map[string]edgeChanges `json:"relations,omitempty"`
	Media     []Media                `json:"media,omitempty"`
	MediaGone []string               `json:"media_gone,omitempty"`
	Grants    []Grant                `json:"grants,omitempty"`
	// GrantsGone are hashes of grants the change removed.
	GrantsGone []string `json:"grants_gone,omitempty"`
	// Billing are the charges the change added, in order.
	Billing []Charge `json:"billing,omitempty"`
	// Seen are the billing keys the change added.
	Seen        []string     `json:"billing_seen,omitempty"`
	Suspended   []string     `json:"suspended,omitempty"`
	Unsuspended []string     `json:"unsuspended,omitempty"`
	Lists       []List       `json:"lists,omitempty"`
	ListsGone   []string     `json:"lists_gone,omitempty"`
	DMs         []DMEvent    `json:"dm_events,omitempty"`
	Settings    *logSettings `json:"settings,omitempty"`
	Sequence    int64        `json:"sequence,omitempty"`
}

// edgeChanges are the edges of one kind a change added (Set) or removed
// (Gone; From and To only).
type edgeChanges struct {
	Set  []Edge `json:"set,omitempty"`
	Gone []Edge `json:"gone,omitempty"`
}

func (e *edgeChanges) empty() bool { return e == nil || len(e.Set) == 0 && len(e.Gone) == 0 }

// logSettings are the world's settings, whole, after a change to any.
type logSettings struct {
	DemoUserID           string            `json:"demo_user_id"`
	DemoAccounts         map[string]string `json:"demo_accounts,omitempty"`
	QuotesNeedHigherTier bool              `json:"quotes_need_higher_tier,omitempty"`
	Access               Access            `json:"access,omitempty"`
	AccessByUser         map[string]Access `json:"access_by_user,omitempty"`
}

// entityKind names what a change touched, for the log.
type entityKind uint8

const (
	touchedUser entityKind = iota + 1
	touchedTweet
	touchedFollow
	touchedLike
	touchedBookmark
	touchedRelation
	touchedMedia
	touchedGrant
	touchedSeen
	touchedSuspended
	touchedList
	touchedDM
	touchedSettings
)

// entity is one thing a change touched: an id, or an edge from id to to
// (of relation name).
type entity struct {
	kind         entityKind
	name, id, to string
}

// changes is what the world's changes touched since the last log record.
type changes struct {
	touched map[entity]struct{}
	// billed is how many charges of state.billing are in the file, and
	// seq the state.lastID it holds.
	billed int
	seq    int64
}

// unchanged reports whether the file holds the state as it is.
func (s *state) unchanged() bool {
	c := s.changes
	return len(c.touched) == 0 && c.billed == len(s.billing) && c.seq == s.lastID
}

// touch records that a change touched e. A state without a log (no state
// file) records nothing.
func (s *state) touch(kind entityKind, id string) {
	if s.changes != nil {
		s.changes.touched[entity{kind: kind, id: id}] = struct{}{}
	}
}

func (s *state) touchEdge(kind entityKind, name, from, to string) {
	if s.changes != nil {
		s.changes.touched[entity{kind: kind, name: name, id: from, to: to}] = struct{}{}
	}
}

// takeRecord builds the log record of everything touched since the last
// one, from the values as they are now, and starts the next. Runs under
// Server.mu; its cost is that of the change, whatever the world's size.
func (s *state) takeRecord() *logRecord {
	c := s.changes
	rec := &logRecord{Sequence: s.lastID}
	// edges puts edge e into ch as set, taken from es (edges that hold it
	// if the state does), or as gone when es has it not.
	edges := func(ch *edgeChanges, e entity, es []Edge) *edgeChanges {
		if ch == nil {
			ch = &edgeChanges{}
		}
		if i := slices.IndexFunc(es, func(x Edge) bool { return x.From == e.id && x.To == e.to }); i >= 0 {
			ch.Set = append(ch.Set, es[i])
		} else {
			ch.Gone = append(ch.Gone, Edge{From: e.id, To: e.to})
		}
		return ch
	}
	for e := range c.touched {
		switch e.kind {
		case touchedUser:
			if u := s.users[e.id]; u != nil {
				rec.Users = append(rec.Users, *u)
			}
		case touchedTweet:
			if t := s.tweets[e.id]; t != nil {
				rec.Tweets = append(rec.Tweets, cloneTweet(*t))
			} else if author, ok := s.deleted[e.id]; ok {
				rec.Deleted = append(rec.Deleted, Edge{From: author, To: e.id})
			}
		case touchedFollow:
			rec.Follows = edges(rec.Follows, e, shorter(s.following[e.id], s.followers[e.to]))
		case touchedLike:
			rec.Likes = edges(rec.Likes, e, shorter(s.likesBy[e.id], s.likers[e.to]))
		case touchedBookmark:
			rec.Bookmarks = edges(rec.Bookmarks, e, s.bookmarks[e.id])
		case touchedRelation:
			if rec.Relations == nil {
				rec.Relations = map[string]edgeChanges{}
			}
			ch := rec.Relations[e.name]
			rec.Relations[e.name] = *edges(&ch, e, s.relations[e.name][e.id])
		case touchedMedia:
			if m := s.media[e.id]; m != nil {
				c := *m
				c.Segments, c.Head = slices.Clone(m.Segments), slices.Clone(m.Head)
				rec.Media = append(rec.Media, c)
			} else {
				rec.MediaGone = append(rec.MediaGone, e.id)
			}
		case touchedGrant:
			if g := s.grants[e.id]; g != nil {
				c := *g
				c.Scopes = slices.Clone(g.Scopes)
				rec.Grants = append(rec.Grants, c)
			} else {
				rec.GrantsGone = append(rec.GrantsGone, e.id)
			}
		case touchedSeen:
			if s.seen[e.id] {
				rec.Seen = append(rec.Seen, e.id)
			}
		case touchedSuspended:
			if s.suspended[e.id] {
				rec.Suspended = append(rec.Suspended, e.id)
			} else {
				rec.Unsuspended = append(rec.Unsuspended, e.id)
			}
		case touchedList:
			if l := s.lists[e.id]; l != nil {
				c := *l
				c.Members, c.Followers, c.PinnedBy = slices.Clone(l.Members), slices.Clone(l.Followers), slices.Clone(l.PinnedBy)
				rec.Lists = append(rec.Lists, c)
			} else {
				rec.ListsGone = append(rec.ListsGone, e.id)
			}
		case touchedDM:
			// From the newest: a change is most often a message just sent.
			for i := len(s.dms) - 1; i >= 0; i-- {
				if s.dms[i].ID == e.id {
					d := *s.dms[i]
					d.ParticipantIDs, d.MediaKeys = slices.Clone(d.ParticipantIDs), slices.Clone(d.MediaKeys)
					rec.DMs = append(rec.DMs, d)
					break
				}
			}
		case touchedSettings:
			rec.Settings = &logSettings{DemoUserID: s.demoUserID, DemoAccounts: maps.Clone(s.demoAccounts),
				QuotesNeedHigherTier: s.quotesNeedTier, Access: s.access, AccessByUser: s.accessSnapshot()}
		}
	}
	rec.Billing = slices.Clone(s.billing[c.billed:])
	// DMs keep the order they were sent in; the rest is sorted so that a
	// record reads the same however the map was walked.
	slices.SortFunc(rec.DMs, func(a, b DMEvent) int { return cmpID(a.ID, b.ID) })
	slices.SortFunc(rec.Users, func(a, b User) int { return cmpID(a.ID, b.ID) })
	slices.SortFunc(rec.Tweets, func(a, b Tweet) int { return cmpID(a.ID, b.ID) })
	slices.Sort(rec.Seen)
	for _, p := range []*edgeChanges{rec.Follows, rec.Likes, rec.Bookmarks} {
		if p != nil {
			sortEdgesStable(p.Set)
		}
	}
	if rec.Follows.empty() {
		rec.Follows = nil
	}
	if rec.Likes.empty() {
		rec.Likes = nil
	}
	if rec.Bookmarks.empty() {
		rec.Bookmarks = nil
	}
	s.resetChanges()
	return rec
}

// shorter returns the shorter of two lists that both hold an edge if
// either does: by its source and by its target.
func shorter(a, b []Edge) []Edge {
	if len(b) < len(a) {
		return b
	}
	return a
}

// resetChanges starts a new record: the file holds everything until now.
func (s *state) resetChanges() {
	if s.changes == nil {
		return
	}
	clear(s.changes.touched)
	s.changes.billed, s.changes.seq = len(s.billing), s.lastID
}

// keepChanges makes the state record what changes touch from now on, for
// the log.
func (s *state) keepChanges() {
	s.changes = &changes{touched: map[entity]struct{}{}}
	s.resetChanges()
}

func cloneTweet(t Tweet) Tweet {
	t.MediaKeys, t.EditHistory = slices.Clone(t.MediaKeys), slices.Clone(t.EditHistory)
	if t.Poll != nil {
		p := *t.Poll
		p.Options, p.Votes = slices.Clone(p.Options), slices.Clone(p.Votes)
		t.Poll = &p
	}
	return t
}

// logCRC is the Castagnoli table, made on first use: making it is a
// fiftieth of a spawned server's start, and a start that never writes
// the log need not pay it.
var logCRC = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// encodeLogLine frames rec as one line of the log.
func encodeLogLine(rec *logRecord) ([]byte, error) {
	body, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("world log: %w", err)
	}
	line := make([]byte, 0, len(body)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(body, logCRC()))
	line = append(line, body...)
	return append(line, '\n'), nil
}

// newJournal names a new world file, for the log that continues it.
func newJournal() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("xsim: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// parsedLog is what a world log holds.
type parsedLog struct {
	journal string
	records []logRecord
	// valid is the length of the log without its torn last line, if any:
	// where the next record goes.
	valid int64
}

// parseLog reads a world log. A last line that is cut short or fails its
// checksum or its decoding is dropped (valid ends before it); a bad line
// with others after it is an error naming it. The log is untrusted input.
func parseLog(b []byte) (parsedLog, error) {
	var out parsedLog
	for n := 1; len(b) > 0; n++ {
		end := bytes.IndexByte(b, '\n')
		if end < 0 {
			return out, nil // cut short: killed mid-write
		}
		rec, err := decodeLogLine(b[:end])
		if err == nil && n == 1 && (rec.Journal == "" || !rec.isHeader()) {
			err = errors.New("the first line is not a header naming a world file")
		}
		if err == nil && n > 1 && rec.Journal != "" {
			err = errors.New("a header after the first line")
		}
		if err != nil {
			if end == len(b)-1 {
				return out, nil // the last line, garbled by a write cut short
			}
			return out, fmt.Errorf("line %d: %w", n, err)
		}
		if n == 1 {
			out.journal = rec.Journal
		} else {
			out.records = append(out.records, rec)
		}
		out.valid += int64(end + 1)
		b = b[end+1:]
	}
	return out, nil
}

func decodeLogLine(line []byte) (logRecord, error) {
	var rec logRecord
	if len(line) < 10 || line[8] != ' ' {
		return rec, errors.New("no checksum")
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil || strings.ToLower(string(line[:8])) != string(line[:8]) {
		return rec, errors.New("no checksum")
	}
	body := line[9:]
	want := uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])
	if crc32.Checksum(body, logCRC()) != want {
		return rec, errors.New("checksum mismatch")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, fmt.Errorf("record: %w", err)
	}
	if dec.More() {
		return rec, errors.New("record: trailing data")
	}
	return rec, nil
}

// isHeader reports whether rec names a world file and nothing else.
func (rec *logRecord) isHeader() bool {
	c := *rec
	c.Journal = ""
	b, _ := json.Marshal(&c)
	return string(b) == "{}"
}

// replay applies the records onto w, in order. Every record holds values
// after its change, so a put replaces and a removal drops; the result is
// sorted as a server's snapshot is, so a replayed world reads the same as
// the world file a rewrite would have made.
func replay(w *World, recs []logRecord) {
	if len(recs) == 0 {
		return
	}
	users := keyed(w.Users, func(u User) string { return u.ID })
	tweets := keyed(w.Tweets, func(t Tweet) string { return t.ID })
	deleted := keyed(w.Deleted, func(e Edge) string { return e.To })
	type ek struct{ from, to string }
	edgeKey := func(e Edge) ek { return ek{e.From, e.To} }
	follows, likes, bookmarks := keyed(w.Follows, edgeKey), keyed(w.Likes, edgeKey), keyed(w.Bookmarks, edgeKey)
	relations := map[string]map[ek]Edge{}
	for name, es := range w.Relations {
		relations[name] = keyed(es, edgeKey)
	}
	media := keyed(w.Media, func(m Media) string { return m.ID })
	grants := keyed(w.Grants, func(g Grant) string { return g.Hash })
	seen := keyed(w.Seen, func(k string) string { return k })
	suspended := keyed(w.Suspended, func(id string) string { return id })
	lists := keyed(w.Lists, func(l List) string { return l.ID })
	dmAt := map[string]int{}
	for i, d := range w.DMs {
		dmAt[d.ID] = i
	}
	applyEdges := func(m map[ek]Edge, ch *edgeChanges) {
		if ch == nil {
			return
		}
		for _, e := range ch.Gone {
			delete(m, edgeKey(e))
		}
		for _, e := range ch.Set {
			m[edgeKey(e)] = e
		}
	}
	for _, rec := range recs {
		for _, u := range rec.Users {
			users[u.ID] = u
		}
		for _, t := range rec.Tweets {
			tweets[t.ID] = t
		}
		for _, d := range rec.Deleted {
			delete(tweets, d.To)
			deleted[d.To] = d
		}
		applyEdges(follows, rec.Follows)
		applyEdges(likes, rec.Likes)
		applyEdges(bookmarks, rec.Bookmarks)
		for name, ch := range rec.Relations {
			if relations[name] == nil {
				relations[name] = map[ek]Edge{}
			}
			applyEdges(relations[name], &ch)
		}
		for _, m := range rec.Media {
			media[m.ID] = m
		}
		for _, id := range rec.MediaGone {
			delete(media, id)
		}
		for _, g := range rec.Grants {
			grants[g.Hash] = g
		}
		for _, h := range rec.GrantsGone {
			delete(grants, h)
		}
		w.Billing = append(w.Billing, rec.Billing...)
		for _, k := range rec.Seen {
			seen[k] = k
		}
		for _, id := range rec.Suspended {
			suspended[id] = id
		}
		for _, id := range rec.Unsuspended {
			delete(suspended, id)
		}
		for _, l := range rec.Lists {
			lists[l.ID] = l
		}
		for _, id := range rec.ListsGone {
			delete(lists, id)
		}
		for _, d := range rec.DMs {
			if i, ok := dmAt[d.ID]; ok {
				w.DMs[i] = d
			} else {
				dmAt[d.ID] = len(w.DMs)
				w.DMs = append(w.DMs, d)
			}
		}
		if st := rec.Settings; st != nil {
			w.DemoUserID, w.DemoAccounts = st.DemoUserID, st.DemoAccounts
			w.QuotesNeedHigherTier, w.Access, w.AccessByUser = st.QuotesNeedHigherTier, st.Access, st.AccessByUser
		}
		w.Sequence = max(w.Sequence, rec.Sequence)
	}
	byID := func(a, b string) int { return cmpID(a, b) }
	w.Users = sortedValues(users, func(a, b User) int { return byID(a.ID, b.ID) })
	w.Tweets = sortedValues(tweets, func(a, b Tweet) int { return byID(a.ID, b.ID) })
	w.Deleted = sortedValues(deleted, func(a, b Edge) int { return byID(a.To, b.To) })
	w.Follows, w.Likes, w.Bookmarks = edgeList(follows), edgeList(likes), edgeList(bookmarks)
	w.Relations = nil
	for name, m := range relations {
		if es := edgeList(m); len(es) > 0 {
			if w.Relations == nil {
				w.Relations = map[string][]Edge{}
			}
			w.Relations[name] = es
		}
	}
	w.Media = sortedValues(media, func(a, b Media) int { return byID(a.ID, b.ID) })
	w.Grants = sortedValues(grants, func(a, b Grant) int { return strings.Compare(a.Hash, b.Hash) })
	w.Seen = sortedValues(seen, strings.Compare)
	w.Suspended = sortedValues(suspended, byID)
	w.Lists = sortedValues(lists, func(a, b List) int { return byID(a.ID, b.ID) })
}

func keyed[K comparable, V any](vs []V, key func(V) K) map[K]V {
	m := make(map[K]V, len(vs))
	for _, v := range vs {
		m[key(v)] = v
	}
	return m
}

// sortedValues returns m's values sorted by cmp, nil when there are none
// (as a snapshot leaves an empty collection out).
func sortedValues[K comparable, V any](m map[K]V, cmp func(a, b V) int) []V {
	if len(m) == 0 {
		return nil
	}
	return slices.SortedFunc(maps.Values(m), cmp)
}

func edgeList[K comparable](m map[K]Edge) []Edge {
	if len(m) == 0 {
		return nil
	}
	es := slices.Collect(maps.Values(m))
	sortEdgesStable(es)
	return es
}
