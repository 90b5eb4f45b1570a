package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xrequest"
)

// MaxPages caps x_get auto-pagination.
const MaxPages = 10

// XGetInput is x_get's input.
type XGetInput struct {
	Path         string        `json:"path" jsonschema:"API path starting with /, e.g. /2/users/me"`
	Host         string        `json:"host,omitempty" jsonschema:"api.x.com (default), upload.x.com or upload.twitter.com"`
	Query        []xrequest.KV `json:"query,omitempty" jsonschema:"query parameters as [{key, value}]"`
	Headers      []xrequest.KV `json:"headers,omitempty" jsonschema:"extra headers as [{key, value}]; only Accept, Accept-Language, Content-Type (application/json), If-None-Match and User-Agent are accepted"`
	AutoPaginate bool          `json:"auto_paginate,omitempty" jsonschema:"follow meta.next_token through pagination_token"`
	MaxPages     int           `json:"max_pages,omitempty" jsonschema:"pages to fetch when auto_paginate is on (default and cap 10)"`
}

// Page is one auto-paginated page.
type Page struct {
	Page   int             `json:"page"`
	Status int             `json:"status"`
	Data   json.RawMessage `json:"data"`
}

// PagedData is x_get's data with auto_paginate.
type PagedData struct {
	Pages      []Page                 `json:"pages"`
	TotalPages int                    `json:"total_pages"`
	RateLimit  *actions.RateLimitInfo `json:"rate_limit,omitempty"`
	// Error is the failing page's error; the pages before it are kept.
	Error *envelope.ErrorBody `json:"error,omitempty"`
}

func xGet(ctx context.Context, c *Call, in XGetInput) (Result, error) {
	req := actions.RawParams{Method: http.MethodGet, Host: in.Host, Path: in.Path, Query: in.Query, Headers: in.Headers}
	if !in.AutoPaginate {
		checked, err := req.Check()
		if err != nil {
			return Result{}, err
		}
		x, err := xclient(c)
		if err != nil {
			return Result{}, err
		}
		resp, err := actions.Send(ctx, x, checked)
		if err != nil {
			return Result{}, err
		}
		rc := resp.RetryCount
		return Result{Data: actions.BuildRawData(resp), Meta: envelope.Meta{RetryCount: &rc}}, nil
	}
	var m envelope.Meta
	pages := clamp("max_pages", in.MaxPages, MaxPages, 1, MaxPages, &m)
	req.Query = xrequest.PaginationStripped(in.Query)
	if _, err := req.Check(); err != nil {
		return Result{}, err
	}
	x, err := xclient(c)
	if err != nil {
		return Result{}, err
	}
	out := PagedData{Pages: []Page{}}
	next, retries := "", 0
	for i := 1; i <= pages; i++ {
		r := req
		if next != "" {
			r.Query = append(append([]xrequest.KV{}, req.Query...), xrequest.KV{Key: "pagination_token", Value: next})
		}
		checked, err := r.Check()
		if err != nil {
			return Result{}, err
		}
		resp, err := actions.Send(ctx, x, checked)
		if err != nil {
			// Keep what was fetched; report the failing page's error beside it.
			e := apperr.As(err)
			out.Error = &envelope.ErrorBody{Code: e.Code, Message: e.Message, Retryable: e.Retryable(), Extra: map[string]any{"page": i}}
			break
		}
		retries += resp.RetryCount
		d := actions.BuildRawData(resp)
		out.RateLimit = d.RateLimit
		body := d.JSON
		if body == nil {
			b, _ := json.Marshal(d.BodyText)
			body = b
		}
		out.Pages = append(out.Pages, Page{Page: i, Status: resp.Status, Data: body})
		if resp.Status >= 400 {
			break
		}
		var meta struct {
			Meta struct {
				NextToken string `json:"next_token"`
			} `json:"meta"`
		}
		next = ""
		if json.Unmarshal(d.JSON, &meta) == nil {
			next = meta.Meta.NextToken
		}
		if next == "" {
			break
		}
	}
	out.TotalPages = len(out.Pages)
	m.Pagination = &envelope.Pagination{NextToken: next, ResultCount: out.TotalPages, HasMore: next != ""}
	m.RetryCount = &retries
	return Result{Data: out, Meta: m}, nil
}

func universalTools() []*Tool {
	reqErrs := append(append([]apperr.Code{}, xErrors...), apperr.XRequestBlocked)
	return append([]*Tool{
		def(Spec{Name: "x_get", Title: "Raw GET", Category: "read", Needs: Needs{X: true}, Profiles: workflowOnly, Hints: readX, Errors: reqErrs,
			Description: "GET any X API v2 path on an allowed host, with optional auto-pagination. An HTTP error status is still success: read data.status.",
			Doc:         rawReadsDoc()},
			xGet),
	}, mutationTools(true)...)
}

// rawReadsDoc lists, from the endpoint table, the reads no typed tool
// makes, with the prices the usage ledger bills them at.
func rawReadsDoc() string {
	var b strings.Builder
	b.WriteString("**Reads no typed tool makes.** Any path may be read; these are the ones tuitbot knows the price of, ")
	b.WriteString("billed per resource returned (each once per UTC day) unless marked per request. ")
	b.WriteString("An owned read (X's \"Owned Reads\") costs its owned price when `:id` is the account's own user.\n\n")
	b.WriteString("| Path | Price (USD) | Owned read (USD) |\n|---|---|---|\n")
	for _, e := range xapi.Known().All() {
		if e.Method != http.MethodGet || !e.RawOnly {
			continue
		}
		price := fmt.Sprintf("%.3f", e.Price.Unit)
		if e.Price.PerRequest {
			price += " per request"
		}
		owned := ""
		if e.Price.Owned > 0 {
			owned = fmt.Sprintf("%.3f", e.Price.Owned)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", e.Path, price, owned)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
