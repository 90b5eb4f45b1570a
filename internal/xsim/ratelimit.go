package xsim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimit is a per-user request budget over a fixed window.
type RateLimit struct {
	Limit  int
	Window time.Duration
	// UserDaily and AppDaily, when set, add X's 24-hour budgets reported in
	// the x-user-limit-24hour-* and x-app-limit-24hour-* headers.
	UserDaily int
	AppDaily  int
}

const window15m = 15 * time.Minute

// defaultLimits is X's published per-user limits for the emulated
// endpoints (pay-per-use tables; per 15 minutes unless noted). It is built on
// every call so no package-level table can be mutated.
func defaultLimits() map[string]RateLimit {
	l := func(n int) RateLimit { return RateLimit{Limit: n, Window: window15m} }
	return map[string]RateLimit{
		"GET /2/tweets":                                               l(5000),
		"GET /2/tweets/{id}":                                          l(900),
		"GET /2/tweets/search/recent":                                 l(300),
		"GET /2/tweets/{id}/liking_users":                             l(75),
		"POST /2/tweets":                                              {Limit: 100, Window: window15m, UserDaily: 2400, AppDaily: 10000},
		"DELETE /2/tweets/{id}":                                       l(50),
		"GET /2/users/me":                                             l(75),
		"GET /2/users/{id}":                                           l(900),
		"GET /2/users":                                                l(900),
		"GET /2/users/by/username/{username}":                         l(900),
		"GET /2/users/{id}/tweets":                                    l(900),
		"GET /2/users/{id}/mentions":                                  l(300),
		"GET /2/users/{id}/timelines/reverse_chronological":           l(180),
		"GET /2/users/{id}/followers":                                 l(15),
		"GET /2/users/{id}/following":                                 l(15),
		"GET /2/users/{id}/liked_tweets":                              l(75),
		"GET /2/users/{id}/bookmarks":                                 l(180),
		"POST /2/users/{id}/likes":                                    {Limit: 50, Window: window15m, UserDaily: 1000},
		"DELETE /2/users/{id}/likes/{tweet_id}":                       l(50),
		"POST /2/users/{id}/following":                                {Limit: 50, Window: window15m, UserDaily: 400},
		"DELETE /2/users/{source_user_id}/following/{target_user_id}": l(50),
		"POST /2/users/{id}/retweets":                                 l(50),
		"DELETE /2/users/{id}/retweets/{source_tweet_id}":             l(50),
		"POST /2/users/{id}/bookmarks":                                l(50),
		"DELETE /2/users/{id}/bookmarks/{tweet_id}":                   l(50),
		"POST /2/media/upload":                                        l(500),
		"GET /2/media/upload":                                         l(1875),
		"POST /2/media/upload/initialize":                             l(1875),
		"POST /2/media/upload/{id}/append":                            l(10000),
		"POST /2/media/upload/{id}/finalize":                          l(1875),
		"POST /2/media/metadata":                                      l(500),
		"GET /2/usage/tweets":                                         l(50),
	}
}

type window struct {
	reset time.Time
	used  int
}

// bucket returns the window named key, starting a new one when none is
// running. A window starts at its first request and resets after its length,
// as X's fixed windows do.
func (s *Server) bucket(key string, length time.Duration, now time.Time) *window {
	w := s.windows[key]
	if w == nil || !now.Before(w.reset) {
		w = &window{reset: now.Add(length)}
		s.windows[key] = w
	}
	return w
}

// takeRateLimit charges one request against the caller's windows for rt,
// fills hdr with X's headers and reports whether the call must be refused.
// A request is counted only when every window has room, so a refused call
// does not eat into the daily budget. Windows are counted even when
// enforcement is off so the headers stay truthful.
func (s *Server) takeRateLimit(rt *route, userID, clientID string, now time.Time, hdr http.Header) bool {
	lim, ok := s.limits[rt.key]
	if !ok || lim.Limit <= 0 {
		return false
	}
	win := lim.Window
	if win <= 0 {
		win = window15m
	}
	type budget struct {
		w      *window
		limit  int
		prefix string // header prefix; "" for the primary window
	}
	budgets := []budget{{s.bucket("u|"+userID+"|"+rt.key, win, now), lim.Limit, ""}}
	if lim.UserDaily > 0 {
		budgets = append(budgets, budget{s.bucket("u24|"+userID+"|"+rt.key, 24*time.Hour, now), lim.UserDaily, "x-user-limit-24hour-"})
	}
	if lim.AppDaily > 0 {
		budgets = append(budgets, budget{s.bucket("a24|"+clientID+"|"+rt.key, 24*time.Hour, now), lim.AppDaily, "x-app-limit-24hour-"})
	}
	exhausted := false
	for _, b := range budgets {
		if b.w.used >= b.limit {
			exhausted = true
		}
	}
	refuse := exhausted && s.opts.RateLimits
	for _, b := range budgets {
		if !refuse && b.w.used < b.limit {
			b.w.used++
		}
		p := b.prefix
		if p == "" {
			p = "x-rate-limit-"
		}
		hdr.Set(p+"limit", strconv.Itoa(b.limit))
		hdr.Set(p+"remaining", strconv.Itoa(b.limit-b.w.used))
		hdr.Set(p+"reset", strconv.FormatInt(b.w.reset.Unix(), 10))
	}
	return refuse
}

// SetRateLimit replaces the limit of one route ("POST /2/tweets") and
// restarts its windows, so a test can exhaust it quickly.
func (s *Server) SetRateLimit(route string, l RateLimit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits[route] = l
	for k := range s.windows {
		if strings.HasSuffix(k, "|"+route) {
			delete(s.windows, k)
		}
	}
}
