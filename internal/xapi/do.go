package xapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// request is one logical call; exec turns it into one or more attempts.
type request struct {
	method string
	host   string
	path   string
	query  url.Values
	// rawQuery, when set, is the already-encoded query and wins over query.
	rawQuery  string
	header    http.Header
	body      []byte
	ctype     string
	tpl       string
	endpoint  string
	class     retryClass
	raw       bool
	writeCost float64
	// decode, when set, parses a 2xx body of a typed call; an error marks
	// the answer as malformed. It returns the resources for the ledger.
	decode func(body []byte) (*readResources, error)
}

func newRequest(method, host, path string, query url.Values, body []byte) *request {
	method = strings.ToUpper(method)
	tpl := pathTemplate(path)
	r := &request{
		method:   method,
		host:     host,
		path:     path,
		query:    query,
		body:     body,
		tpl:      tpl,
		endpoint: method + " " + tpl,
		class:    classFor(method, tpl),
	}
	if method != "GET" && method != "HEAD" {
		r.writeCost = EstimateWrite(method, path, body)
	}
	if body != nil {
		r.ctype = "application/json"
	}
	return r
}

// response is what exec hands back for a completed call.
type response struct {
	status    int
	header    http.Header
	body      []byte
	retries   int
	rateLimit *RateLimitState
	// outcomeUnknown is set for raw create requests answered with 5xx.
	outcomeUnknown bool
}

func (r *response) callInfo() CallInfo {
	return CallInfo{RetryCount: r.retries, RateLimit: r.rateLimit}
}

// attemptResult is the raw outcome of one HTTP attempt.
type attemptResult struct {
	status   int
	header   http.Header
	body     []byte
	err      error
	sent     bool
	tooLarge bool
}

var (
	errBodyTooLarge = errors.New("response body exceeds the size limit")
	errMalformed    = errors.New("response body is not valid JSON")
)

func (c *Client) accessToken(ctx context.Context) (string, error) {
	if c.tokens == nil {
		return "", notConfigured(nil)
	}
	tok, err := c.tokens.AccessToken(ctx)
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return "", ae
		}
		return "", notConfigured(err)
	}
	if strings.TrimSpace(tok) == "" {
		return "", notConfigured(nil)
	}
	return tok, nil
}

// Ready reports whether a call could be attempted now: credentials exist
// and yield an access token. It sends nothing to X's API, so the gateway can
// ask before it records an attempt.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.accessToken(ctx)
	return err
}

func notConfigured(cause error) *apperr.Error {
	return apperr.Wrap(apperr.XNotConfigured, cause, "no usable X credentials").WithHints(apperr.SignIn()...)
}

// buildURL joins a base URL and a validated path without ever letting the
// path change scheme or host.
func buildURL(base *url.URL, path string, q url.Values) string {
	u := url.URL{Scheme: base.Scheme, Host: base.Host, Path: base.Path + path}
	if strings.Contains(path, "%") {
		if dec, err := url.PathUnescape(path); err == nil {
			u.Path, u.RawPath = base.Path+dec, base.Path+path
		}
	}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// exec runs r with the retry policy of its class and returns the final
// response. Typed calls (r.raw false) get an error for every non-2xx answer;
// raw calls get the response whatever its status.
func (c *Client) exec(ctx context.Context, r *request) (*response, error) {
	base, err := c.resolveHost(r.host)
	if err != nil {
		return nil, err
	}
	if r.method == "POST" && r.tpl == "/2/tweets" {
		if hasURL, replyTo := postBody(r.body); replyTo != "" && c.ownPost(replyTo) {
			// A reply to the account's own post (a thread) is no summoned
			// reply: X bills it as a post.
			r.writeCost = writePrice("POST", "/2/tweets", hasURL, false)
		}
	}
	token, err := c.accessToken(ctx)
	if err != nil {
		return nil, err
	}
	target := buildURL(base, r.path, r.query)
	if r.rawQuery != "" {
		target += "?" + r.rawQuery
	}
	maxAttempts := c.maxAttempts
	refreshed := false
	for attempt := 1; ; attempt++ {
		res := c.attempt(ctx, r, target, token)
		now := c.now()
		out := &response{status: res.status, header: res.header, body: res.body, retries: attempt - 1}
		if res.header != nil {
			out.rateLimit = c.limits.update(c.account, r.endpoint, res.header, now)
		}
		canRetry := attempt < maxAttempts
		var (
			failure *apperr.Error
			retry   bool
			wait    time.Duration
			applied bool
			done    bool
			rr      *readResources
		)
		switch {
		case res.err != nil:
			applied = res.sent
			switch {
			case ctx.Err() != nil:
				failure = c.transportFailure(r, res, ctx.Err())
			case res.tooLarge:
				failure = c.tooLargeFailure(r, res)
			default:
				failure = c.transportFailure(r, res, res.err)
				retry = canRetry && (r.class == classSafe || !res.sent)
				wait = c.backoff(attempt)
			}
		case res.status == http.StatusUnauthorized:
			if !refreshed && c.tokens != nil {
				c.recordUsage(ctx, r, attempt, res.status, res.body, nil, false, apperr.XAuthExpired)
				refreshed = true
				tok, rerr := c.tokens.Refresh(ctx)
				if rerr != nil || strings.TrimSpace(tok) == "" {
					c.log.Warn("x access token refresh failed after 401", "endpoint", r.endpoint)
					if r.raw {
						// Raw callers get X's 401 as is, like any other status.
						out.header = safeHeader(out.header, token)
						return out, nil
					}
					e := apperr.Wrap(apperr.XAuthExpired, rerr, "X rejected the access token and refreshing it failed; run `tuitbot auth` to sign in again")
					return nil, c.scrub(e.With("http_status", res.status), token, attempt-1)
				}
				c.log.Debug("x access token refreshed after 401", "endpoint", r.endpoint)
				token = tok
				maxAttempts++
				continue
			}
			if r.raw {
				done = true
			} else {
				failure = Classify(res.status, res.header, res.body, now)
			}
		case res.status == http.StatusTooManyRequests:
			w, _, known := retryAfter(res.header, now)
			if !known {
				w = c.backoff(attempt)
			}
			switch {
			case canRetry && w <= c.maxRateWait:
				retry, wait = true, w
				failure = Classify(res.status, res.header, res.body, now)
			case r.raw:
				done = true
			default:
				failure = Classify(res.status, res.header, res.body, now)
				if !known {
					failure.With("retry_after_ms", c.maxRateWait.Milliseconds())
				}
			}
		case res.status >= 500:
			applied = true
			switch {
			case r.class == classSafe && canRetry:
				retry, wait = true, c.backoff(attempt)
				failure = Classify(res.status, res.header, res.body, now)
			case r.raw:
				out.outcomeUnknown = r.class == classCreate
				done = true
			case r.class == classCreate:
				failure = outcomeUnknown(r, fmt.Sprintf("X answered %d", res.status)).With("http_status", res.status)
			default:
				failure = Classify(res.status, res.header, res.body, now)
			}
		case res.status < 200 || res.status >= 300:
			switch {
			case r.raw:
				// A redirected POST is as uncertain as a typed one's (below).
				out.outcomeUnknown = r.class == classCreate && res.status < 400
				done = true
			case r.class == classCreate && res.status < 400:
				failure = outcomeUnknown(r, fmt.Sprintf("X answered with a redirect (%d), which the client never follows", res.status)).With("http_status", res.status)
			default:
				failure = scopeGroupHint(Classify(res.status, res.header, res.body, now), r.method, r.tpl)
			}
		default:
			applied = true
			var derr error
			switch {
			case r.raw:
			case r.decode != nil:
				rr, derr = r.decode(res.body)
			case !json.Valid(res.body):
				derr = errMalformed
			}
			if derr == nil {
				done = true
				break
			}
			if r.class == classCreate {
				failure = outcomeUnknown(r, "X's answer could not be read")
				failure.Err = derr
				break
			}
			failure = apperr.Wrap(apperr.XNetworkError, derr, "X's answer to %s could not be read (cut off or malformed)", r.endpoint)
			retry, wait = canRetry, c.backoff(attempt)
		}

		code := apperr.Code("")
		if failure != nil {
			code = failure.Code
		}
		c.recordUsage(ctx, r, attempt, res.status, res.body, rr, applied, code)
		if done {
			if r.raw {
				out.header = safeHeader(out.header, token)
			}
			c.log.Debug("x request", "endpoint", r.endpoint, "status", res.status, "attempts", attempt)
			return out, nil
		}
		if retry {
			c.log.Debug("x request retry", "endpoint", r.endpoint, "status", res.status, "attempt", attempt, "wait", wait, "reason", code)
			if err := c.sleep(ctx, wait); err != nil {
				e := apperr.Wrap(apperr.XNetworkError, err, "gave up waiting to retry %s", r.endpoint)
				return nil, c.scrub(e, token, attempt-1)
			}
			continue
		}
		c.log.Debug("x request failed", "endpoint", r.endpoint, "status", res.status, "attempts", attempt, "code", code)
		return nil, c.scrub(failure, token, attempt-1)
	}
}

// attempt performs one HTTP exchange and reads the capped body.
func (c *Client) attempt(ctx context.Context, r *request, target, token string) attemptResult {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var gotConn atomic.Bool
	if r.class == classCreate {
		// Only creates need to know whether a connection ever existed.
		actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) },
		})
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(actx, r.method, target, body)
	if err != nil {
		return attemptResult{err: err}
	}
	for k, vs := range r.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	// Keys are already canonical; direct assignment skips re-canonicalising.
	if r.ctype != "" && len(req.Header["Content-Type"]) == 0 {
		req.Header["Content-Type"] = []string{r.ctype}
	}
	if len(req.Header["Accept"]) == 0 {
		req.Header["Accept"] = []string{"application/json"}
	}
	if len(req.Header["User-Agent"]) == 0 {
		req.Header["User-Agent"] = []string{"tuitbot"}
	}
	req.Header["Authorization"] = []string{"Bearer " + token}
	resp, err := c.http.Do(req)
	if err != nil {
		return attemptResult{err: err, sent: c.maybeSent(err, r.class == classCreate, gotConn.Load())}
	}
	defer resp.Body.Close()
	res := attemptResult{status: resp.StatusCode, header: resp.Header, sent: true}
	if resp.ContentLength > c.maxBody {
		res.err, res.tooLarge = errBodyTooLarge, true
		return res
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	switch {
	case err != nil:
		res.err = err
	case int64(len(b)) > c.maxBody:
		res.err, res.tooLarge = errBodyTooLarge, true
	default:
		res.body = b
	}
	return res
}

// maybeSent reports whether a failed exchange may have delivered the
// request to X. Only failures before a connection existed prove it did not:
// a dial error, or (with the standard transport, which reports connection
// acquisition to the trace set up for creates) no connection at all.
func (c *Client) maybeSent(err error, traced, gotConn bool) bool {
	if isDialError(err) {
		return false
	}
	if _, std := c.http.Transport.(*http.Transport); std && traced && !gotConn {
		return false
	}
	return true
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// backoff is the jittered exponential delay before retry number attempt.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.baseBackoff
	for i := 1; i < attempt && d < MaxBackoff; i++ {
		d *= 2
	}
	if d > MaxBackoff {
		d = MaxBackoff
	}
	half := int64(d / 2)
	return time.Duration(half + c.jitter(half+1))
}

func defaultJitter(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return rand.Int64N(n)
}

func outcomeUnknown(r *request, why string) *apperr.Error {
	return apperr.New(apperr.XOutcomeUnknown, "%s: X may or may not have applied %s; verify (for example read the timeline) before trying again", why, r.endpoint)
}

func (c *Client) transportFailure(r *request, res attemptResult, cause error) *apperr.Error {
	what := "the request failed"
	if errors.Is(cause, context.DeadlineExceeded) {
		what = "the request timed out"
	} else if errors.Is(cause, context.Canceled) {
		what = "the request was cancelled"
	}
	if r.class == classCreate && res.sent {
		e := outcomeUnknown(r, what)
		e.Err = cause
		return e
	}
	return apperr.Wrap(apperr.XNetworkError, cause, "%s before X answered %s", what, r.endpoint)
}

func (c *Client) tooLargeFailure(r *request, res attemptResult) *apperr.Error {
	if r.class == classCreate && res.status >= 200 && res.status < 300 {
		return outcomeUnknown(r, fmt.Sprintf("X's answer exceeded %d bytes", c.maxBody))
	}
	return apperr.New(apperr.XAPIError, "X's answer to %s exceeded the %d-byte limit", r.endpoint, c.maxBody).With("http_status", res.status)
}

// scrub guarantees the token appears nowhere in what the caller sees and
// records the retry count.
func (c *Client) scrub(e *apperr.Error, token string, retries int) error {
	if e == nil {
		return nil
	}
	if token != "" {
		if strings.Contains(e.Message, token) {
			e.Message = strings.ReplaceAll(e.Message, token, "[redacted]")
		}
		if e.Err != nil && strings.Contains(e.Err.Error(), token) {
			e.Err = errors.New(strings.ReplaceAll(e.Err.Error(), token, "[redacted]"))
		}
		for k, v := range e.Extra {
			if s, ok := v.(string); ok && strings.Contains(s, token) {
				e.Extra[k] = strings.ReplaceAll(s, token, "[redacted]")
			}
		}
	}
	if retries > 0 {
		e.With("retry_count", retries)
	}
	return e
}
