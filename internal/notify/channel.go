package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Channel delivers messages to one configured destination.
type Channel interface {
	Name() string
	Type() string
	// Send delivers m and returns the destination's reference for it
	// (a message id to edit later), or an error; a *SendError says whether
	// to retry and when.
	Send(ctx context.Context, m Message) (ref string, err error)
}

// SendError is a failed delivery as the dispatcher acts on it.
type SendError struct {
	// Status is the HTTP or SMTP status, 0 for a network error.
	Status int
	// Permanent errors are a bad configuration (a 4xx other than 408 or
	// 429): retrying cannot help.
	Permanent bool
	// RetryAfter is the wait the destination asked for (0: none).
	RetryAfter time.Duration
	Err        error
	// body is the destination's answer (capped), for channels whose API
	// explains itself there.
	body []byte
}

func (e *SendError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("status %d: %v", e.Status, e.Err)
	}
	return e.Err.Error()
}

func (e *SendError) Unwrap() error { return e.Err }

// maxResponseBytes caps what is read of a destination's answer.
const maxResponseBytes = 64 << 10

// postJSON sends body to url with headers and classifies the answer. A
// 2xx answer's body is returned.
func postJSON(ctx context.Context, client *http.Client, url string, body []byte, headers map[string]string, now func() time.Time) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &SendError{Permanent: true, Err: fmt.Errorf("build the request: %w", unwrapURLError(err))}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tuitbot-notify")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(client, req, now)
}

// do sends req and classifies the answer: 2xx is success; 408, 429 and 5xx
// are retried (after Retry-After when given); any other 4xx is permanent.
func do(client *http.Client, req *http.Request, now func() time.Time) ([]byte, error) {
	// Whatever client a channel was given, a redirect is never followed.
	c := *client
	c.CheckRedirect = noRedirect
	resp, err := c.Do(req)
	if err != nil {
		// The URL may hold a secret (a Slack or Discord webhook): say which
		// host failed, never the whole URL.
		return nil, &SendError{Err: fmt.Errorf("%s %s: %w", req.Method, req.URL.Host, unwrapURLError(err))}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return b, nil
	}
	e := &SendError{Status: resp.StatusCode, Err: fmt.Errorf("%s answered %s: %s", req.URL.Host, resp.Status, snippet(b)), body: b}
	switch {
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now())
	case resp.StatusCode >= 400:
		e.Permanent = true
	case resp.StatusCode >= 300:
		// Redirects are not followed (the body is signed for this URL,
		// and the URL may be a secret): the configured URL is wrong.
		e.Permanent = true
		e.Err = fmt.Errorf("%s answered %s: redirects are not followed; configure the final URL", req.URL.Host, resp.Status)
	}
	return nil, e
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// unwrapURLError drops the URL a *url.Error puts in front of the cause.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}
