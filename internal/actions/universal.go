package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xrequest"
)

// RawParams are the stored parameters of the universal request tools. They
// keep header values so an approved request replays exactly; the audit
// summary and the fingerprint leave header values out.
type RawParams struct {
	Method  string        `json:"method"`
	Host    string        `json:"host"`
	Path    string        `json:"path"`
	Query   []xrequest.KV `json:"query,omitempty"`
	Headers []xrequest.KV `json:"headers,omitempty"`
	Body    string        `json:"body,omitempty"`
}

// Check validates the request with the guardrails.
func (p RawParams) Check() (*xrequest.Checked, error) {
	return xrequest.Check(xrequest.Request{Method: p.Method, Host: p.Host, Path: p.Path, Query: p.Query, Headers: p.Headers, Body: p.Body})
}

// RateLimitInfo is seed 000's rate_limit object.
type RateLimitInfo struct {
	Remaining         int   `json:"remaining"`
	ResetAt           int64 `json:"reset_at"`
	RecommendedWaitMS int64 `json:"recommended_wait_ms"`
}

// RawData is seed 000's response data.
type RawData struct {
	Status    int               `json:"status"`
	Headers   map[string]string `json:"headers"`
	JSON      json.RawMessage   `json:"json,omitempty"`
	BodyText  string            `json:"body_text,omitempty"`
	RateLimit *RateLimitInfo    `json:"rate_limit,omitempty"`
}

// responseHeaders are the only response headers returned to agents.
var responseHeaders = []string{"content-type", "x-rate-limit-limit", "x-rate-limit-remaining", "x-rate-limit-reset", "location"}

// BuildRawData shapes X's answer for the agent.
func BuildRawData(r *xapi.RawResponse) RawData {
	d := RawData{Status: r.Status, Headers: map[string]string{}}
	for _, h := range responseHeaders {
		if v := r.Header.Get(h); v != "" {
			d.Headers[h] = v
		}
	}
	if strings.Contains(r.Header.Get("Content-Type"), "json") && json.Valid(r.Body) {
		d.JSON = json.RawMessage(r.Body)
	} else if len(r.Body) > 0 {
		d.BodyText = string(r.Body)
	}
	if rl := r.RateLimit; rl != nil && rl.HasWindow {
		d.RateLimit = &RateLimitInfo{Remaining: rl.Remaining, ResetAt: rl.Reset.Unix(), RecommendedWaitMS: rl.RecommendedWaitMS}
	}
	return d
}

// Send performs a checked request.
func Send(ctx context.Context, x *xapi.Client, c *xrequest.Checked) (*xapi.RawResponse, error) {
	return x.Raw(ctx, xapi.RawRequest{Method: c.Method, Host: c.Host, Path: c.Path, Query: c.Query, Header: c.Header, Body: c.Body})
}

// universalAction builds the action of the universal request tool that
// sends method.
func universalAction(method string) func(Deps, Mutation) *gateway.Action {
	return func(d Deps, m Mutation) *gateway.Action {
		tool := m.Name
		shapes := paramShapes()
		parse := func(params json.RawMessage) (*xrequest.Checked, error) {
			var p RawParams
			if err := decode(params, &p); err != nil {
				return nil, err
			}
			if p.Method != method {
				return nil, apperr.New(apperr.InvalidInput, "method: %s sends %s, not %q", tool, method, p.Method)
			}
			return p.Check()
		}
		return &gateway.Action{
			// A request that posts or edits meets the typed tool's checks
			// as well as its policy (postWork).
			Validate: func(params json.RawMessage) error {
				c, err := parse(params)
				if err != nil {
					return err
				}
				return postWorkOf(c).within(knownLimit(d.PostLimit))
			},
			Precheck: func(ctx context.Context, params json.RawMessage) (time.Time, error) {
				c, err := parse(params)
				if err != nil {
					return time.Time{}, err
				}
				return postWorkOf(c).beforeX(ctx, d)
			},
			// A route no row lists goes to a person, whatever the rules say.
			Unlisted: func(params json.RawMessage) bool {
				c, err := parse(params)
				return err == nil && !xrequest.ClassifyChecked(c).Listed()
			},
			// The request gets the policy of the typed tool it does the work
			// of (a DELETE of a tweet is x_delete_tweet, so the
			// always-approve-deletes hard rule holds) as well as its own.
			Equivalent: func(params json.RawMessage) string {
				c, err := parse(params)
				if err != nil {
					return ""
				}
				return xrequest.ClassifyChecked(c).Equivalent()
			},
			// A reply written as a raw POST /2/tweets names the post it
			// answers, like x_reply_to_tweet, so it counts as answering it.
			Target: func(params json.RawMessage) string {
				c, err := parse(params)
				if err != nil {
					return ""
				}
				p, _ := postOfRequest(c)
				return p.InReplyToID
			},
			// A request that does the work of a typed tool has that tool's
			// intent, so the two are one call for the duplicate checks.
			Intent: func(params json.RawMessage) (string, json.RawMessage, bool) {
				c, err := parse(params)
				if err != nil {
					return "", nil, false
				}
				return requestIntent(c, shapes)
			},
			Fingerprint: func(params json.RawMessage) ([]byte, error) {
				c, err := parse(params)
				if err != nil {
					return nil, err
				}
				return xrequest.CanonicalJSON(c)
			},
			// The canonical request (method, host, path, query, body; no
			// headers at all, so no header value) is what a human compares
			// with X when the outcome is unknown.
			Request: func(params json.RawMessage) []byte {
				c, err := parse(params)
				if err != nil {
					return nil
				}
				b, _ := xrequest.CanonicalJSON(c)
				return b
			},
			Verify: func(ctx context.Context, params json.RawMessage) (any, bool, error) {
				c, err := parse(params)
				if err != nil {
					return nil, false, err
				}
				p, ok := postOfRequest(c)
				if !ok {
					return nil, false, nil
				}
				return findOwnPost(ctx, d, p)
			},
			Summary: func(params json.RawMessage) any {
				c, err := parse(params)
				if err != nil {
					return map[string]any{"invalid": true}
				}
				return xrequest.Summary(c)
			},
			Cost: func(params json.RawMessage) float64 {
				c, err := parse(params)
				if err != nil {
					return 0
				}
				return xapi.EstimateWrite(c.Method, c.Path, c.Body)
			},
			Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
				c, err := parse(params)
				if err != nil {
					return gateway.Result{}, err
				}
				// Checked again here: an approved request runs long after it
				// was queued, and an edit's window may have closed meanwhile.
				if _, err := postWorkOf(c).beforeX(ctx, d); err != nil {
					return gateway.Result{}, err
				}
				x, err := client(d)
				if err != nil {
					return gateway.Result{}, err
				}
				resp, err := Send(ctx, x, c)
				if err != nil {
					return gateway.Result{}, err
				}
				data := BuildRawData(resp)
				res := gateway.Result{
					Data:       data,
					Rollback:   rawRollback(c, resp),
					RetryCount: resp.RetryCount,
					// X answered, so the tool succeeded (seed D-016); a 5xx to a
					// write still leaves the effect unknown in the audit.
					Unknown: resp.OutcomeUnknown,
				}
				if !resp.OutcomeUnknown && resp.Status >= 300 && resp.Status < 500 {
					// X refused it: the audit says so and no call is answered
					// as a duplicate of it.
					res.NotApplied = xapi.Classify(resp.Status, resp.Header, resp.Body, d.now())
				}
				return res, nil
			},
		}
	}
}

// rawRollback infers the inverse of a universal request when it is known.
// It says what the audit row says: an answer that leaves the outcome
// unknown is never reported as a request X did not apply.
func rawRollback(c *xrequest.Checked, resp *xapi.RawResponse) *envelope.Rollback {
	e := xrequest.ClassifyChecked(c)
	ep, ok := e.Same(xapi.Known())
	status := fmt.Sprintf("%d %s", resp.Status, http.StatusText(resp.Status))
	switch {
	case resp.OutcomeUnknown:
		return irreversible(unknownRawNote(e, ep, ok, status))
	case resp.Status >= 500:
		// Only a POST's 5xx is unknown in the audit: PUT and DELETE are
		// idempotent, so sending them again cannot apply them twice.
		return irreversible("X answered " + status + ": it may or may not have applied the request. " +
			"Read the object back on X (x_get) before relying on it; sending the same request again is safe, X applies it at most once.")
	case resp.Status >= 300:
		return irreversible("X did not apply the request (" + status + "); nothing to undo.")
	}
	// The undo is the one the endpoint table gives the typed tool with the
	// same effect, so a raw like is undone exactly as x_like_tweet is.
	switch {
	case ok && ep.Kind == xapi.EffectDelete:
		return irreversible("Deletion is permanent.")
	case ok && ep.Undo != nil:
		var id string
		switch {
		case ep.Kind == xapi.EffectCreate:
			// Undone through the id X returned: the new post or List, or the
			// new version of the post edited.
			// A message is undone through the event X returned.
			var body struct {
				Data struct {
					ID        string `json:"id"`
					DMEventID string `json:"dm_event_id"`
				} `json:"data"`
			}
			if json.Unmarshal(resp.Body, &body) == nil {
				id = body.Data.ID
				if ep.Undo.Param == "dm_event_id" {
					id = body.Data.DMEventID
				}
			}
		case ep.Undo.Param == "target_user_id" || ep.Undo.Param == "user_id":
			id = e.TargetUserID
		default:
			id = e.TweetID
		}
		params := map[string]any{ep.Undo.Param: id}
		if e.ListID != "" {
			// A membership change is undone on the List it named.
			params["list_id"] = e.ListID
		}
		if id != "" {
			return rb(ep.Undo.Tool, params, ep.Undo.Note)
		}
	}
	return irreversible("No known inverse for " + c.Method + " " + c.Path + ".")
}

// unknownRawNote is the guidance for a raw write whose outcome is unknown:
// X took the request but its answer (a 5xx) does not say whether it was
// applied. It says so, how to look on X, how to record what was found, and
// what undoes the effect if it did happen.
func unknownRawNote(e xrequest.Effect, ep xapi.Endpoint, known bool, status string) string {
	check := "read the affected object back on X (x_get)"
	switch e.Kind {
	case xrequest.KindTweetCreate:
		check = "look for the post among your own recent posts (x_get_me for your id, then x_get_user_tweets)"
	case xrequest.KindTweetEdit:
		check = "read the edited post's edit_history_tweet_ids (x_get with tweet.fields=edit_controls) for a newer version"
	case xrequest.KindLike:
		check = "look for the post among your likes (x_get_liked_tweets)"
	case xrequest.KindFollow:
		check = "look for the account among those you follow (x_get_following)"
	case xrequest.KindBookmark:
		check = "look for the post among your bookmarks (x_get_bookmarks)"
	}
	undo := "No known inverse for " + e.Endpoint + "."
	switch {
	case known && ep.Kind == xapi.EffectDelete:
		undo = "A deletion that happened is permanent."
	case known && ep.Undo != nil:
		undo = "If it happened and should not have, undo it with " + ep.Undo.Tool + " once you know the id."
	case !known:
		undo = "No known inverse for this request."
	}
	return "The outcome is unknown: X answered " + status + " after receiving the request, so it may or may not have applied it. " +
		"To check, " + check + ". Then record what you found with `tuitbot audit resolve <correlation_id> --happened` or `--did-not-happen` " +
		"(or resolve_mutation); until then an identical request is refused. " + undo
}
