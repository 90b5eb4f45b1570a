package xapi

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// maxSeenPerDay bounds the deduplication set. Past it every resource is
// billed again, which over- rather than under-estimates.
const maxSeenPerDay = 1 << 20

// ledger remembers which read resources were already billed in the current
// UTC day. X bills a resource once per account per UTC day; the set lives in
// this process only (one Client per account), so after a restart the first
// read of a resource is counted again. That errs on the expensive side,
// which is the safe side for a budget.
type ledger struct {
	mu   sync.Mutex
	day  int // UTC days since the epoch
	seen map[billedKey]struct{}
}

type billedKey struct{ kind, id string }

func newLedger() *ledger { return &ledger{seen: map[billedKey]struct{}{}} }

// billNew returns how many of ids were not billed yet today and marks them.
// Resources without an id are always billed.
func (l *ledger) billNew(now time.Time, kind string, ids []string) int {
	if kind == "" {
		return len(ids)
	}
	day := int(now.Unix() / 86400)
	if now.Unix() < 0 && now.Unix()%86400 != 0 {
		day--
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.day != day || l.seen == nil {
		l.day = day
		l.seen = map[billedKey]struct{}{}
	}
	n := 0
	for _, id := range ids {
		if id == "" {
			n++
			continue
		}
		key := billedKey{kind, id}
		if _, ok := l.seen[key]; ok {
			continue
		}
		n++
		if len(l.seen) < maxSeenPerDay {
			l.seen[key] = struct{}{}
		}
	}
	return n
}

// idOnly decodes just the identity of a resource.
type idOnly struct {
	ID       string `json:"id"`
	MediaKey string `json:"media_key"`
}

// readResources extracts the billable resources of a read response: the
// data items and the expanded objects.
type readResources struct {
	items    int
	dataIDs  []string
	userIDs  []string
	postIDs  []string
	mediaIDs []string
}

func parseReadResources(body []byte) readResources {
	var env struct {
		Data     json.RawMessage `json:"data"`
		Includes struct {
			Users  []idOnly `json:"users"`
			Tweets []idOnly `json:"tweets"`
			Posts  []idOnly `json:"posts"`
			Media  []idOnly `json:"media"`
		} `json:"includes"`
	}
	var rr readResources
	if json.Unmarshal(body, &env) != nil {
		return rr
	}
	rr.dataIDs = dataIDs(env.Data)
	rr.items = len(rr.dataIDs)
	for _, u := range env.Includes.Users {
		rr.userIDs = append(rr.userIDs, u.ID)
	}
	for _, t := range append(env.Includes.Tweets, env.Includes.Posts...) {
		rr.postIDs = append(rr.postIDs, t.ID)
	}
	for _, m := range env.Includes.Media {
		rr.mediaIDs = append(rr.mediaIDs, m.MediaKey)
	}
	return rr
}

// dataIDs returns one id per item of data (an array or a single object);
// items without an id give "".
func dataIDs(data json.RawMessage) []string {
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	switch data[0] {
	case '[':
		var list []json.RawMessage
		if json.Unmarshal(data, &list) != nil {
			return nil
		}
		out := make([]string, len(list))
		for i, item := range list {
			var o idOnly
			if json.Unmarshal(item, &o) == nil {
				out[i] = o.ID
			}
		}
		return out
	case '{':
		var o idOnly
		_ = json.Unmarshal(data, &o)
		return []string{o.ID}
	}
	return nil
}

// attemptCost returns the items and estimated cost of one attempt.
// applied says whether a write may have taken effect: 2xx, 5xx, or a
// transport failure after the request was sent.
func (c *Client) attemptCost(r *request, status int, body []byte, decoded *readResources, applied bool, at time.Time) (items int, cost float64) {
	ok := status >= 200 && status < 300
	if r.method == "GET" || r.method == "HEAD" {
		if !ok {
			return 0, 0
		}
		var rr readResources
		if decoded != nil {
			rr = *decoded
		} else {
			rr = parseReadResources(body)
		}
		unit, kind, perRequest, owned := readPrice(r.tpl, c.ownsPath(r.path))
		if perRequest {
			return max(rr.items, 1), unit
		}
		// The objects a read expands are billed at their own read prices,
		// except on an owned read, which bills them at its own price as
		// the emulator does (docs/x-rules.md): X prices Owned Reads by
		// endpoint and has published no separate price for what they
		// expand.
		userUnit, postUnit, mediaUnit := PriceUserRead, PricePostRead, PriceMediaRead
		if owned {
			userUnit, postUnit, mediaUnit = unit, unit, unit
		}
		cost = unit * float64(c.ledger.billNew(at, kind, rr.dataIDs))
		cost += userUnit * float64(c.ledger.billNew(at, kindUser, rr.userIDs))
		cost += postUnit * float64(c.ledger.billNew(at, kindPost, rr.postIDs))
		cost += mediaUnit * float64(c.ledger.billNew(at, kindMedia, rr.mediaIDs))
		return rr.items, cost
	}
	if ok {
		items = 1
	}
	if applied {
		cost = r.writeCost
	}
	return items, cost
}

// ownsPath reports whether a /2/users/:id/... path names the
// authenticated user, as far as this client knows it: an id it has not
// learnt yet is billed at the ordinary price, the higher one.
func (c *Client) ownsPath(path string) bool {
	rest, ok := strings.CutPrefix(path, "/2/users/")
	if !ok {
		return false
	}
	id, _, _ := strings.Cut(rest, "/")
	c.meMu.Lock()
	me := c.meID
	c.meMu.Unlock()
	return me != "" && id == me
}

// recordUsage reports one attempt. A failing recorder is logged, never
// returned: the X call already happened and its result must reach the
// caller.
func (c *Client) recordUsage(ctx context.Context, r *request, attempt, status int, body []byte, decoded *readResources, applied bool, code apperr.Code) {
	if c.usage == nil {
		return
	}
	at := c.now()
	items, cost := c.attemptCost(r, status, body, decoded, applied, at)
	u := Usage{
		At:        at,
		AccountID: c.account,
		Endpoint:  r.endpoint,
		Method:    r.method,
		Status:    status,
		Items:     items,
		CostUSD:   cost,
		Attempt:   attempt,
		ErrorCode: string(code),
	}
	if err := c.usage.RecordXUsage(context.WithoutCancel(ctx), u); err != nil {
		c.log.Warn("x usage ledger write failed", "endpoint", r.endpoint, "error", err)
	}
}
