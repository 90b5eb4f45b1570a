package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// exchange is one JSON request to a provider and what to make of its
// answer. Each wire format supplies the URL, its headers and how its
// error body reads; everything else about an HTTP attempt is shared.
type exchange struct {
	provider string
	url      string
	header   http.Header
	key      string
	now      func() time.Time
	// errorBody reads the provider's error JSON; ok is false when the body
	// is not that JSON.
	errorBody func(raw []byte) (typ, msg string, ok bool)
}

// post sends body and decodes a 2xx answer into out. It makes exactly one
// attempt: retries are the client's (client.go), the one retry policy.
// HTTP answers that fail come back as *apiError, already sanitised;
// anything else is a transport failure.
func (x exchange) post(ctx context.Context, hc *http.Client, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode the %s request: %w", x.provider, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.url, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("build the %s request: %w", x.provider, err)
	}
	for k, v := range x.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, readErr := io.ReadAll(resp.Body)
	now := x.now()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return unreadableResponse(x.provider, resp, nil, x.key, now)
	case resp.StatusCode >= 400:
		typ, msg, ok := x.errorBody(raw)
		if readErr != nil || !ok {
			return unreadableResponse(x.provider, resp, readErr, x.key, now)
		}
		ae := &apiError{Provider: x.provider, Status: resp.StatusCode,
			Type: sanitize(typ, x.key), Message: sanitize(msg, x.key)}
		if ae.Message == "" {
			ae.Message = http.StatusText(resp.StatusCode)
		}
		ae.RetryAfter, _ = parseRetryAfter(resp.Header, now)
		return ae
	case readErr != nil:
		return unreadableResponse(x.provider, resp, readErr, x.key, now)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return unreadableResponse(x.provider, resp, err, x.key, now)
	}
	return nil
}
