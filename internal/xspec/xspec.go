// Package xspec validates HTTP traffic against X's OpenAPI document, so tests
// can prove that the X client and the emulator both speak X's real wire
// format. It is used only by tests and development tools.
package xspec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Spec is a loaded, routable OpenAPI document.
type Spec struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options
	// problemTypes are the problem "type" URIs the document's Problem union
	// describes.
	problemTypes map[string]bool
}

// lenientRegex compiles patterns with Go's RE2 and treats the ones RE2
// cannot express (X's document uses look-ahead) as matching everything, so
// every other pattern is still enforced.
func lenientRegex(expr string) (openapi3.RegexMatcher, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return matchAll{}, nil
	}
	return re, nil
}

type matchAll struct{}

func (matchAll) MatchString(string) bool { return true }

// Load reads and indexes an OpenAPI document (X's openapi.json).
func Load(path string) (*Spec, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("xspec: load %s: %w", path, err)
	}
	return fromDoc(doc)
}

// LoadData is Load for a document already in memory.
func LoadData(data []byte) (*Spec, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("xspec: load: %w", err)
	}
	return fromDoc(doc)
}

func fromDoc(doc *openapi3.T) (*Spec, error) {
	// Routing must not depend on the host: the traffic under test goes to a
	// loopback emulator or a test server, not to the document's server URL.
	doc.Servers = nil
	router, err := legacy.NewRouter(doc,
		openapi3.SetRegexCompiler(lenientRegex),
		openapi3.DisableExamplesValidation(),
		openapi3.DisableSchemaDefaultsValidation(),
	)
	if err != nil {
		return nil, fmt.Errorf("xspec: index document: %w", err)
	}
	s := &Spec{
		doc:    doc,
		router: router,
		opts: &openapi3filter.Options{
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			MultiError:         true,
			RegexCompiler:      lenientRegex,
			SchemaValidationOptions: []openapi3.SchemaValidationOption{
				openapi3.SetSchemaRegexCompiler(lenientRegex),
			},
		},
		problemTypes: map[string]bool{},
	}
	if doc.Components == nil {
		return s, nil
	}
	if p := doc.Components.Schemas["Problem"]; p != nil && p.Value != nil && p.Value.Discriminator != nil {
		for typ := range p.Value.Discriminator.Mapping {
			s.problemTypes[typ] = true
		}
	}
	return s, nil
}

// Doc exposes the parsed document.
func (s *Spec) Doc() *openapi3.T { return s.doc }

// HasOperation reports whether the document has method on the templated
// path (for example "GET", "/2/tweets/{id}").
func (s *Spec) HasOperation(method, pathTemplate string) bool {
	item := s.doc.Paths.Value(pathTemplate)
	return item != nil && item.GetOperation(strings.ToUpper(method)) != nil
}

// Route returns the document's path template for a concrete request, or an
// error when the document has no such operation.
func (s *Spec) Route(r *http.Request) (string, error) {
	route, _, err := s.findRoute(r)
	if err != nil {
		return "", err
	}
	return route.Path, nil
}

func (s *Spec) findRoute(r *http.Request) (*routers.Route, map[string]string, error) {
	// Route on a copy whose URL has no host, so the absolute request URLs an
	// http.Client sends still match.
	u := *r.URL
	u.Scheme, u.Host = "", ""
	rr := r.Clone(r.Context())
	rr.URL = &u
	route, params, err := s.router.FindRoute(rr)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s is not in the spec: %w", r.Method, r.URL.Path, err)
	}
	return route, params, nil
}

func (s *Spec) input(r *http.Request, body []byte) (*openapi3filter.RequestValidationInput, error) {
	route, params, err := s.findRoute(r)
	if err != nil {
		return nil, err
	}
	rr := r.Clone(context.WithoutCancel(r.Context()))
	if body != nil {
		rr.Body = io.NopCloser(bytes.NewReader(body))
		rr.ContentLength = int64(len(body))
	} else {
		rr.Body = http.NoBody
	}
	return &openapi3filter.RequestValidationInput{Request: rr, PathParams: params, Route: route, Options: s.opts}, nil
}

// Violation is a request or response that does not conform to the document.
type Violation struct {
	Response bool // false: the request is at fault
	Method   string
	Path     string
	Status   int // response status (responses only)
	Err      error
}

func (v *Violation) Error() string {
	if v.Response {
		return fmt.Sprintf("xspec: response %d to %s %s: %v", v.Status, v.Method, v.Path, v.Err)
	}
	return fmt.Sprintf("xspec: request %s %s: %v", v.Method, v.Path, v.Err)
}

func (v *Violation) Unwrap() error { return v.Err }

// ValidateRequest checks r (whose body is passed separately, as it may
// already have been consumed) against the document: route, path, query and
// header parameters, and the body schema. Authentication is not checked.
func (s *Spec) ValidateRequest(r *http.Request, body []byte) error {
	in, err := s.input(r, body)
	if err != nil {
		return &Violation{Method: r.Method, Path: r.URL.Path, Err: err}
	}
	if err := openapi3filter.ValidateRequest(in.Request.Context(), in); err != nil {
		return &Violation{Method: r.Method, Path: r.URL.Path, Err: err}
	}
	return nil
}

// ValidateResponse checks a response to r against the document.
//
// X answers transport-level failures (401, 429, the generic 403s, and
// client-forbidden) with RFC 7807 problems whose "type" is not one of the
// types the document's Problem union lists; the document cannot describe
// them. Those bodies are checked against the RFC 7807 shape X uses instead
// (string type, title and detail; status equal to the HTTP status).
func (s *Spec) ValidateResponse(r *http.Request, status int, header http.Header, body []byte) error {
	fail := func(err error) error {
		return &Violation{Response: true, Method: r.Method, Path: r.URL.Path, Status: status, Err: err}
	}
	in, err := s.input(r, nil)
	if err != nil {
		return fail(err)
	}
	if status >= 400 && isProblemJSON(header) {
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(body, &probe); err == nil && !s.problemTypes[probe.Type] {
			if err := checkGenericProblem(status, body); err != nil {
				return fail(err)
			}
			return nil
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 status,
		Header:                 header,
		Options:                s.opts,
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fail(err)
	}
	return nil
}

func isProblemJSON(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "application/problem+json"
}

func checkGenericProblem(status int, body []byte) error {
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("problem body is not a JSON object: %w", err)
	}
	for _, k := range []string{"type", "title", "detail"} {
		if v, ok := p[k].(string); !ok || v == "" {
			return fmt.Errorf("problem body: %q must be a non-empty string", k)
		}
	}
	if typ := p["type"].(string); typ != "about:blank" {
		if u, err := url.Parse(typ); err != nil || !u.IsAbs() {
			return fmt.Errorf("problem body: type %q is not an absolute URI", typ)
		}
	}
	if v, ok := p["status"]; ok {
		if n, isNum := v.(float64); !isNum || int(n) != status {
			return fmt.Errorf("problem body: status %v does not match HTTP status %d", v, status)
		}
	}
	return nil
}

// RoundTripper validates every request and response passing through next and
// hands each violation (a *Violation) to report, which must be safe for
// concurrent use.
// Traffic is passed on unchanged whether or not it validates.
func (s *Spec) RoundTripper(next http.RoundTripper, report func(error)) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &roundTripper{spec: s, next: next, report: report}
}

type roundTripper struct {
	spec   *Spec
	next   http.RoundTripper
	report func(error)
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("xspec: read request body: %w", err)
		}
		body = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	if err := rt.spec.ValidateRequest(req, body); err != nil {
		rt.report(err)
	}
	res, err := rt.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	rb, rerr := io.ReadAll(res.Body)
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(rb))
	if rerr != nil {
		// A broken body is the transport's story to tell; hand it on intact.
		res.Body = io.NopCloser(io.MultiReader(bytes.NewReader(rb), errReader{rerr}))
		return res, nil
	}
	if _, _, routeErr := rt.spec.findRoute(req); routeErr == nil {
		if verr := rt.spec.ValidateResponse(req, res.StatusCode, res.Header, rb); verr != nil {
			rt.report(verr)
		}
	}
	return res, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// IsRouteError reports whether err says the operation is not in the
// document (as opposed to a schema violation).
func IsRouteError(err error) bool {
	var re *routers.RouteError
	return errors.As(err, &re)
}
