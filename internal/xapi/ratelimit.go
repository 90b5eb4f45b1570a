package xapi

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DailyLimit is one of X's 24-hour quotas (x-user-limit-24hour-* or
// x-app-limit-24hour-*).
type DailyLimit struct {
	Limit     int       `json:"limit"`
	Remaining int       `json:"remaining"`
	Reset     time.Time `json:"reset"`
}

// RateLimitState is the last rate-limit information X sent for one endpoint
// template and account.
type RateLimitState struct {
	AccountID string `json:"account_id,omitempty"`
	// Endpoint is "METHOD /template", e.g. "POST /2/tweets".
	Endpoint string `json:"endpoint"`
	// Limit, Remaining and Reset describe the 15-minute window; HasWindow is
	// false when X sent no x-rate-limit-* headers.
	HasWindow bool        `json:"has_window"`
	Limit     int         `json:"limit"`
	Remaining int         `json:"remaining"`
	Reset     time.Time   `json:"reset"`
	User24h   *DailyLimit `json:"user_24h,omitempty"`
	App24h    *DailyLimit `json:"app_24h,omitempty"`
	// RecommendedWaitMS is 0 while a quota remains, else the milliseconds
	// until the exhausted window (the latest one, if several) resets.
	RecommendedWaitMS int64     `json:"recommended_wait_ms"`
	ObservedAt        time.Time `json:"observed_at"`
}

// recommendedWait computes RecommendedWaitMS at now.
func (s RateLimitState) recommendedWait(now time.Time) int64 {
	var until time.Time
	if s.HasWindow && s.Remaining <= 0 && s.Reset.After(until) {
		until = s.Reset
	}
	for _, d := range []*DailyLimit{s.User24h, s.App24h} {
		if d != nil && d.Remaining <= 0 && d.Reset.After(until) {
			until = d.Reset
		}
	}
	if until.IsZero() || !until.After(now) {
		return 0
	}
	return until.Sub(now).Milliseconds()
}

type rateLimits struct {
	mu sync.Mutex
	m  map[limitKey]RateLimitState
}

type limitKey struct{ account, endpoint string }

func newRateLimits() *rateLimits { return &rateLimits{m: map[limitKey]RateLimitState{}} }

// parseRateLimit reads X's rate-limit headers; ok is false when none are
// present.
func parseRateLimit(h http.Header) (s RateLimitState, ok bool) {
	if l, r, reset, found := parseWindow(h, windowHeaders); found {
		s.HasWindow, s.Limit, s.Remaining, s.Reset = true, l, r, reset
		ok = true
	}
	if l, r, reset, found := parseWindow(h, userDayHeaders); found {
		s.User24h = &DailyLimit{Limit: l, Remaining: r, Reset: reset}
		ok = true
	}
	if l, r, reset, found := parseWindow(h, appDayHeaders); found {
		s.App24h = &DailyLimit{Limit: l, Remaining: r, Reset: reset}
		ok = true
	}
	return s, ok
}

// The header names in canonical form, so lookups skip canonicalisation.
var (
	windowHeaders  = [3]string{"X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset"}
	userDayHeaders = [3]string{"X-User-Limit-24hour-Limit", "X-User-Limit-24hour-Remaining", "X-User-Limit-24hour-Reset"}
	appDayHeaders  = [3]string{"X-App-Limit-24hour-Limit", "X-App-Limit-24hour-Remaining", "X-App-Limit-24hour-Reset"}
)

func headerValue(h http.Header, canonical string) string {
	if v := h[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// parseWindow needs at least remaining or reset to be well-formed; malformed
// values are ignored rather than guessed.
func parseWindow(h http.Header, names [3]string) (limit, remaining int, reset time.Time, found bool) {
	ls, rs, zs := headerValue(h, names[0]), headerValue(h, names[1]), headerValue(h, names[2])
	if ls == "" && rs == "" && zs == "" {
		return 0, 0, time.Time{}, false
	}
	var okL, okR, okZ bool
	if v, err := strconv.Atoi(strings.TrimSpace(ls)); err == nil && v >= 0 {
		limit, okL = v, true
	}
	if v, err := strconv.Atoi(strings.TrimSpace(rs)); err == nil && v >= 0 {
		remaining, okR = v, true
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(zs), 10, 64); err == nil && v > 0 && v < 1<<40 {
		reset, okZ = time.Unix(v, 0).UTC(), true
	}
	if !okR && !okZ {
		return 0, 0, time.Time{}, false
	}
	if !okR && okL {
		remaining = limit
	}
	return limit, remaining, reset, okL || okR || okZ
}

// update stores what h says about endpoint and returns the new state, or nil
// when h carries no rate-limit headers.
func (r *rateLimits) update(account, endpoint string, h http.Header, now time.Time) *RateLimitState {
	s, ok := parseRateLimit(h)
	if !ok {
		return nil
	}
	s.AccountID, s.Endpoint, s.ObservedAt = account, endpoint, now
	key := limitKey{account, endpoint}
	r.mu.Lock()
	if prev, had := r.m[key]; had {
		// A response may carry only some header groups (24-hour quotas appear
		// on few endpoints); keep the others from earlier responses.
		if !s.HasWindow && prev.HasWindow {
			s.HasWindow, s.Limit, s.Remaining, s.Reset = true, prev.Limit, prev.Remaining, prev.Reset
		}
		if s.User24h == nil {
			s.User24h = prev.User24h
		}
		if s.App24h == nil {
			s.App24h = prev.App24h
		}
	}
	r.m[key] = s
	r.mu.Unlock()
	s.RecommendedWaitMS = s.recommendedWait(now)
	return &s
}

func (r *rateLimits) snapshot(now time.Time) []RateLimitState {
	r.mu.Lock()
	out := make([]RateLimitState, 0, len(r.m))
	for _, s := range r.m {
		out = append(out, s)
	}
	r.mu.Unlock()
	for i := range out {
		out[i].RecommendedWaitMS = out[i].recommendedWait(now)
		if out[i].User24h != nil {
			d := *out[i].User24h
			out[i].User24h = &d
		}
		if out[i].App24h != nil {
			d := *out[i].App24h
			out[i].App24h = &d
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].AccountID != out[b].AccountID {
			return out[a].AccountID < out[b].AccountID
		}
		return out[a].Endpoint < out[b].Endpoint
	})
	return out
}

// RateLimits returns the latest known rate-limit state of every endpoint
// this client has called, sorted by endpoint.
func (c *Client) RateLimits() []RateLimitState {
	return c.limits.snapshot(c.now())
}

// RateLimit returns the state of one endpoint ("POST /2/tweets"), if known.
func (c *Client) RateLimit(endpoint string) (RateLimitState, bool) {
	for _, s := range c.RateLimits() {
		if s.Endpoint == endpoint {
			return s, true
		}
	}
	return RateLimitState{}, false
}

// retryAfter is how long X asks us to wait after a 429: until the 15-minute
// reset, or a later exhausted 24-hour reset. ok is false when X sent no
// usable reset.
func retryAfter(h http.Header, now time.Time) (time.Duration, time.Time, bool) {
	s, ok := parseRateLimit(h)
	if !ok {
		return 0, time.Time{}, false
	}
	var until time.Time
	if s.HasWindow && !s.Reset.IsZero() {
		until = s.Reset
	}
	for _, d := range []*DailyLimit{s.User24h, s.App24h} {
		if d != nil && d.Remaining <= 0 && d.Reset.After(until) {
			until = d.Reset
		}
	}
	if until.IsZero() {
		return 0, time.Time{}, false
	}
	w := until.Sub(now)
	if w < 0 {
		w = 0
	}
	return w, until, true
}
