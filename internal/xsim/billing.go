package xsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Billing kinds, one per line of X's pay-per-use price list.
const (
	BillPostRead      = "posts_read"
	BillUserRead      = "users_read"
	BillFollowRead    = "follows_read"
	BillMediaRead     = "media_read"
	BillContentCreate = "content_create"
	BillContentURL    = "content_create_with_url"
	// BillSummonedReply is "Post: Create (summoned)": on pay-per-use, a
	// reply to a post that summoned its author, with or without a URL
	// (changelog 2026-04-16: "summoned replies remain $0.01").
	BillSummonedReply = "content_create_summoned"
	// BillOwnedRead is "Owned Reads": on pay-per-use, every resource an
	// account reads from its own OwnedReadRoutes (changelog 2026-04-16).
	BillOwnedRead      = "owned_reads"
	BillInteraction    = "user_interaction_create"
	BillInteractionDel = "interaction_delete"
	BillContentManage  = "content_manage"
	BillBookmark       = "bookmark"
	BillMediaMetadata  = "media_metadata"
	// X publishes no List prices; these follow the nearest published line.
	BillListCreate    = "list_create"
	BillListManage    = "list_manage"
	BillListRead      = "lists_read"
	BillDMRead        = "dm_events_read"
	BillDMCreate      = "dm_interaction_create"
	BillCommunityRead = "communities_read"
)

// Prices returns X's pay-per-use unit prices in micro-dollars: reads are
// charged per resource returned (each resource once per UTC day), writes per
// request. Deleting a post is "Content: Manage"; undoing a like, follow or
// repost is "Interaction: Delete".
func Prices() map[string]int64 {
	return map[string]int64{
		BillPostRead:       5_000,
		BillUserRead:       10_000,
		BillFollowRead:     10_000,
		BillMediaRead:      5_000,
		BillContentCreate:  15_000,
		BillContentURL:     200_000,
		BillSummonedReply:  10_000,
		BillOwnedRead:      1_000,
		BillInteraction:    15_000,
		BillInteractionDel: 10_000,
		BillContentManage:  5_000,
		BillBookmark:       5_000,
		BillMediaMetadata:  5_000,
		BillListCreate:     15_000,
		BillListManage:     15_000,
		BillListRead:       10_000,
		BillDMRead:         10_000,
		BillDMCreate:       15_000,
		BillCommunityRead:  5_000,
	}
}

func utcDay(t time.Time) string { return t.UTC().Format("2006-01-02") }

// chargeReads bills the resources a read returned, skipping those already
// charged today. Every resource an Owned Read returns, its expansions
// among them, is billed at the Owned Reads price: X prices the request's
// resources by the endpoint. Runs under s.mu.
func (s *Server) chargeReads(c *call, kind string, ids []string) {
	day := utcDay(c.now)
	seenKind := kind
	if s.ownedRead(c) {
		// Deduplicated apart from the same resource read at its own price.
		kind, seenKind = BillOwnedRead, BillOwnedRead+":"+kind
	}
	var n int64
	for _, id := range ids {
		k := day + "|" + seenKind + "|" + id
		if s.st.seen[k] {
			continue
		}
		s.st.seen[k] = true
		s.st.touch(touchedSeen, k)
		n++
	}
	if n == 0 {
		return
	}
	s.changed()
	s.st.billing = append(s.st.billing, Charge{At: c.now.UTC(), Kind: kind, Units: n, Micros: n * Prices()[kind], Endpoint: c.route.key})
}

// chargeWrite bills one write request. Runs under s.mu.
func (s *Server) chargeWrite(c *call, kind string) {
	s.st.billing = append(s.st.billing, Charge{At: c.now.UTC(), Kind: kind, Units: 1, Micros: Prices()[kind], Endpoint: c.route.key})
}

// BillingTotal is the sum of the ledger, per kind and overall.
type BillingTotal struct {
	Micros int64
	Units  map[string]int64
	ByKind map[string]int64 // micro-dollars per kind
	// Requests counts the billed requests per endpoint ("POST
	// /2/lists/{id}/members"): a read billed nothing (all seen today) is
	// not among them.
	Requests map[string]int64
}

// Billing returns the totals of the pay-per-use ledger since the world began.
func (s *Server) Billing() BillingTotal {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := BillingTotal{Units: map[string]int64{}, ByKind: map[string]int64{}, Requests: map[string]int64{}}
	for _, ch := range s.st.billing {
		t.Micros += ch.Micros
		t.Units[ch.Kind] += ch.Units
		t.ByKind[ch.Kind] += ch.Micros
		t.Requests[ch.Endpoint]++
	}
	return t
}

func formatUSD(micros int64) string {
	return fmt.Sprintf("%d.%06d", micros/1_000_000, micros%1_000_000)
}

// handleUsage is GET /2/usage/tweets: X's Usage object (posts consumed per
// day) plus the emulator's itemised pay-per-use record under "billing".
func (s *Server) handleUsage(c *call) reply {
	q := c.r.URL.Query()
	days := 7
	if raw := q.Get("days"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 90 {
			return errInvalidParam("days", raw, fmt.Sprintf("The `days` query parameter value [%s] is not between 1 and 90", raw))
		}
		days = n
	}
	if _, bad := parseList("usage.fields", q.Get("usage.fields"), []string{"cap_reset_day", "daily_client_app_usage", "daily_project_usage", "project_cap", "project_id", "project_usage"}); bad != nil {
		return *bad
	}
	from := c.now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(days - 1))
	perDay := map[string]int64{}
	type line struct {
		units, micros int64
	}
	items := map[string]map[string]*line{}
	var total, posts int64
	for _, ch := range s.st.billing {
		if ch.At.Before(from) {
			continue
		}
		d := utcDay(ch.At)
		if ch.Kind == BillPostRead {
			perDay[d] += ch.Units
			posts += ch.Units
		}
		if items[d] == nil {
			items[d] = map[string]*line{}
		}
		l := items[d][ch.Kind]
		if l == nil {
			l = &line{}
			items[d][ch.Kind] = l
		}
		l.units += ch.Units
		l.micros += ch.Micros
		total += ch.Micros
	}
	var usage []map[string]any
	var daily []map[string]any
	for i := 0; i < days; i++ {
		day := from.AddDate(0, 0, i)
		d := utcDay(day)
		usage = append(usage, map[string]any{"date": formatTime(day), "usage": strconv.FormatInt(perDay[d], 10)})
		if len(items[d]) == 0 {
			continue
		}
		kinds := make([]string, 0, len(items[d]))
		for k := range items[d] {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		var lines []map[string]any
		var dayTotal int64
		for _, k := range kinds {
			l := items[d][k]
			dayTotal += l.micros
			lines = append(lines, map[string]any{"kind": k, "units": l.units, "usd": formatUSD(l.micros)})
		}
		daily = append(daily, map[string]any{"date": d, "usd": formatUSD(dayTotal), "items": lines})
	}
	project := "1"
	data := map[string]any{
		"project_id":          project,
		"project_cap":         "2000000",
		"project_usage":       strconv.FormatInt(posts, 10),
		"cap_reset_day":       1,
		"daily_project_usage": map[string]any{"project_id": project, "usage": usage},
		"daily_client_app_usage": []map[string]any{{
			"client_app_id":      c.grant.ClientID,
			"usage":              usage,
			"usage_result_count": len(usage),
		}},
		"billing": map[string]any{"currency": "USD", "total_usd": formatUSD(total), "daily": daily},
	}
	return ok(map[string]any{"data": data})
}

// isOwnedReadRoute reports whether route is one of the twelve "Owned
// Reads" of the 2026-04-16 changelog entry, all of which the emulator
// serves.
func isOwnedReadRoute(route string) bool {
	prefix := "GET /2/users/{id}/"
	if !strings.HasPrefix(route, prefix) {
		return false
	}
	switch strings.TrimPrefix(route, prefix) {
	case "bookmarks", "blocking", "muting", "pinned_lists", "tweets", "mentions", "liked_tweets",
		"followers", "following", "owned_lists", "followed_lists", "list_memberships":
		return true
	}
	return false
}

// ownedRead reports whether the call reads its own account through an
// Owned Read on pay-per-use: the {id} is the token's user. X adds that the
// user must own the developer app; every account of the emulated world
// owns the app it acts through (each stands for its own app, which is why
// access levels are per account). Runs under s.mu.
func (s *Server) ownedRead(c *call) bool {
	return c.route != nil && isOwnedReadRoute(c.route.key) && c.r.PathValue("id") == c.user.ID && s.selfServe(c)
}
